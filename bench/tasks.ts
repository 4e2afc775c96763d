// Tasks figures on a 100,000-task account (bench/tasks-seed.ts), against the compiled dist/app
// (or `bun src/main.ts` when it is missing), beside a bare Bun.serve + bun:sqlite running the
// same SQL (bench/bare-tasks.ts):
//  - GET /tasks?limit=50, first and deep page: wrk, 32 connections, req/s and p99
//  - GET /tasks?q=…: one connection, sequential, median and p99 per query
//  - POST /tasks/batch of 500 ids: sequential, median
//  - PATCH /tasks/{id} (32 connections, each its own task and version) and POST /tasks: req/s
// Usage: bun bench/tasks.ts            (seeds /tmp/app-bench-tasks first; under five minutes)
import { Database } from "bun:sqlite";
import { cpSync, rmSync } from "node:fs";
import { join } from "node:path";
import { EXE, freePort, median, percentile, startServer, stopServer, wrk, type Auth } from "./lib";

const dir = process.env.BENCH_DIR ?? "/tmp/app-bench-tasks";
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
// wrk threads: with few CPUs, one client thread leaves the server a core of its own.
const THREADS = Number(process.env.BENCH_WRK_THREADS ?? (navigator.hardwareConcurrency <= 2 ? 1 : 2));
const ONLY_GET = process.env.BENCH_ONLY === "get";
const t0 = performance.now();

const seed = Bun.spawnSync(["bun", "bench/tasks-seed.ts", dir], { stdout: "inherit", stderr: "inherit" });
if (seed.exitCode !== 0) throw new Error("seeding failed");
// The logged server below runs beside the first one, so on its own copy of the account: a server
// holds its data directory (server.lock) against a second one.
const loggedDir = `${dir}-logged`;
rmSync(loggedDir, { recursive: true, force: true });
cpSync(dir, loggedDir, { recursive: true });
console.log(`executable: ${EXE || "bun src/main.ts (dist/app missing)"}; ${SECONDS} s per load run; ${navigator.hardwareConcurrency} CPUs; wrk -t${THREADS} -c32`);

