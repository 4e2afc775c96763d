// Legacy export and replace-restore of a 100,000-task account: seconds and the server's peak RSS
// (the CSV restore both as a text/csv body and as the multipart field `file`).
// The account is built by bench/tasks-seed.ts (100,000 tasks, 10% subtasks, tags, 50 lists).
// Usage: bun bench/legacy.ts     (dist/app when built; APP_EXE= bun bench/legacy.ts runs bun src/main.ts)
import { rmSync } from "node:fs";
import { EXE, freshDir, measured, setupAndLogin, startServer, stopServer } from "./lib";
// bench/tasks-seed.ts runs when imported; its user, as it creates it:
const BENCH_USER = { username: "bench", password: "bench-password-1" };

const dir = freshDir("app-bench-legacy-");
const seed = Bun.spawnSync(["bun", "bench/tasks-seed.ts", dir], { stdout: "inherit", stderr: "inherit" });
if (seed.exitCode !== 0) throw new Error("seeding failed");
const server = await startServer(dir);
const owner = await setupAndLogin(server.base, BENCH_USER.username, BENCH_USER.password);

/** Runs `work` while sampling the server's RSS every 5 ms. */

const line = (what: string, m: { seconds: number; baseMiB: number; peakMiB: number }, extra = "") =>
  console.log(`${what.padEnd(42)} ${m.seconds.toFixed(2)} s   RSS ${m.baseMiB.toFixed(0)} → peak ${m.peakMiB.toFixed(0)} MiB${extra ? `   ${extra}` : ""}`);

console.log(`server: ${EXE || "bun src/main.ts"}`);
const json = await measured(server, async () => {
  const r = await fetch(`${server.base}/api/v1/export`, { headers: { cookie: owner.cookie } });
  if (r.status !== 200) throw new Error(`export: ${r.status}`);
  return r.text();
});
const doc = JSON.parse(json.result) as { tasks: unknown[] };
line("GET /export (JSON)", json, `${(json.result.length / 1e6).toFixed(1)} MB, ${doc.tasks.length} tasks`);
const csv = await measured(server, async () => {
  const r = await fetch(`${server.base}/api/v1/export.csv`, { headers: { cookie: owner.cookie } });
  if (r.status !== 200) throw new Error(`export.csv: ${r.status}`);
  return r.text();
});
line("GET /export.csv", csv, `${(csv.result.length / 1e6).toFixed(1)} MB`);

// A second account to restore into.
const created = await fetch(`${server.base}/api/v1/users`, { method: "POST", headers: owner.headers, body: JSON.stringify({ username: "target", password: "target-password-1" }) });
if (created.status !== 201) throw new Error(`user: ${created.status}`);
const target = await setupAndLogin(server.base, "target", "target-password-1");

async function restore(path: string, body: string | FormData, contentType: string | null) {
  const headers: Record<string, string> = { cookie: target.cookie, "x-csrf-token": target.csrf };
  // A FormData body brings its own multipart Content-Type (with the boundary).
  if (contentType) headers["content-type"] = contentType;
  const r = await fetch(`${server.base}/api/v1/${path}`, { method: "POST", headers, body });
  const j = (await r.json()) as { counts?: { tasks: number } };
  if (r.status !== 200) throw new Error(`${path}: ${r.status} ${JSON.stringify(j).slice(0, 300)}`);
  return j.counts!.tasks;
}
const r1 = await measured(server, () => restore("restore?mode=replace", json.result, "application/json"));
line("POST /restore?mode=replace (empty account)", r1, `${r1.result} tasks`);
const r2 = await measured(server, () => restore("restore?mode=replace", json.result, "application/json"));
line("POST /restore?mode=replace (100k replaced)", r2, `${r2.result} tasks`);
const r3 = await measured(server, () => restore("restore.csv?mode=replace", csv.result, "text/csv"));
line("POST /restore.csv?mode=replace (100k replaced)", r3, `${r3.result} tasks`);
const form = new FormData();
form.append("file", new Blob([csv.result], { type: "text/csv" }), "export.csv");
const r4 = await measured(server, () => restore("restore.csv?mode=replace", form, null));
line("POST /restore.csv multipart (100k replaced)", r4, `${r4.result} tasks`);
const again = await fetch(`${server.base}/api/v1/export`, { headers: { cookie: target.cookie } });
const doc2 = JSON.parse(await again.text()) as { tasks: unknown[] };
console.log(`round trip: ${doc2.tasks.length} tasks exported again from the restored account`);
await stopServer(server);
rmSync(dir, { recursive: true, force: true });
