// Recurrence through HTTP: every rule and error case of docs/spec/contract.md §4 "Recurrence".
// The clock is fixed and every zone is named, so `bun run test:recurrence-tz` (TZ=UTC and
// TZ=America/New_York) gives the same results.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { dump, FixedClock, makeTestApp, setupAdmin, signedInUser, type TestClient, type TestResponse } from "./helpers/app";

const clock = new FixedClock(new Date("2026-11-25T12:00:00.000Z"));
const TEN_YEARS = 10 * 365 * 24 * 3600;
const app = makeTestApp({ clock, config: { sessionIdleSeconds: TEN_YEARS, sessionAbsoluteSeconds: TEN_YEARS } });
afterAll(() => app.close());

let owner: TestClient;
let other: TestClient;
beforeAll(async () => {
  owner = await setupAdmin(app);
  other = await signedInUser(app, owner, "other");
});

const V = "/api/v1";

async function task(c: TestClient, body: Record<string, unknown>) {
  const r = await c.post(`${V}/tasks`, { title: "Water the plants", ...body });
  if (r.status !== 201) throw new Error(`task create: ${r.status} ${r.text}`);
  return r.body as { id: string; version: number; due_at: string | null; subtasks: { id: string }[] };
}

async function recur(c: TestClient, body: Record<string, unknown>) {
  const r = await c.post(`${V}/recurrences`, body);
  if (r.status !== 201) throw new Error(`recurrence create: ${r.status} ${r.text}`);
  return r.body as { id: string; task_id: string };
}

async function getTask(c: TestClient, id: string) {
  const r = await c.get(`${V}/tasks/${id}`);
  expect(r.status).toBe(200);
  return r.body;
}

async function setZone(c: TestClient, timezone: string) {
  const r = await c.patch(`${V}/me`, { timezone });
  expect(r.status).toBe(200);
}

/** Runs a request that must be refused, and proves it changed nothing. */
async function refused(run: () => Promise<TestResponse>, status: number, code: string): Promise<TestResponse> {
  const before = dump(app.db);
  const r = await run();
  expect({ status: r.status, code: r.body?.code }).toEqual({ status, code });
  expect(dump(app.db)).toEqual(before);
  return r;
}

