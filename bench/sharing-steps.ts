// Issue 19's A/B in SQLite's own unit of work, independent of the machine's load: every statement
// a request runs (sql and bound values, recorded in process through each tree's own app, as
// bench/sharing-ab.ts sets them up) is replayed in the sqlite3 shell with `.stats on`, and its
// "Virtual Machine Steps" (bytecode instructions executed: rows walked, tested, copied) and
// "Page cache hits + misses" (pages touched) are added up per request. The shell's SQLite is
// Debian's (older than Bun's): the plans are the same here (every page walk names its index).
// Usage: BENCH_BASE=/tmp/f19-base bun bench/sharing-steps.ts /tmp/app-bench-share
// Needs /usr/bin/sqlite3 (apt-get install -y sqlite3). BENCH_SHOW="member q=milk" lists that case's
// statements with their steps.
import { rmSync } from "node:fs";
import { resolve } from "node:path";
import { appOfTree, signInInProcess } from "./lib";

const src = process.argv[2] ?? "/tmp/app-bench-share";
const trees: [string, string][] = [["after", resolve(import.meta.dir, "..")]];
if (process.env.BENCH_BASE) trees.unshift(["before", resolve(process.env.BENCH_BASE)]);

type Value = string | number | bigint | boolean | null;
interface Recorded {
  sql: string;
  args: Value[];
}

/** SQL literal of a bound value. */
const literal = (v: Value): string =>
  v === null ? "NULL" : typeof v === "string" ? `'${v.replaceAll("'", "''")}'` : typeof v === "boolean" ? (v ? "1" : "0") : String(v);

/** The shell script replaying the statements: each `?` numbered, its value in the shell's parameter table. */
function script(stmts: Recorded[]): string {
  const out = [".param init"];
  for (const s of stmts) {
    let k = 0;
    const sql = s.sql.replace(/\?/g, () => `?${++k}`);
    out.push(".stats off", "DELETE FROM temp.sqlite_parameters;");
    s.args.forEach((v, i) => out.push(`INSERT INTO temp.sqlite_parameters(key, value) VALUES ('?${i + 1}', ${literal(v)});`));
    out.push(".stats on", `${sql.replace(/\s+/g, " ").trim()};`);
  }
  return out.join("\n") + "\n";
}

function replay(db: string, stmts: Recorded[], show = false): { steps: number; pages: number; fullscan: number } {
  const p = Bun.spawnSync(["sqlite3", db], { stdin: Buffer.from(script(stmts)), stdout: "pipe", stderr: "pipe" });
  const text = p.stdout.toString();
  const err = p.stderr.toString();
  if (err.trim()) throw new Error(`sqlite3: ${err.slice(0, 500)}`);
  const sum = (re: RegExp) => [...text.matchAll(re)].reduce((n, m) => n + Number(m[1]), 0);
  if (show) {
    const steps = [...text.matchAll(/Virtual Machine Steps:\s+(\d+)/g)].map((m) => m[1]);
    stmts.forEach((st, i) => console.log(`    ${String(steps[i]).padStart(8)}  ${st.sql.replace(/\s+/g, " ").slice(0, 150)}`));
  }
  return {
    steps: sum(/Virtual Machine Steps:\s+(\d+)/g),
    pages: sum(/Page cache hits:\s+(\d+)/g) + sum(/Page cache misses:\s+(\d+)/g),
    fullscan: sum(/Fullscan Steps:\s+(\d+)/g),
  };
}

