import { afterAll, describe, expect, test } from "bun:test";
import { makeTestApp, setupAdmin, signedInUser } from "./helpers/app";
import { FixedClock } from "../src/core/time";
import { mkList, mkTask, rejected, uname } from "./helpers/tasks";

const clock = new FixedClock(new Date("2026-11-20T10:00:00.000Z"));
const app = makeTestApp({ clock });
const admin = await setupAdmin(app);
afterAll(() => app.close());

const ids = (r: { body: { items: { id: string }[] } }) => r.body.items.map((x) => x.id);

describe("trash", () => {
  test("deleted top-level tasks, most recently deleted first, with subtasks; cursor pages", async () => {
    const c = await signedInUser(app, admin, uname());
    const a = await mkTask(c, { title: "a" });
    const as = await mkTask(c, { title: "as", parent_id: a.id });
    const b = await mkTask(c, { title: "b" });
    const d = await mkTask(c, { title: "d" });
    clock.advance(1000);
    await c.delete(`/api/v1/tasks/${b.id}`);
    clock.advance(1000);
    await c.delete(`/api/v1/tasks/${a.id}`);
    clock.advance(1000);
    await c.delete(`/api/v1/tasks/${d.id}`);
    const r = await c.get("/api/v1/trash");
    expect(r.status).toBe(200);
    expect(ids(r)).toEqual([d.id, a.id, b.id]);
    expect(r.body.items[1].subtasks.map((x: { id: string }) => x.id)).toEqual([as.id]);
    expect(r.body.items[1].deleted_at).toBe("2026-11-20T10:00:02.000Z");
    const p1 = await c.get("/api/v1/trash?limit=2");
    expect(ids(p1)).toEqual([d.id, a.id]);
    const p2 = await c.get(`/api/v1/trash?limit=2&cursor=${encodeURIComponent(p1.body.next_cursor)}`);
    expect(ids(p2)).toEqual([b.id]);
    expect(p2.body.next_cursor).toBeNull();
    for (const q of ["limit=0", "limit=101", "limit=abc", "q=x"]) expect((await c.get(`/api/v1/trash?${q}`)).status).toBe(422);
    const taskCursor = (await c.get("/api/v1/tasks?limit=1")).body.next_cursor;
    const bad = await c.get(`/api/v1/trash?cursor=${encodeURIComponent(p1.body.next_cursor + "A")}`);
    expect(bad.body.code).toBe("invalid_cursor");
    if (taskCursor) expect((await c.get(`/api/v1/trash?cursor=${encodeURIComponent(taskCursor)}`)).body.code).toBe("invalid_cursor");
    // Not shown to anyone else.
    const o = await signedInUser(app, admin, uname());
    expect((await o.get("/api/v1/trash")).body.items).toEqual([]);
    expect((await o.get(`/api/v1/trash?cursor=${encodeURIComponent(p1.body.next_cursor)}`)).body.code).toBe("invalid_cursor");
  });

  test("tasks of an archived list leave the trash view too", async () => {
    const c = await signedInUser(app, admin, uname());
    const l = await mkList(c, "L");
    const t = await mkTask(c, { title: "t", list_id: l });
    await c.delete(`/api/v1/tasks/${t.id}`);
    await c.delete(`/api/v1/lists/${l}`);
    expect((await c.get("/api/v1/trash")).body.items).toEqual([]);
    await rejected(app, () => c.post(`/api/v1/tasks/${t.id}/restore`), 404, "not_found");
    await rejected(app, () => c.delete(`/api/v1/trash/${t.id}`), 404, "not_found");
  });

  test("DELETE /trash/{id}: only tasks in the trash; removes subtasks, recurrence; audit; hooks", async () => {
    const c = await signedInUser(app, admin, uname());
    const t = await mkTask(c, { title: "doomed", due_at: "2026-12-01" });
    const s = await mkTask(c, { title: "sub", parent_id: t.id });
    await rejected(app, () => c.delete(`/api/v1/trash/${t.id}`), 409, "not_archived");
    await rejected(app, () => c.delete(`/api/v1/trash/missing`), 404, "not_found");
    const me = (await c.get("/api/v1/me")).body;
    app.db.sqlite
      .query("INSERT INTO recurrences (id, user_id, task_id, kind, rrule, timezone, created_at, updated_at) VALUES ('rec-1', ?, ?, 'rrule', 'FREQ=DAILY', 'UTC', 'x', 'x')")
      .run(me.id, t.id);
    await c.delete(`/api/v1/tasks/${t.id}`);
    const hooked: string[][] = [];
    app.handle.taskPurgeHooks.register((_tx, userId, taskIds) => {
      if (userId === me.id) hooked.push([...taskIds].sort());
    });
    const r = await c.delete(`/api/v1/trash/${t.id}`);
    expect(r.status).toBe(204);
    expect(r.text).toBe("");
    expect(hooked).toEqual([[t.id, s.id].sort()]);
    const left = app.db.sqlite.query("SELECT count(*) AS n FROM tasks WHERE id IN (?, ?)").get(t.id, s.id) as { n: number };
    expect(left.n).toBe(0);
    expect(app.db.sqlite.query("SELECT count(*) AS n FROM recurrences WHERE id = 'rec-1'").get()).toEqual({ n: 0 });
    expect((await c.get("/api/v1/trash")).body.items).toEqual([]);
    const audit = (await c.get("/api/v1/audit-logs")).body.items[0];
    expect(audit).toMatchObject({ action: "task_purged", target_type: "task", target_id: t.id });
    await rejected(app, () => c.delete(`/api/v1/trash/${t.id}`), 404, "not_found");
  });

  test("a hook that throws rolls the purge back", async () => {
    const c = await signedInUser(app, admin, uname());
    const me = (await c.get("/api/v1/me")).body;
    const t = await mkTask(c, { title: "kept" });
    await c.delete(`/api/v1/tasks/${t.id}`);
    app.handle.taskPurgeHooks.register((_tx, userId) => {
      if (userId === me.id) throw new Error("attachment store unavailable");
    });
    const r = await rejected(app, () => c.delete(`/api/v1/trash/${t.id}`), 500, "internal_error");
    expect(r.text).not.toContain("attachment store");
    expect(app.db.sqlite.query("SELECT count(*) AS n FROM tasks WHERE id = ?").get(t.id)).toEqual({ n: 1 });
  });
});