describe("create and read", () => {
  test("rrule on a date-only task: 201, Location, the full shape; GET by id and by task agree", async () => {
    const t = await task(owner, { due_at: "2026-11-30" });
    const r = await owner.post(`${V}/recurrences`, { task_id: t.id, kind: "rrule", rrule: "freq=weekly;byday=mo,we" });
    expect(r.status).toBe(201);
    expect(r.headers.get("location")).toBe(`${V}/recurrences/${r.body.id}`);
    expect(r.body).toEqual({
      id: expect.any(String),
      task_id: t.id,
      kind: "rrule",
      rrule: "FREQ=WEEKLY;BYDAY=MO,WE",
      interval: null,
      unit: null,
      timezone: "UTC",
      dtstart: "2026-11-30",
      exceptions: [],
      created_at: "2026-11-25T12:00:00.000Z",
      updated_at: "2026-11-25T12:00:00.000Z",
    });
    expect((await owner.get(`${V}/recurrences/${r.body.id}`)).body).toEqual(r.body);
    expect((await owner.get(`${V}/tasks/${t.id}/recurrence`)).body).toEqual(r.body);
  });

  test("after_completion needs no due_at; the time zone defaults to the user's, or is given", async () => {
    await setZone(owner, "Europe/Berlin");
    try {
      const t = await task(owner, {});
      const r = await owner.post(`${V}/recurrences`, { task_id: t.id, kind: "after_completion", interval: 2, unit: "week" });
      expect(r.status).toBe(201);
      expect(r.body).toMatchObject({ kind: "after_completion", rrule: null, interval: 2, unit: "week", timezone: "Europe/Berlin", dtstart: null });
      const t2 = await task(owner, { due_at: "2026-12-01T08:00:00Z" });
      const r2 = await owner.post(`${V}/recurrences`, { task_id: t2.id, kind: "rrule", rrule: "FREQ=DAILY", timezone: "Asia/Tokyo", interval: null, unit: null });
      expect(r2.status).toBe(201);
      expect(r2.body).toMatchObject({ timezone: "Asia/Tokyo", dtstart: "2026-12-01T08:00:00.000Z" });
    } finally {
      await setZone(owner, "UTC");
    }
  });

  test("invalid bodies are 422 validation_failed and change nothing", async () => {
    const dated = await task(owner, { due_at: "2026-11-30" });
    const bad: Record<string, unknown>[] = [
      {},
      { task_id: dated.id },
      { task_id: dated.id, kind: "weekly", rrule: "FREQ=DAILY" },
      { task_id: dated.id, kind: "rrule" },
      { task_id: dated.id, kind: "rrule", rrule: null },
      { task_id: dated.id, kind: "rrule", rrule: "FREQ=DAILY", extra: 1 },
      { task_id: dated.id, kind: "rrule", rrule: "FREQ=DAILY", interval: 1 },
      { task_id: dated.id, kind: "rrule", rrule: "FREQ=DAILY", unit: "day" },
      { task_id: dated.id, kind: "rrule", rrule: "FREQ=SECONDLY" },
      { task_id: dated.id, kind: "rrule", rrule: "FREQ=MINUTELY" },
      { task_id: dated.id, kind: "rrule", rrule: "FREQ=HOURLY;INTERVAL=2" },
      { task_id: dated.id, kind: "rrule", rrule: "every monday" },
      { task_id: dated.id, kind: "rrule", rrule: "FREQ=DAILY;BYDAY=XX" },
      { task_id: dated.id, kind: "rrule", rrule: "FREQ=DAILY;INTERVAL=0" },
      { task_id: dated.id, kind: "rrule", rrule: "FREQ=DAILY;COUNT=2;UNTIL=20270101" },
      { task_id: dated.id, kind: "rrule", rrule: "FREQ=DAILY;UNTIL=20270230" },
      { task_id: dated.id, kind: "rrule", rrule: `FREQ=DAILY;${"BYMONTH=1,".repeat(60)}` },
      { task_id: dated.id, kind: "rrule", rrule: 42 },
      { task_id: dated.id, kind: "rrule", rrule: "FREQ=DAILY", timezone: "Mars/Olympus" },
      { task_id: dated.id, kind: "rrule", rrule: "FREQ=DAILY", timezone: "" },
      { task_id: 7, kind: "rrule", rrule: "FREQ=DAILY" },
      { task_id: "x".repeat(65), kind: "rrule", rrule: "FREQ=DAILY" },
      { task_id: dated.id, kind: "after_completion", unit: "day" },
      { task_id: dated.id, kind: "after_completion", interval: 1 },
      { task_id: dated.id, kind: "after_completion", interval: 0, unit: "day" },
      { task_id: dated.id, kind: "after_completion", interval: -1, unit: "day" },
      { task_id: dated.id, kind: "after_completion", interval: 1.5, unit: "day" },
      { task_id: dated.id, kind: "after_completion", interval: "1", unit: "day" },
      { task_id: dated.id, kind: "after_completion", interval: 1, unit: "fortnight" },
      { task_id: dated.id, kind: "after_completion", interval: 1, unit: "hour" },
      { task_id: dated.id, kind: "after_completion", interval: 1, unit: "day", rrule: "FREQ=DAILY" },
    ];
    for (const body of bad) {
      const r = await refused(() => owner.post(`${V}/recurrences`, body), 422, "validation_failed");
      expect(r.body.errors.length).toBeGreaterThan(0);
    }
    const r = await owner.post(`${V}/recurrences`, { task_id: dated.id, kind: "rrule", rrule: "FREQ=DAILY;BYDAY=XX" });
    expect(r.body.errors).toContainEqual({ path: "rrule", message: expect.stringContaining("XX") });
  });

  test("rules that depend on the task: impossible dates, a time of day on a date-only task, UNTIL before due_at", async () => {
    const dated = await task(owner, { due_at: "2026-11-30" });
    for (const rrule of ["FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30", "FREQ=MONTHLY;BYMONTH=4,6,9,11;BYMONTHDAY=31", "FREQ=DAILY;BYHOUR=9", "FREQ=DAILY;UNTIL=20261129"]) {
      const r = await refused(() => owner.post(`${V}/recurrences`, { task_id: dated.id, kind: "rrule", rrule }), 422, "validation_failed");
      expect(r.body.errors[0].path).toBe("rrule");
    }
    const timed = await task(owner, { due_at: "2026-11-30T09:00:00Z" });
    await refused(() => owner.post(`${V}/recurrences`, { task_id: timed.id, kind: "rrule", rrule: "FREQ=DAILY;UNTIL=20261130T085959Z" }), 422, "validation_failed");
    expect((await owner.post(`${V}/recurrences`, { task_id: timed.id, kind: "rrule", rrule: "FREQ=DAILY;BYHOUR=9,17;UNTIL=20261130T090000Z" })).status).toBe(201);
  });

  test("an rrule needs a due_at; a subtask cannot recur (422 validation_failed)", async () => {
    const undated = await task(owner, {});
    const r = await refused(() => owner.post(`${V}/recurrences`, { task_id: undated.id, kind: "rrule", rrule: "FREQ=DAILY" }), 422, "validation_failed");
    expect(r.body.errors[0].path).toBe("task_id");
    const parent = await task(owner, { due_at: "2026-11-30" });
    const sub = await task(owner, { parent_id: parent.id, due_at: "2026-11-30" });
    await refused(() => owner.post(`${V}/recurrences`, { task_id: sub.id, kind: "rrule", rrule: "FREQ=DAILY" }), 422, "validation_failed");
    await refused(() => owner.post(`${V}/recurrences`, { task_id: sub.id, kind: "after_completion", interval: 1, unit: "day" }), 422, "validation_failed");
  });

  test("task_id that is missing, another user's or in the trash: 422 invalid_reference", async () => {
    const foreign = await task(other, { due_at: "2026-11-30" });
    const trashed = await task(owner, { due_at: "2026-11-30" });
    expect((await owner.delete(`${V}/tasks/${trashed.id}`)).status).toBe(204);
    for (const id of ["01900000-0000-7000-8000-000000000000", foreign.id, trashed.id]) {
      const r = await refused(() => owner.post(`${V}/recurrences`, { task_id: id, kind: "rrule", rrule: "FREQ=DAILY" }), 422, "invalid_reference");
      expect(r.body.errors).toEqual([{ path: "task_id", message: expect.any(String) }]);
    }
  });

  test("one recurrence per task: 409 state_conflict", async () => {
    const t = await task(owner, { due_at: "2026-11-30" });
    await recur(owner, { task_id: t.id, kind: "rrule", rrule: "FREQ=DAILY" });
    await refused(() => owner.post(`${V}/recurrences`, { task_id: t.id, kind: "after_completion", interval: 1, unit: "day" }), 409, "state_conflict");
  });

  test("another user's recurrence, a missing one and one whose task is in the trash are 404 everywhere", async () => {
    const t = await task(other, { due_at: "2026-11-30" });
    const rec = await recur(other, { task_id: t.id, kind: "rrule", rrule: "FREQ=DAILY" });
    const missing = "01900000-0000-7000-8000-000000000000";
    for (const id of [rec.id, missing]) {
      expect((await owner.get(`${V}/recurrences/${id}`)).status).toBe(404);
      await refused(() => owner.patch(`${V}/recurrences/${id}`, { rrule: "FREQ=WEEKLY" }), 404, "not_found");
      await refused(() => owner.delete(`${V}/recurrences/${id}`), 404, "not_found");
      await refused(() => owner.post(`${V}/recurrences/${id}/complete`), 404, "not_found");
      await refused(() => owner.post(`${V}/recurrences/${id}/exceptions`, { date: "2026-12-01" }), 404, "not_found");
      await refused(() => owner.delete(`${V}/recurrences/${id}/exceptions/2026-12-01`), 404, "not_found");
    }
    // The task of another user, or none at all: 404. A task of mine that does not repeat: 200 null
    // (not an error: every task dialog asks, and a 404 there was a red console error each time).
    for (const id of [t.id, missing]) {
      const r = await owner.get(`${V}/tasks/${id}/recurrence`);
      expect({ status: r.status, code: r.body.code }).toEqual({ status: 404, code: "not_found" });
    }
    const plain = await task(owner, {});
    const none = await owner.get(`${V}/tasks/${plain.id}/recurrence`);
    expect({ status: none.status, type: none.headers.get("content-type"), text: none.text }).toEqual({ status: 200, type: "application/json", text: "null" });
    expect((await other.get(`${V}/tasks/${plain.id}/recurrence`)).status).toBe(404);

    // In the trash: hidden; restored: back.
    const mine = await task(owner, { due_at: "2026-11-30" });
    const myRec = await recur(owner, { task_id: mine.id, kind: "rrule", rrule: "FREQ=DAILY" });
    expect((await owner.delete(`${V}/tasks/${mine.id}`)).status).toBe(204);
    expect((await owner.get(`${V}/recurrences/${myRec.id}`)).status).toBe(404);
    expect((await owner.get(`${V}/tasks/${mine.id}/recurrence`)).status).toBe(404);
    await refused(() => owner.post(`${V}/recurrences/${myRec.id}/complete`), 404, "not_found");
    expect((await owner.post(`${V}/tasks/${mine.id}/restore`)).status).toBe(200);
    expect((await owner.get(`${V}/recurrences/${myRec.id}`)).status).toBe(200);
    // Purged with its task.
    expect((await owner.delete(`${V}/tasks/${mine.id}`)).status).toBe(204);
    expect((await owner.delete(`${V}/trash/${mine.id}`)).status).toBe(204);
    expect(app.db.sqlite.query("SELECT count(*) AS n FROM recurrences WHERE id = ?").get(myRec.id)).toEqual({ n: 0 });
  });

  test("a recurrence whose task's list is archived is 404 until the list is restored", async () => {
    const list = await owner.post(`${V}/lists`, { name: "Garden" });
    expect(list.status).toBe(201);
    const t = await task(owner, { list_id: list.body.id, due_at: "2026-11-30" });
    const rec = await recur(owner, { task_id: t.id, kind: "rrule", rrule: "FREQ=DAILY" });
    expect((await owner.delete(`${V}/lists/${list.body.id}`)).status).toBe(204);
    expect((await owner.get(`${V}/recurrences/${rec.id}`)).status).toBe(404);
    expect((await owner.get(`${V}/tasks/${t.id}/recurrence`)).status).toBe(404);
    await refused(() => owner.post(`${V}/recurrences/${rec.id}/complete`), 404, "not_found");
    await refused(() => owner.post(`${V}/recurrences`, { task_id: t.id, kind: "rrule", rrule: "FREQ=WEEKLY" }), 422, "invalid_reference");
    expect((await owner.post(`${V}/lists/${list.body.id}/restore`)).status).toBe(200);
    expect((await owner.get(`${V}/recurrences/${rec.id}`)).status).toBe(200);
  });

  test("malformed ids and dates in the URL", async () => {
    expect((await owner.get(`${V}/recurrences/${"x".repeat(65)}`)).status).toBe(422);
    const t = await task(owner, { due_at: "2026-11-30" });
    const rec = await recur(owner, { task_id: t.id, kind: "rrule", rrule: "FREQ=DAILY" });
    for (const d of ["2026-02-30", "20261201", "tomorrow"]) {
      await refused(() => owner.delete(`${V}/recurrences/${rec.id}/exceptions/${d}`), 422, "validation_failed");
    }
  });

  test("writes need the CSRF header", async () => {
    const t = await task(owner, { due_at: "2026-11-30" });
    await refused(() => owner.post(`${V}/recurrences`, { task_id: t.id, kind: "rrule", rrule: "FREQ=DAILY" }, { csrf: false }), 403, "csrf_failed");
  });
});

