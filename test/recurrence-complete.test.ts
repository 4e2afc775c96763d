// Completing a recurring task through PATCH /tasks/{id} and POST /tasks/batch (docs/spec/contract.md §12): the
// same completion as POST /recurrences/{id}/complete, in the PATCH's or batch's transaction; and
// a recurring task cannot become a subtask. The clock is fixed and zones are named, so this file
// gives the same results under TZ=America/New_York (`bun run test`).
import { afterAll, describe, expect, test } from "bun:test";
import { dump, FixedClock, makeTestApp, rejected, setupAdmin, signedInUser, type TestClient } from "./helpers/app";
import { mkTag, mkTask, uname } from "./helpers/tasks";

const clock = new FixedClock(new Date("2026-11-25T12:00:00.000Z"));
const TEN_YEARS = 10 * 365 * 24 * 3600;
const app = makeTestApp({ clock, config: { sessionIdleSeconds: TEN_YEARS, sessionAbsoluteSeconds: TEN_YEARS } });
const admin = await setupAdmin(app);
afterAll(() => app.close());

const V = "/api/v1";

// Task answers vary per case; each test asserts on the fields it cares about.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

async function user(timezone = "UTC"): Promise<TestClient> {
  const c = await signedInUser(app, admin, uname("rc"));
  if (timezone !== "UTC") expect((await c.patch(`${V}/me`, { timezone })).status).toBe(200);
  return c;
}

async function recur(c: TestClient, body: Record<string, unknown>): Promise<{ id: string }> {
  const r = await c.post(`${V}/recurrences`, body);
  if (r.status !== 201) throw new Error(`recurrence create: ${r.status} ${r.text}`);
  return r.body;
}

async function get(c: TestClient, id: string): Promise<Json> {
  const r = await c.get(`${V}/tasks/${id}`);
  expect(r.status).toBe(200);
  return r.body;
}

/** The user's completed top-level tasks other than `except`: the copies completion recorded. */
async function copies(c: TestClient, except: string[] = []): Promise<Json[]> {
  const r = await c.get(`${V}/tasks?completed=true&limit=100`);
  expect(r.status).toBe(200);
  return r.body.items.filter((t: { id: string }) => !except.includes(t.id));
}

/** A task's fields that say what it is, without its identity and timestamps. */
function essence(t: Json): Json {
  return {
    title: t.title,
    description: t.description,
    completed: t.completed,
    completed_at: t.completed_at,
    due_at: t.due_at,
    priority: t.priority,
    list_id: t.list_id,
    tags: t.tags,
    subtasks: t.subtasks.map((s: Json) => ({ title: s.title, completed: s.completed, completed_at: s.completed_at })),
  };
}

/** A weekly review with a tag and two subtasks (one completed) that recurs by `rec`. */
async function recurring(c: TestClient, rec: Record<string, unknown>, due: string | null = "2026-11-30"): Promise<{ task: Json; rec: { id: string } }> {
  const tag = await mkTag(c, `chores-${uname()}`);
  const t = await mkTask(c, { title: "Weekly review", description: "notes", priority: 2, due_at: due, tag_ids: [tag] });
  const s1 = await mkTask(c, { title: "inbox zero", parent_id: t.id });
  await mkTask(c, { title: "plan", parent_id: t.id });
  expect((await c.patch(`${V}/tasks/${s1.id}`, { version: s1.version, completed: true })).status).toBe(200);
  const r = await recur(c, { task_id: t.id, ...rec });
  return { task: await get(c, t.id), rec: r };
}