const results = new Map<string, { statements: number; steps: number; pages: number; fullscan: number }>();
const names: string[] = [];
for (const [label, root] of trees) {
  // BENCH_BASE_SEED: the "before" tree reads this seed instead (bench/sharing-fair-seed.ts).
  const seed = label === "before" && process.env.BENCH_BASE_SEED ? resolve(process.env.BENCH_BASE_SEED) : src;
  const { app, db, dir } = await appOfTree(root, seed, `steps-${label}`);
  const s = db.sqlite as unknown as { query: (sql: string) => unknown; prepare: (sql: string) => unknown };
  let recording: Recorded[] | null = null;
  const plainQuery = s.query.bind(s) as (sql: string) => { all: (...a: Value[]) => unknown[] };
  for (const m of ["query", "prepare"] as const) {
    const orig = s[m].bind(s);
    s[m] = (sql: string) => {
      const st = orig(sql) as Record<string, unknown>;
      return new Proxy(st, {
        get(t, p) {
          const v = Reflect.get(t, p) as unknown;
          if (typeof v !== "function") return v;
          if (["all", "get", "run", "values", "iterate"].includes(String(p)))
            return (...args: Value[]) => {
              recording?.push({ sql, args });
              return (v as (...a: Value[]) => unknown).apply(t, args);
            };
          return (v as (...a: unknown[]) => unknown).bind(t);
        },
      });
    };
  }
  for (const [username, password] of [
    ["bench", "bench-password-1"],
    ["member1", "member1-password-1"],
  ] as const) {
    const { cookie } = await signInInProcess(app, username, password);
    const fetchJson = async (path: string) => {
      const r = await app.fetch(new Request(`http://localhost/api/v1/${path}`, { headers: { cookie } }));
      if (r.status !== 200) throw new Error(`${label} ${path}: ${r.status}`);
      return r.json() as Promise<{ next_cursor: string }>;
    };
    let cursor: string | null = null;
    for (let i = 0; i < 30; i++) cursor = (await fetchJson(`tasks?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`)).next_cursor;
    const who = username === "bench" ? "owner " : "member";
    const cases: [string, string][] = [
      ["first page", "tasks?limit=50"],
      ["deep page", `tasks?limit=50&cursor=${encodeURIComponent(cursor!)}`],
      ["q=milk", "tasks?limit=50&q=milk"],
      ["q=zephyrine", "tasks?limit=50&q=zephyrine"],
      ["views/overdue", "views/overdue?limit=50"],
      ["views/no_date", "views/no_date?limit=50"],
      ["views/completed", "views/completed?limit=50"],
      ["views/counts", "views/counts"],
    ];
    for (const [name, path] of cases) {
      recording = [];
      await fetchJson(path);
      const stmts = recording as Recorded[];
      recording = null;
      const key = `${who} ${name}`;
      if (!names.includes(key)) names.push(key);
      const show = process.env.BENCH_SHOW === key.replace(/\s+/g, " ");
      if (show) console.log(`${label} ${key}:`);
      results.set(`${label} ${key}`, { statements: stmts.length, ...replay(`${dir}/app.db`, stmts, show) });
      // BENCH_TIME=1 with BENCH_SHOW: each statement of the shown case also timed in process
      // (Bun's SQLite, this connection, warm cache): median µs of 15 batches of 200 runs.
      if (show && process.env.BENCH_TIME === "1") {
        for (const st of stmts) {
          if (/^(BEGIN|COMMIT)/.test(st.sql)) continue;
          const q = plainQuery(st.sql);
          const batches: number[] = [];
          for (let b = 0; b < 15; b++) {
            const t0 = performance.now();
            for (let i = 0; i < 200; i++) q.all(...st.args);
            batches.push(((performance.now() - t0) * 1000) / 200);
          }
          batches.sort((x, y) => x - y);
          console.log(`  ${batches[7]!.toFixed(1).padStart(8)} µs  ${st.sql.replace(/\s+/g, " ").slice(0, 110)}`);
        }
      }
    }
  }
  db.close();
  rmSync(dir, { recursive: true, force: true });
}
console.log("per request: statements, SQLite VM steps, pages touched (cache hits + misses), full-scan steps");
for (const name of names) {
  const line = trees.map(([label]) => {
    const r = results.get(`${label} ${name}`)!;
    return `${label} ${String(r.statements).padStart(3)} st ${String(r.steps).padStart(9)} steps ${String(r.pages).padStart(6)} pages ${String(r.fullscan).padStart(4)} fs`;
  });
  const b = results.get(`before ${name}`);
  const a = results.get(`after ${name}`)!;
  console.log(`${name.padEnd(24)} ${line.join("  |  ")}${b ? `  steps ${((a.steps / b.steps) * 100).toFixed(0)}%` : ""}`);
}
