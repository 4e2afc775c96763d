// Undo through HTTP (issue 14): POST /tasks/batch sets priority (and replaces, adds or removes tags) and answers an undo_token that
// POST /tasks/batch/undo restores exactly; POST /recurrences/{id}/complete answers one that
// POST /recurrences/completions/undo restores exactly, the series position included (and the
// recurrence itself when that completion had ended the series). Every refusal leaves the
// database unchanged (rejected()).
import { afterAll, describe, expect, test } from "bun:test";
import { FixedClock, makeTestApp, setupAdmin, signedInUser, type TestClient } from "../helpers/app";
import { mkList, mkTag, mkTask, rejected, uname } from "../helpers/tasks";

const clock = new FixedClock(new Date("2026-11-25T12:00:00.000Z"));
const TEN_YEARS = 10 * 365 * 24 * 3600;
const app = makeTestApp({ clock, config: { sessionIdleSeconds: TEN_YEARS, sessionAbsoluteSeconds: TEN_YEARS } });
const admin = await setupAdmin(app);
afterAll(() => app.close());

const get = async (c: TestClient, id: string) => (await c.get(`/api/v1/tasks/${id}`)).body;
/** A task as the API shows it, without what an undo may not bring back (version, updated_at). */
function state(t: Record<string, unknown> & { subtasks?: Record<string, unknown>[] }): unknown {
  const { version: _v, updated_at: _u, subtasks, ...rest } = t;
  return { ...rest, subtasks: (subtasks ?? []).map((s) => state(s)) };
}

