// Habits and countdowns latency on a seeded database:
//  - one user with 30 daily habits and 5 years of daily logs (54,780 logs) plus a pause each:
//    GET /habits/week and GET /habits/{id}/stats
//  - 500 countdowns (half lunar, mixed repeats): GET /countdowns
// The data is written straight into the data directory's database while the server is stopped,
// then the server (dist/app, or `bun src/main.ts` when missing) is started and measured:
// sequential requests on one connection (per-request latency), then wrk with 8 connections.
// Usage: bun bench/planner.ts
import { rmSync } from "node:fs";
import { join } from "node:path";
import { openDatabase } from "../src/core/db";
import { dateOfDay, dayNumber } from "../src/core/days";
import { newId } from "../src/core/ids";
import { localDate } from "../src/core/time";
import { toLunar } from "../src/features/countdowns/lunar-calendar";
import { EXE, freshDir, percentile, median, setupAndLogin, startServer, stopServer, wrk } from "./lib";

console.log(`executable: ${EXE || "bun src/main.ts (dist/app missing)"}`);
const dir = freshDir("app-bench-planner-");

// 1. A server creates the schema and the user, then stops.
let s = await startServer(dir);
await setupAndLogin(s.base);
await stopServer(s);

// 2. Seed directly.
const db = openDatabase(join(dir, "app.db"));
const userId = (db.sqlite.query("SELECT id FROM users LIMIT 1").get() as { id: string }).id;
const now = new Date().toISOString();
const today = dayNumber(localDate(new Date(), "UTC"));
const firstDay = today - 5 * 365 - 1;
const insHabit = db.sqlite.prepare(
  "INSERT INTO habits (id, user_id, name, icon, color, frequency, goal, unit, start_date, position, archived_at, created_at, updated_at) VALUES (?, ?, ?, NULL, NULL, ?, 1, NULL, ?, ?, NULL, ?, ?)",
);
const insLog = db.sqlite.prepare("INSERT INTO habit_logs (habit_id, user_id, date, value, note, created_at, updated_at) VALUES (?, ?, ?, ?, NULL, ?, ?)");
const insPause = db.sqlite.prepare("INSERT INTO habit_pauses (id, habit_id, user_id, start_date, end_date, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)");
const habitIds: string[] = [];
let logs = 0;
db.sqlite.transaction(() => {
  for (let h = 0; h < 30; h++) {
    const id = newId();
    habitIds.push(id);
    const freq = h % 3 === 0 ? { type: "daily" } : h % 3 === 1 ? { type: "weekdays", days: [1, 2, 3, 4, 5] } : { type: "times_per_week", count: 3 };
    insHabit.run(id, userId, `habit ${h}`, JSON.stringify(freq), dateOfDay(firstDay), h, now, now);
    for (let d = firstDay; d <= today; d++) {
      // ~85% of days done, a few partial: realistic streak breaks.
      const r = (d * 7919 + h * 104729) % 100;
      insLog.run(id, userId, dateOfDay(d), r < 85 ? 1 : r < 90 ? 0.5 : 0, now, now);
      logs++;
    }
    insPause.run(newId(), id, userId, dateOfDay(firstDay + 400 + h), dateOfDay(firstDay + 414 + h), now, now);
  }
})();
const insCountdown = db.sqlite.prepare(
  `INSERT INTO countdowns (id, user_id, name, date, type, repeat, icon, calendar, lunar_month, lunar_day, lunar_leap, pinned, archived_at, created_at, updated_at)
   VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?, ?, ?, ?, NULL, ?, ?)`,
);
const repeats = ["none", "weekly", "monthly", "yearly", "yearly"] as const;
const types = ["countdown", "anniversary", "birthday"] as const;
db.sqlite.transaction(() => {
  for (let i = 0; i < 500; i++) {
    const lunar = i % 2 === 0;
    const date = dateOfDay(dayNumber("1950-01-01") + ((i * 7907) % (80 * 365)));
    const l = lunar ? toLunar(dayNumber(date), Number(date.slice(0, 4)))! : null;
    insCountdown.run(newId(), userId, `countdown ${i}`, date, types[i % 3]!, repeats[i % 5]!, lunar ? "lunar" : "gregorian", l?.month ?? null, l?.day ?? null, l ? (l.leap ? 1 : 0) : null, i === 7 ? 1 : 0, now, now);
  }
})();
db.sqlite.run("ANALYZE");
db.close();
console.log(`seeded: 30 habits, ${logs} logs, 30 pauses, 500 countdowns (250 lunar)`);

// 3. Measure.
s = await startServer(dir);
const auth = await setupAndLogin(s.base);
const get = { cookie: auth.cookie };

async function sequential(label: string, url: string, n: number): Promise<void> {
  for (let i = 0; i < 50; i++) await (await fetch(url, { headers: get })).arrayBuffer(); // warm-up
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const r = await fetch(url, { headers: get });
    const b = await r.arrayBuffer();
    times.push(performance.now() - t0);
    if (r.status !== 200) throw new Error(`${label}: ${r.status}`);
    bytes = b.byteLength;
  }
  console.log(
    `${label}: ${n} sequential requests, p50 ${median(times).toFixed(2)} ms, p99 ${percentile(times, 99).toFixed(2)} ms, max ${Math.max(...times).toFixed(2)} ms (${(bytes / 1024).toFixed(1)} KiB)`,
  );
}

const week = `${s.base}/api/v1/habits/week`;
const stats = `${s.base}/api/v1/habits/${habitIds[0]}/stats`;
const statsTpw = `${s.base}/api/v1/habits/${habitIds[2]}/stats`;
const countdowns = `${s.base}/api/v1/countdowns`;
await sequential("GET /habits/week (30 habits)", week, 1000);
await sequential("GET /habits/{id}/stats (daily, 5 years)", stats, 1000);
await sequential("GET /habits/{id}/stats (times_per_week, 5 years)", statsTpw, 1000);
await sequential("GET /countdowns (500, half lunar)", countdowns, 1000);
for (const [label, url] of [
  ["GET /habits/week", week],
  ["GET /habits/{id}/stats", stats],
  ["GET /countdowns", countdowns],
] as const) {
  const w = await wrk(url, get, { connections: 8, seconds: 5 });
  console.log(`${label}, wrk 8 connections 5 s: ${w.rps.toFixed(0)} req/s, p50 ${w.p50ms.toFixed(2)} ms, p99 ${w.p99ms.toFixed(2)} ms, non-2xx ${w.errors}`);
}
await stopServer(s);
rmSync(dir, { recursive: true, force: true });