describe("PATCH /tasks/{id} with completed: true on a recurring task", () => {
  test("does exactly what POST /recurrences/{id}/complete does and answers the task after the move", async () => {
    const c = await user();
    const viaRoute = await recurring(c, { kind: "rrule", rrule: "FREQ=WEEKLY;BYDAY=MO,WE" });
    const viaPatch = await recurring(c, { kind: "rrule", rrule: "FREQ=WEEKLY;BYDAY=MO,WE" });
    clock.set("2026-11-30T18:00:00.000Z");
    try {
      const route = await c.post(`${V}/recurrences/${viaRoute.rec.id}/complete`);
      expect(route.status).toBe(200);
      const patch = await c.patch(`${V}/tasks/${viaPatch.task.id}`, { version: viaPatch.task.version, completed: true });
      expect(patch.status).toBe(200);
      // The answer is the task itself, moved on: same id, next occurrence, not completed, subtasks reset.
      expect(patch.body).toMatchObject({ id: viaPatch.task.id, due_at: "2026-12-02", completed: false, completed_at: null, version: viaPatch.task.version + 1 });
      expect(patch.body).toEqual(await get(c, viaPatch.task.id));
      expect(essence(patch.body)).toEqual({ ...essence(route.body.next), tags: viaPatch.task.tags });
      // A completed copy was recorded, like the route's.
      const copy = (await copies(c)).filter((t) => t.id !== route.body.completed.id && t.id !== viaRoute.task.id);
      expect(copy).toHaveLength(1);
      expect(copy[0].id).not.toBe(viaPatch.task.id);
      expect(essence(copy[0])).toEqual({ ...essence(route.body.completed), tags: viaPatch.task.tags });
      expect(essence(copy[0])).toMatchObject({ completed: true, completed_at: "2026-11-30T18:00:00.000Z", due_at: "2026-11-30" });
      expect(copy[0].subtasks.map((s: Json) => [s.title, s.completed])).toEqual([
        ["inbox zero", true],
        ["plan", false],
      ]);
      // The series goes on: the recurrence is still there and completes from the new occurrence.
      const next = await c.post(`${V}/recurrences/${viaPatch.rec.id}/complete`);
      expect(next.body.next.due_at).toBe("2026-12-07");
    } finally {
      clock.set("2026-11-25T12:00:00.000Z");
    }
  });

  test("version: a stale one is 409 and changes nothing; the answer's version is the one to use next", async () => {
    const c = await user();
    const { task } = await recurring(c, { kind: "rrule", rrule: "FREQ=DAILY" });
    await rejected(app, () => c.patch(`${V}/tasks/${task.id}`, { version: task.version + 1, completed: true }), 409, "version_conflict");
    await rejected(app, () => c.patch(`${V}/tasks/${task.id}`, { completed: true }), 422, "validation_failed");
    const done = await c.patch(`${V}/tasks/${task.id}`, { version: task.version, completed: true });
    expect(done.body).toMatchObject({ due_at: "2026-12-01", version: task.version + 1 });
    // Replaying the same PATCH (a double click) is a conflict, not a second completion.
    await rejected(app, () => c.patch(`${V}/tasks/${task.id}`, { version: task.version, completed: true }), 409, "version_conflict");
    const again = await c.patch(`${V}/tasks/${task.id}`, { version: done.body.version, completed: true });
    expect(again.body).toMatchObject({ due_at: "2026-12-02", version: task.version + 2 });
    expect(await copies(c)).toHaveLength(2);
  });

  test("the last occurrence (COUNT, UNTIL): the task itself is completed for good and the recurrence ends", async () => {
    const c = await user();
    for (const rrule of ["FREQ=DAILY;COUNT=2", "FREQ=DAILY;UNTIL=20261201"]) {
      const { task, rec } = await recurring(c, { kind: "rrule", rrule });
      const first = await c.patch(`${V}/tasks/${task.id}`, { version: task.version, completed: true });
      expect(first.body).toMatchObject({ due_at: "2026-12-01", completed: false });
      const before = (await copies(c)).length;
      const last = await c.patch(`${V}/tasks/${task.id}`, { version: first.body.version, completed: true });
      expect(last.status).toBe(200);
      expect(last.body).toMatchObject({ id: task.id, due_at: "2026-12-01", completed: true, completed_at: "2026-11-25T12:00:00.000Z", version: first.body.version + 1 });
      expect((await copies(c)).length).toBe(before + 1); // the task itself, no copy
      expect((await c.get(`${V}/recurrences/${rec.id}`)).status).toBe(404);
      // Now a plain task: un-completing and completing again change only the flag.
      const undo = await c.patch(`${V}/tasks/${task.id}`, { version: last.body.version, completed: false });
      const redo = await c.patch(`${V}/tasks/${task.id}`, { version: undo.body.version, completed: true });
      expect(redo.body).toMatchObject({ completed: true, due_at: "2026-12-01" });
    }
  });

  test("after_completion: the next due date counts from the completion date in the user's zone", async () => {
    const c = await user("Pacific/Kiritimati");
    const { task } = await recurring(c, { kind: "after_completion", interval: 2, unit: "day", timezone: "Pacific/Pago_Pago" }, null);
    clock.set("2026-11-26T05:57:00.000Z"); // the 26th in Kiritimati, the 25th in Pago Pago
    try {
      const r = await c.patch(`${V}/tasks/${task.id}`, { version: task.version, completed: true });
      expect(r.body).toMatchObject({ due_at: "2026-11-28", completed: false });
      const [copy] = await copies(c);
      expect(copy).toMatchObject({ due_at: null, completed: true, completed_at: "2026-11-26T05:57:00.000Z" });
    } finally {
      clock.set("2026-11-25T12:00:00.000Z");
    }
  });

  test("with other fields: they apply first, to the occurrence completed, and carry on to the next", async () => {
    const c = await user();
    const { task } = await recurring(c, { kind: "rrule", rrule: "FREQ=WEEKLY;BYDAY=MO" });
    const tag = await mkTag(c, "new tag");
    const r = await c.patch(`${V}/tasks/${task.id}`, {
      version: task.version,
      completed: true,
      title: "Monthly review",
      priority: 3,
      tag_ids: [tag],
      due_at: "2026-12-07",
    });
    expect(r.status).toBe(200);
    // The occurrence completed was the one on the new due date; the next is the Monday after it.
    expect(r.body).toMatchObject({ title: "Monthly review", priority: 3, due_at: "2026-12-14", completed: false, version: task.version + 1 });
    expect(r.body.tags.map((t: Json) => t.id)).toEqual([tag]);
    const [copy] = await copies(c);
    expect(copy).toMatchObject({ title: "Monthly review", priority: 3, due_at: "2026-12-07", completed: true });
    expect(copy.tags.map((t: Json) => t.id)).toEqual([tag]);
  });

  test("an rrule task whose due_at the same PATCH clears cannot complete: 409 state_conflict, nothing changes", async () => {
    const c = await user();
    const { task } = await recurring(c, { kind: "rrule", rrule: "FREQ=DAILY" });
    const r = await rejected(app, () => c.patch(`${V}/tasks/${task.id}`, { version: task.version, completed: true, due_at: null }), 409, "state_conflict");
    expect(r.body.detail).toContain("due_at");
  });

  test("completed: false, and completed: true on a recurring task already completed, only set the flag", async () => {
    const c = await user();
    const t = await mkTask(c, { title: "done already", completed: true, due_at: "2026-11-30" });
    const rec = await recur(c, { task_id: t.id, kind: "rrule", rrule: "FREQ=DAILY" });
    const same = await c.patch(`${V}/tasks/${t.id}`, { version: t.version, completed: true });
    expect(same.body).toMatchObject({ completed: true, completed_at: t.completed_at, due_at: "2026-11-30", version: t.version + 1 });
    const undo = await c.patch(`${V}/tasks/${t.id}`, { version: same.body.version, completed: false });
    expect(undo.body).toMatchObject({ completed: false, due_at: "2026-11-30" });
    expect(await copies(c)).toHaveLength(0);
    expect((await c.get(`${V}/recurrences/${rec.id}`)).status).toBe(200);
    // Not completed now: completing moves it on.
    expect((await c.patch(`${V}/tasks/${t.id}`, { version: undo.body.version, completed: true })).body).toMatchObject({ completed: false, due_at: "2026-12-01" });
  });

  test("a plain task still just completes", async () => {
    const c = await user();
    const t = await mkTask(c, { title: "plain", due_at: "2026-11-30" });
    const r = await c.patch(`${V}/tasks/${t.id}`, { version: t.version, completed: true });
    expect(r.body).toMatchObject({ id: t.id, completed: true, completed_at: "2026-11-25T12:00:00.000Z", due_at: "2026-11-30", version: 2 });
    expect((await copies(c, [t.id])).length).toBe(0);
  });
});

