// Completing a recurring task (POST /recurrences/{id}/complete) over real HTTP on loopback, one
// request at a time, against a fresh server. Each completion records a completed copy (task,
// 3 subtasks, tags), moves the task to its next occurrence and resets its subtasks, in one
// transaction (synchronous=FULL: one fsync per commit). Target: p50 ≤ 5 ms.
// Scenarios: a timed weekly RRULE in Europe/Berlin, a date-only monthly BYMONTHDAY=-1 rule,
// a COUNT=1000 daily rule (expanded from DTSTART, so later completions do more work), and
// repeat-after-completion.
// Usage: APP_EXE= bun bench/recurrence.ts   (empty APP_EXE: bun src/main.ts; default: dist/app when built)
import { rmSync } from "node:fs";
import { EXE, freshDir, median, percentile, setupAndLogin, startServer, stopServer } from "./lib";

const N = Number(process.env.BENCH_COMPLETIONS ?? 800);

const dir = freshDir();
const s = await startServer(dir, undefined, {});
const auth = await setupAndLogin(s.base);
const api = (path: string, init: RequestInit = {}) => fetch(`${s.base}/api/v1${path}`, { ...init, headers: auth.headers });

async function json<T>(r: Promise<Response>, want: number): Promise<T> {
  const res = await r;
  const body = await res.text();
  if (res.status !== want) throw new Error(`${res.status} ${body}`);
  return JSON.parse(body) as T;
}

const tag = await json<{ id: string }>(api("/tags", { method: "POST", body: JSON.stringify({ name: "bench", color: "#123456" }) }), 201);
// Some unrelated tasks so the tables are not trivially small.
for (let i = 0; i < 500; i++) await json(api("/tasks", { method: "POST", body: JSON.stringify({ title: `filler ${i}`, due_at: "2026-12-01" }) }), 201);

async function recurringTask(dueAt: string | null, rec: Record<string, unknown>): Promise<string> {
  const t = await json<{ id: string }>(
    api("/tasks", { method: "POST", body: JSON.stringify({ title: "Weekly review", description: "x".repeat(200), due_at: dueAt, tag_ids: [tag.id] }) }),
    201,
  );
  for (let i = 0; i < 3; i++) {
    await json(api("/tasks", { method: "POST", body: JSON.stringify({ title: `step ${i}`, parent_id: t.id, completed: i === 0 }) }), 201);
  }
  const r = await json<{ id: string }>(api("/recurrences", { method: "POST", body: JSON.stringify({ task_id: t.id, ...rec }) }), 201);
  return r.id;
}

const scenarios: [string, string | null, Record<string, unknown>, number][] = [
  ["rrule weekly MO,WE,FR 09:00 Europe/Berlin", "2026-11-30T08:00:00Z", { kind: "rrule", rrule: "FREQ=WEEKLY;BYDAY=MO,WE,FR", timezone: "Europe/Berlin" }, N],
  ["rrule monthly BYMONTHDAY=-1 (date-only)", "2026-11-30", { kind: "rrule", rrule: "FREQ=MONTHLY;BYMONTHDAY=-1" }, N],
  ["rrule daily COUNT=1000 (date-only)", "2026-11-30", { kind: "rrule", rrule: "FREQ=DAILY;COUNT=1000" }, Math.min(N, 990)],
  ["after_completion every 2 days", null, { kind: "after_completion", interval: 2, unit: "day" }, N],
];

console.log(`server: ${EXE || "bun src/main.ts"}; ${N} sequential completions per scenario (loopback HTTP, client-side latency)`);
for (const [name, due, rec, n] of scenarios) {
  const id = await recurringTask(due, rec);
  for (let i = 0; i < 20; i++) await json(api(`/recurrences/${id}/complete`, { method: "POST" }), 200); // warm-up
  const ms: number[] = [];
  for (let i = 0; i < n - 20; i++) {
    const t0 = performance.now();
    const r = await api(`/recurrences/${id}/complete`, { method: "POST" });
    await r.arrayBuffer();
    ms.push(performance.now() - t0);
    if (r.status !== 200) throw new Error(`complete: ${r.status}`);
  }
  console.log(
    `  ${name.padEnd(44)} p50 ${median(ms).toFixed(2)} ms  p90 ${percentile(ms, 90).toFixed(2)} ms  p99 ${percentile(ms, 99).toFixed(2)} ms  (n=${ms.length})`,
  );
}
await stopServer(s);
rmSync(dir, { recursive: true, force: true });
