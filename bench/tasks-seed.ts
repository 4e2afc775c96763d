// Builds a benchmark account straight into a data directory's database: 100,000 tasks (10%
// subtasks, 5% in the trash, 1-3 tags each) in 50 lists, through the real migrations, with the
// FTS triggers doing their work as they would in production. Setup (the admin user) goes through
// the app itself so the password hash and inbox are real.
// Usage: bun bench/tasks-seed.ts [data-dir]   (default /tmp/app-bench-tasks; recreated)
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { createApp } from "../src/app";
import { Config } from "../src/config";
import { migrate, openDatabase } from "../src/core/db";
import { Logger } from "../src/core/log";
import { ServerSecret } from "../src/core/secret";
import { taskSearchText } from "../src/features/tasks/tasks.search";

export const BENCH_USER = { username: "bench", password: "bench-password-1" };
export const TASKS = 100_000;

const dir = process.argv[2] ?? "/tmp/app-bench-tasks";
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true, mode: 0o700 });
const t0 = performance.now();
const config = Config.parse({ dataDir: dir, logFormat: "off" });
const db = openDatabase(join(dir, "app.db"));
migrate(db);
const app = createApp({ db, config, secret: ServerSecret.loadOrCreate(dir), logger: new Logger("off") });
const setup = await app.fetch(
  new Request("http://localhost/api/v1/setup/initialize", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(BENCH_USER) }),
);
if (setup.status !== 201) throw new Error(`setup failed: ${setup.status} ${await setup.text()}`);
const user = db.sqlite.query<{ id: string }, []>("SELECT id FROM users").get()!.id;
const inbox = db.sqlite.query<{ id: string }, [string]>("SELECT id FROM lists WHERE user_id = ? AND is_inbox = 1").get(user)!.id;

// Deterministic pseudo-random numbers, so every run builds the same account.
let seed = 42;
const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;

const verbs = ["Buy", "Call", "Write", "Review", "Fix", "Plan", "Send", "Clean", "Book", "Read", "Update", "Prepare", "Check", "Pay", "Order"];
const nouns = ["milk", "report", "invoice", "slides", "car", "garden", "taxes", "budget", "tickets", "email", "proposal", "backup", "kitchen", "flowers", "contract", "présentation", "café order"];
const cjk = ["完成项目任务", "准备会议资料", "购买生日礼物", "整理房间", "预订机票", "写周报", "检查任务进度"];
const words = ["quickly", "before", "friday", "with", "team", "notes", "draft", "final", "version", "the", "for", "and", "client", "meeting", "review", "details"];
const RARE = "zephyrine"; // in about 20 tasks

const now = Date.parse("2026-11-01T00:00:00.000Z");
const span = 2 * 365 * 86_400_000;
db.sqlite.run("BEGIN IMMEDIATE");
const lists = [inbox];
const insList = db.sqlite.query("INSERT INTO lists (id, user_id, name, is_inbox, position, created_at, updated_at) VALUES (?, ?, ?, 0, ?, ?, ?)");
for (let i = 1; i < 50; i++) {
  const id = Bun.randomUUIDv7();
  insList.run(id, user, i % 7 === 0 ? `项目 ${i}` : `List ${i} ${pick(words)}`, i, "2024-10-01T00:00:00.000Z", "2024-10-01T00:00:00.000Z");
  lists.push(id);
}
const tags: string[] = [];
const insTag = db.sqlite.query("INSERT INTO tags (id, user_id, name, name_key, color, created_at, updated_at) VALUES (?, ?, ?, ?, '#336699', ?, ?)");
for (let i = 0; i < 40; i++) {
  const id = Bun.randomUUIDv7();
  const name = i % 10 === 0 ? `标签${i}` : `tag-${i}`;
  insTag.run(id, user, name, name.toLowerCase(), "2024-10-01T00:00:00.000Z", "2024-10-01T00:00:00.000Z");
  tags.push(id);
}
const insTask = db.sqlite.query(
  `INSERT INTO tasks (id, user_id, list_id, parent_id, title, description, completed, completed_at, due_at, priority, version, position, created_at, updated_at, deleted_at, search_text)
   VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, 0, ?, ?, ?, ?)`,
);
const insTagLink = db.sqlite.query("INSERT OR IGNORE INTO task_tags (task_id, tag_id) VALUES (?, ?)");
const tops: { id: string; list: string; deleted: string | null }[] = [];
for (let i = 0; i < TASKS; i++) {
  const ts = now - span + Math.floor((i / TASKS) * span);
  const created = new Date(ts).toISOString();
  const id = Bun.randomUUIDv7("hex", ts);
  const isSub = i % 10 === 9 && tops.length > 0;
  const parent = isSub ? tops[Math.floor(rnd() * Math.min(tops.length, 500)) + Math.max(0, tops.length - 500)]! : null;
  const list = parent ? parent.list : pick(lists);
  const title = rnd() < 0.1 ? `${pick(cjk)} ${i}` : `${pick(verbs)} ${pick(nouns)} ${pick(words)}${i % 5000 === 17 ? ` ${RARE}` : ""}`;
  const description = rnd() < 0.5 ? `${pick(words)} ${pick(words)} ${pick(nouns)} ${pick(words)} ${pick(words)}` : "";
  const completed = rnd() < 0.3;
  const due = rnd() < 0.4 ? (rnd() < 0.5 ? new Date(ts + 7 * 86_400_000).toISOString().slice(0, 10) : new Date(ts + 3 * 86_400_000).toISOString()) : null;
  // 5% of the top-level tasks go to the trash, their subtasks with them.
  const deleted = parent ? parent.deleted : rnd() < 0.05 ? new Date(ts + 86_400_000).toISOString() : null;
  insTask.run(id, user, list, parent?.id ?? null, title, description, completed ? 1 : 0, completed ? created : null, due, i % 4, created, created, deleted, taskSearchText(title, description));
  const n = 1 + Math.floor(rnd() * 3);
  for (let k = 0; k < n; k++) insTagLink.run(id, pick(tags));
  if (!parent) tops.push({ id, list, deleted });
}
db.sqlite.run("COMMIT");
db.sqlite.run("ANALYZE");
db.sqlite.run("PRAGMA wal_checkpoint(TRUNCATE)");
const counts = db.sqlite
  .query("SELECT count(*) AS tasks, sum(parent_id IS NOT NULL) AS subtasks, sum(deleted_at IS NOT NULL) AS in_trash FROM tasks")
  .get() as Record<string, number>;
const links = (db.sqlite.query("SELECT count(*) AS n FROM task_tags").get() as { n: number }).n;
db.close();
console.log(`seeded ${dir}: ${JSON.stringify(counts)}, ${links} tag links, 50 lists, 40 tags in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