describe("batch: priority, and undo", () => {
  test("priority is set on every named task; out of range is 422 and changes nothing", async () => {
    const c = await signedInUser(app, admin, uname());
    const a = await mkTask(c, { title: "a" });
    const b = await mkTask(c, { title: "b", priority: 1 });
    const r = await c.post("/api/v1/tasks/batch", { task_ids: [a.id, b.id], priority: 3 });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ updated: 2 }); // without ?undo=true the answer is the contract's, unchanged
    expect((await get(c, a.id)).priority).toBe(3);
    expect((await get(c, b.id)).priority).toBe(3);
    for (const bad of [4, -1, 1.5, "high"]) await rejected(app, () => c.post("/api/v1/tasks/batch?undo=true", { task_ids: [a.id], priority: bad }), 422, "validation_failed");
  });

  test("undo puts every task back exactly: list (subtasks that followed too), due date, completion with its time, priority, tags", async () => {
    const c = await signedInUser(app, admin, uname());
    const l1 = await mkList(c, "One");
    const l2 = await mkList(c, "Two");
    const t1 = await mkTag(c, "t1");
    const t2 = await mkTag(c, "t2");
    const a = await mkTask(c, { title: "a", list_id: l1, due_at: "2026-12-01", priority: 1, tag_ids: [t1] });
    const sub = await mkTask(c, { title: "sub", parent_id: a.id });
    clock.advance(60_000);
    const b = await mkTask(c, { title: "b", list_id: l1, completed: true, due_at: "2026-12-02T08:00:00Z", tag_ids: [t1, t2] });
    const before = [state(await get(c, a.id)), state(await get(c, b.id))];
    clock.advance(60_000);
    const r = await c.post("/api/v1/tasks/batch?undo=true", { task_ids: [a.id, b.id], list_id: l2, due_at: "2027-01-01", completed: true, priority: 3, tag_ids: [t2] });
    expect(r.status).toBe(200);
    expect(typeof r.body.undo_token).toBe("string");
    expect((await get(c, a.id)).subtasks[0].list_id).toBe(l2);
    clock.advance(60_000);
    const u = await c.post("/api/v1/tasks/batch/undo", { undo_token: r.body.undo_token });
    expect(u.status).toBe(200);
    expect(u.body).toEqual({ restored: 3 });
    const A = await get(c, a.id);
    expect([state(A), state(await get(c, b.id))]).toEqual(before);
    expect(A.version).toBe(a.version + 2); // versions never go back
    expect(A.subtasks[0]).toMatchObject({ id: sub.id, list_id: l1, version: sub.version + 2 });
    // Twice: the versions moved on, nothing changes.
    await rejected(app, () => c.post("/api/v1/tasks/batch/undo", { undo_token: r.body.undo_token }), 409, "state_conflict");
  });

  test("add_tag_ids and remove_tag_ids: 20 differently tagged tasks keep their tags; undo gives each exactly the tags it had", async () => {
    const c = await signedInUser(app, admin, uname());
    const palette = [await mkTag(c, "home"), await mkTag(c, "work"), await mkTag(c, "call"), await mkTag(c, "read")];
    const urgent = await mkTag(c, "urgent");
    const tasks = [];
    // Task i carries the palette tags whose bit is set in i (none, one, several), and every third one "urgent" already.
    for (let i = 0; i < 20; i++) {
      const own = palette.filter((_, k) => i & (1 << k));
      tasks.push(await mkTask(c, { title: `t${i}`, tag_ids: i % 3 === 0 ? [...own, urgent] : own }));
    }
    const ids = tasks.map((t) => t.id);
    const snapshot = async () => Promise.all(ids.map(async (id) => state(await get(c, id))));
    const tagIdsOf = async (id: string) => ((await get(c, id)).tags as { id: string }[]).map((t) => t.id).sort();
    const before = await snapshot();

    const add = await c.post("/api/v1/tasks/batch?undo=true", { task_ids: ids, add_tag_ids: [urgent] });
    expect(add.body.updated).toBe(20);
    for (const [i, t] of tasks.entries()) expect(await tagIdsOf(t.id)).toEqual([...new Set([...palette.filter((_, k) => i & (1 << k)), urgent])].sort());
    clock.advance(60_000);
    expect((await c.post("/api/v1/tasks/batch/undo", { undo_token: add.body.undo_token })).body).toEqual({ restored: 20 });
    expect(await snapshot()).toEqual(before);

    const rm = await c.post("/api/v1/tasks/batch?undo=true", { task_ids: ids, remove_tag_ids: [palette[0]!, urgent], add_tag_ids: [palette[3]!] });
    expect(rm.status).toBe(200);
    for (const [i, t] of tasks.entries()) expect(await tagIdsOf(t.id)).toEqual([...new Set([...palette.filter((_, k) => k !== 0 && i & (1 << k)), palette[3]!])].sort());
    expect((await c.post("/api/v1/tasks/batch/undo", { undo_token: rm.body.undo_token })).body).toEqual({ restored: 20 });
    expect(await snapshot()).toEqual(before);
    for (const t of tasks) expect((await get(c, t.id)).version).toBe(t.version + 4); // two batches, two undos
    // Twice: refused, nothing changes.
    await rejected(app, () => c.post("/api/v1/tasks/batch/undo", { undo_token: rm.body.undo_token }), 409, "state_conflict");
    // A tag the batch removed, deleted since: the undo could not give it back, so it is refused whole.
    const again = await c.post("/api/v1/tasks/batch?undo=true", { task_ids: ids, remove_tag_ids: [palette[1]!] });
    expect((await c.delete(`/api/v1/tags/${palette[1]}`)).status).toBe(204);
    await rejected(app, () => c.post("/api/v1/tasks/batch/undo", { undo_token: again.body.undo_token }), 409, "state_conflict");
  });

  test("a task changed since, a tag deleted since, an expired token: 409, nothing changes", async () => {
    const c = await signedInUser(app, admin, uname());
    const tag = await mkTag(c, "gone");
    const a = await mkTask(c, { title: "a", tag_ids: [tag] });
    const b = await mkTask(c, { title: "b" });
    const r1 = await c.post("/api/v1/tasks/batch?undo=true", { task_ids: [a.id, b.id], priority: 2 });
    const cur = await get(c, b.id);
    expect((await c.patch(`/api/v1/tasks/${b.id}`, { version: cur.version, title: "edited" })).status).toBe(200);
    await rejected(app, () => c.post("/api/v1/tasks/batch/undo", { undo_token: r1.body.undo_token }), 409, "state_conflict");
    expect((await get(c, a.id)).priority).toBe(2); // not half undone

    const r2 = await c.post("/api/v1/tasks/batch?undo=true", { task_ids: [a.id], tag_ids: [] });
    expect((await c.delete(`/api/v1/tags/${tag}`)).status).toBe(204);
    await rejected(app, () => c.post("/api/v1/tasks/batch/undo", { undo_token: r2.body.undo_token }), 409, "state_conflict");

    const r3 = await c.post("/api/v1/tasks/batch?undo=true", { task_ids: [b.id], due_at: "2026-12-24" });
    clock.advance(11 * 60_000);
    const late = await rejected(app, () => c.post("/api/v1/tasks/batch/undo", { undo_token: r3.body.undo_token }), 409, "state_conflict");
    expect(late.body.detail).toContain("expired");
  });

  test("a token that is not the server's, another user's, or a completion's: 422; soft_delete answers no token", async () => {
    const c = await signedInUser(app, admin, uname());
    const other = await signedInUser(app, admin, uname());
    const a = await mkTask(c, { title: "a", due_at: "2026-12-01" });
    const r = await c.post("/api/v1/tasks/batch?undo=true", { task_ids: [a.id], priority: 1 });
    const tok = r.body.undo_token as string;
    const [body, sig] = tok.split(".");
    // The same signature over a payload changed by the client (another priority to "restore").
    const payload = JSON.parse(Buffer.from(body!, "base64url").toString());
    payload[3][0][6] = 3;
    const forged = `${Buffer.from(JSON.stringify(payload)).toString("base64url")}.${sig}`;
    expect(forged).not.toBe(tok);
    for (const bad of ["", "x", "a.b", forged, `${body}.${"A".repeat(sig!.length)}`]) {
      await rejected(app, () => c.post("/api/v1/tasks/batch/undo", { undo_token: bad }), 422, "validation_failed");
    }
    await rejected(app, () => other.post("/api/v1/tasks/batch/undo", { undo_token: tok }), 422, "validation_failed");
    await rejected(app, () => c.post("/api/v1/tasks/batch/undo", {}), 422, "validation_failed");
    // A completion's token is not a batch's, and the other way round.
    const rec = await c.post("/api/v1/recurrences", { task_id: a.id, kind: "rrule", rrule: "FREQ=DAILY" });
    const done = await c.post(`/api/v1/recurrences/${rec.body.id}/complete?undo=true`);
    await rejected(app, () => c.post("/api/v1/tasks/batch/undo", { undo_token: done.body.undo_token }), 422, "validation_failed");
    await rejected(app, () => c.post("/api/v1/recurrences/completions/undo", { undo_token: tok }), 422, "validation_failed");
    const del = await c.post("/api/v1/tasks/batch?undo=true", { task_ids: [a.id], soft_delete: true });
    expect(del.body).toEqual({ updated: 1, undo_token: null });
  });
});

