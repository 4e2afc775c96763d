// Complete backup benchmark: export, preflight, replace and merge restore of a large account.
// Seeds directly into the data directory (rows + attachment files): 100,000 tasks, 10,000 habit
// logs, 2,000 memos and 1 GiB of attachments. Each phase runs in a fresh server process so its
// peak RSS (VmHWM) is the phase's own. Argon2 runs with small parameters (APP_ARGON2_MEMORY_KIB)
// so a login's 64 MiB hash does not mask the backup's own peak.
import { Database } from "bun:sqlite";
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import { freshDir, setupAndLogin, startServer, stopServer, type Server } from "./lib";
import { taskSearchText } from "../src/features/tasks/tasks.search";

const TASKS = Number(process.env.BENCH_TASKS ?? 100_000);
const LOGS = Number(process.env.BENCH_LOGS ?? 10_000);
const MEMOS = Number(process.env.BENCH_MEMOS ?? 2_000);
const ATTACH_MIB = Number(process.env.BENCH_ATTACH_MIB ?? 1024);
const FILE_MIB = 16;
const ENV = { APP_ARGON2_MEMORY_KIB: "1024", APP_ARGON2_TIME_COST: "1" };

function peakKiB(pid: number): number {
  const m = /VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) : NaN;
}

const dir = freshDir("app-bench-backup-");
const out = freshDir("app-bench-backup-out-");
console.log(`data ${dir}`);

// 1. Schema and user through the server, then seed the file directly.
let s: Server = await startServer(dir, undefined, ENV);
const auth = await setupAndLogin(s.base);
await stopServer(s);