async function login(base: string): Promise<Auth> {
  const r = await fetch(`${base}/api/v1/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: "bench", password: "bench-password-1" }),
  });
  if (r.status !== 200) throw new Error(`login: ${r.status} ${await r.text()}`);
  const cookies = r.headers.getSetCookie().map((c) => c.split(";")[0]!);
  const cookie = cookies.join("; ");
  const csrf = cookies.find((c) => c.startsWith("app_csrf="))!.slice("app_csrf=".length);
  return { cookie, csrf, headers: { cookie, "x-csrf-token": csrf, "content-type": "application/json" } };
}

/** wrk with a request body (POST), via a Lua script. */
async function wrkPost(url: string, headers: Record<string, string>, body: string, seconds: number) {
  const script = join("/tmp", `wrk-post-${process.pid}.lua`);
  await Bun.write(
    script,
    `wrk.method = "POST"\nwrk.body = ${JSON.stringify(body)}\n` + Object.entries(headers).map(([k, v]) => `wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`).join("\n"),
  );
  const p = Bun.spawn(["wrk", `-t${THREADS}`, "-c32", `-d${seconds}s`, "--latency", "-s", script, url], { stdout: "pipe" });
  const out = await new Response(p.stdout).text();
  await p.exited;
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN),
    p99: /\s99%\s+(\S+)/.exec(out)?.[1] ?? "?",
    non2xx: /Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? "0",
  };
}

async function sequential(n: number, run: () => Promise<Response>): Promise<{ med: number; p99: number }> {
  for (let i = 0; i < 5; i++) await (await run()).arrayBuffer();
  const ts: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const r = await run();
    await r.arrayBuffer();
    if (r.status >= 300) throw new Error(`status ${r.status}`);
    ts.push(performance.now() - t);
  }
  return { med: median(ts), p99: percentile(ts, 99) };
}

const fmt = (x: number) => x.toFixed(2);
class Done extends Error {}
const app = await startServer(dir);
const barePort = freePort();
const bare = Bun.spawn(["bun", "bench/bare-tasks.ts", dir, String(barePort)], { stdout: "ignore", stderr: "inherit" });
const bareBase = `http://127.0.0.1:${barePort}`;
for (let i = 0; i < 500; i++) {
  try {
    if ((await fetch(`${bareBase}/?limit=1`)).ok) break;
  } catch {
    await Bun.sleep(10);
  }
}
try {
  const auth = await login(app.base);
  const probe = await fetch(`${app.base}/api/v1/tasks?limit=1`, { headers: auth.headers });
  if (probe.status !== 200) throw new Error(`GET /tasks answered ${probe.status}: is dist/app older than the tasks feature? (bun run build)`);

  // A deep page: 30,000 items in (walked once through the API; the bare server gets the same position).
  let cursor: string | null = null;
  let last: { created_at: string; id: string } | null = null;
  for (let i = 0; i < 300; i++) {
    const r = (await (await fetch(`${app.base}/api/v1/tasks?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`, { headers: auth.headers })).json()) as {
      items: { created_at: string; id: string }[];
      next_cursor: string | null;
    };
    last = r.items[r.items.length - 1]!;
    cursor = r.next_cursor;
  }
  const bareCursor = `${last!.created_at}|${last!.id}`;

  console.log("\nGET /tasks, 32 connections (wrk):");
  const rows: [string, string, string][] = [
    ["first page", `${app.base}/api/v1/tasks?limit=50`, `${bareBase}/?limit=50`],
    ["deep page (30,000 in)", `${app.base}/api/v1/tasks?limit=50&cursor=${encodeURIComponent(cursor!)}`, `${bareBase}/?limit=50&cursor=${encodeURIComponent(bareCursor)}`],
  ];
  // Warm-up of every URL on both servers (JIT, page cache, the garbage of login and the deep walk)
  // before measuring any: the first run after start-up otherwise carries a one-off p99 spike.
  for (const [, appUrl, bareUrl] of rows) {
    await wrk(appUrl, { cookie: auth.cookie }, { seconds: 2, threads: THREADS });
    await wrk(bareUrl, {}, { seconds: 2, threads: THREADS });
  }
  for (const [label, appUrl, bareUrl] of rows) {
    const a = await wrk(appUrl, { cookie: auth.cookie }, { seconds: SECONDS, threads: THREADS });
    const b = await wrk(bareUrl, {}, { seconds: SECONDS, threads: THREADS });
    console.log(
      `  ${label.padEnd(22)} app ${a.rps.toFixed(0)} req/s p99 ${fmt(a.p99ms)} ms (non-2xx ${a.errors}) | bare ${b.rps.toFixed(0)} req/s p99 ${fmt(b.p99ms)} ms | app/bare ${((a.rps / b.rps) * 100).toFixed(0)}%`,
    );
  }

  // The default request log (text to stdout, read through a pipe as journald reads it) against
  // logging off: two servers on the same data, measured alternately.
  {
    const logged = await startServer(loggedDir, undefined, { APP_LOG_FORMAT: "text" });
    try {
      const la = await login(logged.base);
      const urls: [string, string, string][] = [
        ["log off", `${app.base}/api/v1/tasks?limit=50`, auth.cookie],
        ["log text", `${logged.base}/api/v1/tasks?limit=50`, la.cookie],
      ];
      for (const [, url, cookie] of urls) await wrk(url, { cookie }, { seconds: 2, threads: THREADS });
      console.log("\nGET /tasks first page, 32 connections (wrk), request log off vs the default text log:");
      const seen: Record<string, number[]> = {};
      for (let r = 0; r < 2; r++) {
        for (const [label, url, cookie] of urls) {
          const x = await wrk(url, { cookie }, { seconds: SECONDS, threads: THREADS });
          (seen[label] ??= []).push(x.rps);
          console.log(`  ${label.padEnd(9)} ${x.rps.toFixed(0)} req/s p99 ${fmt(x.p99ms)} ms (non-2xx ${x.errors})`);
        }
      }
      const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
      console.log(`  text/off ${((mean(seen["log text"]!) / mean(seen["log off"]!)) * 100).toFixed(0)}%`);
    } finally {
      await stopServer(logged);
    }
  }

  if (ONLY_GET) throw new Done();
  console.log("\nGET /tasks?q=…&limit=50, one connection, 200 sequential requests each:");
  const queries: [string, string][] = [
    ["common (report)", "report"],
    ["rare (zephyrine, ~20 tasks)", "zephyrine"],
    ["missing", "nothingatall"],
    ["two terms (buy milk)", "buy milk"],
    ["CJK 2 chars (任务)", "任务"],
    ["CJK 4 chars (项目任务)", "项目任务"],
    ["accented (présentation)", "presentation"],
    ["rare 2 chars (zq: full walk)", "zq"],
  ];
  for (const [label, q] of queries) {
    const r = await sequential(200, () => fetch(`${app.base}/api/v1/tasks?limit=50&q=${encodeURIComponent(q)}`, { headers: auth.headers }));
    console.log(`  ${label.padEnd(30)} median ${fmt(r.med)} ms  p99 ${fmt(r.p99)} ms`);
  }

  console.log("\nGET /tasks with filters, limit=50, one connection, 200 sequential requests each:");
  const lists = (await (await fetch(`${app.base}/api/v1/lists`, { headers: auth.headers })).json()) as { items: { id: string }[] };
  const tagList = (await (await fetch(`${app.base}/api/v1/tags`, { headers: auth.headers })).json()) as { items: { id: string }[] };
  // A rare tag (a handful of tasks) beside the seeded common ones.
  const rareTag = (await (
    await fetch(`${app.base}/api/v1/tags`, { method: "POST", headers: auth.headers, body: JSON.stringify({ name: "rare-bench-tag", color: "#000000" }) })
  ).json()) as { id: string };
  const sample = (await (await fetch(`${app.base}/api/v1/tasks?limit=5`, { headers: auth.headers })).json()) as { items: { id: string }[] };
  await fetch(`${app.base}/api/v1/tasks/batch`, { method: "POST", headers: auth.headers, body: JSON.stringify({ task_ids: sample.items.map((t) => t.id), tag_ids: [rareTag.id] }) });
  const filters: [string, string][] = [
    ["list_id (one of 50 lists)", `list_id=${lists.items[7]!.id}`],
    ["tag_id (common: ~5,000 tasks)", `tag_id=${tagList.items[3]!.id}`],
    ["tag_id (rare: 5 tasks)", `tag_id=${rareTag.id}`],
    ["completed=false + due_before", "completed=false&due_before=2026-06-30"],
    ["list_id + q=report", `list_id=${lists.items[7]!.id}&q=report`],
  ];
  for (const [label, q] of filters) {
    const r = await sequential(200, () => fetch(`${app.base}/api/v1/tasks?limit=50&${q}`, { headers: auth.headers }));
    console.log(`  ${label.padEnd(30)} median ${fmt(r.med)} ms  p99 ${fmt(r.p99)} ms`);
  }

  // Ids for writes, read from the database (read-only connection).
  const ro = new Database(join(dir, "app.db"), { readonly: true });
  const live = ro
    .query<{ id: string; version: number }, []>(
      "SELECT t.id, t.version FROM tasks t JOIN lists l ON l.id = t.list_id WHERE t.parent_id IS NULL AND t.deleted_at IS NULL AND l.deleted_at IS NULL ORDER BY t.created_at DESC LIMIT 2000",
    )
    .all();
  ro.close();

  console.log("\nPOST /tasks/batch, 500 ids, 30 sequential batches (alternately complete / reopen):");
  const ids = live.slice(0, 500).map((t) => t.id);
  let flip = false;
  const batch = await sequential(30, () => {
    flip = !flip;
    return fetch(`${app.base}/api/v1/tasks/batch`, { method: "POST", headers: auth.headers, body: JSON.stringify({ task_ids: ids, completed: flip }) });
  });
  console.log(`  median ${fmt(batch.med)} ms  p99 ${fmt(batch.p99)} ms`);

  console.log(`\nPATCH /tasks/{id}, 32 connections, each on its own task with its current version, ${SECONDS} s:`);
  const mine = live.slice(1000, 1032);
  let done = 0;
  let conflicts = 0;
  const lat: number[] = [];
  const until = performance.now() + SECONDS * 1000;
  await Promise.all(
    mine.map(async (t) => {
      let version = (await (await fetch(`${app.base}/api/v1/tasks/${t.id}`, { headers: auth.headers })).json() as { version: number }).version;
      let i = 0;
      while (performance.now() < until) {
        const s = performance.now();
        const r = await fetch(`${app.base}/api/v1/tasks/${t.id}`, { method: "PATCH", headers: auth.headers, body: JSON.stringify({ version, title: `edited ${i++}` }) });
        const b = (await r.json()) as { version: number };
        lat.push(performance.now() - s);
        if (r.status === 200) {
          version = b.version;
          done++;
        } else conflicts++;
      }
    }),
  );
  console.log(`  ${(done / SECONDS).toFixed(0)} req/s, p99 ${fmt(percentile(lat, 99))} ms, conflicts ${conflicts} (Bun fetch client, 32 concurrent loops)`);

  console.log(`\nPOST /tasks, 32 connections (wrk), ${SECONDS} s:`);
  const inbox = (await (await fetch(`${app.base}/api/v1/lists`, { headers: auth.headers })).json()) as { items: { id: string }[] };
  const post = await wrkPost(`${app.base}/api/v1/tasks`, auth.headers, JSON.stringify({ title: "bench task", list_id: inbox.items[1]!.id, due_at: "2026-12-01" }), SECONDS);
  console.log(`  ${post.rps.toFixed(0)} req/s, p99 ${post.p99}, non-2xx ${post.non2xx}`);
} catch (e) {
  if (!(e instanceof Done)) throw e;
} finally {
  bare.kill();
  await stopServer(app);
}
// A freshly seeded account: 10,000 tasks created through the API moments before (bench/tasks-fresh.ts).
if (!ONLY_GET || process.env.BENCH_FRESH === "1") {
  console.log("\nA fresh 10,000-task account seeded through the API (bench/tasks-fresh.ts):");
  const fresh = Bun.spawnSync(["bun", "bench/tasks-fresh.ts"], { stdout: "inherit", stderr: "inherit", env: { ...process.env, BENCH_SECONDS: String(SECONDS) } });
  if (fresh.exitCode !== 0) throw new Error("bench/tasks-fresh.ts failed");
}
console.log(`\ntotal ${((performance.now() - t0) / 1000).toFixed(0)} s`);