test("the undo token is asked for: without ?undo=true both answers keep the contract's shape; a bad value is 422", async () => {
  const c = await signedInUser(app, admin, uname());
  const a = await mkTask(c, { title: "a", due_at: "2026-12-01" });
  const rec = (await c.post("/api/v1/recurrences", { task_id: a.id, kind: "rrule", rrule: "FREQ=DAILY" })).body;
  const plain = await c.post(`/api/v1/recurrences/${rec.id}/complete`);
  expect(Object.keys(plain.body).sort()).toEqual(["completed", "next"]);
  const asked = await c.post(`/api/v1/recurrences/${rec.id}/complete?undo=true`);
  expect(Object.keys(asked.body).sort()).toEqual(["completed", "next", "undo_token"]);
  expect((await c.post("/api/v1/tasks/batch?undo=false", { task_ids: [a.id], priority: 1 })).body).toEqual({ updated: 1 });
  await rejected(app, () => c.post("/api/v1/tasks/batch?undo=yes", { task_ids: [a.id], priority: 2 }), 422, "validation_failed");
  await rejected(app, () => c.post(`/api/v1/recurrences/${rec.id}/complete?undo=1`), 422, "validation_failed");
});

describe("recurring completion: undo restores the series position", () => {
  test("rrule: the task goes back to the occurrence it was on, the copy is gone for good, completed subtasks are completed again", async () => {
    const c = await signedInUser(app, admin, uname());
    const task = await mkTask(c, { title: "Water", due_at: "2026-11-25" });
    const s1 = await mkTask(c, { title: "s1", parent_id: task.id, completed: true });
    await mkTask(c, { title: "s2", parent_id: task.id });
    const rec = (await c.post("/api/v1/recurrences", { task_id: task.id, kind: "rrule", rrule: "FREQ=WEEKLY;COUNT=3" })).body;
    expect((await c.post(`/api/v1/recurrences/${rec.id}/exceptions`, { date: "2026-12-02" })).status).toBe(200);
    const before = state(await get(c, task.id));
    const recBefore = (await c.get(`/api/v1/recurrences/${rec.id}`)).body;
    clock.advance(60_000);
    const done = await c.post(`/api/v1/recurrences/${rec.id}/complete?undo=true`);
    expect(done.status).toBe(200);
    expect(done.body.next.due_at).toBe("2026-12-09");
    const copy = done.body.completed.id as string;
    const u = await c.post("/api/v1/recurrences/completions/undo", { undo_token: done.body.undo_token });
    expect(u.status).toBe(200);
    expect(u.body).toEqual({ restored: 2 });
    const after = await get(c, task.id);
    expect(state(after)).toEqual(before);
    expect(after.subtasks.find((s: { id: string }) => s.id === s1.id).completed_at).toBe(s1.completed_at);
    expect((await c.get(`/api/v1/tasks/${copy}`)).status).toBe(404);
    expect((await c.get("/api/v1/trash")).body.items.map((x: { id: string }) => x.id)).not.toContain(copy);
    expect((await c.get(`/api/v1/recurrences/${rec.id}`)).body).toEqual(recBefore);
    // The series goes on from the same place: completing again gives the same next occurrence.
    const again = await c.post(`/api/v1/recurrences/${rec.id}/complete?undo=true`);
    expect(again.body.next.due_at).toBe("2026-12-09");
    await rejected(app, () => c.post("/api/v1/recurrences/completions/undo", { undo_token: done.body.undo_token }), 409, "state_conflict");
  });

  test("the completion that ended the series: the recurrence comes back as it was (id, DTSTART, skipped dates)", async () => {
    const c = await signedInUser(app, admin, uname());
    const task = await mkTask(c, { title: "Course", due_at: "2026-11-25T09:00:00Z" });
    const rec = (await c.post("/api/v1/recurrences", { task_id: task.id, kind: "rrule", rrule: "FREQ=DAILY;COUNT=3", timezone: "Europe/Berlin" })).body;
    await c.post(`/api/v1/recurrences/${rec.id}/exceptions`, { date: "2026-11-26" });
    // 25th, then 27th (26th skipped): the 27th is the last.
    expect((await c.post(`/api/v1/recurrences/${rec.id}/complete?undo=true`)).body.next.due_at).toBe("2026-11-27T09:00:00.000Z");
    const recBefore = (await c.get(`/api/v1/recurrences/${rec.id}`)).body;
    const before = state(await get(c, task.id));
    const last = await c.post(`/api/v1/recurrences/${rec.id}/complete?undo=true`);
    expect(last.body.next).toBeNull();
    expect((await c.get(`/api/v1/tasks/${task.id}/recurrence`)).body).toBeNull();
    const u = await c.post("/api/v1/recurrences/completions/undo", { undo_token: last.body.undo_token });
    expect(u.status).toBe(200);
    expect(state(await get(c, task.id))).toEqual(before);
    expect((await c.get(`/api/v1/recurrences/${rec.id}`)).body).toEqual(recBefore);
    expect((await c.post(`/api/v1/recurrences/${rec.id}/complete?undo=true`)).body.next).toBeNull(); // still the last one
  });

  test("after_completion: due date back; a copy edited since or a task changed since refuses the undo", async () => {
    const c = await signedInUser(app, admin, uname());
    const task = await mkTask(c, { title: "Filter", due_at: "2026-11-20" });
    const rec = (await c.post("/api/v1/recurrences", { task_id: task.id, kind: "after_completion", interval: 3, unit: "week" })).body;
    const before = state(await get(c, task.id));
    const done = await c.post(`/api/v1/recurrences/${rec.id}/complete?undo=true`);
    expect(done.body.next.due_at).toBe("2026-12-16");
    const copy = done.body.completed;
    expect((await c.patch(`/api/v1/tasks/${copy.id}`, { version: copy.version, title: "kept" })).status).toBe(200);
    await rejected(app, () => c.post("/api/v1/recurrences/completions/undo", { undo_token: done.body.undo_token }), 409, "state_conflict");

    const t2 = await mkTask(c, { title: "Filter 2", due_at: "2026-11-20" });
    const r2 = (await c.post("/api/v1/recurrences", { task_id: t2.id, kind: "after_completion", interval: 1, unit: "day" })).body;
    const before2 = state(await get(c, t2.id));
    const d2 = await c.post(`/api/v1/recurrences/${r2.id}/complete?undo=true`);
    const u2 = await c.post("/api/v1/recurrences/completions/undo", { undo_token: d2.body.undo_token });
    expect(u2.status).toBe(200);
    expect(state(await get(c, t2.id))).toEqual(before2);
    const d3 = await c.post(`/api/v1/recurrences/${r2.id}/complete?undo=true`);
    const now = await get(c, t2.id);
    expect((await c.patch(`/api/v1/tasks/${t2.id}`, { version: now.version, priority: 2 })).status).toBe(200);
    await rejected(app, () => c.post("/api/v1/recurrences/completions/undo", { undo_token: d3.body.undo_token }), 409, "state_conflict");
    void before;
  });
});
