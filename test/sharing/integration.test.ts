// Sharing (issue 19) meets what main gained meanwhile (issues 14 and 15): tasks of shared lists in
// the member's smart views, view counts and calendar (lists.access, as GET /tasks); manual order,
// reschedule and batch undo on a shared task (editor allowed, viewer 403, non-member 404);
// reminders personal on shared tasks, a member's going when they leave or are removed.
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { FixedClock, makeTestApp, rejected as rejectedIn, setupAdmin, signedInUser, type TestClient, type TestResponse } from "../helpers/app";
import { mkList, mkTask, uname } from "../helpers/tasks";
import { meOf, share } from "./helpers";

setDefaultTimeout(120_000);

// Thursday 2026-11-26, 10:00 UTC; every user in UTC.
const clock = new FixedClock(new Date("2026-11-26T10:00:00.000Z"));
const app = makeTestApp({ clock });
const admin = await setupAdmin(app, { timezone: "UTC" });
afterAll(() => app.close());
const rejected = (run: () => Promise<TestResponse>, status: number, code: string) => rejectedIn(app, run, status, code);

const user = (p: string) => signedInUser(app, admin, uname(p), { timezone: "UTC" });

async function trio(): Promise<{ owner: TestClient; editor: TestClient; viewer: TestClient; stranger: TestClient; list: string }> {
  const owner = await user("own");
  const editor = await user("ed");
  const viewer = await user("vi");
  const stranger = await user("st");
  const list = await mkList(owner, "Household");
  await share(owner, editor, list, "editor");
  await share(owner, viewer, list, "viewer");
  return { owner, editor, viewer, stranger, list };
}

type Group = { day: string | null; tasks: { id: string }[] };
const viewIds = async (c: TestClient, view: string): Promise<string[]> => {
  const r = await c.get(`/api/v1/views/${view}?limit=100`);
  expect(r.status).toBe(200);
  return (r.body.groups as Group[]).flatMap((g) => g.tasks.map((t) => t.id));
};
const counts = async (c: TestClient): Promise<Record<string, number>> => {
  const r = await c.get("/api/v1/views/counts");
  expect(r.status).toBe(200);
  return r.body.counts;
};
type Day = { date: string; tasks: { id: string }[]; occurrences: { task_id: string; due_at: string }[] };
const calendar = async (c: TestClient): Promise<Day[]> => {
  const r = await c.get("/api/v1/calendar?from=2026-11-01&to=2026-12-31");
  expect(r.status).toBe(200);
  return r.body.days;
};
const calendarTaskIds = (days: Day[]) => days.flatMap((d) => d.tasks.map((t) => t.id));

