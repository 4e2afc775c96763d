// The issue-19 benchmark account, on top of bench/tasks-seed.ts's 100,000 tasks of `bench` in 50
// lists (~2,000 each): two more users (`member1`, `member2`) each get 5,000 of them (whole
// top-level tasks with their subtasks, moved into a list of their own), and 3 of bench's lists
// (~2,000 tasks each) are shared with both (member1 editor, member2 viewer). So: one user owning
// ~90k, two members with 5k each and 3 shared lists of 2k. Memberships are written straight into
// list_members; a tree without sharing (main) simply ignores them.
// Usage: bun bench/tasks-seed.ts /tmp/app-bench-share && bun bench/sharing-seed.ts /tmp/app-bench-share
import { join } from "node:path";
import { createApp } from "../src/app";
import { Config } from "../src/config";
import { openDatabase } from "../src/core/db";
import { Logger } from "../src/core/log";
import { ServerSecret } from "../src/core/secret";
import { signInInProcess } from "./lib";

const dir = process.argv[2] ?? "/tmp/app-bench-share";
const db = openDatabase(join(dir, "app.db"));
const app = createApp({ db, config: Config.parse({ dataDir: dir, logFormat: "off" }), secret: ServerSecret.loadOrCreate(dir), logger: new Logger("off") });
const session = await signInInProcess(app, "bench", "bench-password-1");
const headers = { cookie: session.cookie, "x-csrf-token": session.csrf, "content-type": "application/json" };
const owner = db.sqlite.query<{ id: string }, []>("SELECT id FROM users WHERE username = 'bench'").get()!.id;
const members: string[] = [];
for (const username of ["member1", "member2"]) {
  const r = await app.fetch(new Request("http://localhost/api/v1/users", { method: "POST", headers, body: JSON.stringify({ username, password: `${username}-password-1` }) }));
  if (r.status !== 201) throw new Error(`user ${username}: ${r.status} ${await r.text()}`);
  members.push(((await r.json()) as { id: string }).id);
}
const lists = db.sqlite.query<{ id: string }, [string]>("SELECT id FROM lists WHERE user_id = ? AND is_inbox = 0 ORDER BY position").all(owner).map((r) => r.id);
const shared = lists.slice(0, 3);
const donors = lists.slice(3);
db.sqlite.run("BEGIN IMMEDIATE");
const now = "2026-11-01T00:00:00.000Z";
for (const [i, m] of members.entries()) {
  // 5,000 tasks: top-level tasks of bench's other lists with their subtasks, into the member's own list.
  const list = Bun.randomUUIDv7();
  db.sqlite.query("INSERT INTO lists (id, user_id, name, is_inbox, position, created_at, updated_at) VALUES (?, ?, ?, 0, 1, ?, ?)").run(list, m, `Own ${i}`, now, now);
  let moved = 0;
  const tops = db.sqlite
    .query<{ id: string; n: number }, [string, string]>(
      "SELECT t.id, 1 + (SELECT count(*) FROM tasks s WHERE s.parent_id = t.id) AS n FROM tasks t WHERE t.user_id = ? AND t.parent_id IS NULL AND t.list_id IN (SELECT value FROM json_each(?)) ORDER BY t.id",
    )
    .all(owner, JSON.stringify(donors.slice(i * 20, i * 20 + 20)));
  const ids: string[] = [];
  for (const t of tops) {
    if (moved + t.n > 5000) continue;
    ids.push(t.id);
    moved += t.n;
    if (moved >= 5000) break;
  }
  const js = JSON.stringify(ids);
  db.sqlite.query("UPDATE tasks SET user_id = ?, list_id = ? WHERE id IN (SELECT value FROM json_each(?)) OR parent_id IN (SELECT value FROM json_each(?))").run(m, list, js, js);
  // Their tag links were bench's tags: gone with the move (tags are personal).
  db.sqlite.query("DELETE FROM task_tags WHERE task_id IN (SELECT id FROM tasks WHERE user_id = ?)").run(m);
  for (const [k, l] of shared.entries()) {
    db.sqlite.query("INSERT INTO list_members (list_id, user_id, role, folder_id, position, since) VALUES (?, ?, ?, NULL, ?, ?)").run(l, m, i === 0 ? "editor" : "viewer", k + 2, now);
  }
  console.log(`member${i + 1}: ${moved} tasks of their own`);
}
db.sqlite.run("COMMIT");
const count = (sql: string, ...a: string[]) => (db.sqlite.query(sql).get(...a) as { n: number }).n;
console.log(`bench: ${count("SELECT count(*) AS n FROM tasks WHERE user_id = ?", owner)} tasks; shared lists: ${shared.map((l) => count("SELECT count(*) AS n FROM tasks WHERE list_id = ?", l)).join(", ")} tasks`);
db.sqlite.run("PRAGMA optimize");
db.close();
await (app as { close?: () => Promise<void> | void }).close?.();