describe("complete", () => {
  test("records a completed copy (tags, subtasks as they were) and moves the task on with subtasks reset", async () => {
    const tag = await owner.post(`${V}/tags`, { name: "chores", color: "#336699" });
    expect(tag.status).toBe(201);
    const t = await task(owner, { title: "Weekly review", description: "notes", priority: 2, due_at: "2026-11-30", tag_ids: [tag.body.id] });
    const s1 = await task(owner, { title: "inbox zero", parent_id: t.id });
    const s2 = await task(owner, { title: "plan", parent_id: t.id });
    const done = await owner.patch(`${V}/tasks/${s1.id}`, { version: s1.version, completed: true });
    expect(done.status).toBe(200);
    const rec = await recur(owner, { task_id: t.id, kind: "rrule", rrule: "FREQ=WEEKLY;BYDAY=MO,WE" });
    const before = await getTask(owner, t.id);
    clock.set("2026-11-30T18:00:00.000Z");
    const r = await owner.post(`${V}/recurrences/${rec.id}/complete`);
    clock.set("2026-11-25T12:00:00.000Z");
    expect(r.status).toBe(200);
    const { completed, next } = r.body;
    expect(completed.id).not.toBe(t.id);
    expect(completed).toMatchObject({
      title: "Weekly review",
      description: "notes",
      priority: 2,
      list_id: before.list_id,
      parent_id: null,
      completed: true,
      completed_at: "2026-11-30T18:00:00.000Z",
      due_at: "2026-11-30",
      version: 1,
      tags: [{ id: tag.body.id, name: "chores", color: "#336699" }],
      deleted_at: null,
    });
    expect(completed.subtasks.map((s: { title: string; completed: boolean; parent_id: string }) => [s.title, s.completed, s.parent_id])).toEqual([
      ["inbox zero", true, completed.id],
      ["plan", false, completed.id],
    ]);
    expect(completed.subtasks.map((s: { id: string }) => s.id)).not.toContain(s1.id);
    expect(next).toMatchObject({ id: t.id, due_at: "2026-12-02", completed: false, completed_at: null, version: before.version + 1 });
    expect(next.tags).toEqual(before.tags);
    expect(next.subtasks.map((s: { id: string; completed: boolean }) => [s.id, s.completed])).toEqual([
      [s1.id, false],
      [s2.id, false],
    ]);
    // The reset subtask's version grew; the untouched one's did not.
    const sub1Before = before.subtasks.find((s: { id: string }) => s.id === s1.id);
    const sub2Before = before.subtasks.find((s: { id: string }) => s.id === s2.id);
    expect(next.subtasks[0].version).toBe(sub1Before.version + 1);
    expect(next.subtasks[1].version).toBe(sub2Before.version);
    // GET agrees with the answer; the copy does not recur; a stale PATCH of the task is a conflict.
    expect(await getTask(owner, t.id)).toEqual(next);
    expect(await getTask(owner, completed.id)).toEqual(completed);
    const copyRec = await owner.get(`${V}/tasks/${completed.id}/recurrence`);
    expect({ status: copyRec.status, body: copyRec.body }).toEqual({ status: 200, body: null });
    await refused(() => owner.patch(`${V}/tasks/${t.id}`, { version: before.version, title: "x" }), 409, "version_conflict");
  });

  test("completing repeatedly walks the rule: FREQ=MONTHLY;BYMONTHDAY=31 skips short months", async () => {
    const t = await task(owner, { due_at: "2026-01-31" });
    const rec = await recur(owner, { task_id: t.id, kind: "rrule", rrule: "FREQ=MONTHLY;BYMONTHDAY=31" });
    const seen: string[] = [];
    for (let i = 0; i < 4; i++) seen.push((await owner.post(`${V}/recurrences/${rec.id}/complete`)).body.next.due_at);
    expect(seen).toEqual(["2026-03-31", "2026-05-31", "2026-07-31", "2026-08-31"]);
  });

  test("COUNT exhausted: next is null, the task itself is completed and the recurrence is deleted", async () => {
    const t = await task(owner, { due_at: "2026-11-30" });
    const rec = await recur(owner, { task_id: t.id, kind: "rrule", rrule: "FREQ=DAILY;COUNT=2" });
    const first = await owner.post(`${V}/recurrences/${rec.id}/complete`);
    expect(first.body.next.due_at).toBe("2026-12-01");
    const tasksBefore = (app.db.sqlite.query("SELECT count(*) AS n FROM tasks").get() as { n: number }).n;
    const last = await owner.post(`${V}/recurrences/${rec.id}/complete`);
    expect(last.status).toBe(200);
    expect(last.body.next).toBeNull();
    expect(last.body.completed).toMatchObject({ id: t.id, completed: true, completed_at: "2026-11-25T12:00:00.000Z", due_at: "2026-12-01" });
    expect((app.db.sqlite.query("SELECT count(*) AS n FROM tasks").get() as { n: number }).n).toBe(tasksBefore);
    expect((await owner.get(`${V}/recurrences/${rec.id}`)).status).toBe(404);
    const ended = await owner.get(`${V}/tasks/${t.id}/recurrence`);
    expect({ status: ended.status, body: ended.body }).toEqual({ status: 200, body: null });
    await refused(() => owner.post(`${V}/recurrences/${rec.id}/complete`), 404, "not_found");
  });

  test("UNTIL exhausted, with an exception on the last date", async () => {
    const t = await task(owner, { due_at: "2026-11-30" });
    const rec = await recur(owner, { task_id: t.id, kind: "rrule", rrule: "FREQ=DAILY;UNTIL=20261202" });
    expect((await owner.post(`${V}/recurrences/${rec.id}/exceptions`, { date: "2026-12-02" })).status).toBe(200);
    expect((await owner.post(`${V}/recurrences/${rec.id}/complete`)).body.next.due_at).toBe("2026-12-01");
    const last = await owner.post(`${V}/recurrences/${rec.id}/complete`);
    expect(last.body).toMatchObject({ next: null, completed: { id: t.id, completed: true } });
    expect(app.db.sqlite.query("SELECT count(*) AS n FROM recurrence_exceptions WHERE recurrence_id = ?").get(rec.id)).toEqual({ n: 0 });
  });

  test("FREQ=YEARLY ordinals count within the year (RFC 5545, contract §12): 53WE from 2020-12-30 is next on 2025-12-31", async () => {
    const t = await task(owner, { due_at: "2020-12-30" });
    const rec = await recur(owner, { task_id: t.id, kind: "rrule", rrule: "FREQ=YEARLY;BYDAY=53WE" });
    const seen: string[] = [];
    for (let i = 0; i < 2; i++) seen.push((await owner.post(`${V}/recurrences/${rec.id}/complete`)).body.next.due_at);
    expect(seen).toEqual(["2025-12-31", "2031-12-31"]);
    // -53MO: the first Monday of a year with 53 Mondays; never the last days of the year before.
    const m = await task(owner, { due_at: "2018-01-01T09:00:00Z" });
    const mr = await recur(owner, { task_id: m.id, kind: "rrule", rrule: "FREQ=YEARLY;BYDAY=-53MO;COUNT=2" });
    const c1 = await owner.post(`${V}/recurrences/${mr.id}/complete`);
    expect(c1.body.next.due_at).toBe("2024-01-01T09:00:00.000Z");
    const c2 = await owner.post(`${V}/recurrences/${mr.id}/complete`);
    expect(c2.body).toMatchObject({ next: null, completed: { id: m.id, completed: true } });
  });

  test("a repeated BYDAY value is accepted (RFC grammar) and stored once; BYSETPOS where the engine corrects the library is refused", async () => {
    const t = await task(owner, { due_at: "2026-01-03" });
    const r = await owner.post(`${V}/recurrences`, { task_id: t.id, kind: "rrule", rrule: "FREQ=YEARLY;BYDAY=1SA,1SA" });
    expect(r.status).toBe(201);
    expect(r.body.rrule).toBe("FREQ=YEARLY;BYDAY=1SA");
    expect((await owner.post(`${V}/recurrences/${r.body.id}/complete`)).body.next.due_at).toBe("2027-01-02");
    const p = await owner.patch(`${V}/recurrences/${r.body.id}`, { rrule: "FREQ=YEARLY;BYDAY=1SA,1SU,1SA" });
    expect({ status: p.status, rrule: p.body.rrule }).toEqual({ status: 200, rrule: "FREQ=YEARLY;BYDAY=1SA,1SU" });
    const u = await task(owner, { due_at: "2026-01-05" });
    const bad = await refused(() => owner.post(`${V}/recurrences`, { task_id: u.id, kind: "rrule", rrule: "FREQ=YEARLY;BYDAY=53MO,1MO;BYSETPOS=1" }), 422, "validation_failed");
    expect(bad.body.errors).toEqual([{ path: "rrule", message: expect.stringContaining("BYSETPOS is not supported") }]);
  });

  test("a timed series keeps its wall-clock time across DST (America/New_York, 09:00)", async () => {
    const t = await task(owner, { due_at: "2026-03-07T09:00:00-05:00" });
    const rec = await recur(owner, { task_id: t.id, kind: "rrule", rrule: "FREQ=DAILY", timezone: "America/New_York" });
    const a = await owner.post(`${V}/recurrences/${rec.id}/complete`);
    expect(a.body.next.due_at).toBe("2026-03-08T13:00:00.000Z"); // 09:00 EDT
    expect(a.body.completed.due_at).toBe("2026-03-07T14:00:00.000Z"); // 09:00 EST
  });

  test("an occurrence in a DST gap is omitted (Europe/Berlin, 02:30 daily, 29 March)", async () => {
    const t = await task(owner, { due_at: "2026-03-28T02:30:00+01:00" });
    const rec = await recur(owner, { task_id: t.id, kind: "rrule", rrule: "FREQ=DAILY", timezone: "Europe/Berlin" });
    expect((await owner.post(`${V}/recurrences/${rec.id}/complete`)).body.next.due_at).toBe("2026-03-30T00:30:00.000Z"); // 02:30 CEST on the 30th
  });

  test("after_completion: the user's local completion date plus the interval (Kiritimati and Auckland near midnight UTC)", async () => {
    await setZone(owner, "Pacific/Kiritimati");
    try {
      const t = await task(owner, {});
      const rec = await recur(owner, { task_id: t.id, kind: "after_completion", interval: 1, unit: "day" });
      clock.set("2026-11-25T10:30:00.000Z"); // 00:30 on the 26th in Kiritimati
      const r = await owner.post(`${V}/recurrences/${rec.id}/complete`);
      expect(r.body.next.due_at).toBe("2026-11-27"); // the first completion sets a date-only due_at
      expect(r.body.completed.due_at).toBeNull();
      await setZone(owner, "Pacific/Auckland");
      clock.set("2026-11-25T10:30:00.000Z"); // 23:30 on the 25th in Auckland
      expect((await owner.post(`${V}/recurrences/${rec.id}/complete`)).body.next.due_at).toBe("2026-11-26");
    } finally {
      clock.set("2026-11-25T12:00:00.000Z");
      await setZone(owner, "UTC");
    }
  });

  test("after_completion counts in the user's zone at completion, not the recurrence's stored timezone (contract §12)", async () => {
    // The user is in Kiritimati (UTC+14), the recurrence was made with Pago Pago (UTC-11):
    // 05:57Z on 26 November is the 26th in Kiritimati (the 25th in Pago Pago) → the 27th.
    await setZone(owner, "Pacific/Kiritimati");
    try {
      const t = await task(owner, {});
      const rec = await recur(owner, { task_id: t.id, kind: "after_completion", interval: 1, unit: "day", timezone: "Pacific/Pago_Pago" });
      clock.set("2026-11-26T05:57:00.000Z");
      const r = await owner.post(`${V}/recurrences/${rec.id}/complete`);
      expect(r.body.next.due_at).toBe("2026-11-27");
      // The user moves to Pago Pago (PATCH /me): the next completion counts there. 05:57Z on the
      // 28th is 18:57 on the 27th in Pago Pago → the 28th.
      await setZone(owner, "Pacific/Pago_Pago");
      clock.set("2026-11-28T05:57:00.000Z");
      expect((await owner.post(`${V}/recurrences/${rec.id}/complete`)).body.next.due_at).toBe("2026-11-28");
      // The recurrence's own zone is left as it was (it is what an rrule would use).
      expect((await owner.get(`${V}/recurrences/${rec.id}`)).body.timezone).toBe("Pacific/Pago_Pago");
    } finally {
      clock.set("2026-11-25T12:00:00.000Z");
      await setZone(owner, "UTC");
    }
  });

  test("after_completion: a timed deadline keeps its local time in the user's zone; months clamp to the month's end", async () => {
    await setZone(owner, "Pacific/Auckland");
    try {
      const t = await task(owner, { due_at: "2026-01-10T09:00:00+13:00" });
      // The recurrence's zone is not the user's and plays no part.
      const rec = await recur(owner, { task_id: t.id, kind: "after_completion", interval: 1, unit: "month", timezone: "America/New_York" });
      clock.set("2026-01-30T12:00:00.000Z"); // 01:00 NZDT on 31 January
      const r = await owner.post(`${V}/recurrences/${rec.id}/complete`);
      expect(r.body.next.due_at).toBe("2026-02-27T20:00:00.000Z"); // 09:00 NZDT on 28 February
    } finally {
      clock.set("2026-11-25T12:00:00.000Z");
      await setZone(owner, "UTC");
    }
  });
});

