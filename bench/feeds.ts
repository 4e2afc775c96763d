// Calendar feed generation on a big account (issue 16): the 100,000-task account of
// bench/tasks-seed.ts, plus 20,000 open tasks due over the next two years (so the feed's cap of
// 5,000 tasks is reached), 200 countdowns (half lunar, mixed repeats) and 20 habits with a daily
// reminder. The server (dist/app, or `bun src/main.ts` when missing) is started on it and each feed
// is fetched: the first fetch (ical.js loaded on it), then 20 more one after another (median, p95),
// the answer's size, a conditional fetch answered 304, and the server's resident memory before
// and at its peak meanwhile (sampled every 5 ms). Prints figures; asserts nothing.
// Usage: bun bench/feeds.ts
import { rmSync } from "node:fs";
import { join } from "node:path";
import { openDatabase } from "../src/core/db";
import { addDays, dateOfDay, dayNumber } from "../src/core/days";
import { newId } from "../src/core/ids";
import { localDate } from "../src/core/time";
import { toLunar } from "../src/features/countdowns/lunar-calendar";
import { EXE, freshDir, measured, median, percentile, setupAndLogin, startServer, stopServer } from "./lib";

console.log(`executable: ${EXE || "bun src/main.ts (dist/app missing)"}`);
const dir = freshDir("app-bench-feeds-");

// 1. The 100,000-task account (tasks-seed.ts writes the schema, the user and the tasks).
const seed = Bun.spawnSync(["bun", join(import.meta.dir, "tasks-seed.ts"), dir], { stdout: "pipe", stderr: "inherit" });
if (seed.exitCode !== 0) throw new Error("tasks-seed.ts failed");
console.log(seed.stdout.toString().trim());

// 2. What a feed reads beyond it, written straight into the database while no server runs.
const db = openDatabase(join(dir, "app.db"));
const userId = (db.sqlite.query("SELECT id FROM users LIMIT 1").get() as { id: string }).id;
const lists = (db.sqlite.query("SELECT id FROM lists WHERE user_id = ?").all(userId) as { id: string }[]).map((r) => r.id);
const now = new Date().toISOString();
const today = localDate(new Date(), "UTC");
db.sqlite.transaction(() => {
  const insTask = db.sqlite.prepare(
    `INSERT INTO tasks (id, user_id, list_id, parent_id, title, description, completed, completed_at, due_at, priority, version, position, created_at, updated_at, deleted_at, search_text)
     VALUES (?, ?, ?, NULL, ?, '', 0, NULL, ?, 1, 1, 0, ?, ?, NULL, ?)`,
  );
  for (let i = 0; i < 20_000; i++) {
    const day = addDays(today, 1 + (i % 700));
    const due = i % 2 === 0 ? day : `${day}T${String(8 + (i % 10)).padStart(2, "0")}:30:00.000Z`;
    insTask.run(newId(), userId, lists[i % lists.length]!, `Future task ${i}`, due, now, now, `future task ${i}`);
  }
  const insCountdown = db.sqlite.prepare(
    `INSERT INTO countdowns (id, user_id, name, date, type, repeat, icon, calendar, lunar_month, lunar_day, lunar_leap, pinned, archived_at, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?, ?, ?, 0, NULL, ?, ?)`,
  );
  const repeats = ["none", "weekly", "monthly", "yearly", "yearly"] as const;
  for (let i = 0; i < 200; i++) {
    const date = dateOfDay(dayNumber("1990-01-01") + i * 53);
    const lunar = i % 2 === 0 ? toLunar(dayNumber(date), Number(date.slice(0, 4))) : null;
    insCountdown.run(newId(), userId, `Countdown ${i}`, date, i % 3 === 0 ? "birthday" : "anniversary", repeats[i % repeats.length]!, lunar ? "lunar" : "gregorian", lunar?.month ?? null, lunar?.day ?? null, lunar ? (lunar.leap ? 1 : 0) : null, now, now);
  }
  const insHabit = db.sqlite.prepare(
    "INSERT INTO habits (id, user_id, name, icon, color, frequency, goal, unit, start_date, position, archived_at, created_at, updated_at) VALUES (?, ?, ?, NULL, NULL, ?, 1, NULL, ?, ?, NULL, ?, ?)",
  );
  const insReminder = db.sqlite.prepare(
    "INSERT INTO reminders (id, user_id, target_type, target_id, kind, minutes_before, at, time, days_before, created_at, updated_at) VALUES (?, ?, 'habit', ?, 'daily', NULL, NULL, ?, NULL, ?, ?)",
  );
  for (let h = 0; h < 20; h++) {
    const id = newId();
    const freq = h % 2 === 0 ? { type: "daily" } : { type: "weekdays", days: [1, 3, 5] };
    insHabit.run(id, userId, `Habit ${h}`, JSON.stringify(freq), addDays(today, -100), h, now, now);
    insReminder.run(newId(), userId, id, `${String(6 + (h % 12)).padStart(2, "0")}:00`, now, now);
  }
})();
db.close();

