// Manual order and list sorts through HTTP (issue 14): POST /tasks/{id}/move, new tasks last,
// GET /tasks?list_id=&sort= with cursors, PATCH /lists/{id} sort, and a random walk of moves
// checked against a model array.
import { afterAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import fc from "fast-check";
import { makeTestApp, rejected, setupAdmin, signedInUser, type TestClient } from "../helpers/app";
import { mkList, mkTask, uname } from "../helpers/tasks";

// Many requests through the real stack: on a loaded machine well over bun's 5 s default.
setDefaultTimeout(120_000);

const app = makeTestApp();
afterAll(() => app.close());
const admin = await setupAdmin(app);

async function order(c: TestClient, listId: string, sort = "manual", limit = 2): Promise<string[]> {
  const out: string[] = [];
  let cursor: string | null = null;
  for (;;) {
    const r = await c.get(`/api/v1/tasks?list_id=${listId}&sort=${sort}&limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
    expect(r.status).toBe(200);
    out.push(...r.body.items.map((t: { title: string }) => t.title));
    cursor = r.body.next_cursor;
    if (!cursor) return out;
  }
}

describe("manual order", () => {
  test("new tasks go last; move before, after, first, last; versions grow; nothing else changes", async () => {
    const c = await signedInUser(app, admin, uname());
    const l = await mkList(c, "L");
    const t: Record<string, { id: string; rank: string }> = {};
    for (const n of ["a", "b", "c", "d"]) t[n] = await mkTask(c, { title: n, list_id: l });
    expect(await order(c, l)).toEqual(["a", "b", "c", "d"]);
    const ranks = Object.values(t).map((x) => x.rank);
    expect([...ranks].sort()).toEqual(ranks);

    let r = await c.post(`/api/v1/tasks/${t.d!.id}/move`, { before_id: t.b!.id });
    expect(r.status).toBe(200);
    expect(r.body.version).toBe(2);
    expect(await order(c, l)).toEqual(["a", "d", "b", "c"]);
    // Only the moved task changed.
    for (const n of ["a", "b", "c"]) expect((await c.get(`/api/v1/tasks/${t[n]!.id}`)).body.version).toBe(1);
    r = await c.post(`/api/v1/tasks/${t.a!.id}/move`, { after_id: t.c!.id });
    expect(await order(c, l)).toEqual(["d", "b", "c", "a"]);
    await c.post(`/api/v1/tasks/${t.c!.id}/move`, { to: "first" });
    expect(await order(c, l)).toEqual(["c", "d", "b", "a"]);
    await c.post(`/api/v1/tasks/${t.c!.id}/move`, { to: "last" });
    expect(await order(c, l)).toEqual(["d", "b", "a", "c"]);
    const e = await mkTask(c, { title: "e", list_id: l });
    expect(await order(c, l)).toEqual(["d", "b", "a", "c", "e"]);
    // A task moved to another list goes last there; completed and trashed tasks keep their places.
    const l2 = await mkList(c, "L2");
    await mkTask(c, { title: "x", list_id: l2 });
    const cur = (await c.get(`/api/v1/tasks/${t.d!.id}`)).body;
    expect((await c.patch(`/api/v1/tasks/${t.d!.id}`, { version: cur.version, list_id: l2 })).status).toBe(200);
    expect(await order(c, l2)).toEqual(["x", "d"]);
    expect((await c.patch(`/api/v1/tasks/${e.id}`, { version: 1, completed: true })).status).toBe(200);
    expect(await order(c, l)).toEqual(["b", "a", "c", "e"]);
    expect((await c.get(`/api/v1/tasks?list_id=${l}&sort=manual&completed=false`)).body.items.map((x: { title: string }) => x.title)).toEqual(["b", "a", "c"]);
  });

  test("subtasks have their own order among their parent's", async () => {
    const c = await signedInUser(app, admin, uname());
    const p = await mkTask(c, { title: "p" });
    const s1 = await mkTask(c, { title: "s1", parent_id: p.id });
    const s2 = await mkTask(c, { title: "s2", parent_id: p.id });
    const s3 = await mkTask(c, { title: "s3", parent_id: p.id });
    expect((await c.post(`/api/v1/tasks/${s3.id}/move`, { to: "first" })).status).toBe(200);
    expect((await c.get(`/api/v1/tasks/${p.id}`)).body.subtasks.map((s: { title: string }) => s.title)).toEqual(["s3", "s1", "s2"]);
    await c.post(`/api/v1/tasks/${s1.id}/move`, { after_id: s2.id });
    expect((await c.get(`/api/v1/tasks/${p.id}`)).body.subtasks.map((s: { title: string }) => s.title)).toEqual(["s3", "s2", "s1"]);
    // A subtask's sibling is another subtask of the same parent, never its parent or a top-level task.
    await rejected(app, () => c.post(`/api/v1/tasks/${s1.id}/move`, { before_id: p.id }), 422, "invalid_reference");
  });

  test("errors: not a sibling, itself, missing, another user's, not exactly one target, unknown task", async () => {
    const c = await signedInUser(app, admin, uname());
    const o = await signedInUser(app, admin, uname());
    const l = await mkList(c, "L");
    const a = await mkTask(c, { title: "a", list_id: l });
    const b = await mkTask(c, { title: "b", list_id: l });
    const elsewhere = await mkTask(c, { title: "e" });
    const theirs = await mkTask(o, { title: "t" });
    await rejected(app, () => c.post(`/api/v1/tasks/${a.id}/move`, { before_id: elsewhere.id }), 422, "invalid_reference");
    await rejected(app, () => c.post(`/api/v1/tasks/${a.id}/move`, { before_id: a.id }), 422, "invalid_reference");
    await rejected(app, () => c.post(`/api/v1/tasks/${a.id}/move`, { after_id: "missing" }), 422, "invalid_reference");
    await rejected(app, () => c.post(`/api/v1/tasks/${a.id}/move`, { after_id: theirs.id }), 422, "invalid_reference");
    await rejected(app, () => c.post(`/api/v1/tasks/${a.id}/move`, {}), 422, "validation_failed");
    await rejected(app, () => c.post(`/api/v1/tasks/${a.id}/move`, { before_id: b.id, to: "first" }), 422, "validation_failed");
    await rejected(app, () => c.post(`/api/v1/tasks/${a.id}/move`, { to: "middle" }), 422, "validation_failed");
    await rejected(app, () => c.post(`/api/v1/tasks/${a.id}/move`, { to: "first", rank: "a0" }), 422, "validation_failed");
    await rejected(app, () => c.post(`/api/v1/tasks/${theirs.id}/move`, { to: "first" }), 404, "not_found");
    await rejected(app, () => o.post(`/api/v1/tasks/${a.id}/move`, { to: "first" }), 404, "not_found");
    // A trashed anchor is not a sibling any more.
    expect((await c.delete(`/api/v1/tasks/${b.id}`)).status).toBe(204);
    await rejected(app, () => c.post(`/api/v1/tasks/${a.id}/move`, { before_id: b.id }), 422, "invalid_reference");
  });

  test("a random walk of moves through HTTP matches the model", async () => {
    const c = await signedInUser(app, admin, uname());
    const l = await mkList(c, "walk");
    const names = ["a", "b", "c", "d", "e", "f"];
    const ids: Record<string, string> = {};
    for (const n of names) ids[n] = (await mkTask(c, { title: n, list_id: l })).id;
    let model = [...names];
    const moves = fc.sample(fc.tuple(fc.nat(5), fc.nat(5), fc.constantFrom("before", "after", "first", "last")), { numRuns: 60, seed: 14 });
    for (const [i, j, how] of moves) {
      const task = model[i]!;
      const anchor = model[j]!;
      if ((how === "before" || how === "after") && task === anchor) continue;
      const body = how === "before" ? { before_id: ids[anchor] } : how === "after" ? { after_id: ids[anchor] } : { to: how };
      expect((await c.post(`/api/v1/tasks/${ids[task]}/move`, body)).status).toBe(200);
      model = model.filter((x) => x !== task);
      const at = how === "first" ? 0 : how === "last" ? model.length : model.indexOf(anchor) + (how === "after" ? 1 : 0);
      model.splice(at, 0, task);
    }
    expect(await order(c, l, "manual", 4)).toEqual(model);
  });
});

describe("list sorts", () => {
  test("each sort pages one list in its order; the list remembers its choice", async () => {
    const c = await signedInUser(app, admin, uname());
    const l = await mkList(c, "S");
    expect((await c.get(`/api/v1/lists/${l}`)).body.sort).toBe("created");
    await mkTask(c, { title: "banana", list_id: l, priority: 1, due_at: "2026-12-03" });
    await mkTask(c, { title: "Apple", list_id: l, priority: 3 });
    await mkTask(c, { title: "cherry", list_id: l, priority: 3, due_at: "2026-12-01T10:00:00Z" });
    await mkTask(c, { title: "date", list_id: l, priority: 0, due_at: "2026-12-01" });
    expect(await order(c, l, "manual")).toEqual(["banana", "Apple", "cherry", "date"]);
    expect(await order(c, l, "created")).toEqual(["date", "cherry", "Apple", "banana"]);
    expect(await order(c, l, "title")).toEqual(["Apple", "banana", "cherry", "date"]);
    expect(await order(c, l, "priority")).toEqual(["Apple", "cherry", "banana", "date"]);
    expect(await order(c, l, "due_date")).toEqual(["date", "cherry", "banana", "Apple"]);
    const r = await c.patch(`/api/v1/lists/${l}`, { sort: "priority" });
    expect(r.status).toBe(200);
    expect(r.body.sort).toBe("priority");
    expect((await c.get("/api/v1/lists")).body.items.find((x: { id: string }) => x.id === l).sort).toBe("priority");
    await rejected(app, () => c.patch(`/api/v1/lists/${l}`, { sort: "random" }), 422, "validation_failed");
  });

  test("sort errors: without list_id, with other filters, a cursor of another sort; another user's list is empty", async () => {
    const c = await signedInUser(app, admin, uname());
    const o = await signedInUser(app, admin, uname());
    const l = await mkList(c, "S");
    for (let i = 0; i < 3; i++) await mkTask(c, { title: `t${i}`, list_id: l });
    await rejected(app, () => c.get("/api/v1/tasks?sort=manual"), 422, "validation_failed");
    await rejected(app, () => c.get(`/api/v1/tasks?list_id=${l}&sort=title&q=t`), 422, "validation_failed");
    await rejected(app, () => c.get(`/api/v1/tasks?list_id=${l}&sort=bogus`), 422, "validation_failed");
    const page = (await c.get(`/api/v1/tasks?list_id=${l}&sort=manual&limit=1`)).body;
    await rejected(app, () => c.get(`/api/v1/tasks?list_id=${l}&sort=title&cursor=${encodeURIComponent(page.next_cursor)}`), 422, "invalid_cursor");
    await rejected(app, () => c.get(`/api/v1/tasks?list_id=${l}&cursor=${encodeURIComponent(page.next_cursor)}`), 422, "invalid_cursor");
    expect((await o.get(`/api/v1/tasks?list_id=${l}&sort=manual`)).body).toEqual({ items: [], next_cursor: null });
    // Newest first stays the default, and sort=created is the same page.
    expect((await c.get(`/api/v1/tasks?list_id=${l}&sort=created`)).body).toEqual((await c.get(`/api/v1/tasks?list_id=${l}`)).body);
  });
});
