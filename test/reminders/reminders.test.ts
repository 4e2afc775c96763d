import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { FixedClock, makeTestApp, rejected as rejectedIn, setupAdmin, signedInUser, type TestClient, type TestResponse } from "../helpers/app";
import { mkTask } from "../helpers/tasks";

// Wednesday 2026-11-25, 10:00 UTC.
const clock = new FixedClock(new Date("2026-11-25T10:00:00.000Z"));
const app = makeTestApp({ clock, config: { sessionIdleSeconds: 50 * 365 * 86400, sessionAbsoluteSeconds: 50 * 365 * 86400 } });
let alice: TestClient;
let bob: TestClient;
const MISSING = "01900000-0000-7000-8000-000000000000";
const rejected = (run: () => Promise<TestResponse>, status: number, code: string) => rejectedIn(app, run, status, code);

beforeAll(async () => {
  alice = await setupAdmin(app, { timezone: "Europe/Berlin" });
  bob = await signedInUser(app, alice, "bob");
});
afterAll(() => app.close());

async function remind(c: TestClient, path: string, body: Record<string, unknown>) {
  const r = await c.post(`/api/v1/${path}/reminders`, body);
  if (r.status !== 201) throw new Error(`${r.status} ${r.text}`);
  return r.body;
}

describe("task reminders", () => {
  test("before_due on a timed task: next_fire_at is due minus minutes; 201 + Location; GET lists it", async () => {
    const t = await mkTask(alice, { title: "Dentist", due_at: "2026-11-26T14:00:00Z" });
    const r = await alice.post(`/api/v1/tasks/${t.id}/reminders`, { kind: "before_due", minutes_before: 30 });
    expect(r.status).toBe(201);
    expect(r.headers.get("location")).toBe(`/api/v1/reminders/${r.body.id}`);
    expect(r.body).toMatchObject({ target: { type: "task", id: t.id }, kind: "before_due", minutes_before: 30, at: null, time: null, days_before: null, next_fire_at: "2026-11-26T13:30:00.000Z" });
    const list = await alice.get(`/api/v1/tasks/${t.id}/reminders`);
    expect(list.body.items.map((x: { id: string }) => x.id)).toEqual([r.body.id]);
  });

  test("a date-only task counts from the user's reminder_time in the user's zone (default 09:00)", async () => {
    const t = await mkTask(alice, { title: "Taxes", due_at: "2026-11-27" });
    const r = await remind(alice, `tasks/${t.id}`, { kind: "before_due", minutes_before: 0 });
    // 09:00 in Berlin (UTC+1 in November).
    expect(r.next_fire_at).toBe("2026-11-27T08:00:00.000Z");
    const me = await alice.patch("/api/v1/me", { reminder_time: "07:15" });
    expect(me.status).toBe(200);
    expect(me.body.reminder_time).toBe("07:15");
    const again = await alice.get(`/api/v1/tasks/${t.id}/reminders`);
    expect(again.body.items[0].next_fire_at).toBe("2026-11-27T06:15:00.000Z");
    // A zone change re-arms at once.
    await alice.patch("/api/v1/me", { timezone: "America/New_York" });
    const ny = await alice.get(`/api/v1/tasks/${t.id}/reminders`);
    expect(ny.body.items[0].next_fire_at).toBe("2026-11-27T12:15:00.000Z");
    await alice.patch("/api/v1/me", { timezone: "Europe/Berlin", reminder_time: "09:00" });
  });

  test("at: fires once at the instant; a past instant arms nothing", async () => {
    const t = await mkTask(alice, { title: "Call" });
    const r = await remind(alice, `tasks/${t.id}`, { kind: "at", at: "2026-11-25T12:00:00+01:00" });
    expect(r.at).toBe("2026-11-25T11:00:00.000Z");
    expect(r.next_fire_at).toBe("2026-11-25T11:00:00.000Z");
    const past = await remind(alice, `tasks/${t.id}`, { kind: "at", at: "2026-11-25T09:00:00Z" });
    expect(past.next_fire_at).toBeNull();
  });

  test("completing, deleting or moving the task cancels or re-arms at once", async () => {
    const t = await mkTask(alice, { title: "Move me", due_at: "2026-11-28T10:00:00Z" });
    const r = await remind(alice, `tasks/${t.id}`, { kind: "before_due", minutes_before: 60 });
    expect(r.next_fire_at).toBe("2026-11-28T09:00:00.000Z");
    const moved = await alice.patch(`/api/v1/tasks/${t.id}`, { version: t.version, due_at: "2026-11-29T10:00:00Z" });
    expect(moved.status).toBe(200);
    expect((await alice.get(`/api/v1/tasks/${t.id}/reminders`)).body.items[0].next_fire_at).toBe("2026-11-29T09:00:00.000Z");
    const done = await alice.patch(`/api/v1/tasks/${t.id}`, { version: moved.body.version, completed: true });
    expect((await alice.get(`/api/v1/tasks/${t.id}/reminders`)).body.items[0].next_fire_at).toBeNull();
    const undone = await alice.patch(`/api/v1/tasks/${t.id}`, { version: done.body.version, completed: false });
    expect((await alice.get(`/api/v1/tasks/${t.id}/reminders`)).body.items[0].next_fire_at).toBe("2026-11-29T09:00:00.000Z");
    expect((await alice.delete(`/api/v1/tasks/${t.id}`)).status).toBe(204);
    expect((await alice.get(`/api/v1/tasks/${t.id}/reminders`)).status).toBe(404);
    const row = app.db.sqlite.query<{ next_fire_at: string | null }, [string]>("SELECT next_fire_at FROM reminders WHERE id = ?").get(r.id);
    expect(row?.next_fire_at).toBeNull();
    await alice.post(`/api/v1/trash/${t.id}/restore`);
    void undone;
  });

  test("a repeating task re-arms for its next occurrence when completed", async () => {
    const t = await mkTask(alice, { title: "Water plants", due_at: "2026-11-26" });
    const rec = await alice.post("/api/v1/recurrences", { task_id: t.id, kind: "rrule", rrule: "FREQ=DAILY" });
    expect(rec.status).toBe(201);
    const r = await remind(alice, `tasks/${t.id}`, { kind: "before_due", minutes_before: 0 });
    expect(r.next_fire_at).toBe("2026-11-26T08:00:00.000Z");
    const cur = await alice.get(`/api/v1/tasks/${t.id}`);
    const done = await alice.patch(`/api/v1/tasks/${t.id}`, { version: cur.body.version, completed: true });
    expect(done.status).toBe(200);
    expect(done.body.due_at).toBe("2026-11-27");
    expect((await alice.get(`/api/v1/tasks/${t.id}/reminders`)).body.items[0].next_fire_at).toBe("2026-11-27T08:00:00.000Z");
  });

  test("PATCH edits the kind's fields and re-arms; DELETE removes", async () => {
    const t = await mkTask(alice, { title: "Edit", due_at: "2026-11-30T10:00:00Z" });
    const r = await remind(alice, `tasks/${t.id}`, { kind: "before_due", minutes_before: 10 });
    const p = await alice.patch(`/api/v1/reminders/${r.id}`, { minutes_before: 1440 });
    expect(p.status).toBe(200);
    expect(p.body.next_fire_at).toBe("2026-11-29T10:00:00.000Z");
    await rejected(() => alice.patch(`/api/v1/reminders/${r.id}`, { time: "10:00" }), 422, "validation_failed");
    await rejected(() => bob.patch(`/api/v1/reminders/${r.id}`, { minutes_before: 5 }), 404, "not_found");
    await rejected(() => bob.delete(`/api/v1/reminders/${r.id}`), 404, "not_found");
    expect((await alice.delete(`/api/v1/reminders/${r.id}`)).status).toBe(204);
    await rejected(() => alice.delete(`/api/v1/reminders/${r.id}`), 404, "not_found");
  });

  test("bad input is 422 and changes nothing; another user's task is 404; at most 10 per task", async () => {
    const t = await mkTask(alice, { title: "Bad", due_at: "2026-11-30T10:00:00Z" });
    const base = `/api/v1/tasks/${t.id}/reminders`;
    await rejected(() => alice.post(base, { kind: "daily", time: "09:00" }), 422, "validation_failed");
    await rejected(() => alice.post(base, { kind: "before_due" }), 422, "validation_failed");
    await rejected(() => alice.post(base, { kind: "before_due", minutes_before: -1 }), 422, "validation_failed");
    await rejected(() => alice.post(base, { kind: "before_due", minutes_before: 5, at: "2026-11-30T10:00:00Z" }), 422, "validation_failed");
    await rejected(() => alice.post(base, { kind: "at", at: "tomorrow" }), 422, "validation_failed");
    await rejected(() => alice.post(base, { kind: "at", at: "2026-11-30T10:00:00" }), 422, "validation_failed");
    await rejected(() => alice.post(base, { kind: "before_due", minutes_before: 5, extra: 1 }), 422, "validation_failed");
    await rejected(() => alice.post(base, { kind: "nope" }), 422, "validation_failed");
    await rejected(() => bob.post(base, { kind: "before_due", minutes_before: 5 }), 404, "not_found");
    await rejected(() => bob.get(base), 404, "not_found");
    await rejected(() => alice.post(`/api/v1/tasks/${MISSING}/reminders`, { kind: "before_due", minutes_before: 5 }), 404, "not_found");
    for (let i = 0; i < 10; i++) await remind(alice, `tasks/${t.id}`, { kind: "before_due", minutes_before: i });
    await rejected(() => alice.post(base, { kind: "before_due", minutes_before: 11 }), 422, "validation_failed");
  });

  test("PATCH /me refuses bad reminder settings and changes nothing", async () => {
    await rejected(() => alice.patch("/api/v1/me", { reminder_time: "25:00" }), 422, "validation_failed");
    await rejected(() => alice.patch("/api/v1/me", { reminder_time: "9:00" }), 422, "validation_failed");
    await rejected(() => alice.patch("/api/v1/me", { quiet_hours: { start: "22:00" } }), 422, "validation_failed");
    await rejected(() => alice.patch("/api/v1/me", { quiet_hours: { start: "22:00", end: "22:00" } }), 422, "validation_failed");
    const q = await alice.patch("/api/v1/me", { quiet_hours: { start: "22:00", end: "07:00" } });
    expect(q.body.quiet_hours).toEqual({ start: "22:00", end: "07:00" });
    expect((await alice.get("/api/v1/me")).body.quiet_hours).toEqual({ start: "22:00", end: "07:00" });
    const off = await alice.patch("/api/v1/me", { quiet_hours: null });
    expect(off.body.quiet_hours).toBeNull();
  });
});