describe("smart views, counts and calendar show the tasks of shared lists", () => {
  test("a member sees a shared task in Today/Upcoming/No date/Completed, the counts and the calendar; a non-member does not; after leaving it disappears", async () => {
    const { owner, editor, viewer, stranger, list } = await trio();
    const today = await mkTask(owner, { title: "Shared today", list_id: list, due_at: "2026-11-26" });
    const later = await mkTask(owner, { title: "Shared later", list_id: list, due_at: "2026-12-10T15:00:00Z" });
    const undated = await mkTask(owner, { title: "Shared undated", list_id: list });
    const done = await mkTask(owner, { title: "Shared done", list_id: list, due_at: "2026-11-20" });
    expect((await owner.patch(`/api/v1/tasks/${done.id}`, { version: done.version, completed: true })).status).toBe(200);
    // The viewer's own task, merged with the shared ones.
    const mine = await mkTask(viewer, { title: "Mine today", due_at: "2026-11-26T12:00:00Z" });

    for (const c of [owner, editor, viewer]) {
      expect(await viewIds(c, "today")).toContain(today.id);
      expect(await viewIds(c, "upcoming")).toContain(later.id);
      expect(await viewIds(c, "no_date")).toContain(undated.id);
      expect(await viewIds(c, "completed")).toContain(done.id);
      const cal = calendarTaskIds(await calendar(c));
      expect(cal).toContain(today.id);
      expect(cal).toContain(later.id);
      expect(cal).toContain(done.id);
    }
    expect(await viewIds(viewer, "today")).toEqual(expect.arrayContaining([today.id, mine.id]));
    expect(await counts(viewer)).toMatchObject({ today: 2, no_date: 1, completed: 1 });
    expect((await counts(viewer)).upcoming).toBeGreaterThanOrEqual(2);
    expect(await counts(editor)).toMatchObject({ today: 1, no_date: 1, completed: 1 });

    // A non-member sees none of it.
    for (const v of ["today", "upcoming", "no_date", "completed"]) expect(await viewIds(stranger, v)).toEqual([]);
    expect(Object.values(await counts(stranger)).every((n) => n === 0)).toBe(true);
    expect(calendarTaskIds(await calendar(stranger))).toEqual([]);

    // The viewer leaves: the next request shows only their own task.
    const v = await meOf(viewer);
    expect((await viewer.delete(`/api/v1/lists/${list}/members/${v.id}`)).status).toBe(204);
    expect(await viewIds(viewer, "today")).toEqual([mine.id]);
    expect(await viewIds(viewer, "upcoming")).not.toContain(later.id);
    expect(await viewIds(viewer, "no_date")).toEqual([]);
    expect(await viewIds(viewer, "completed")).toEqual([]);
    expect(await counts(viewer)).toMatchObject({ today: 1, no_date: 0, completed: 0 });
    expect(calendarTaskIds(await calendar(viewer))).toEqual([mine.id]);

    // The owner removes the editor: the same.
    const e = await meOf(editor);
    expect((await owner.delete(`/api/v1/lists/${list}/members/${e.id}`)).status).toBe(204);
    expect(await viewIds(editor, "today")).toEqual([]);
    expect(Object.values(await counts(editor)).every((n) => n === 0)).toBe(true);
    expect(calendarTaskIds(await calendar(editor))).toEqual([]);
  });

  test("the views page through own and shared tasks in order, with small pages", async () => {
    const { owner, editor, list } = await trio();
    const made: string[] = [];
    for (let i = 0; i < 6; i++) {
      made.push((await mkTask(owner, { title: `S${i}`, list_id: list, due_at: `2026-12-0${i + 1}` })).id);
      made.push((await mkTask(editor, { title: `E${i}`, due_at: `2026-12-0${i + 1}T09:00:00Z` })).id);
    }
    // Upcoming: by day, a date before the instants of that day; every task once.
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let n = 0; n < 50; n++) {
      const r: TestResponse = await editor.get(`/api/v1/views/upcoming?limit=5${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
      expect(r.status).toBe(200);
      for (const g of r.body.groups as Group[]) for (const t of g.tasks) seen.push(t.id);
      cursor = r.body.next_cursor;
      if (cursor === null) break;
    }
    expect(seen).toEqual(made);
  });

  test("counts over the cap: today, next 7 days and upcoming (one walk in due order over own and shared rows) stay exact below the cap", async () => {
    const { owner, editor, list } = await trio();
    // The member's own rows alone fill the cap (101 on Sunday); the shared list's today rows come
    // later in the statement's arms: a walk that stopped at the cap in arm order would miss them.
    for (let i = 0; i < 101; i++) await mkTask(editor, { title: `Sun${i}`, due_at: "2026-11-29" });
    for (let i = 0; i < 3; i++) await mkTask(editor, { title: `Fri${i}`, due_at: "2026-11-27" });
    for (let i = 0; i < 4; i++) await mkTask(owner, { title: `Today${i}`, list_id: list, due_at: "2026-11-26" });
    for (let i = 0; i < 2; i++) await mkTask(owner, { title: `Tonight${i}`, list_id: list, due_at: "2026-11-26T20:00:00Z" });
    await mkTask(owner, { title: "Later", list_id: list, due_at: "2026-12-20" });
    await mkTask(owner, { title: "Late", list_id: list, due_at: "2026-11-20" });
    expect(await counts(editor)).toEqual({ overdue: 1, today: 6, tomorrow: 3, next_7_days: 100, upcoming: 100, no_date: 0, completed: 0 });
    // The owner sees only the shared list: every count exact.
    expect(await counts(owner)).toEqual({ overdue: 1, today: 6, tomorrow: 0, next_7_days: 6, upcoming: 7, no_date: 0, completed: 0 });
  });

  test("later occurrences of a shared repeating task are in the member's calendar", async () => {
    const { owner, viewer, stranger, list } = await trio();
    const t = await mkTask(owner, { title: "Bins", list_id: list, due_at: "2026-11-27" });
    const rec = await owner.post("/api/v1/recurrences", { task_id: t.id, kind: "rrule", rrule: "FREQ=WEEKLY" });
    expect(rec.status).toBe(201);
    const occ = (await calendar(viewer)).flatMap((d) => d.occurrences.filter((o) => o.task_id === t.id).map((o) => o.due_at));
    expect(occ).toEqual(["2026-12-04", "2026-12-11", "2026-12-18", "2026-12-25"]);
    expect((await calendar(stranger)).flatMap((d) => d.occurrences)).toEqual([]);
  });
});

describe("manual order, reschedule and batch undo on a shared task", () => {
  test("POST /tasks/{id}/move: editor allowed, viewer 403, non-member 404", async () => {
    const { owner, editor, viewer, stranger, list } = await trio();
    const a = await mkTask(owner, { title: "A", list_id: list });
    const b = await mkTask(owner, { title: "B", list_id: list });
    const order = async (c: TestClient) => ((await c.get(`/api/v1/tasks?list_id=${list}&sort=manual`)).body.items as { id: string }[]).map((x) => x.id);
    expect(await order(owner)).toEqual([a.id, b.id]);
    await rejected(() => viewer.post(`/api/v1/tasks/${b.id}/move`, { to: "first" }), 403, "forbidden");
    await rejected(() => stranger.post(`/api/v1/tasks/${b.id}/move`, { to: "first" }), 404, "not_found");
    const r = await editor.post(`/api/v1/tasks/${b.id}/move`, { before_id: a.id });
    expect(r.status).toBe(200);
    expect(r.body.version).toBe(b.version + 1);
    // Every member sees the new order (the sorted page follows lists.access too).
    for (const c of [owner, editor, viewer]) expect(await order(c)).toEqual([b.id, a.id]);
    expect((await stranger.get(`/api/v1/tasks?list_id=${list}&sort=manual`)).body.items).toEqual([]);
  });

  test("POST /tasks/{id}/reschedule: editor allowed, viewer 403, non-member 404", async () => {
    const { owner, editor, viewer, stranger, list } = await trio();
    const t = await mkTask(owner, { title: "Plumber", list_id: list, due_at: "2026-11-27T08:30:00Z" });
    await rejected(() => viewer.post(`/api/v1/tasks/${t.id}/reschedule`, { date: "2026-11-30", version: t.version }), 403, "forbidden");
    await rejected(() => stranger.post(`/api/v1/tasks/${t.id}/reschedule`, { date: "2026-11-30", version: t.version }), 404, "not_found");
    const r = await editor.post(`/api/v1/tasks/${t.id}/reschedule`, { date: "2026-11-30", version: t.version });
    expect(r.status).toBe(200);
    expect(r.body.due_at).toBe("2026-11-30T08:30:00.000Z");
    expect((await owner.get(`/api/v1/tasks/${t.id}`)).body.due_at).toBe("2026-11-30T08:30:00.000Z");
  });

  test("batch with undo: an editor's batch on shared tasks is undone exactly; a viewer's batch is 403; a stranger's ids are unknown", async () => {
    const { owner, editor, viewer, stranger, list } = await trio();
    const a = await mkTask(owner, { title: "A", list_id: list, due_at: "2026-11-28", priority: 1 });
    const b = await mkTask(owner, { title: "B", list_id: list });
    const own = await mkList(editor, "Editor's own");
    const before = [(await owner.get(`/api/v1/tasks/${a.id}`)).body, (await owner.get(`/api/v1/tasks/${b.id}`)).body];

    await rejected(() => viewer.post("/api/v1/tasks/batch?undo=true", { task_ids: [a.id], priority: 3 }), 403, "forbidden");
    await rejected(() => stranger.post("/api/v1/tasks/batch?undo=true", { task_ids: [a.id], priority: 3 }), 422, "invalid_reference");

    // Completes both, sets priority, and moves them out of the shared list into the editor's own.
    const r = await editor.post("/api/v1/tasks/batch?undo=true", { task_ids: [a.id, b.id], completed: true, priority: 3, list_id: own });
    expect(r.status).toBe(200);
    expect(typeof r.body.undo_token).toBe("string");
    // Out of the shared list: the owner no longer sees them.
    expect((await owner.get(`/api/v1/tasks/${a.id}`)).status).toBe(404);

    // A token is its user's: another member cannot use it.
    await rejected(() => viewer.post("/api/v1/tasks/batch/undo", { undo_token: r.body.undo_token }), 422, "validation_failed");
    const u = await editor.post("/api/v1/tasks/batch/undo", { undo_token: r.body.undo_token });
    expect(u.status).toBe(200);
    expect(u.body).toEqual({ restored: 2 });
    // Back in the owner's list, exactly as before (versions grew by two: the batch and its undo).
    const strip = (t: Record<string, unknown>) => ({ ...t, version: undefined, updated_at: undefined });
    const after = [(await owner.get(`/api/v1/tasks/${a.id}`)).body, (await owner.get(`/api/v1/tasks/${b.id}`)).body];
    expect(after.map(strip)).toEqual(before.map(strip));
    expect(after.map((t) => t.version)).toEqual(before.map((t) => t.version + 2));
    // The owner's GET /tasks of the list shows them again (their rows are the owner's again).
    const page = (await owner.get(`/api/v1/tasks?list_id=${list}`)).body.items as { id: string }[];
    expect(page.map((x) => x.id).sort()).toEqual([a.id, b.id].sort());
  });

  test("batch undo after the editor became a viewer: 403, nothing changes", async () => {
    const { owner, editor, list } = await trio();
    const a = await mkTask(owner, { title: "A", list_id: list, priority: 0 });
    const r = await editor.post("/api/v1/tasks/batch?undo=true", { task_ids: [a.id], priority: 2 });
    expect(r.status).toBe(200);
    const e = await meOf(editor);
    expect((await owner.patch(`/api/v1/lists/${list}/members/${e.id}`, { role: "viewer" })).status).toBe(200);
    await rejected(() => editor.post("/api/v1/tasks/batch/undo", { undo_token: r.body.undo_token }), 403, "forbidden");
    expect((await owner.get(`/api/v1/tasks/${a.id}`)).body.priority).toBe(2);
  });

  test("batch undo after the member left: state_conflict, nothing changes", async () => {
    const { owner, editor, list } = await trio();
    const a = await mkTask(owner, { title: "A", list_id: list, priority: 0 });
    const r = await editor.post("/api/v1/tasks/batch?undo=true", { task_ids: [a.id], priority: 2 });
    const e = await meOf(editor);
    expect((await editor.delete(`/api/v1/lists/${list}/members/${e.id}`)).status).toBe(204);
    await rejected(() => editor.post("/api/v1/tasks/batch/undo", { undo_token: r.body.undo_token }), 409, "state_conflict");
  });
});

describe("reminders on shared tasks are personal", () => {
  const remindersOf = async (c: TestClient, taskId: string) => {
    const r = await c.get(`/api/v1/tasks/${taskId}/reminders`);
    return r.status === 200 ? (r.body.items as { id: string }[]).map((x) => x.id) : r.status;
  };
  /** Its next_fire_at as its user sees it (GET /tasks/{id}/reminders), or undefined when it is not listed. */
  const fireOf = async (c: TestClient, taskId: string, id: string) =>
    ((await c.get(`/api/v1/tasks/${taskId}/reminders`)).body.items as { id: string; next_fire_at: string }[]).find((x) => x.id === id)?.next_fire_at;
  /** Whether the reminder still exists (there is no GET /reminders/{id}). */
  const exists = (id: string) => (app.db.sqlite.query("SELECT count(*) AS n FROM reminders WHERE id = ?").get(id) as { n: number }).n === 1;

  test("each member sets their own; each sees only theirs; a non-member gets 404", async () => {
    const { owner, editor, viewer, stranger, list } = await trio();
    const t = await mkTask(owner, { title: "Vet", list_id: list, due_at: "2026-11-28T10:00:00Z" });
    const body = { kind: "before_due", minutes_before: 60 };
    const ro = await owner.post(`/api/v1/tasks/${t.id}/reminders`, body);
    const re = await editor.post(`/api/v1/tasks/${t.id}/reminders`, body);
    // Reminders are personal: a viewer may set one for themselves (as their own tags).
    const rv = await viewer.post(`/api/v1/tasks/${t.id}/reminders`, { kind: "before_due", minutes_before: 30 });
    for (const r of [ro, re, rv]) expect(r.status).toBe(201);
    expect(rv.body.next_fire_at).toBe("2026-11-28T09:30:00.000Z");
    expect(await remindersOf(owner, t.id)).toEqual([ro.body.id]);
    expect(await remindersOf(editor, t.id)).toEqual([re.body.id]);
    expect(await remindersOf(viewer, t.id)).toEqual([rv.body.id]);
    await rejected(() => stranger.post(`/api/v1/tasks/${t.id}/reminders`, body), 404, "not_found");
    await rejected(() => stranger.get(`/api/v1/tasks/${t.id}/reminders`), 404, "not_found");
    // Another member's reminder is not theirs to change.
    await rejected(() => editor.patch(`/api/v1/reminders/${rv.body.id}`, { minutes_before: 5 }), 404, "not_found");
    await rejected(() => viewer.delete(`/api/v1/reminders/${ro.body.id}`), 404, "not_found");
    // The owner moving the due date re-arms every member's reminder.
    const cur = (await owner.get(`/api/v1/tasks/${t.id}`)).body;
    expect((await owner.patch(`/api/v1/tasks/${t.id}`, { version: cur.version, due_at: "2026-11-29T10:00:00Z" })).status).toBe(200);
    expect(await fireOf(viewer, t.id, rv.body.id)).toBe("2026-11-29T09:30:00.000Z");
    expect(await fireOf(editor, t.id, re.body.id)).toBe("2026-11-29T09:00:00.000Z");
  });

  test("leaving or being removed takes the member's reminders on the list's tasks; the others' stay", async () => {
    const { owner, editor, viewer, list } = await trio();
    const t = await mkTask(owner, { title: "Vet", list_id: list, due_at: "2026-11-28T10:00:00Z" });
    const sub = await mkTask(owner, { title: "Papers", list_id: list, parent_id: t.id, due_at: "2026-11-28T09:00:00Z" });
    const elsewhere = await mkTask(editor, { title: "Own", due_at: "2026-11-28T10:00:00Z" });
    const body = { kind: "before_due", minutes_before: 10 };
    const ro = (await owner.post(`/api/v1/tasks/${t.id}/reminders`, body)).body;
    const re = (await editor.post(`/api/v1/tasks/${t.id}/reminders`, body)).body;
    const reSub = (await editor.post(`/api/v1/tasks/${sub.id}/reminders`, body)).body;
    const reOwn = (await editor.post(`/api/v1/tasks/${elsewhere.id}/reminders`, body)).body;
    const rv = (await viewer.post(`/api/v1/tasks/${t.id}/reminders`, body)).body;

    const v = await meOf(viewer);
    expect((await viewer.delete(`/api/v1/lists/${list}/members/${v.id}`)).status).toBe(204);
    expect(exists(rv.id)).toBe(false);
    expect(await remindersOf(viewer, t.id)).toBe(404);

    const e = await meOf(editor);
    expect((await owner.delete(`/api/v1/lists/${list}/members/${e.id}`)).status).toBe(204);
    for (const id of [re.id, reSub.id]) expect(exists(id)).toBe(false);
    // The editor's reminder on their own task and the owner's stay.
    expect(await remindersOf(editor, elsewhere.id)).toEqual([reOwn.id]);
    expect(await remindersOf(owner, t.id)).toEqual([ro.id]);

    // Rejoining does not bring them back.
    await share(owner, editor, list, "editor");
    expect(await remindersOf(editor, t.id)).toEqual([]);
  });

  test("a task moved out of the shared list takes the reminders of those who no longer see it", async () => {
    const { owner, editor, viewer, list } = await trio();
    const t = await mkTask(owner, { title: "Keys", list_id: list, due_at: "2026-11-28T10:00:00Z" });
    const body = { kind: "before_due", minutes_before: 10 };
    const rv = (await viewer.post(`/api/v1/tasks/${t.id}/reminders`, body)).body;
    const re = (await editor.post(`/api/v1/tasks/${t.id}/reminders`, body)).body;
    const own = await mkList(editor, "Mine");
    expect((await editor.patch(`/api/v1/tasks/${t.id}`, { version: t.version, list_id: own })).status).toBe(200);
    expect(exists(rv.id)).toBe(false);
    expect(await remindersOf(editor, t.id)).toEqual([re.id]);
  });
});

describe("undo of a recurring completion on a shared task", () => {
  test("an editor completes a shared repeating task and undoes it: the copy goes, the task is back; a viewer cannot complete", async () => {
    const { owner, editor, viewer, list } = await trio();
    const t = await mkTask(owner, { title: "Bins", list_id: list, due_at: "2026-11-27" });
    const rec = await owner.post("/api/v1/recurrences", { task_id: t.id, kind: "rrule", rrule: "FREQ=WEEKLY" });
    expect(rec.status).toBe(201);
    await rejected(() => viewer.post(`/api/v1/recurrences/${rec.body.id}/complete?undo=true`), 403, "forbidden");
    const before = (await owner.get(`/api/v1/tasks/${t.id}`)).body;
    const done = await editor.post(`/api/v1/recurrences/${rec.body.id}/complete?undo=true`);
    expect(done.status).toBe(200);
    expect(done.body.next.due_at).toBe("2026-12-04");
    expect(done.body.completed.completed_by).toMatchObject({ id: (await meOf(editor)).id });
    const copy = done.body.completed.id;
    expect((await owner.get(`/api/v1/tasks/${copy}`)).status).toBe(200);
    const u = await editor.post("/api/v1/recurrences/completions/undo", { undo_token: done.body.undo_token });
    expect(u.status).toBe(200);
    expect((await owner.get(`/api/v1/tasks/${copy}`)).status).toBe(404);
    const back = (await owner.get(`/api/v1/tasks/${t.id}`)).body;
    expect(back.due_at).toBe(before.due_at);
    expect(back.completed).toBe(false);
  });
});
