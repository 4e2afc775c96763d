// 10,000 reminders due at the same instant: how long until every one has reached a local webhook
// receiver, and what the latency of other requests (a task page) is meanwhile, against the same
// requests before the burst. The server under test is the executable (or `bun src/main.ts`, see
// bench/README.md); the receiver is a second process (bench/reminders-receiver.ts) so the probe's
// own event loop does not carry 10,000 POSTs. Prints figures; asserts nothing.
//   bun bench/reminders-burst.ts            (REMINDERS=10000 by default)
import { rmSync } from "node:fs";
import { join } from "node:path";
import { freshDir, percentile, setupAndLogin, startServer, stopServer } from "./lib";

const N = Number(process.env.REMINDERS ?? 10_000);
const PER_TASK = 10; // the API's limit per target
const dir = freshDir("app-bench-rem-");
const server = await startServer(dir);
const auth = await setupAndLogin(server.base);
const post = async (path: string, body: unknown) => {
  const r = await fetch(`${server.base}/api/v1${path}`, { method: "POST", headers: auth.headers, body: JSON.stringify(body) });
  if (r.status >= 300) throw new Error(`${path}: ${r.status} ${await r.text()}`);
  return (await r.json()) as { id: string };
};

// The receiver: counts POSTs, answers 200; reports the count and the last arrival on GET /count.
const receiver = Bun.spawn([process.execPath, join(import.meta.dir, "reminders-receiver.ts")], { stdout: "pipe", stderr: "inherit" });
const rxLine = (await new Response(receiver.stdout).body!.getReader().read()).value!;
const rxBase = new TextDecoder().decode(rxLine).trim();
await post("/notification-channels", { type: "webhook", name: "bench", config: { url: `${rxBase}/hook` } });

// A task page to probe with (50 tasks besides the reminders' own).
const probe = async (): Promise<number> => {
  const t0 = performance.now();
  const r = await fetch(`${server.base}/api/v1/tasks?limit=50`, { headers: auth.headers });
  await r.arrayBuffer();
  return performance.now() - t0;
};

// 1,000 undated tasks with 10 before_due reminders each (nothing armed yet); then two batch
// requests give every task the same due_at, re-arming all 10,000 reminders through the tasks'
// change hook, to fire at one instant.
console.log(`creating ${N} reminders on ${N / PER_TASK} tasks…`);
const tSetup = performance.now();
const taskIds: string[] = [];
for (let t = 0; t < N / PER_TASK; t += 10) {
  await Promise.all(
    Array.from({ length: Math.min(10, N / PER_TASK - t) }, async (_, j) => {
      const task = await post("/tasks", { title: `burst ${t + j}` });
      taskIds.push(task.id);
      for (let k = 0; k < PER_TASK; k++) await post(`/tasks/${task.id}/reminders`, { kind: "before_due", minutes_before: 0 });
    }),
  );
}
const fireAt = new Date(Date.now() + 20_000);
fireAt.setUTCMilliseconds(0);
const tArm = performance.now();
for (let i = 0; i < taskIds.length; i += 500) await post("/tasks/batch", { task_ids: taskIds.slice(i, i + 500), due_at: fireAt.toISOString() });
console.log(`set up in ${((performance.now() - tSetup) / 1000).toFixed(1)} s; arming all ${N} (two batch requests) took ${(performance.now() - tArm).toFixed(0)} ms; all fire at ${fireAt.toISOString()}`);

// Baseline: the probe while nothing fires.
const baseline: number[] = [];
while (Date.now() < fireAt.getTime() - 2000 && baseline.length < 400) baseline.push(await probe());
await Bun.sleep(Math.max(0, fireAt.getTime() - Date.now()));

// The burst: probe continuously until the receiver has every delivery.
const during: number[] = [];
let count = 0;
let lastAt = 0;
const deadline = Date.now() + 15 * 60_000;
while (count < N && Date.now() < deadline) {
  for (let i = 0; i < 10; i++) during.push(await probe());
  const c = (await (await fetch(`${rxBase}/count`)).json()) as { count: number; last: number };
  count = c.count;
  lastAt = c.last;
}
const allIn = (lastAt - fireAt.getTime()) / 1000;
const fmt = (xs: number[]) =>
  `p50 ${percentile(xs, 50).toFixed(1)} ms, p90 ${percentile(xs, 90).toFixed(1)} ms, p99 ${percentile(xs, 99).toFixed(1)} ms, max ${Math.max(...xs).toFixed(1)} ms (n=${xs.length})`;
console.log(`delivered ${count}/${N}; the last arrived ${allIn.toFixed(1)} s after the fire time`);
console.log(`GET /tasks?limit=50 idle (before the burst): ${fmt(baseline)}`);
console.log(`GET /tasks?limit=50 during the burst: ${fmt(during)}`);
const dups = (await (await fetch(`${rxBase}/count`)).json()) as { duplicates: number };
console.log(`duplicate X-Delivery-Id at the receiver: ${dups.duplicates}`);
receiver.kill();
await stopServer(server);
rmSync(dir, { recursive: true, force: true });