describe("exceptions", () => {
  async function daily(rrule = "FREQ=DAILY") {
    const t = await task(owner, { due_at: "2026-11-30" });
    const rec = await recur(owner, { task_id: t.id, kind: "rrule", rrule });
    return { t, rec };
  }

  test("a future skip answers 200 with the recurrence and is passed over on completion", async () => {
    const { rec } = await daily();
    clock.set("2026-11-26T08:00:00.000Z");
    const r = await owner.post(`${V}/recurrences/${rec.id}/exceptions`, { date: "2026-12-01" });
    clock.set("2026-11-25T12:00:00.000Z");
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: rec.id, exceptions: ["2026-12-01"], updated_at: "2026-11-26T08:00:00.000Z" });
    expect((await owner.post(`${V}/recurrences/${rec.id}/exceptions`, { date: "2026-12-03" })).body.exceptions).toEqual(["2026-12-01", "2026-12-03"]);
    const c = await owner.post(`${V}/recurrences/${rec.id}/complete`);
    expect(c.body.next.due_at).toBe("2026-12-02");
    expect((await owner.post(`${V}/recurrences/${rec.id}/complete`)).body.next.due_at).toBe("2026-12-04");
  });

  test("skipping the current occurrence moves the task on (version grows, subtasks reset); undoing moves it back", async () => {
    const { t, rec } = await daily();
    const sub = await task(owner, { title: "step", parent_id: t.id });
    await owner.patch(`${V}/tasks/${sub.id}`, { version: sub.version, completed: true });
    const before = await getTask(owner, t.id);
    const r = await owner.post(`${V}/recurrences/${rec.id}/exceptions`, { date: "2026-11-30" });
    expect(r.status).toBe(200);
    const moved = await getTask(owner, t.id);
    expect(moved).toMatchObject({ due_at: "2026-12-01", version: before.version + 1 });
    expect(moved.subtasks[0].completed).toBe(false);
    // Skip the new current one too, then undo the first skip: back to 30 November.
    await owner.post(`${V}/recurrences/${rec.id}/exceptions`, { date: "2026-12-01" });
    expect((await getTask(owner, t.id)).due_at).toBe("2026-12-02");
    clock.set("2026-11-27T08:00:00.000Z");
    const u = await owner.delete(`${V}/recurrences/${rec.id}/exceptions/2026-11-30`);
    clock.set("2026-11-25T12:00:00.000Z");
    // A delete: 204, no body, no content type (docs/spec/contract.md §12).
    expect(u.status).toBe(204);
    expect(u.text).toBe("");
    expect(u.headers.get("content-type")).toBeNull();
    expect((await owner.get(`${V}/recurrences/${rec.id}`)).body).toMatchObject({ exceptions: ["2026-12-01"], updated_at: "2026-11-27T08:00:00.000Z" });
    expect((await getTask(owner, t.id)).due_at).toBe("2026-11-30");
    // Undoing a future skip does not move the task.
    const u2 = await owner.delete(`${V}/recurrences/${rec.id}/exceptions/2026-12-01`);
    expect({ status: u2.status, text: u2.text }).toEqual({ status: 204, text: "" });
    expect((await owner.get(`${V}/recurrences/${rec.id}`)).body.exceptions).toEqual([]);
    expect((await getTask(owner, t.id)).due_at).toBe("2026-11-30");
  });

  test("undoing a skip that completion went past moves the task back to it (it is still pending)", async () => {
    const { t, rec } = await daily();
    await owner.post(`${V}/recurrences/${rec.id}/exceptions`, { date: "2026-12-01" });
    expect((await owner.post(`${V}/recurrences/${rec.id}/complete`)).body.next.due_at).toBe("2026-12-02");
    await owner.delete(`${V}/recurrences/${rec.id}/exceptions/2026-12-01`);
    expect((await getTask(owner, t.id)).due_at).toBe("2026-12-01");
  });

  test("adding an existing exception changes nothing", async () => {
    const { rec } = await daily();
    await owner.post(`${V}/recurrences/${rec.id}/exceptions`, { date: "2026-12-05" });
    const before = dump(app.db);
    const r = await owner.post(`${V}/recurrences/${rec.id}/exceptions`, { date: "2026-12-05" });
    expect(r.status).toBe(200);
    expect(r.body.exceptions).toEqual(["2026-12-05"]);
    expect(dump(app.db)).toEqual(before);
  });

  test("refused skips: not an occurrence, before the current one, invalid dates, unknown fields, the last occurrence, after_completion", async () => {
    const { rec } = await daily("FREQ=WEEKLY;BYDAY=MO;COUNT=3");
    for (const body of [{ date: "2026-12-01" }, { date: "2026-11-23" }, { date: "2026-12-21" }]) {
      // Tuesday (no occurrence); a Monday before DTSTART; the 4th Monday (beyond COUNT).
      const r = await refused(() => owner.post(`${V}/recurrences/${rec.id}/exceptions`, body), 422, "validation_failed");
      expect(r.body.errors[0].path).toBe("date");
    }
    for (const body of [{ date: "2026-02-30" }, { date: "2026-12-7" }, { date: 20261207 }, {}, { date: "2026-12-07", note: "x" }]) {
      await refused(() => owner.post(`${V}/recurrences/${rec.id}/exceptions`, body), 422, "validation_failed");
    }
    // Complete twice: the task is at the last occurrence; it cannot be skipped.
    await owner.post(`${V}/recurrences/${rec.id}/complete`);
    const r = await owner.post(`${V}/recurrences/${rec.id}/complete`);
    expect(r.body.next.due_at).toBe("2026-12-14");
    await refused(() => owner.post(`${V}/recurrences/${rec.id}/exceptions`, { date: "2026-12-14" }), 409, "state_conflict");
    // A date now in the past of the series.
    await refused(() => owner.post(`${V}/recurrences/${rec.id}/exceptions`, { date: "2026-12-07" }), 422, "validation_failed");

    const plain = await task(owner, {});
    const ac = await recur(owner, { task_id: plain.id, kind: "after_completion", interval: 1, unit: "day" });
    await refused(() => owner.post(`${V}/recurrences/${ac.id}/exceptions`, { date: "2026-12-01" }), 409, "state_conflict");
  });

  test("removing a date that is not an exception is 404", async () => {
    const { rec } = await daily();
    await refused(() => owner.delete(`${V}/recurrences/${rec.id}/exceptions/2026-12-01`), 404, "not_found");
  });

  test("a timed series: exceptions are local dates in the recurrence's zone", async () => {
    // 09:00 in Auckland is 20:00 UTC the day before.
    const t = await task(owner, { due_at: "2026-11-30T20:00:00Z" });
    const rec = await recur(owner, { task_id: t.id, kind: "rrule", rrule: "FREQ=DAILY", timezone: "Pacific/Auckland" });
    await refused(() => owner.post(`${V}/recurrences/${rec.id}/exceptions`, { date: "2026-11-30" }), 422, "validation_failed");
    expect((await owner.post(`${V}/recurrences/${rec.id}/exceptions`, { date: "2026-12-01" })).status).toBe(200); // the current one
    expect((await getTask(owner, t.id)).due_at).toBe("2026-12-01T20:00:00.000Z");
  });
});