describe("POST /tasks/batch with completed: true", () => {
  test("recurring tasks move on (one copy each), plain ones complete; the answer is the count; each version grows by one", async () => {
    const c = await user();
    const weekly = await recurring(c, { kind: "rrule", rrule: "FREQ=WEEKLY;BYDAY=MO" });
    const after = await recurring(c, { kind: "after_completion", interval: 3, unit: "day" }, "2026-11-20T09:00:00Z");
    const last = await recurring(c, { kind: "rrule", rrule: "FREQ=DAILY;COUNT=1" });
    const plain = await mkTask(c, { title: "plain" });
    const alreadyDone = await mkTask(c, { title: "done", completed: true });
    const sub = weekly.task.subtasks.find((s: Json) => !s.completed);
    const r = await c.post(`${V}/tasks/batch`, { task_ids: [weekly.task.id, plain.id, after.task.id, sub.id, last.task.id, alreadyDone.id], completed: true });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ updated: 6 });

    const W = await get(c, weekly.task.id);
    expect(W).toMatchObject({ due_at: "2026-12-07", completed: false, version: weekly.task.version + 1 });
    // The named subtask was completed with its parent's occurrence (so in the copy), then reset.
    expect(W.subtasks.map((s: Json) => s.completed)).toEqual([false, false]);
    const A = await get(c, after.task.id);
    expect(A).toMatchObject({ due_at: "2026-11-28T09:00:00.000Z", completed: false, version: after.task.version + 1 });
    const L = await get(c, last.task.id);
    expect(L).toMatchObject({ completed: true, due_at: "2026-11-30", version: last.task.version + 1 });
    expect((await c.get(`${V}/recurrences/${last.rec.id}`)).status).toBe(404);
    expect(await get(c, plain.id)).toMatchObject({ completed: true, version: 2 });
    expect(await get(c, alreadyDone.id)).toMatchObject({ completed: true, completed_at: alreadyDone.completed_at, version: 2 });

    const made = await copies(c, [last.task.id, plain.id, alreadyDone.id]);
    expect(made.map((t: Json) => [t.title, t.due_at]).sort()).toEqual([
      ["Weekly review", "2026-11-20T09:00:00.000Z"],
      ["Weekly review", "2026-11-30"],
    ]);
    const weeklyCopy = made.find((t: Json) => t.due_at === "2026-11-30");
    expect(weeklyCopy.subtasks.map((s: Json) => [s.title, s.completed])).toEqual([
      ["inbox zero", true],
      ["plan", true],
    ]);
  });

  test("with due_at and list_id: applied first, then the occurrence on that date is completed", async () => {
    const c = await user();
    const { task } = await recurring(c, { kind: "rrule", rrule: "FREQ=WEEKLY;BYDAY=MO" });
    const list = await c.post(`${V}/lists`, { name: "Elsewhere" });
    const r = await c.post(`${V}/tasks/batch`, { task_ids: [task.id], completed: true, due_at: "2026-12-14", list_id: list.body.id });
    expect(r.body).toEqual({ updated: 1 });
    const T = await get(c, task.id);
    expect(T).toMatchObject({ due_at: "2026-12-21", list_id: list.body.id, completed: false, version: task.version + 1 });
    expect(T.subtasks.every((s: Json) => s.list_id === list.body.id)).toBe(true);
    const [copy] = await copies(c);
    expect(copy).toMatchObject({ due_at: "2026-12-14", list_id: list.body.id });
  });

  test("one task that cannot complete (an rrule without due_at) refuses the whole batch: nothing changes", async () => {
    const c = await user();
    const { task } = await recurring(c, { kind: "rrule", rrule: "FREQ=DAILY" });
    const plain = await mkTask(c, { title: "plain" });
    await rejected(app, () => c.post(`${V}/tasks/batch`, { task_ids: [plain.id, task.id], completed: true, due_at: null }), 409, "state_conflict");
  });

  test("completed: false and other changes leave a recurring task's series alone", async () => {
    const c = await user();
    const { task } = await recurring(c, { kind: "rrule", rrule: "FREQ=DAILY" });
    const before = dump(app.db).tasks!.length;
    expect((await c.post(`${V}/tasks/batch`, { task_ids: [task.id], completed: false, due_at: "2026-12-03" })).body).toEqual({ updated: 1 });
    expect(await get(c, task.id)).toMatchObject({ due_at: "2026-12-03", completed: false, version: task.version + 1 });
    expect(dump(app.db).tasks!.length).toBe(before);
  });
});