// 3. Serve, make the feeds, fetch them.
const s = await startServer(dir);
try {
  const auth = await setupAndLogin(s.base);
  const make = async (body: unknown): Promise<string> => {
    const r = await fetch(`${s.base}/api/v1/feeds`, { method: "POST", headers: auth.headers, body: JSON.stringify(body) });
    if (r.status !== 201) throw new Error(`POST /feeds: ${r.status} ${await r.text()}`);
    return new URL(((await r.json()) as { url: string }).url).pathname;
  };
  const feeds: [string, string][] = [
    ["all: tasks as events", await make({ scope: "all", include: ["tasks"] })],
    ["all: tasks as to-dos", await make({ scope: "all", include: ["tasks"], task_format: "todos" })],
    ["all: tasks, countdowns, habits", await make({ scope: "all", include: ["tasks", "countdowns", "habits"] })],
    ["one list: tasks", await make({ scope: "list", list_id: lists[1], include: ["tasks"] })],
    ["countdowns only (200, half lunar)", await make({ scope: "all", include: ["countdowns"] })],
  ];
  for (const [name, path] of feeds) {
    const first = await measured(s, async () => {
      const r = await fetch(`${s.base}${path}`);
      return { status: r.status, etag: r.headers.get("etag") ?? "", bytes: (await r.arrayBuffer()).byteLength };
    });
    const times: number[] = [];
    const run = await measured(s, async () => {
      for (let i = 0; i < 20; i++) {
        const t0 = performance.now();
        const r = await fetch(`${s.base}${path}`);
        await r.arrayBuffer();
        times.push(performance.now() - t0);
      }
    });
    const t0 = performance.now();
    const nm = await fetch(`${s.base}${path}`, { headers: { "if-none-match": first.result.etag } });
    const nmMs = performance.now() - t0;
    const events = first.result.status === 200 ? "" : ` (status ${first.result.status})`;
    console.log(
      `${name}${events}: ${(first.result.bytes / 1024).toFixed(0)} KiB; first ${(first.seconds * 1000).toFixed(0)} ms, then median ${median(times).toFixed(0)} ms, p95 ${percentile(times, 95).toFixed(0)} ms; ` +
        `304 in ${nmMs.toFixed(0)} ms (status ${nm.status}); RSS ${first.baseMiB.toFixed(0)} MiB before, peak ${Math.max(first.peakMiB, run.peakMiB).toFixed(0)} MiB`,
    );
  }
  // Other users meanwhile: GET /api/v1/me one after another, alone for 2 s, then while the biggest
  // feed is fetched 5 times (the render yields every 250 components; the reads are one snapshot).
  const pinger = async (stop: () => boolean): Promise<number[]> => {
    const out: number[] = [];
    while (!stop()) {
      const t0 = performance.now();
      await (await fetch(`${s.base}/api/v1/me`, { headers: { cookie: auth.cookie } })).arrayBuffer();
      out.push(performance.now() - t0);
    }
    return out;
  };
  const aloneUntil = performance.now() + 2000;
  const alone = await pinger(() => performance.now() > aloneUntil);
  let done = false;
  const pinging = pinger(() => done);
  for (let i = 0; i < 5; i++) await (await fetch(`${s.base}${feeds[2]![1]}`)).arrayBuffer();
  done = true;
  const during = await pinging;
  const line = (xs: number[]) => `median ${median(xs).toFixed(1)} ms, p95 ${percentile(xs, 95).toFixed(1)} ms, max ${Math.max(...xs).toFixed(1)} ms (${xs.length} requests)`;
  console.log(`GET /me alone: ${line(alone)}`);
  console.log(`GET /me while "${feeds[2]![0]}" is fetched 5 times: ${line(during)}`);
} finally {
  await stopServer(s);
  rmSync(dir, { recursive: true, force: true });
}
