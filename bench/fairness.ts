// Fairness: does a heavy job stall everyone else? While each heavy job runs on the compiled
// executable, three clients poll one after the other (each waits for its answer, then 10 ms):
//   health  GET /api/v1/health/live (no session)
//   page    another user's GET /api/v1/tasks?limit=50 (200 tasks of their own)
//   write   another user's POST /api/v1/memos every ~50 ms: 2xx, or 503 busy with Retry-After
// and the script prints p50/p99/max of each (and the writes' statuses), with the job's own time.
//
// The jobs (sizes chosen so the whole run stays around ten minutes on a 2-core machine):
//   legacy restore   POST /restore?mode=replace of a 60,000-task legacy JSON file (~43 MB)
//   legacy export    GET /export of the 50,000-task account
//   backup export    GET /backup/export.zip of the 50,000-task account (no attachments)
//   big export       GET /backup/export.zip of a 20,000-task account with 8 × 16 MiB and one 1 GiB attachment
//   preflight        POST /backup/preflight?mode=replace of that archive (~1.1 GB upload, validated)
//   restore          POST /backup/restore of it (replace: the account restores its own backup)
// Seeded straight into the data directory (rows and attachment files), as bench/backup.ts does.
// Attachments are limited to 2 GiB for the run (APP_ATTACHMENT_MAX_BYTES) so the 1 GiB file is a
// valid record whatever the default limit.
//
// Usage: bun run build && bun bench/fairness.ts              (dist/app)
//        APP_EXE=/path/to/other/app bun bench/fairness.ts    (another build, e.g. the main branch)
//        BENCH_BIG_MIB=256 bun bench/fairness.ts             (a smaller big attachment)
import { Database } from "bun:sqlite";
import { closeSync, mkdirSync, openSync, readdirSync, rmSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import { EXE, freshDir, percentile, rssKiB, setupAndLogin, startServer, stopServer, type Auth, type Server } from "./lib";
import { taskSearchText } from "../src/features/tasks/tasks.search";

const OWNER_TASKS = Number(process.env.BENCH_OWNER_TASKS ?? 50_000);
const LEGACY_TASKS = Number(process.env.BENCH_LEGACY_TASKS ?? 60_000);
const SOURCE_TASKS = Number(process.env.BENCH_SOURCE_TASKS ?? 20_000);
const SMALL_FILES = 8;
const SMALL_MIB = 16;
const BIG_MIB = Number(process.env.BENCH_BIG_MIB ?? 1024);
const ENV = { APP_ARGON2_MEMORY_KIB: "1024", APP_ARGON2_TIME_COST: "1", APP_ATTACHMENT_MAX_BYTES: String(2 * 1024 ** 3) };

// ---- poller mode: `bun bench/fairness.ts poll <base> <cookie> <csrf>` (a process of its own, so
// that the job's own upload or download never delays the polls on the client side) ----

interface Samples {
  health: number[];
  page: number[];
  write: number[];
  writeStatus: Record<string, number>;
}

if (process.argv[2] === "poll") {
  const [base, cookie, csrf] = process.argv.slice(3) as [string, string, string];
  const s: Samples = { health: [], page: [], write: [], writeStatus: {} };
  let done = false;
  void (async () => {
    // The parent writes a line (or closes stdin) when the job is over.
    for await (const _ of Bun.stdin.stream()) break;
    done = true;
  })();
  const timed = async (into: number[], url: string, init?: RequestInit): Promise<number> => {
    const t0 = performance.now();
    const r = await fetch(url, init);
    await r.arrayBuffer();
    into.push(performance.now() - t0);
    return r.status;
  };
  const loop = async (fn: () => Promise<void>, pause: number) => {
    while (!done) {
      await fn();
      await Bun.sleep(pause);
    }
  };
  let n = 0;
  await Promise.all([
    loop(async () => void (await timed(s.health, `${base}/api/v1/health/live`)), 10),
    loop(async () => void (await timed(s.page, `${base}/api/v1/tasks?limit=50`, { headers: { cookie } })), 10),
    loop(async () => {
      if (process.env.BENCH_NO_WRITES) return;
      const status = await timed(s.write, `${base}/api/v1/memos`, {
        method: "POST",
        headers: { cookie, "x-csrf-token": csrf, "content-type": "application/json" },
        body: JSON.stringify({ content: `written during a heavy job ${n++}` }),
      });
      s.writeStatus[status] = (s.writeStatus[status] ?? 0) + 1;
    }, 50),
  ]);
  console.log(JSON.stringify(s));
  process.exit(0);
}

if (!EXE) throw new Error("build dist/app first (bun run build), or set APP_EXE");
const dir = freshDir("app-bench-fair-");
const out = freshDir("app-bench-fair-out-");
console.log(`executable: ${EXE}\ndata: ${dir}`);

// ---- 1. users through the server, then the data straight into the database ----

let server: Server = await startServer(dir, undefined, ENV);
const owner = await setupAndLogin(server.base);
for (const username of ["other", "source", "legacy"]) {
  const r = await fetch(`${server.base}/api/v1/users`, { method: "POST", headers: owner.headers, body: JSON.stringify({ username, password: `${username}-password-1` }) });
  if (r.status !== 201) throw new Error(`user ${username}: ${r.status} ${await r.text()}`);
}
await stopServer(server);

const PDF_HEAD = new TextEncoder().encode("%PDF-1.4\n");
{
  const t0 = performance.now();
  const db = new Database(join(dir, "app.db"));
  db.run("PRAGMA journal_mode = WAL");
  const idOf = (u: string) => (db.query("SELECT id FROM users WHERE username = ?").get(u) as { id: string }).id;
  const now = new Date().toISOString();
  const seedTasks = (userId: string, n: number): string => {
    const inbox = (db.query("SELECT id FROM lists WHERE user_id = ? AND is_inbox = 1").get(userId) as { id: string }).id;
    const lists = [inbox];
    for (let i = 0; i < 20; i++) {
      const id = Bun.randomUUIDv7();
      db.query("INSERT INTO lists (id, user_id, name, is_inbox, position, created_at, updated_at) VALUES (?, ?, ?, 0, ?, ?, ?)").run(id, userId, `List ${i}`, i, now, now);
      lists.push(id);
    }
    const tags: string[] = [];
    for (let i = 0; i < 20; i++) {
      const id = Bun.randomUUIDv7();
      db.query("INSERT INTO tags (id, user_id, name, name_key, color, created_at, updated_at) VALUES (?, ?, ?, ?, '#336699', ?, ?)").run(id, userId, `tag${i}`, `tag${i}`, now, now);
      tags.push(id);
    }
    const ins = db.query(
      `INSERT INTO tasks (id, user_id, list_id, parent_id, title, description, completed, completed_at, due_at, priority, version, position, created_at, updated_at, deleted_at, search_text)
       VALUES (?, ?, ?, ?, ?, ?, 0, NULL, ?, ?, 1, 0, ?, ?, NULL, ?)`,
    );
    const tt = db.query("INSERT INTO task_tags (task_id, tag_id) VALUES (?, ?)");
    let parent: { id: string; list: string } | null = null;
    let first = "";
    for (let i = 0; i < n; i++) {
      const id = Bun.randomUUIDv7();
      const sub: boolean = parent !== null && i % 4 !== 0;
      const list: string = sub ? parent!.list : lists[i % lists.length]!;
      const title = `Task ${i} about something worth doing`;
      const desc = i % 3 === 0 ? `A longer description for task ${i}, with a few words to search for and some detail.` : "";
      ins.run(id, userId, list, sub ? parent!.id : null, title, desc, i % 5 === 0 ? "2026-12-01" : null, i % 4, now, now, taskSearchText(title, desc));
      if (i % 2 === 0) tt.run(id, tags[i % tags.length]!);
      if (!sub) parent = { id, list };
      if (i === 0) first = id;
    }
    return first;
  };
  const attach = (userId: string, taskId: string, mib: number) => {
    const id = Bun.randomUUIDv7();
    const fd = openSync(join(dir, "attachments", id), "w");
    const sha = new Bun.CryptoHasher("sha256");
    const chunk = new Uint8Array(1024 * 1024);
    for (let m = 0; m < mib; m++) {
      crypto.getRandomValues(chunk.subarray(0, 65536));
      for (let o = 65536; o < chunk.length; o += 65536) chunk.copyWithin(o, 0, 65536);
      if (m === 0) chunk.set(PDF_HEAD);
      sha.update(chunk);
      writeSync(fd, chunk);
    }
    closeSync(fd);
    db.query("INSERT INTO attachments (id, user_id, task_id, filename, content_type, size, sha256, created_at) VALUES (?, ?, ?, ?, 'application/pdf', ?, ?, ?)").run(
      id, userId, taskId, `f-${id.slice(-6)}.pdf`, mib * 1024 * 1024, sha.digest("hex"), now,
    );
  };
  db.transaction(() => {
    seedTasks(idOf("bench"), OWNER_TASKS);
    seedTasks(idOf("other"), 200);
  })();
  mkdirSync(join(dir, "attachments"), { recursive: true });
  const sourceTask = db.transaction(() => seedTasks(idOf("source"), SOURCE_TASKS))();
  const source = idOf("source");
  for (let f = 0; f < SMALL_FILES; f++) attach(source, sourceTask, SMALL_MIB);
  attach(source, sourceTask, BIG_MIB);
  db.run("PRAGMA wal_checkpoint(TRUNCATE)");
  db.close();
  console.log(`seeded ${OWNER_TASKS} + ${SOURCE_TASKS} tasks, ${SMALL_FILES} × ${SMALL_MIB} MiB + ${BIG_MIB} MiB of attachments in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

/** A legacy v1 file of `n` tasks (~700 bytes each, as a real export's are with notes), in a few lists. */
function legacyFile(n: number): Uint8Array {
  const at = "2026-11-01T10:00:00.000Z";
  const lists = Array.from({ length: 10 }, (_, i) => ({ id: Bun.randomUUIDv7(), name: `List ${i}`, folder_id: null, is_inbox: false, color: null, position: i, created_at: at, updated_at: at, deleted_at: null }));
  const parts: string[] = [];
  let parent: { id: string; list: string } | null = null;
  const notes = "Notes written over time: what was agreed, what is still open, who to call back and when. ".repeat(5);
  for (let i = 0; i < n; i++) {
    const id = Bun.randomUUIDv7();
    const sub: boolean = parent !== null && i % 3 === 2;
    const list: string = sub ? parent!.list : lists[i % lists.length]!.id;
    parts.push(
      JSON.stringify({
        id, list_id: list, parent_id: sub ? parent!.id : null, title: `Task ${i} with a title of ordinary length`, description: i % 2 ? notes : "",
        completed: i % 7 === 0, completed_at: i % 7 === 0 ? at : null, due_at: i % 4 === 0 ? "2026-12-01" : null, priority: i % 4,
        tags: [`tag-${i % 30}`], created_at: at, updated_at: at, deleted_at: null,
      }),
    );
    if (!sub) parent = { id, list };
  }
  const head = JSON.stringify({ format: "app-legacy", version: 1, exported_at: at, folders: [], lists, recurrences: [], habits: [], countdowns: [], memos: [] });
  return new TextEncoder().encode(`${head.slice(0, -1)},"tasks":[${parts.join(",")}]}`);
}

// ---- 2. the pollers ----

async function signIn(base: string, username: string): Promise<Auth> {
  return setupAndLogin(base, username, `${username}-password-1`);
}

/** Runs `job` while the poller process polls; returns its latencies, the job's own time and the server's RSS (before, peak). */
async function during<T>(base: string, other: Auth, job: () => Promise<T>): Promise<{ seconds: number; result: T; s: Samples; rss: [number, number] }> {
  const poller = Bun.spawn(["bun", import.meta.path, "poll", base, other.cookie, other.csrf], { stdin: "pipe", stdout: "pipe", stderr: "inherit" });
  await Bun.sleep(300);
  const rssBefore = rssKiB(server.proc.pid);
  let peak = rssBefore;
  const sampler = setInterval(() => (peak = Math.max(peak, rssKiB(server.proc.pid))), 50);
  const t0 = performance.now();
  const result = await job();
  const seconds = (performance.now() - t0) / 1000;
  clearInterval(sampler);
  poller.stdin.write("stop\n");
  poller.stdin.end();
  const s = JSON.parse(await new Response(poller.stdout).text()) as Samples;
  await poller.exited;
  return { seconds, result, s, rss: [rssBefore / 1024, peak / 1024] };
}

const rows: string[] = [];
const stat = (xs: number[]) => (xs.length ? `${percentile(xs, 50).toFixed(1)} / ${percentile(xs, 99).toFixed(1)} / ${Math.max(...xs).toFixed(0)} (${xs.length})` : "-");
function report(job: string, m: { seconds: number; s: Samples; rss: [number, number] }, note = ""): void {
  const statuses = Object.entries(m.s.writeStatus).map(([k, v]) => `${v}× ${k}`).join(", ");
  const line = `| ${job} | ${m.seconds.toFixed(1)} s | ${stat(m.s.health)} | ${stat(m.s.page)} | ${stat(m.s.write)} | ${statuses} | ${m.rss[0].toFixed(0)} → ${m.rss[1].toFixed(0)} MiB |${note ? ` ${note}` : ""}`;
  rows.push(line);
  console.log(line);
}

async function drain(res: Response, into?: string): Promise<number> {
  if (res.status !== 200) throw new Error(`${res.url}: ${res.status} ${await res.text()}`);
  let size = 0;
  const fd = into ? openSync(into, "w") : -1;
  for await (const c of res.body!) {
    size += c.byteLength;
    if (fd >= 0) writeSync(fd, c);
  }
  if (fd >= 0) closeSync(fd);
  return size;
}

// ---- 3. the jobs ----

server = await startServer(dir, undefined, ENV);
const base = server.base;
const bench = await signIn(base, "bench");
const other = await signIn(base, "other");
const source = await signIn(base, "source");
const legacyUser = await signIn(base, "legacy");

report("idle (no job, 3 s)", await during(base, other, () => Bun.sleep(3000)));

const file = legacyFile(LEGACY_TASKS);
report(
  `legacy restore, ${LEGACY_TASKS} tasks (${(file.byteLength / 1e6).toFixed(0)} MB JSON)`,
  await during(base, other, async () => {
    const r = await fetch(`${base}/api/v1/restore?mode=replace`, { method: "POST", headers: legacyUser.headers, body: file });
    const body = (await r.json()) as { counts?: { tasks: number } };
    if (r.status !== 200 || body.counts?.tasks !== LEGACY_TASKS) throw new Error(`legacy restore: ${r.status} ${JSON.stringify(body).slice(0, 300)}`);
  }),
);

report(`legacy export (JSON), ${OWNER_TASKS} tasks`, await during(base, other, async () => drain(await fetch(`${base}/api/v1/export`, { headers: { cookie: bench.cookie } }))));

const small = await during(base, other, async () => drain(await fetch(`${base}/api/v1/backup/export.zip`, { headers: { cookie: bench.cookie } })));
report(`backup export, ${OWNER_TASKS} tasks`, small, `${(small.result / 1e6).toFixed(0)} MB archive`);

const zipPath = join(out, "source.zip");
const big = await during(base, other, async () => drain(await fetch(`${base}/api/v1/backup/export.zip`, { headers: { cookie: source.cookie } }), zipPath));
report(`backup export, ${SOURCE_TASKS} tasks + ${SMALL_FILES * SMALL_MIB + BIG_MIB} MiB attachments`, big, `${(big.result / 1e6).toFixed(0)} MB archive`);

const pf = await during(base, other, async () => {
  const fd = new FormData();
  fd.append("file", Bun.file(zipPath), "source.zip");
  const r = await fetch(`${base}/api/v1/backup/preflight?mode=replace`, { method: "POST", headers: { cookie: source.cookie, "x-csrf-token": source.csrf }, body: fd });
  const body = (await r.json()) as { preflight_token?: string };
  if (r.status !== 200) throw new Error(`preflight: ${r.status} ${JSON.stringify(body).slice(0, 500)}`);
  return body.preflight_token!;
});
report(`preflight (replace) of that archive (${(statSync(zipPath).size / 1e6).toFixed(0)} MB upload)`, pf);

report(
  "restore (replace) of that archive",
  await during(base, other, async () => {
    const r = await fetch(`${base}/api/v1/backup/restore`, { method: "POST", headers: source.headers, body: JSON.stringify({ preflight_token: pf.result, mode: "replace" }) });
    const text = await r.text();
    if (r.status !== 200) throw new Error(`restore: ${r.status} ${text.slice(0, 500)}`);
  }),
);

// The job worker ends after 30 s without a job (an idle server keeps its start-up memory).
await Bun.sleep(35_000);
const idleRss = rssKiB(server.proc.pid) / 1024;
const threads = readdirSync(`/proc/${server.proc.pid}/task`).length;
await stopServer(server);
console.log(`\nexecutable: ${EXE}`);
console.log(`35 s after the last job: RSS ${idleRss.toFixed(0)} MiB, ${threads} threads`);
console.log("latencies in ms: p50 / p99 / max (samples)\n");
console.log("| job | job time | health | other user's page | other user's write | writes | server RSS before → peak |\n|---|---|---|---|---|---|---|\n" + rows.join("\n"));
if (!process.env.BENCH_KEEP) {
  rmSync(dir, { recursive: true, force: true });
  rmSync(out, { recursive: true, force: true });
}