describe("update and delete", () => {
  test("a new rrule starts at the task's current due_at; exceptions the new rule does not have are dropped", async () => {
    const t = await task(owner, { due_at: "2026-11-30" });
    const rec = await recur(owner, { task_id: t.id, kind: "rrule", rrule: "FREQ=DAILY" });
    await owner.post(`${V}/recurrences/${rec.id}/complete`);
    await owner.post(`${V}/recurrences/${rec.id}/exceptions`, { date: "2026-12-07" }); // a Monday
    await owner.post(`${V}/recurrences/${rec.id}/exceptions`, { date: "2026-12-08" }); // a Tuesday
    clock.set("2026-11-26T00:00:00.000Z");
    const r = await owner.patch(`${V}/recurrences/${rec.id}`, { rrule: "FREQ=WEEKLY;BYDAY=MO" });
    clock.set("2026-11-25T12:00:00.000Z");
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ rrule: "FREQ=WEEKLY;BYDAY=MO", dtstart: "2026-12-01", exceptions: ["2026-12-07"], updated_at: "2026-11-26T00:00:00.000Z" });
    expect((await owner.get(`${V}/recurrences/${rec.id}`)).body).toEqual(r.body);
    expect((await owner.post(`${V}/recurrences/${rec.id}/complete`)).body.next.due_at).toBe("2026-12-14");
  });

  test("switching kinds clears the other kind's fields; rrule again needs a rule", async () => {
    const t = await task(owner, { due_at: "2026-11-30" });
    const rec = await recur(owner, { task_id: t.id, kind: "rrule", rrule: "FREQ=DAILY" });
    await owner.post(`${V}/recurrences/${rec.id}/exceptions`, { date: "2026-12-03" });
    const a = await owner.patch(`${V}/recurrences/${rec.id}`, { kind: "after_completion", interval: 3, unit: "day" });
    expect(a.body).toMatchObject({ kind: "after_completion", rrule: null, dtstart: null, interval: 3, unit: "day", exceptions: [] });
    await refused(() => owner.patch(`${V}/recurrences/${rec.id}`, { kind: "rrule" }), 422, "validation_failed");
    await refused(() => owner.patch(`${V}/recurrences/${rec.id}`, { rrule: "FREQ=DAILY" }), 422, "validation_failed");
    const b = await owner.patch(`${V}/recurrences/${rec.id}`, { kind: "rrule", rrule: "FREQ=MONTHLY" });
    expect(b.body).toMatchObject({ kind: "rrule", rrule: "FREQ=MONTHLY", interval: null, unit: null, dtstart: "2026-11-30" });
    await refused(() => owner.patch(`${V}/recurrences/${rec.id}`, { interval: 2 }), 422, "validation_failed");
  });

  test("invalid patches are 422 and change nothing", async () => {
    const t = await task(owner, { due_at: "2026-11-30" });
    const rec = await recur(owner, { task_id: t.id, kind: "rrule", rrule: "FREQ=DAILY" });
    for (const body of [
      { rrule: "FREQ=HOURLY" },
      { rrule: "FREQ=DAILY;BYHOUR=9" },
      { rrule: "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=31" },
      { timezone: "Nowhere/City" },
      { kind: "monthly" },
      { rrule: "FREQ=DAILY", version: 1 },
      { kind: "after_completion", interval: 1 },
      { kind: "after_completion", interval: 0, unit: "day" },
    ]) {
      await refused(() => owner.patch(`${V}/recurrences/${rec.id}`, body), 422, "validation_failed");
    }
    // The task lost its due_at: a new rule has no DTSTART.
    const cur = await getTask(owner, t.id);
    await owner.patch(`${V}/tasks/${t.id}`, { version: cur.version, due_at: null });
    await refused(() => owner.patch(`${V}/recurrences/${rec.id}`, { rrule: "FREQ=WEEKLY" }), 422, "validation_failed");
    await refused(() => owner.post(`${V}/recurrences/${rec.id}/complete`), 409, "state_conflict");
  });

  test("DELETE: 204, the task stays as it is, the recurrence is gone", async () => {
    const t = await task(owner, { due_at: "2026-11-30" });
    const rec = await recur(owner, { task_id: t.id, kind: "rrule", rrule: "FREQ=DAILY" });
    await owner.post(`${V}/recurrences/${rec.id}/exceptions`, { date: "2026-12-02" });
    const before = await getTask(owner, t.id);
    const r = await owner.delete(`${V}/recurrences/${rec.id}`);
    expect(r.status).toBe(204);
    expect(r.text).toBe("");
    expect(await getTask(owner, t.id)).toEqual(before);
    expect((await owner.get(`${V}/recurrences/${rec.id}`)).status).toBe(404);
    expect(app.db.sqlite.query("SELECT count(*) AS n FROM recurrence_exceptions WHERE recurrence_id = ?").get(rec.id)).toEqual({ n: 0 });
    await refused(() => owner.delete(`${V}/recurrences/${rec.id}`), 404, "not_found");
    // The task can recur again.
    expect((await owner.post(`${V}/recurrences`, { task_id: t.id, kind: "rrule", rrule: "FREQ=DAILY" })).status).toBe(201);
  });
});