{
  const db = new Database(join(dir, "app.db"));
  db.run("PRAGMA journal_mode = WAL");
  const user = db.query("SELECT id FROM users").get() as { id: string };
  const inbox = (db.query("SELECT id FROM lists WHERE user_id = ? AND is_inbox = 1").get(user.id) as { id: string }).id;
  const now = new Date().toISOString();
  const t0 = performance.now();
  db.transaction(() => {
    const lists: string[] = [inbox];
    for (let i = 0; i < 20; i++) {
      const id = Bun.randomUUIDv7();
      db.query("INSERT INTO lists (id, user_id, name, is_inbox, position, created_at, updated_at) VALUES (?, ?, ?, 0, ?, ?, ?)").run(id, user.id, `List ${i}`, i, now, now);
      lists.push(id);
    }
    const tags: string[] = [];
    for (let i = 0; i < 20; i++) {
      const id = Bun.randomUUIDv7();
      db.query("INSERT INTO tags (id, user_id, name, name_key, color, created_at, updated_at) VALUES (?, ?, ?, ?, '#336699', ?, ?)").run(id, user.id, `tag${i}`, `tag${i}`, now, now);
      tags.push(id);
    }
    const ins = db.query(
      `INSERT INTO tasks (id, user_id, list_id, parent_id, title, description, completed, completed_at, due_at, priority, version, position, created_at, updated_at, deleted_at, search_text)
       VALUES (?, ?, ?, ?, ?, ?, 0, NULL, ?, ?, 1, 0, ?, ?, NULL, ?)`,
    );
    const tt = db.query("INSERT INTO task_tags (task_id, tag_id) VALUES (?, ?)");
    let parent: { id: string; list: string } | null = null;
    for (let i = 0; i < TASKS; i++) {
      const id = Bun.randomUUIDv7();
      const sub: boolean = parent !== null && i % 4 !== 0;
      const list: string = sub ? parent!.list : lists[i % lists.length]!;
      const title = `Task ${i} about something worth doing`;
      const desc = i % 3 === 0 ? `A longer description for task ${i}, with a few words to search for and some detail.` : "";
      ins.run(id, user.id, list, sub ? parent!.id : null, title, desc, i % 5 === 0 ? "2026-12-01" : null, i % 4, now, now, taskSearchText(title, desc));
      if (i % 2 === 0) tt.run(id, tags[i % tags.length]!);
      if (!sub) parent = { id, list };
    }
    const habits: string[] = [];
    for (let h = 0; h < 20; h++) {
      const id = Bun.randomUUIDv7();
      db.query("INSERT INTO habits (id, user_id, name, frequency, goal, start_date, position, created_at, updated_at) VALUES (?, ?, ?, '{\"type\":\"daily\"}', 1, '2024-01-01', ?, ?, ?)").run(id, user.id, `Habit ${h}`, h, now, now);
      habits.push(id);
    }
    const logIns = db.query("INSERT INTO habit_logs (habit_id, user_id, date, value, note, created_at, updated_at) VALUES (?, ?, ?, 1, NULL, ?, ?)");
    const perHabit = Math.ceil(LOGS / habits.length);
    let n = 0;
    for (const h of habits) {
      for (let d = 0; d < perHabit && n < LOGS; d++, n++) {
        logIns.run(h, user.id, new Date(Date.UTC(2024, 0, 1 + d)).toISOString().slice(0, 10), now, now);
      }
    }
    const memoIns = db.query("INSERT INTO memos (id, user_id, content, pinned, version, created_at, updated_at) VALUES (?, ?, ?, 0, 1, ?, ?)");
    for (let i = 0; i < MEMOS; i++) memoIns.run(Bun.randomUUIDv7(), user.id, `# Memo ${i}\n\n` + "Some markdown text. ".repeat(50), now, now);
  })();
  // Attachments: random bytes behind a PDF header and compressible text, typed as an upload types
  // them (the preflight checks the bytes against the upload's allow-list and the stored type).
  mkdirSync(join(dir, "attachments"), { recursive: true });
  const files = Math.max(1, Math.round(ATTACH_MIB / FILE_MIB));
  const someTask = (db.query("SELECT id FROM tasks WHERE parent_id IS NULL LIMIT 1").get() as { id: string }).id;
  const chunk = new Uint8Array(1024 * 1024);
  for (let f = 0; f < files; f++) {
    const id = Bun.randomUUIDv7();
    const text = f % 8 === 0;
    const path = join(dir, "attachments", id);
    const fd = openSync(path, "w");
    const sha = new Bun.CryptoHasher("sha256");
    for (let m = 0; m < FILE_MIB; m++) {
      // The whole chunk: it is reused, and random bytes left in a "text" file would not be text.
      if (text) chunk.set(new TextEncoder().encode(`line ${f}:${m} `.repeat(chunk.length / 8).slice(0, chunk.length)));
      else crypto.getRandomValues(chunk.subarray(0, 65536)), chunk.copyWithin(65536, 0, chunk.length - 65536), crypto.getRandomValues(chunk.subarray(0, 65536));
      if (!text && m === 0) chunk.set(new TextEncoder().encode("%PDF-1.7\n"));
      sha.update(chunk);
      writeSync(fd, chunk);
    }
    closeSync(fd);
    db.query("INSERT INTO attachments (id, user_id, task_id, filename, content_type, size, sha256, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)").run(
      id, user.id, someTask, text ? `f${f}.txt` : `f${f}.pdf`, text ? "text/plain; charset=utf-8" : "application/pdf", FILE_MIB * 1024 * 1024, sha.digest("hex"), now,
    );
  }
  db.run("PRAGMA wal_checkpoint(TRUNCATE)");
  db.close();
  console.log(`seeded ${TASKS} tasks, ${LOGS} logs, ${MEMOS} memos, ${files} x ${FILE_MIB} MiB attachments in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

const rows: string[] = [];
const record = (phase: string, secs: number, peak: number, extra = "") => {
  const line = `| ${phase} | ${secs.toFixed(1)} s | ${(peak / 1024).toFixed(0)} MiB | ${extra} |`;
  rows.push(line);
  console.log(line);
};

// 2. Export.
const zipPath = join(out, "export.zip");
s = await startServer(dir, undefined, ENV);
{
  const t0 = performance.now();
  const res = await fetch(`${s.base}/api/v1/backup/export.zip`, { headers: auth.headers });
  if (res.status !== 200) throw new Error(`export ${res.status} ${await res.text()}`);
  const fd = openSync(zipPath, "w");
  for await (const c of res.body!) writeSync(fd, c);
  closeSync(fd);
  const secs = (performance.now() - t0) / 1000;
  const mb = statSync(zipPath).size / 1e6;
  record("export", secs, peakKiB(s.proc.pid), `${mb.toFixed(0)} MB archive, ${(mb / secs).toFixed(0)} MB/s`);
}
await stopServer(s);

// 3. Preflight (replace, then merge), each in its own process.
async function preflightOnce(mode: string): Promise<string> {
  const srv = await startServer(dir, undefined, ENV);
  try {
    const fd = new FormData();
    fd.append("file", Bun.file(zipPath), "export.zip");
    const t0 = performance.now();
    const r = await fetch(`${srv.base}/api/v1/backup/preflight?mode=${mode}`, { method: "POST", headers: { cookie: auth.cookie, "x-csrf-token": auth.csrf }, body: fd });
    const body = (await r.json()) as { preflight_token?: string };
    if (r.status !== 200) throw new Error(`preflight ${r.status} ${JSON.stringify(body).slice(0, 500)}`);
    record(`preflight (${mode})`, (performance.now() - t0) / 1000, peakKiB(srv.proc.pid));
    return body.preflight_token!;
  } finally {
    await stopServer(srv);
  }
}

async function restoreOnce(mode: string, token: string): Promise<void> {
  const srv = await startServer(dir, undefined, ENV);
  try {
    const t0 = performance.now();
    const r = await fetch(`${srv.base}/api/v1/backup/restore`, { method: "POST", headers: auth.headers, body: JSON.stringify({ preflight_token: token, mode }) });
    const text = await r.text();
    if (r.status !== 200) throw new Error(`restore ${r.status} ${text.slice(0, 500)}`);
    record(`restore (${mode})`, (performance.now() - t0) / 1000, peakKiB(srv.proc.pid), mode === "merge" ? "same archive again: every record compared and skipped" : "");
  } finally {
    await stopServer(srv);
  }
}
// The staged capacity (2 GiB) holds one 1 GiB archive at a time with room to spare: restore
// (which consumes the token) before the next preflight.
await restoreOnce("replace", await preflightOnce("replace"));
await restoreOnce("merge", await preflightOnce("merge"));

// Idle baseline for comparison.
s = await startServer(dir, undefined, ENV);
await fetch(`${s.base}/api/v1/me`, { headers: auth.headers });
record("idle server after start-up and one request", 0, peakKiB(s.proc.pid));
await stopServer(s);

console.log("\n| phase | time | peak RSS | notes |\n|---|---|---|---|\n" + rows.join("\n"));
if (!process.env.BENCH_KEEP) {
  rmSync(dir, { recursive: true, force: true });
  rmSync(out, { recursive: true, force: true });
}
