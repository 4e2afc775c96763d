// Smart views and the calendar (issue 14) on the 100,000-task account of bench/tasks-seed.ts,
// through HTTP against the compiled dist/app (or `bun src/main.ts` when it is missing):
//  - 2,000 open top-level tasks are moved into the next seven days (today in UTC, the bench
//    user's zone; a third date-only, the rest timed), on top of the seed's (its dates end in
//    early November 2026, so the past is full of overdue and completed dated tasks);
//  - the month after next gets 500 dated tasks and 50 repeating ones (daily, weekly, monthly
//    rules, stored as the API stores them).
// Then, one connection, sequential: GET /tasks?limit=50 (the plain page, for comparison),
// GET /views/today, /views/overdue, /views/next_7_days, /views/counts, and GET /calendar for that
// month's six-week grid. Median (p50) and p99 of each.
// Usage: bun bench/views.ts     (seeds /tmp/app-bench-views first; a few minutes)
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { EXE, median, percentile, startServer, stopServer } from "./lib";

const dir = process.env.BENCH_DIR ?? "/tmp/app-bench-views";
const N = Number(process.env.BENCH_N ?? 300);

const seed = Bun.spawnSync(["bun", "bench/tasks-seed.ts", dir], { stdout: "inherit", stderr: "inherit" });
if (seed.exitCode !== 0) throw new Error("seeding failed");

const today = new Date().toISOString().slice(0, 10);
const day = (n: number) => new Date(Date.parse(`${today}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
// The month after next, and its six-week grid from the Monday on or before its first day.
const first = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() + 2, 1));
const monthFirst = first.toISOString().slice(0, 10);
const gridFrom = new Date(first.getTime() - ((first.getUTCDay() + 6) % 7) * 86_400_000).toISOString().slice(0, 10);
const gridTo = new Date(Date.parse(`${gridFrom}T00:00:00Z`) + 42 * 86_400_000).toISOString().slice(0, 10);

{
  const db = new Database(join(dir, "app.db"));
  const user = db.query<{ id: string }, []>("SELECT id FROM users").get()!.id;
  const open = db
    .query<{ id: string }, [string]>(
      "SELECT id FROM tasks WHERE user_id = ? AND parent_id IS NULL AND deleted_at IS NULL AND completed = 0 ORDER BY id LIMIT 2600",
    )
    .all(user)
    .map((r) => r.id);
  const setDue = db.query("UPDATE tasks SET due_at = ? WHERE id = ?");
  const insRec = db.query(
    "INSERT INTO recurrences (id, user_id, task_id, kind, rrule, interval, unit, timezone, dtstart, created_at, updated_at) VALUES (?, ?, ?, 'rrule', ?, NULL, NULL, 'UTC', ?, ?, ?)",
  );
  db.run("BEGIN");
  open.slice(0, 2000).forEach((id, i) => {
    const d = day(i % 7);
    setDue.run(i % 3 === 0 ? d : `${d}T${String(6 + (i % 14)).padStart(2, "0")}:${String((i * 7) % 60).padStart(2, "0")}:00.000Z`, id);
  });
  open.slice(2000, 2500).forEach((id, i) => {
    const d = new Date(first.getTime() + (i % 28) * 86_400_000).toISOString().slice(0, 10);
    setDue.run(i % 2 ? d : `${d}T09:30:00.000Z`, id);
  });
  const rules = ["FREQ=DAILY", "FREQ=WEEKLY;BYDAY=MO,WE,FR", "FREQ=WEEKLY", "FREQ=MONTHLY;BYMONTHDAY=15", "FREQ=DAILY;INTERVAL=3"];
  open.slice(2500, 2550).forEach((id, i) => {
    // Current occurrence a week before the month: the grid shows the later ones.
    const start = new Date(first.getTime() - 7 * 86_400_000).toISOString().slice(0, 10);
    const due = i % 2 ? start : `${start}T08:00:00.000Z`;
    setDue.run(due, id);
    insRec.run(Bun.randomUUIDv7(), user, id, rules[i % rules.length]!, due, "2026-11-01T00:00:00.000Z", "2026-11-01T00:00:00.000Z");
  });
  db.run("COMMIT");
  db.run("PRAGMA optimize");
  db.close();
}

const app = await startServer(dir);
try {
  const login = await fetch(`${app.base}/api/v1/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: "bench", password: "bench-password-1" }),
  });
  if (login.status !== 200) throw new Error(`login: ${login.status}`);
  const cookie = login.headers.getSetCookie().map((c) => c.split(";")[0]!).join("; ");
  const get = (path: string) => fetch(`${app.base}${path}`, { headers: { cookie } });

  async function measure(path: string): Promise<string> {
    const first = await get(path);
    const body = (await first.json()) as Record<string, unknown>;
    if (first.status !== 200) throw new Error(`${path}: ${first.status} ${JSON.stringify(body)}`);
    for (let i = 0; i < 10; i++) await (await get(path)).arrayBuffer();
    const ts: number[] = [];
    for (let i = 0; i < N; i++) {
      const t = performance.now();
      const r = await get(path);
      await r.arrayBuffer();
      ts.push(performance.now() - t);
    }
    let what = "";
    if (Array.isArray(body.items)) what = `${body.items.length} tasks`;
    else if (Array.isArray(body.groups)) what = `${(body.groups as { tasks: unknown[] }[]).reduce((n, g) => n + g.tasks.length, 0)} tasks in ${(body.groups as unknown[]).length} days`;
    else if (Array.isArray(body.days)) {
      const days = body.days as { tasks: unknown[]; occurrences: unknown[] }[];
      what = `${days.reduce((n, d) => n + d.tasks.length, 0)} tasks, ${days.reduce((n, d) => n + d.occurrences.length, 0)} occurrences`;
    } else what = JSON.stringify(body.counts);
    return `${path.padEnd(52)} p50 ${median(ts).toFixed(2)} ms  p99 ${percentile(ts, 99).toFixed(2)} ms  (${what})`;
  }

  console.log(`executable: ${EXE || "bun src/main.ts (dist/app missing)"}; today ${today} (UTC); ${N} sequential requests each; ${navigator.hardwareConcurrency} CPUs`);
  for (const path of [
    "/api/v1/tasks?limit=50",
    "/api/v1/views/today?limit=50",
    "/api/v1/views/next_7_days?limit=50",
    "/api/v1/views/overdue?limit=50",
    "/api/v1/views/counts",
    `/api/v1/calendar?from=${gridFrom}&to=${gridTo}`,
  ]) {
    console.log(await measure(path));
  }
  console.log(`(calendar: month ${monthFirst.slice(0, 7)}, grid ${gridFrom} to ${gridTo})`);
} finally {
  await stopServer(app);
}
