// Does one user's search time tell anything about another user's tasks? (issue 11, item 4)
// On a copy of the bench account (bench/tasks-seed.ts, user "bench", 100,000 tasks) a second user
// gets FOREIGN tasks containing "zephyrine"; the bench user has ~20 tasks with "zephyrine" and 20
// with "quasarine" (which the other user never wrote). The bench user's search for each is timed
// in process (wall time per GET /tasks?q=…&limit=50 through the app's own fetch, median of N):
// the difference between the two is what another user's words cost. The usual q figures follow.
// With BENCH_BASE=<another checkout> the same cases run against that tree too, interleaved round
// by round, so both see the same machine load.
// Usage: bun bench/tasks-seed.ts /tmp/app-bench-inproc
//        bun bench/search-isolation.ts /tmp/app-bench-inproc [rounds]
//        BENCH_BASE=/tmp/base-checkout bun bench/search-isolation.ts /tmp/app-bench-inproc 5
// knobs: BENCH_N (requests per round and case, default 200), BENCH_FOREIGN (default 20000),
//        BENCH_SOLE=1 (no second account: the server's sole user, whose searches may use the index)
import { rmSync } from "node:fs";
import { appOfTree } from "./lib";
import { join, resolve } from "node:path";

const src = process.argv[2] ?? "/tmp/app-bench-inproc";
const ROUNDS = Number(process.argv[3] ?? 5);
const N = Number(process.env.BENCH_N ?? 200);
const SOLE = process.env.BENCH_SOLE === "1";
const FOREIGN = SOLE ? 0 : Number(process.env.BENCH_FOREIGN ?? 20_000);
const trees: [string, string][] = [["", resolve(import.meta.dir, "..")]];
if (process.env.BENCH_BASE) trees.unshift(["base ", resolve(process.env.BENCH_BASE)]);

const QUERIES: [string, string][] = [
  ...(SOLE
    ? ([["rare (zephyrine)", "zephyrine"]] as [string, string][])
    : ([
        ["rare, other user has it FOREIGN×", "zephyrine"],
        ["rare, other user has it 0×", "quasarine"],
      ] as [string, string][])),
  ["common (report)", "report"],
  ["missing", "nothingatall"],
  ["two terms (buy milk)", "buy milk"],
  ["accented (presentation)", "presentation"],
  ["CJK 4 chars (项目任务)", "项目任务"],
  // Under three characters no index can help: a walk of every task in both trees (a yardstick).
  ["rare 2 chars (zq: full walk)", "zq"],
];

interface Case {
  name: string;
  run: () => Promise<Response>;
}

async function setUp(label: string, root: string): Promise<{ cases: Case[]; close: () => void }> {
  const { taskSearchText } = await import(join(root, "src/features/tasks/tasks.search.ts"));
  const { app, db, dir } = await appOfTree(root, src, `iso-${label.trim() || "this"}`);
  const call = (method: string, path: string, body?: unknown, cookie = "", csrf = "") =>
    app.fetch(
      new Request(`http://localhost/api/v1${path}`, {
        method,
        headers: { "content-type": "application/json", cookie, "x-csrf-token": csrf },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    );
  const signIn = async (username: string, password: string) => {
    const r = await call("POST", "/auth/login", { username, password });
    if (r.status !== 200) throw new Error(`login ${username}: ${r.status} ${await r.text()}`);
    const cookies = (r.headers.getSetCookie() as string[]).map((c) => c.split(";")[0]!);
    return { cookie: cookies.join("; "), csrf: cookies.find((c) => c.includes("csrf="))!.split("=")[1]! };
  };
  const bench = await signIn("bench", "bench-password-1");
  if (!SOLE) {
    const made = await call("POST", "/users", { username: "other", password: "other-Passphrase-7731" }, bench.cookie, bench.csrf);
    if (made.status !== 201) throw new Error(`user: ${made.status} ${await made.text()}`);
  }
  const other = SOLE ? null : await signIn("other", "other-Passphrase-7731");
  const ids = db.sqlite.query("SELECT u.id AS user_id, l.id AS list_id FROM users u JOIN lists l ON l.user_id = u.id AND l.is_inbox = 1").all() as {
    user_id: string;
    list_id: string;
  }[];
  const userOf = async (s: { cookie: string }) => ((await (await call("GET", "/me", undefined, s.cookie)).json()) as { id: string }).id;
  const benchId = await userOf(bench);
  const otherId = other ? await userOf(other) : "";
  const inbox = (u: string) => ids.find((r) => r.user_id === u)!.list_id;
  // Written straight into the table (as bench/tasks-seed.ts does), the FTS triggers doing their work.
  const ins = db.sqlite.query(
    "INSERT INTO tasks (id, user_id, list_id, title, description, search_text, created_at, updated_at) VALUES (?, ?, ?, ?, '', ?, ?, ?)",
  );
  db.sqlite.run("BEGIN IMMEDIATE");
  const stamp = (i: number) => new Date(Date.parse("2025-03-01T00:00:00.000Z") + i * 60_000).toISOString();
  for (let i = 0; i < FOREIGN; i++) {
    const title = `zephyrine note ${i}`;
    ins.run(Bun.randomUUIDv7(), otherId, inbox(otherId), title, taskSearchText(title, ""), stamp(i), stamp(i));
  }
  for (let i = 0; i < 20; i++) {
    const title = `quasarine memo ${i}`;
    ins.run(Bun.randomUUIDv7(), benchId, inbox(benchId), title, taskSearchText(title, ""), stamp(i * 997), stamp(i * 997));
  }
  db.sqlite.run("COMMIT");
  const cases = QUERIES.map(([name, q]) => ({
    name: name.replace("FOREIGN", String(FOREIGN)),
    run: () => call("GET", `/tasks?limit=50&q=${encodeURIComponent(q)}`, undefined, bench.cookie),
  }));
  for (const c of cases) {
    const r = await c.run();
    if (r.status !== 200) throw new Error(`${c.name}: ${r.status} ${await r.text()}`);
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
for (const [label, root] of trees) setups.push({ label, ...(await setUp(label, root)) });
const results = new Map<string, number[]>();
for (let round = 0; round < ROUNDS; round++) {
  for (const s of setups) {
    for (const c of s.cases) {
      for (let i = 0; i < 10; i++) await (await c.run()).arrayBuffer();
      const ts: number[] = [];
      for (let i = 0; i < N; i++) {
        const t = performance.now();
        await (await c.run()).arrayBuffer();
        ts.push(performance.now() - t);
      }
      ts.sort((a, b) => a - b);
      const key = `${s.label}${c.name}`;
      results.set(key, [...(results.get(key) ?? []), ts[Math.floor(N / 2)]!]);
    }
  }
}
for (const s of setups) s.close();
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(
  `GET /tasks?q=…&limit=50 in process (${SOLE ? "the server's sole account" : `a second account with ${FOREIGN} tasks`}), wall ms per request: median over ${ROUNDS} rounds of each round's median of ${N}`,
);
for (const [key, xs] of results) console.log(`  ${key.padEnd(48)} ${median(xs).toFixed(3)} ms   (rounds: ${xs.map((x) => x.toFixed(2)).join(" ")})`);
