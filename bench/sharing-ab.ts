// Issue 19's A/B: GET /tasks (first page, a deep page), search and the smart views at 100,000 tasks (bench/
// sharing-seed.ts: one user owning ~90k, two members with 5k each, 3 shared lists), in process
// through each tree's own app (bench/lib.ts appOfTree), interleaved round by round so both trees
// see the same machine load. BENCH_BASE names the tree before the change (a `git archive` of main
// with this checkout's node_modules linked in). CPU time per request (process-wide) and wall time.
// Usage: BENCH_BASE=/tmp/f19-base bun bench/sharing-ab.ts /tmp/app-bench-share [rounds]
// knobs: BENCH_N (requests per round and case, default 300), BENCH_VIEWS=0 (pages and search only),
// BENCH_ONLY=<regex on the case names>, BENCH_BASE_SEED=<data dir> (the "before" tree reads this seed instead:
// the fair baseline of bench/sharing-fair-seed.ts, where member1 owns what sharing shows them)
import { rmSync } from "node:fs";
import { resolve } from "node:path";
import { appOfTree, signInInProcess } from "./lib";

const src = process.argv[2] ?? "/tmp/app-bench-share";
const ROUNDS = Number(process.argv[3] ?? 5);
const N = Number(process.env.BENCH_N ?? 300);
// BENCH_VIEWS=0 leaves out the smart views (GET /views/overdue, no_date, completed, counts).
const VIEWS = process.env.BENCH_VIEWS !== "0";
const trees: [string, string][] = [["after", resolve(import.meta.dir, "..")]];
if (process.env.BENCH_BASE) trees.unshift(["before", resolve(process.env.BENCH_BASE)]);

interface Case {
  name: string;
  run: () => Promise<Response>;
}

async function setUp(label: string, root: string): Promise<{ cases: Case[]; close: () => void }> {
  const seed = label === "before" && process.env.BENCH_BASE_SEED ? resolve(process.env.BENCH_BASE_SEED) : src;
  const { app, db, dir } = await appOfTree(root, seed, `ab-${label}`);
  const cases: Case[] = [];
  for (const [username, password] of [
    ["bench", "bench-password-1"],
    ["member1", "member1-password-1"],
  ] as const) {
    const { cookie } = await signInInProcess(app, username, password);
    const get = (qs: string) => app.fetch(new Request(`http://localhost/api/v1/tasks?${qs}`, { headers: { cookie } }));
    const view = (path: string) => app.fetch(new Request(`http://localhost/api/v1/views/${path}`, { headers: { cookie } }));
    // A deep page: 3,000 items in.
    let cursor: string | null = null;
    for (let i = 0; i < 30; i++) {
      const r = (await (await get(`limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`)).json()) as { next_cursor: string };
      cursor = r.next_cursor;
    }
    const deep = `limit=50&cursor=${encodeURIComponent(cursor!)}`;
    const who = username === "bench" ? "owner " : "member";
    cases.push(
      { name: `${label} ${who} first page`, run: () => get("limit=50") },
      { name: `${label} ${who} deep page`, run: () => get(deep) },
      { name: `${label} ${who} q=milk`, run: () => get("limit=50&q=milk") },
      { name: `${label} ${who} q=zephyrine`, run: () => get("limit=50&q=zephyrine") },
    );
    if (VIEWS) {
      cases.push(
        { name: `${label} ${who} views/overdue`, run: () => view("overdue?limit=50") },
        { name: `${label} ${who} views/no_date`, run: () => view("no_date?limit=50") },
        { name: `${label} ${who} views/completed`, run: () => view("completed?limit=50") },
        { name: `${label} ${who} views/counts`, run: () => view("counts") },
      );
    }
  }
  return {
    cases,
    close() {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const setups = [];
for (const [label, root] of trees) setups.push(await setUp(label, root));
// BENCH_ONLY=<regex> keeps only the matching cases (e.g. "member (first|deep)").
const only = process.env.BENCH_ONLY ? new RegExp(process.env.BENCH_ONLY) : null;
const cases = setups.flatMap((s) => s.cases).filter((c) => !only || only.test(c.name));
const items = new Map<string, number>();
for (const c of cases) {
  const r = await c.run();
  if (r.status !== 200) throw new Error(`${c.name}: ${r.status}`);
  const body = (await r.json()) as { items?: unknown[]; groups?: { tasks: unknown[] }[] };
  items.set(c.name, body.items?.length ?? body.groups?.reduce((n, g) => n + g.tasks.length, 0) ?? 0);
  for (let i = 0; i < 30; i++) await (await c.run()).arrayBuffer();
}
const cpu = new Map<string, number[]>();
const wall = new Map<string, number[]>();
// Interleaved: each round runs every case of both trees.
for (let round = 0; round < ROUNDS; round++) {
  for (const c of cases) {
    Bun.gc(true);
    const c0 = process.cpuUsage();
    const w0 = performance.now();
    for (let i = 0; i < N; i++) await (await c.run()).arrayBuffer();
    const u = process.cpuUsage(c0);
    (cpu.get(c.name) ?? cpu.set(c.name, []).get(c.name)!).push((u.user + u.system) / N);
    (wall.get(c.name) ?? wall.set(c.name, []).get(c.name)!).push(((performance.now() - w0) * 1000) / N);
  }
}
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(`${ROUNDS} rounds of ${N} requests per case; µs per request, median of rounds (min); items on the page`);
for (const c of cases) {
  const xs = cpu.get(c.name)!;
  const ws = wall.get(c.name)!;
  console.log(`${c.name.padEnd(32)} CPU ${med(xs).toFixed(0).padStart(6)} (${Math.min(...xs).toFixed(0)})  wall ${med(ws).toFixed(0).padStart(6)} (${Math.min(...ws).toFixed(0)})  ${items.get(c.name)} items`);
}
if (setups.length === 2) {
  console.log("after / before (CPU medians):");
  for (const c of setups[1]!.cases.filter((c) => !only || only.test(c.name))) {
    const base = c.name.replace(/^after/, "before");
    console.log(`  ${c.name.slice(6).padEnd(26)} ${((med(cpu.get(c.name)!) / med(cpu.get(base)!)) * 100).toFixed(0)}%`);
  }
}
for (const s of setups) s.close();
