// One request path's CPU cost in process, for one tree and one seed (a second opinion on
// sharing-ab.ts, whose two trees share a process): 300 warm-up requests, then N timed ones.
// Usage: [ROOT=<tree>] [SEED=<data dir>] [U=member1] [P="tasks?limit=50&q=milk"] bun bench/one-path.ts
// ROOT defaults to this checkout, SEED to /tmp/app-bench-share (sharing-seed.ts), U to member1 (its
// password is "<U>-password-1", as the seeds make them), P to views/counts; N=3000.
import { rmSync } from "node:fs";
import { resolve } from "node:path";
import { appOfTree, signInInProcess } from "./lib";

const root = resolve(process.env.ROOT ?? resolve(import.meta.dir, ".."));
const seed = resolve(process.env.SEED ?? "/tmp/app-bench-share");
const user = process.env.U ?? "member1";
const path = process.env.P ?? "views/counts";
const N = Number(process.env.N ?? 3000);
const { app, db, dir } = await appOfTree(root, seed, "one-path");
try {
  const { cookie } = await signInInProcess(app, user, `${user}-password-1`);
  const run = () => app.fetch(new Request(`http://localhost/api/v1/${path}`, { headers: { cookie } }));
  const first = await run();
  if (first.status !== 200) throw new Error(`${path}: ${first.status}`);
  for (let i = 0; i < 300; i++) await (await run()).arrayBuffer();
  const c0 = process.cpuUsage();
  for (let i = 0; i < N; i++) await (await run()).arrayBuffer();
  const u = process.cpuUsage(c0);
  console.log(`${user} ${path}: ${((u.user + u.system) / N).toFixed(0)} µs CPU per request (${N} requests, ${root})`);
} finally {
  db.close();
  rmSync(dir, { recursive: true, force: true });
}