describe("habit reminders", () => {
  test("daily: next scheduled day at the local time; skipped when done, paused or archived", async () => {
    // Weekdays Mon/Wed/Fri; today is Wednesday 2026-11-25 (10:00 UTC = 11:00 Berlin).
    const h = await alice.post("/api/v1/habits", { name: "Run", frequency: { type: "weekdays", days: [1, 3, 5] }, start_date: "2026-11-01" });
    expect(h.status).toBe(201);
    const r = await remind(alice, `habits/${h.body.id}`, { kind: "daily", time: "20:00" });
    expect(r.next_fire_at).toBe("2026-11-25T19:00:00.000Z");
    // Done today: Friday next.
    expect((await alice.put(`/api/v1/habits/${h.body.id}/logs/2026-11-25`, { value: 1 })).status).toBe(200);
    expect((await alice.get(`/api/v1/habits/${h.body.id}/reminders`)).body.items[0].next_fire_at).toBe("2026-11-27T19:00:00.000Z");
    // Paused over Friday: Monday.
    const p = await alice.post(`/api/v1/habits/${h.body.id}/pauses`, { start_date: "2026-11-26", end_date: "2026-11-29" });
    expect(p.status).toBe(201);
    expect((await alice.get(`/api/v1/habits/${h.body.id}/reminders`)).body.items[0].next_fire_at).toBe("2026-11-30T19:00:00.000Z");
    // Archived: nothing.
    expect((await alice.delete(`/api/v1/habits/${h.body.id}`)).status).toBe(204);
    expect((await alice.get(`/api/v1/habits/${h.body.id}/reminders`)).body.items[0].next_fire_at).toBeNull();
    await rejected(() => alice.post(`/api/v1/habits/${h.body.id}/reminders`, { kind: "before_due", minutes_before: 5 }), 422, "validation_failed");
    await rejected(() => alice.post(`/api/v1/habits/${h.body.id}/reminders`, { kind: "daily" }), 422, "validation_failed");
    // Purged: its reminders go too.
    expect((await alice.delete(`/api/v1/habits/${h.body.id}/purge`)).status).toBe(204);
    expect(app.db.sqlite.query("SELECT count(*) AS n FROM reminders WHERE id = ?").get(r.id)).toEqual({ n: 0 });
  });
});

describe("countdown reminders", () => {
  test("days_before: the local time N days before each occurrence", async () => {
    const c = await alice.post("/api/v1/countdowns", { name: "Anniversary", date: "2020-12-01", type: "anniversary", repeat: "yearly" });
    const r = await remind(alice, `countdowns/${c.body.id}`, { kind: "days_before", days_before: 3, time: "08:30" });
    expect(r.next_fire_at).toBe("2026-11-28T07:30:00.000Z");
    await rejected(() => alice.post(`/api/v1/countdowns/${c.body.id}/reminders`, { kind: "days_before", time: "08:30" }), 422, "validation_failed");
  });

  test("a lunar yearly countdown uses the lunar occurrence (via the countdown engine)", async () => {
    // Lunar 1/1 (Spring Festival): 2027-02-06.
    const c = await alice.post("/api/v1/countdowns", { name: "Spring Festival", date: "2026-02-17", repeat: "yearly", calendar: "lunar" });
    expect(c.status).toBe(201);
    const r = await remind(alice, `countdowns/${c.body.id}`, { kind: "days_before", days_before: 1, time: "09:00" });
    expect(r.next_fire_at).toBe("2027-02-05T08:00:00.000Z");
  });
});