describe("a recurring task cannot become a subtask", () => {
  test("PATCH parent_id on a task with a recurrence: 422 validation_failed on parent_id, nothing changes", async () => {
    const c = await user();
    const parent = await mkTask(c, { title: "project" });
    for (const rec of [
      { kind: "rrule", rrule: "FREQ=DAILY" },
      { kind: "after_completion", interval: 1, unit: "week" },
    ]) {
      const t = await mkTask(c, { title: "recurs", due_at: "2026-11-30" });
      const r = await recur(c, { task_id: t.id, ...rec });
      const no = await rejected(app, () => c.patch(`${V}/tasks/${t.id}`, { version: t.version, parent_id: parent.id }), 422, "validation_failed");
      expect(no.body.errors).toEqual([{ path: "parent_id", message: expect.stringContaining("recurring") }]);
      // Also together with a completion, and with a move to the parent's list.
      await rejected(app, () => c.patch(`${V}/tasks/${t.id}`, { version: t.version, parent_id: parent.id, completed: true }), 422, "validation_failed");
      // Without its recurrence it can.
      expect((await c.delete(`${V}/recurrences/${r.id}`)).status).toBe(204);
      const ok = await c.patch(`${V}/tasks/${t.id}`, { version: t.version, parent_id: parent.id });
      expect(ok.status).toBe(200);
      expect(ok.body.parent_id).toBe(parent.id);
    }
  });

  test("a recurring task's other fields (and parent_id: null) still change", async () => {
    const c = await user();
    const t = await mkTask(c, { title: "recurs", due_at: "2026-11-30" });
    await recur(c, { task_id: t.id, kind: "rrule", rrule: "FREQ=DAILY" });
    const r = await c.patch(`${V}/tasks/${t.id}`, { version: t.version, parent_id: null, title: "still recurs" });
    expect(r.body).toMatchObject({ parent_id: null, title: "still recurs" });
  });
});

test("OpenAPI says what completing a recurring task does, on PATCH and on batch", async () => {
  const d = (await admin.get("/api/openapi.json")).body;
  const patch = d.paths["/api/v1/tasks/{task_id}"].patch;
  expect(patch.description).toContain("POST /recurrences/{id}/complete");
  expect(patch.description).toContain("parent_id");
  expect(Object.keys(patch.responses)).toContain("409");
  const batch = d.paths["/api/v1/tasks/batch"].post;
  expect(batch.description).toContain("POST /recurrences/{id}/complete");
  expect(Object.keys(batch.responses)).toContain("409");
});
