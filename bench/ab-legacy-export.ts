// Interleaved A/B of the legacy export (JSON and CSV) between two builds on one seeded account:
// each round starts each build on the same data directory, logs in and times GET /export and
// /export.csv three times; the first export of a fresh server (worker start, code loading) is kept
// apart from the warm ones; medians per build are printed. For "within 5%" comparisons on a
// VM whose speed drifts, where one run of bench/legacy.ts per build is not enough.
// With RESTORE=1, each server run also times one JSON and one CSV replace-restore of the export into a
// second account that already holds the 100,000 tasks (a first, untimed restore fills it).
// Usage: [RESTORE=1] bun bench/ab-legacy-export.ts <build A> <build B> [rounds=5]
import { freePort, freshDir, median, setupAndLogin } from "./lib";

const [A, B] = [process.argv[2], process.argv[3]];
const ROUNDS = Number(process.argv[4] ?? 5);
if (!A || !B) throw new Error("usage: bun bench/ab-legacy-export.ts <build A> <build B> [rounds]");
const dir = freshDir("app-bench-ab-");
const seed = Bun.spawnSync(["bun", "bench/tasks-seed.ts", dir], { stdout: "inherit", stderr: "inherit" });
if (seed.exitCode !== 0) throw new Error("seeding failed");

async function start(exe: string) {
  const port = freePort();
  const proc = Bun.spawn([exe, "serve", "--data-dir", dir, "--port", String(port), "--log-format", "off"], { stdout: "ignore", stderr: "inherit" });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 3000; i++) {
    try {
      if ((await fetch(`${base}/api/v1/health/ready`)).status === 200) return { proc, base };
    } catch {
      /* not yet */
    }
    await Bun.sleep(2);
  }
  throw new Error("not ready");
}

const RESTORE = process.env.RESTORE === "1";
type Times = { json: number[]; csv: number[]; first: number[]; restoreJson: number[]; restoreCsv: number[] };
const fresh = (): Times => ({ json: [], csv: [], first: [], restoreJson: [], restoreCsv: [] });
const times: Record<string, Times> = { A: fresh(), B: fresh() };
let jsonBody = "";
let csvBody = "";

async function restoreInto(base: string, path: string, body: string, contentType: string): Promise<number> {
  const target = await setupAndLogin(base, "target", "target-password-1");
  const t0 = performance.now();
  const r = await fetch(`${base}/api/v1/${path}`, { method: "POST", headers: { cookie: target.cookie, "x-csrf-token": target.csrf, "content-type": contentType }, body });
  const j = (await r.json()) as { counts?: { tasks: number } };
  if (r.status !== 200 || j.counts?.tasks !== 100_000) throw new Error(`${path}: ${r.status} ${JSON.stringify(j).slice(0, 300)}`);
  return performance.now() - t0;
}

if (RESTORE) {
  // The second account, filled once (untimed), so every timed restore replaces 100,000 tasks.
  const s = await start(A);
  const owner = await setupAndLogin(s.base);
  jsonBody = await (await fetch(`${s.base}/api/v1/export`, { headers: { cookie: owner.cookie } })).text();
  csvBody = await (await fetch(`${s.base}/api/v1/export.csv`, { headers: { cookie: owner.cookie } })).text();
  const created = await fetch(`${s.base}/api/v1/users`, { method: "POST", headers: owner.headers, body: JSON.stringify({ username: "target", password: "target-password-1" }) });
  if (created.status !== 201) throw new Error(`user: ${created.status}`);
  await restoreInto(s.base, "restore?mode=replace", jsonBody, "application/json");
  s.proc.kill();
  await s.proc.exited;
}
for (let r = 0; r < ROUNDS; r++) {
  for (const [name, exe] of [["A", A], ["B", B]] as const) {
    const s = await start(exe);
    const auth = await setupAndLogin(s.base);
    for (const [kind, path] of [["json", "/api/v1/export"], ["csv", "/api/v1/export.csv"]] as const) {
      for (let i = 0; i < 3; i++) {
        const t0 = performance.now();
        const res = await fetch(`${s.base}${path}`, { headers: { cookie: auth.cookie } });
        await res.arrayBuffer();
        const ms = performance.now() - t0;
        // The first export of a fresh server also starts the job worker and loads the legacy code.
        if (kind === "json" && i === 0) times[name]!.first.push(ms);
        else times[name]![kind].push(ms);
      }
    }
    if (RESTORE) {
      times[name]!.restoreJson.push(await restoreInto(s.base, "restore?mode=replace", jsonBody, "application/json"));
      times[name]!.restoreCsv.push(await restoreInto(s.base, "restore.csv?mode=replace", csvBody, "text/csv"));
    }
    s.proc.kill();
    await s.proc.exited;
  }
  console.log(`round ${r + 1}: A json ${median(times.A!.json).toFixed(0)} ms csv ${median(times.A!.csv).toFixed(0)} ms | B json ${median(times.B!.json).toFixed(0)} ms csv ${median(times.B!.csv).toFixed(0)} ms (medians so far); first export after start A ${times.A!.first.at(-1)!.toFixed(0)} ms, B ${times.B!.first.at(-1)!.toFixed(0)} ms`);
}
const ratio = (k: "json" | "csv" | "restoreJson" | "restoreCsv") => ((median(times.B![k]) / median(times.A![k])) * 100).toFixed(0);
console.log(`first export of a fresh server, median: A ${median(times.A!.first).toFixed(0)} ms, B ${median(times.B!.first).toFixed(0)} ms`);
console.log(`A ${A}\nB ${B}\nwarm medians: json A ${median(times.A!.json).toFixed(0)} ms, B ${median(times.B!.json).toFixed(0)} ms (B/A ${ratio("json")}%); csv A ${median(times.A!.csv).toFixed(0)} ms, B ${median(times.B!.csv).toFixed(0)} ms (B/A ${ratio("csv")}%)`);
if (RESTORE) {
  console.log(
    `replace-restore of 100,000 tasks, medians: json A ${median(times.A!.restoreJson).toFixed(0)} ms, B ${median(times.B!.restoreJson).toFixed(0)} ms (B/A ${ratio("restoreJson")}%); csv A ${median(times.A!.restoreCsv).toFixed(0)} ms, B ${median(times.B!.restoreCsv).toFixed(0)} ms (B/A ${ratio("restoreCsv")}%)`,
  );
}
