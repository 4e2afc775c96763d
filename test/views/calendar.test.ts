// The calendar API (issue 14) through HTTP: dated tasks on their local days, repeating tasks'
// later occurrences from the recurrence engine (not stored), countdowns and habit check-ins on
// their days, range bounds, and rescheduling that keeps the time of day.
import { afterAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { FixedClock, dump, makeTestApp, rejected, setupAdmin, signedInUser } from "../helpers/app";
import { mkTask, uname } from "../helpers/tasks";

// Many requests through the real stack: on a loaded machine well over bun's 5 s default.
setDefaultTimeout(120_000);

const clock = new FixedClock(new Date("2026-11-10T15:00:00.000Z"));
const app = makeTestApp({ clock });
afterAll(() => app.close());
const admin = await setupAdmin(app);

type Day = { date: string; tasks: { id: string }[]; occurrences: { task_id: string; due_at: string }[]; countdowns: { id: string; count: number | null }[]; check_ins: { habit_id: string; value: number }[] };

describe("GET /calendar", () => {
  test("a month: tasks on their local days, occurrences, countdowns and check-ins", async () => {
    const c = await signedInUser(app, admin, uname(), { timezone: "America/New_York" });
    const dateOnly = await mkTask(c, { title: "date-only", due_at: "2026-11-12" });
    // 2026-11-13 22:30 in New York is 2026-11-14T03:30Z: on the 13th.
    const late = await mkTask(c, { title: "late", due_at: "2026-11-14T03:30:00Z" });
    const done = await mkTask(c, { title: "done", due_at: "2026-11-20", completed: true });
    const outside = await mkTask(c, { title: "outside", due_at: "2026-12-01" });
    const undated = await mkTask(c, { title: "undated" });
    // Every Monday at 09:00 New York time from Monday 2026-11-02 (its current occurrence).
    const weekly = await mkTask(c, { title: "weekly", due_at: "2026-11-02T14:00:00Z" });
    const rec = await c.post("/api/v1/recurrences", { task_id: weekly.id, kind: "rrule", rrule: "FREQ=WEEKLY;BYDAY=MO" });
    expect(rec.status).toBe(201);
    // A date-only daily series whose 2026-11-05 is skipped.
    const daily = await mkTask(c, { title: "daily", due_at: "2026-11-03" });
    const drec = await c.post("/api/v1/recurrences", { task_id: daily.id, kind: "rrule", rrule: "FREQ=DAILY;COUNT=5" });
    expect(drec.status).toBe(201);
    expect((await c.post(`/api/v1/recurrences/${drec.body.id}/exceptions`, { date: "2026-11-05" })).status).toBeLessThan(300);
    const birthday = await c.post("/api/v1/countdowns", { name: "Ann", date: "1990-11-15", type: "birthday", repeat: "yearly" });
    expect(birthday.status).toBe(201);
    const weeklyCd = await c.post("/api/v1/countdowns", { name: "Standup", date: "2026-11-04", repeat: "weekly" });
    const habit = await c.post("/api/v1/habits", { name: "Run", start_date: "2026-11-01" });
    expect(habit.status).toBe(201);
    expect((await c.put(`/api/v1/habits/${habit.body.id}/logs/2026-11-09`, { value: 1 })).status).toBeLessThan(300);

    const before = dump(app.db);
    const r = await c.get("/api/v1/calendar?from=2026-11-01&to=2026-12-01");
    expect(r.status).toBe(200);
    // Nothing is stored by reading (occurrences are computed).
    expect(dump(app.db)).toEqual(before);
    expect(r.body).toMatchObject({ from: "2026-11-01", to: "2026-12-01", today: "2026-11-10", truncated: false });
    const days: Day[] = r.body.days;
    expect(days.length).toBe(30);
    const on = (date: string) => days.find((d) => d.date === date)!;
    const taskDays = days.flatMap((d) => d.tasks.map((t) => [d.date, t.id]));
    expect(taskDays).toEqual(
      expect.arrayContaining([
        ["2026-11-12", dateOnly.id],
        ["2026-11-13", late.id],
        ["2026-11-20", done.id],
        ["2026-11-02", weekly.id],
        ["2026-11-03", daily.id],
      ]),
    );
    expect(taskDays.length).toBe(5);
    expect(taskDays.some(([, id]) => id === outside.id || id === undated.id)).toBe(false);
    // Weekly occurrences after the current one, at 09:00 New York (14:00Z), every Monday of the month.
    const weeklyOcc = days.flatMap((d) => d.occurrences.filter((o) => o.task_id === weekly.id).map((o) => [d.date, o.due_at]));
    expect(weeklyOcc).toEqual([
      ["2026-11-09", "2026-11-09T14:00:00.000Z"],
      ["2026-11-16", "2026-11-16T14:00:00.000Z"],
      ["2026-11-23", "2026-11-23T14:00:00.000Z"],
      ["2026-11-30", "2026-11-30T14:00:00.000Z"],
    ]);
    // The daily series: 4th, 6th, 7th (COUNT=5 from the 3rd; the 5th skipped).
    expect(days.flatMap((d) => d.occurrences.filter((o) => o.task_id === daily.id).map((o) => o.due_at))).toEqual(["2026-11-04", "2026-11-06", "2026-11-07"]);
    expect(on("2026-11-15").countdowns).toEqual([expect.objectContaining({ id: birthday.body.id, count: 36 })]);
    expect(days.filter((d) => d.countdowns.some((x) => x.id === weeklyCd.body.id)).map((d) => d.date)).toEqual(["2026-11-04", "2026-11-11", "2026-11-18", "2026-11-25"]);
    expect(on("2026-11-09").check_ins).toEqual([expect.objectContaining({ habit_id: habit.body.id, value: 1 })]);
    // Another user sees none of it.
    const o = await signedInUser(app, admin, uname());
    const theirs = (await o.get("/api/v1/calendar?from=2026-11-01&to=2026-12-01")).body.days as Day[];
    expect(theirs.every((d) => !d.tasks.length && !d.occurrences.length && !d.countdowns.length && !d.check_ins.length)).toBe(true);
  });

  test("range bounds and validation", async () => {
    const c = await signedInUser(app, admin, uname());
    expect((await c.get("/api/v1/calendar?from=2026-11-01&to=2027-01-02")).status).toBe(200); // 62 days
    await rejected(app, () => c.get("/api/v1/calendar?from=2026-11-01&to=2027-01-03"), 422, "validation_failed");
    await rejected(app, () => c.get("/api/v1/calendar?from=2026-11-01&to=2026-11-01"), 422, "validation_failed");
    await rejected(app, () => c.get("/api/v1/calendar?from=2026-11-05&to=2026-11-01"), 422, "validation_failed");
    await rejected(app, () => c.get("/api/v1/calendar?from=2026-02-30&to=2026-03-05"), 422, "validation_failed");
    await rejected(app, () => c.get("/api/v1/calendar?from=2026-11-01"), 422, "validation_failed");
    await rejected(app, () => c.get("/api/v1/calendar?from=2026-11-01&to=2026-11-08&x=1"), 422, "validation_failed");
    expect((await app.client().get("/api/v1/calendar?from=2026-11-01&to=2026-11-08")).status).toBe(401);
  });
});

describe("POST /tasks/{id}/reschedule", () => {
  test("keeps the local time of day across a daylight-saving change; a date stays a date", async () => {
    const c = await signedInUser(app, admin, uname(), { timezone: "Europe/Berlin" });
    // 09:00 in Berlin on 2026-10-20 (summer time, 07:00Z) moved to 2026-11-03 (winter time): 08:00Z.
    const t = await mkTask(c, { title: "dentist", due_at: "2026-10-20T07:00:00Z" });
    const r = await c.post(`/api/v1/tasks/${t.id}/reschedule`, { date: "2026-11-03", version: 1 });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ due_at: "2026-11-03T08:00:00.000Z", version: 2 });
    const d = await mkTask(c, { title: "all day", due_at: "2026-10-20" });
    expect((await c.post(`/api/v1/tasks/${d.id}/reschedule`, { date: "2026-10-22", version: 1 })).body.due_at).toBe("2026-10-22");
    await rejected(app, () => c.post(`/api/v1/tasks/${t.id}/reschedule`, { date: "2026-11-04", version: 1 }), 409, "version_conflict");
    const u = await mkTask(c, { title: "undated" });
    await rejected(app, () => c.post(`/api/v1/tasks/${u.id}/reschedule`, { date: "2026-11-04", version: 1 }), 422, "validation_failed");
    await rejected(app, () => c.post(`/api/v1/tasks/${t.id}/reschedule`, { date: "2026-13-01", version: 2 }), 422, "validation_failed");
    const o = await signedInUser(app, admin, uname());
    await rejected(app, () => o.post(`/api/v1/tasks/${t.id}/reschedule`, { date: "2026-11-04", version: 2 }), 404, "not_found");
  });
});