test("OpenAPI documents every recurrence operation with its errors", async () => {
  const d = (await owner.get("/api/openapi.json")).body;
  const ops: [string, string, string[]][] = [
    ["/api/v1/tasks/{task_id}/recurrence", "get", ["200", "404"]],
    ["/api/v1/recurrences", "post", ["201", "409", "422"]],
    ["/api/v1/recurrences/{id}", "get", ["200", "404"]],
    ["/api/v1/recurrences/{id}", "patch", ["200", "404", "409", "422"]],
    ["/api/v1/recurrences/{id}", "delete", ["204", "404"]],
    ["/api/v1/recurrences/{id}/complete", "post", ["200", "404", "409"]],
    ["/api/v1/recurrences/{id}/exceptions", "post", ["200", "404", "409", "422"]],
    ["/api/v1/recurrences/{id}/exceptions/{date}", "delete", ["204", "404", "422"]],
  ];
  for (const [path, method, statuses] of ops) {
    const op = d.paths[path]?.[method];
    expect(op).toBeDefined();
    for (const s of statuses) expect(Object.keys(op.responses)).toContain(s);
  }
  // A delete answers 204 only (docs/spec/contract.md §12): no 200 documented for undoing a skip.
  expect(Object.keys(d.paths["/api/v1/recurrences/{id}/exceptions/{date}"].delete.responses)).not.toContain("200");
  // "No repeat" is a 200 null, documented as such.
  const ofTask = d.paths["/api/v1/tasks/{task_id}/recurrence"].get;
  expect(JSON.stringify(ofTask.responses["200"].content["application/json"].schema)).toContain('"null"');
  expect(ofTask.description).toContain("`null`");
  expect(d.components.schemas.Recurrence).toBeDefined();
  expect(d.paths["/api/v1/recurrences"].post.requestBody).toBeDefined();
});
