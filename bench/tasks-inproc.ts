// In-process cost of GET /tasks?limit=50 (first page and a deep page, 30,000 tasks in), without
// sockets or a load generator, so it stays readable on a busy machine: CPU time (process-wide, GC
// threads included) and wall time per request through the app's own `fetch` (session cookie,
// logging off), beside the bare reference of bench/bare-tasks.ts (the repository's page query and
// presenter, then Response.json). Each server works on its own copy of a seeded account.
// With BENCH_BASE=<another checkout> the same cases run against that tree too, interleaved round by
// round with this one, so both see the same machine load (an A/B of a change).
// Usage: bun bench/tasks-seed.ts /tmp/app-bench-inproc
//        bun bench/tasks-inproc.ts /tmp/app-bench-inproc [rounds]
//        BENCH_BASE=/tmp/base-checkout bun bench/tasks-inproc.ts /tmp/app-bench-inproc 9
// knobs: BENCH_N (requests per round and case, default 2000), BENCH_CASE="app deep" (one case
//        alone, e.g. under `bun --cpu-prof`)
import { rmSync } from "node:fs";
import { appOfTree, signInInProcess } from "./lib";
import { join, resolve } from "node:path";

const src = process.argv[2] ?? "/tmp/app-bench-inproc";
const ROUNDS = Number(process.argv[3] ?? 5);
const N = Number(process.env.BENCH_N ?? 2000);
const trees: [string, string][] = [["", resolve(import.meta.dir, "..")]];
if (process.env.BENCH_BASE) trees.unshift(["base ", resolve(process.env.BENCH_BASE)]);

interface Case {
  name: string;
  run: () => Promise<Response> | Response;
}

/** Builds one tree's app on its own copy of the account; returns its cases and a cleanup. */
async function setUp(label: string, root: string): Promise<{ cases: Case[]; close: () => void }> {
  const { pageLiveTasks } = await import(join(root, "src/features/tasks/tasks.repo.ts"));
  const { presentTasks } = await import(join(root, "src/features/tasks/tasks.present.ts"));
  const { app, db, dir } = await appOfTree(root, src, `copy-${label.trim() || "this"}`);
  const { cookie } = await signInInProcess(app, "bench", "bench-password-1");
  const user = (db.sqlite.query("SELECT id FROM users").get() as { id: string }).id;
  const get = (qs: string): Promise<Response> => app.fetch(new Request(`http://localhost/api/v1/tasks?${qs}`, { headers: { cookie } }));

  // The deep page: 30,000 items in, walked through the API.
  let cursor: string | null = null;
  let last: { created_at: string; id: string } | null = null;
  for (let i = 0; i < 300; i++) {
    const r = (await (await get(`limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`)).json()) as {
      items: { created_at: string; id: string }[];
      next_cursor: string;
    };
    last = r.items[r.items.length - 1]!;
    cursor = r.next_cursor;
  }
  const deepQs = `limit=50&cursor=${encodeURIComponent(cursor!)}`;
  const after: [string, string] = [last!.created_at, last!.id];

  // As bench/bare-tasks.ts answers.
  const bare = (a: [string, string] | null): Response => {
    const rows = pageLiveTasks(db, user, {}, a, 50);
    const more = rows.length > 50;
    const page = more ? rows.slice(0, 50) : rows;
    const l = page[page.length - 1];
    return Response.json({ items: presentTasks(db, page), next_cursor: more && l ? `${l.created_at}|${l.id}` : null });
  };
  return {
    cases: [
      { name: `${label}app first`, run: () => get("limit=50") },
      { name: `${label}app deep`, run: () => get(deepQs) },
      { name: `${label}bare first`, run: () => bare(null) },
      { name: `${label}bare deep`, run: () => bare(after) },
    ],
    close() {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const setups = [];
for (const [label, root] of trees) setups.push(await setUp(label, root));
let cases = setups.flatMap((s) => s.cases);
if (process.env.BENCH_CASE) cases = cases.filter((c) => c.name === process.env.BENCH_CASE);

const sizes = new Map<string, number>();
for (const c of cases) {
  const r = await c.run();
  const body = await r.arrayBuffer();
  if (r.status !== 200) throw new Error(`${c.name}: ${r.status}`);
  sizes.set(c.name, body.byteLength);
  for (let i = 0; i < 300; i++) await (await c.run()).arrayBuffer(); // warm-up
}
const cpu = new Map<string, number[]>();
const wall = new Map<string, number[]>();
for (let round = 0; round < ROUNDS; round++) {
  for (const c of cases) {
    Bun.gc(true);
    const c0 = process.cpuUsage();
    const w0 = performance.now();
    for (let i = 0; i < N; i++) await (await c.run()).arrayBuffer();
    const w = ((performance.now() - w0) * 1000) / N;
    const u = process.cpuUsage(c0);
    (cpu.get(c.name) ?? cpu.set(c.name, []).get(c.name)!).push((u.user + u.system) / N);
    (wall.get(c.name) ?? wall.set(c.name, []).get(c.name)!).push(w);
  }
}
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(`${ROUNDS} rounds of ${N} requests per case; µs per request, median of rounds (min)`);
for (const c of cases) {
  const xs = cpu.get(c.name)!;
  const ws = wall.get(c.name)!;
  console.log(
    `${c.name.padEnd(16)} CPU ${med(xs).toFixed(1).padStart(6)} (${Math.min(...xs).toFixed(1)})  wall ${med(ws).toFixed(1).padStart(6)} (${Math.min(...ws).toFixed(1)})  ${sizes.get(c.name)} bytes`,
  );
}
for (const s of setups) s.close();
