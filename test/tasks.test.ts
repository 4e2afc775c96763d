import { afterAll, describe, expect, test } from "bun:test";
import { dump, makeTestApp, setupAdmin, signedInUser } from "./helpers/app";
import { inboxOf, mkList, mkTag, mkTask, rejected, uname } from "./helpers/tasks";

const app = makeTestApp();
const admin = await setupAdmin(app);
afterAll(() => app.close());

const ids = (r: { body: { items: { id: string }[] } }) => r.body.items.map((x) => x.id);
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe("create and read", () => {
  test("defaults: inbox, 201 + Location, the full shape", async () => {
    const c = await signedInUser(app, admin, uname());
    const inbox = await inboxOf(c);
    const r = await c.post("/api/v1/tasks", { title: "Buy milk" });
    expect(r.status).toBe(201);
    expect(r.headers.get("location")).toBe(`/api/v1/tasks/${r.body.id}`);
    expect(Object.keys(r.body).sort()).toEqual(
      ["completed", "completed_at", "completed_by", "created_at", "created_by", "deleted_at", "description", "due_at", "id", "list_id", "parent_id", "priority", "rank", "subtasks", "tags", "title", "updated_at", "version"].sort(),
    );
    // Sharing (sharing.md): who created it; completed_by is null while not completed.
    expect(r.body.created_by).toEqual({ id: (await c.get("/api/v1/me")).body.id, username: (await c.get("/api/v1/me")).body.username });
    expect(r.body.completed_by).toBeNull();
    expect(r.body).toMatchObject({ list_id: inbox, parent_id: null, title: "Buy milk", description: "", completed: false, completed_at: null, due_at: null, priority: 0, version: 1, tags: [], subtasks: [], deleted_at: null });
    expect(r.body.created_at).toMatch(ISO);
    expect(r.body.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect((await c.get(`/api/v1/tasks/${r.body.id}`)).body).toEqual(r.body);
  });

  test("all fields; completed sets completed_at; tags by name", async () => {
    const c = await signedInUser(app, admin, uname());
    const l = await mkList(c, "L");
    const t1 = await mkTag(c, "b-tag");
    const t2 = await mkTag(c, "a-tag");
    const r = await mkTask(c, { title: "T", description: "D", list_id: l, completed: true, due_at: "2026-12-01", priority: 3, tag_ids: [t1, t2, t1] });
    expect(r).toMatchObject({ list_id: l, description: "D", completed: true, due_at: "2026-12-01", priority: 3 });
    expect(r.completed_at).toMatch(ISO);
    expect(r.tags.map((t: { name: string }) => t.name)).toEqual(["a-tag", "b-tag"]);
  });

  test("due_at: a date or an RFC 3339 instant normalised to UTC; invalid ones 422", async () => {
    const c = await signedInUser(app, admin, uname());
    const cases: [string, string][] = [
      ["2026-12-01", "2026-12-01"],
      ["2026-12-01T09:00:00+02:00", "2026-12-01T07:00:00.000Z"],
      ["2026-12-01T09:00Z", "2026-12-01T09:00:00.000Z"],
      ["2026-12-01t09:00:00.5z", "2026-12-01T09:00:00.500Z"],
      ["2024-02-29", "2024-02-29"],
    ];
    for (const [input, stored] of cases) expect((await mkTask(c, { title: "x", due_at: input })).due_at).toBe(stored);
    expect((await mkTask(c, { title: "x", due_at: null })).due_at).toBeNull();
    for (const bad of ["2026-02-30", "2025-02-29", "2026-13-01T00:00Z", "2026-12-01T25:00Z", "2026-12-01T09:00:00", "tomorrow", "2026-1-1", "", "2026-12-01T09:00+25:00"]) {
      await rejected(app, () => c.post("/api/v1/tasks", { title: "x", due_at: bad }), 422, "validation_failed");
    }
    await rejected(app, () => c.post("/api/v1/tasks", { title: "x", due_at: 20261201 }), 422, "validation_failed");
  });

  test("field validation: titles, descriptions, priority, unknown fields, types", async () => {
    const c = await signedInUser(app, admin, uname());
    // Lengths are in characters (code points), not UTF-16 units.
    expect((await mkTask(c, { title: "😀".repeat(500) })).title).toHaveLength(1000);
    expect((await mkTask(c, { title: "t", description: "d".repeat(20_000) })).description).toHaveLength(20_000);
    for (const body of [
      {},
      { title: "" },
      { title: "   " },
      { title: "x".repeat(501) },
      { title: 5 },
      { title: "x", description: "d".repeat(20_001) },
      { title: "x", priority: 4 },
      { title: "x", priority: -1 },
      { title: "x", priority: 1.5 },
      { title: "x", priority: "1" },
      { title: "x", completed: "yes" },
      { title: "x", tag_ids: "a" },
      { title: "x", version: 1 },
      { title: "x", id: "mine" },
      { title: "x", list_id: 7 },
    ]) {
      await rejected(app, () => c.post("/api/v1/tasks", body), 422, "validation_failed");
    }
  });

  test("references in the body: foreign or missing is invalid_reference", async () => {
    const c = await signedInUser(app, admin, uname());
    const o = await signedInUser(app, admin, uname());
    const foreignList = await mkList(o, "theirs");
    const foreignTag = await mkTag(o, "theirs");
    const foreignTask = await mkTask(o, { title: "theirs" });
    const mine = await mkTag(c, "mine");
    await rejected(app, () => c.post("/api/v1/tasks", { title: "x", list_id: foreignList }), 422, "invalid_reference");
    await rejected(app, () => c.post("/api/v1/tasks", { title: "x", list_id: "missing" }), 422, "invalid_reference");
    await rejected(app, () => c.post("/api/v1/tasks", { title: "x", parent_id: foreignTask.id }), 422, "invalid_reference");
    const r = await rejected(app, () => c.post("/api/v1/tasks", { title: "x", tag_ids: [mine, foreignTag] }), 422, "invalid_reference");
    expect(r.body.errors).toEqual([{ path: "tag_ids.1", message: `no tag ${foreignTag}` }]);
    expect(r.body.detail).toContain(foreignTag);
  });

  test("subtasks: parent's list by default, one level, same list", async () => {
    const c = await signedInUser(app, admin, uname());
    const l = await mkList(c, "L");
    const l2 = await mkList(c, "L2");
    const p = await mkTask(c, { title: "parent", list_id: l });
    const s = await mkTask(c, { title: "sub", parent_id: p.id });
    expect(s).toMatchObject({ list_id: l, parent_id: p.id, subtasks: [] });
    expect((await mkTask(c, { title: "sub2", parent_id: p.id, list_id: l })).list_id).toBe(l);
    await rejected(app, () => c.post("/api/v1/tasks", { title: "x", parent_id: p.id, list_id: l2 }), 422, "invalid_parent");
    await rejected(app, () => c.post("/api/v1/tasks", { title: "x", parent_id: s.id }), 422, "invalid_parent");
    const got = await c.get(`/api/v1/tasks/${p.id}`);
    expect(got.body.subtasks.map((x: { title: string }) => x.title)).toEqual(["sub", "sub2"]);
    expect((await c.get(`/api/v1/tasks/${s.id}`)).body.subtasks).toEqual([]);
    // A deleted parent cannot take subtasks.
    await c.delete(`/api/v1/tasks/${p.id}`);
    await rejected(app, () => c.post("/api/v1/tasks", { title: "x", parent_id: p.id }), 422, "invalid_reference");
  });

  test("another user's task is 404 on every path", async () => {
    const a = await signedInUser(app, admin, uname());
    const b = await signedInUser(app, admin, uname());
    const t = await mkTask(a, { title: "secret" });
    expect((await b.get(`/api/v1/tasks/${t.id}`)).status).toBe(404);
    expect((await b.get(`/api/v1/tasks/nope`)).status).toBe(404);
    expect((await b.get(`/api/v1/tasks/${"x".repeat(300)}`)).body.code).toBe("not_found");
    for (const path of ["lists", "folders", "tags"]) expect((await b.get(`/api/v1/${path}/${"x".repeat(300)}`)).status).toBe(404);
    await rejected(app, () => b.patch(`/api/v1/tasks/${t.id}`, { version: 1, title: "x" }), 404, "not_found");
    await rejected(app, () => b.delete(`/api/v1/tasks/${t.id}`), 404, "not_found");
    await rejected(app, () => b.post(`/api/v1/tasks/${t.id}/restore`), 404, "not_found");
    await a.delete(`/api/v1/tasks/${t.id}`);
    await rejected(app, () => b.post(`/api/v1/tasks/${t.id}/restore`), 404, "not_found");
    await rejected(app, () => b.delete(`/api/v1/trash/${t.id}`), 404, "not_found");
  });
});

describe("PATCH", () => {
  test("version is required; a stale one is 409 with the stored version; nothing changes", async () => {
    const c = await signedInUser(app, admin, uname());
    const t = await mkTask(c, { title: "x" });
    await rejected(app, () => c.patch(`/api/v1/tasks/${t.id}`, { title: "y" }), 422, "validation_failed");
    await rejected(app, () => c.patch(`/api/v1/tasks/${t.id}`, { version: "1", title: "y" }), 422, "validation_failed");
    await rejected(app, () => c.patch(`/api/v1/tasks/${t.id}`, { version: 1, title: "" }), 422, "validation_failed");
    await rejected(app, () => c.patch(`/api/v1/tasks/${t.id}`, { version: 1, colour: "x" }), 422, "validation_failed");
    const ok = await c.patch(`/api/v1/tasks/${t.id}`, { version: 1, title: "y" });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ title: "y", version: 2 });
    const stale = await rejected(app, () => c.patch(`/api/v1/tasks/${t.id}`, { version: 1, title: "z" }), 409, "version_conflict");
    expect(stale.body.detail).toBe("task version is 2, request had 1");
    expect(stale.body.errors).toEqual([{ path: "version", message: "expected 2" }]);
    await rejected(app, () => c.patch(`/api/v1/tasks/${t.id}`, { version: 3, title: "z" }), 409, "version_conflict");
  });

  test("fields: completion time, due_at cleared, priority, tags replaced", async () => {
    const c = await signedInUser(app, admin, uname());
    const tg = await mkTag(c, "t");
    const t = await mkTask(c, { title: "x", due_at: "2026-12-01", tag_ids: [tg] });
    const done = await c.patch(`/api/v1/tasks/${t.id}`, { version: 1, completed: true, due_at: null, priority: 2, tag_ids: [] });
    expect(done.body).toMatchObject({ completed: true, due_at: null, priority: 2, tags: [], version: 2 });
    expect(done.body.completed_at).toMatch(ISO);
    // Completing again keeps the first completion time.
    const again = await c.patch(`/api/v1/tasks/${t.id}`, { version: 2, completed: true });
    expect(again.body.completed_at).toBe(done.body.completed_at);
    const undone = await c.patch(`/api/v1/tasks/${t.id}`, { version: 3, completed: false, description: "more" });
    expect(undone.body).toMatchObject({ completed: false, completed_at: null, description: "more", version: 4 });
  });

  test("moving a parent moves its subtasks; a subtask cannot move alone", async () => {
    const c = await signedInUser(app, admin, uname());
    const l1 = await mkList(c, "1");
    const l2 = await mkList(c, "2");
    const p = await mkTask(c, { title: "p", list_id: l1 });
    const s = await mkTask(c, { title: "s", parent_id: p.id });
    await rejected(app, () => c.patch(`/api/v1/tasks/${s.id}`, { version: 1, list_id: l2 }), 422, "invalid_parent");
    const moved = await c.patch(`/api/v1/tasks/${p.id}`, { version: 1, list_id: l2 });
    expect(moved.status).toBe(200);
    expect(moved.body.list_id).toBe(l2);
    expect(moved.body.subtasks[0]).toMatchObject({ id: s.id, list_id: l2, version: 2 });
    // A subtask may leave its parent by becoming top-level, and then move.
    const freed = await c.patch(`/api/v1/tasks/${s.id}`, { version: 2, parent_id: null, list_id: l1 });
    expect(freed.body).toMatchObject({ parent_id: null, list_id: l1 });
  });

  test("parent_id rules on PATCH", async () => {
    const c = await signedInUser(app, admin, uname());
    const o = await signedInUser(app, admin, uname());
    const l1 = await mkList(c, "1");
    const l2 = await mkList(c, "2");
    const a = await mkTask(c, { title: "a", list_id: l1 });
    const b = await mkTask(c, { title: "b", list_id: l2 });
    const bs = await mkTask(c, { title: "bs", parent_id: b.id });
    const foreign = await mkTask(o, { title: "f" });
    await rejected(app, () => c.patch(`/api/v1/tasks/${a.id}`, { version: 1, parent_id: a.id }), 422, "invalid_parent");
    await rejected(app, () => c.patch(`/api/v1/tasks/${a.id}`, { version: 1, parent_id: bs.id }), 422, "invalid_parent");
    await rejected(app, () => c.patch(`/api/v1/tasks/${b.id}`, { version: 1, parent_id: a.id }), 422, "invalid_parent");
    await rejected(app, () => c.patch(`/api/v1/tasks/${a.id}`, { version: 1, parent_id: b.id, list_id: l1 }), 422, "invalid_parent");
    await rejected(app, () => c.patch(`/api/v1/tasks/${a.id}`, { version: 1, parent_id: foreign.id }), 422, "invalid_reference");
    await rejected(app, () => c.patch(`/api/v1/tasks/${a.id}`, { version: 1, list_id: "missing" }), 422, "invalid_reference");
    await rejected(app, () => c.patch(`/api/v1/tasks/${a.id}`, { version: 1, tag_ids: ["missing"] }), 422, "invalid_reference");
    // list_id omitted: the task joins its new parent's list.
    const r = await c.patch(`/api/v1/tasks/${a.id}`, { version: 1, parent_id: b.id });
    expect(r.body).toMatchObject({ parent_id: b.id, list_id: l2, version: 2 });
    expect((await c.get(`/api/v1/tasks/${b.id}`)).body.subtasks.map((x: { id: string }) => x.id)).toEqual([bs.id, a.id]); // manual order: a joined its new siblings last
  });

  test("20 parallel PATCHes with the same version: exactly one wins", async () => {
    const c = await signedInUser(app, admin, uname());
    const t = await mkTask(c, { title: "race" });
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => c.patch(`/api/v1/tasks/${t.id}`, { version: 1, title: `w${i}` })));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(19);
    const winner = results.find((r) => r.status === 200)!;
    const now = (await c.get(`/api/v1/tasks/${t.id}`)).body;
    expect(now).toMatchObject({ version: 2, title: winner.body.title });
  });
});

describe("delete and restore", () => {
  test("delete takes the subtasks along; restore brings them back; versions grow", async () => {
    const c = await signedInUser(app, admin, uname());
    const p = await mkTask(c, { title: "p" });
    const s = await mkTask(c, { title: "s", parent_id: p.id });
    const d = await c.delete(`/api/v1/tasks/${p.id}`);
    expect(d.status).toBe(204);
    expect(d.text).toBe("");
    expect((await c.get(`/api/v1/tasks/${p.id}`)).status).toBe(404);
    expect((await c.get(`/api/v1/tasks/${s.id}`)).status).toBe(404);
    await rejected(app, () => c.delete(`/api/v1/tasks/${p.id}`), 404, "not_found");
    await rejected(app, () => c.patch(`/api/v1/tasks/${p.id}`, { version: 2, title: "x" }), 404, "not_found");
    await rejected(app, () => c.post(`/api/v1/tasks/${s.id}/restore`), 409, "state_conflict");
    const r = await c.post(`/api/v1/tasks/${p.id}/restore`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: p.id, deleted_at: null, version: 3 });
    expect(r.body.subtasks).toEqual([expect.objectContaining({ id: s.id, deleted_at: null, version: 3 })]);
    await rejected(app, () => c.post(`/api/v1/tasks/${p.id}/restore`), 409, "state_conflict");
  });

  test("a subtask deleted alone leaves the parent; restoring it works while the parent lives", async () => {
    const c = await signedInUser(app, admin, uname());
    const p = await mkTask(c, { title: "p" });
    const s = await mkTask(c, { title: "s", parent_id: p.id });
    await c.delete(`/api/v1/tasks/${s.id}`);
    expect((await c.get(`/api/v1/tasks/${p.id}`)).body.subtasks).toEqual([]);
    expect((await c.post(`/api/v1/tasks/${s.id}/restore`)).status).toBe(200);
    expect((await c.get(`/api/v1/tasks/${p.id}`)).body.subtasks).toHaveLength(1);
  });
});

describe("GET /tasks", () => {
  test("top-level, newest first, with tags and live subtasks", async () => {
    const c = await signedInUser(app, admin, uname());
    const tg = await mkTag(c, "tg");
    const a = await mkTask(c, { title: "a", tag_ids: [tg] });
    const s1 = await mkTask(c, { title: "s1", parent_id: a.id });
    const s2 = await mkTask(c, { title: "s2", parent_id: a.id, tag_ids: [tg] });
    await c.delete(`/api/v1/tasks/${s1.id}`);
    const b = await mkTask(c, { title: "b" });
    const gone = await mkTask(c, { title: "gone" });
    await c.delete(`/api/v1/tasks/${gone.id}`);
    const r = await c.get("/api/v1/tasks");
    expect(r.status).toBe(200);
    expect(ids(r)).toEqual([b.id, a.id]);
    expect(r.body.next_cursor).toBeNull();
    expect(r.body.items[1].tags).toEqual([{ id: tg, name: "tg", color: "#112233" }]);
    expect(r.body.items[1].subtasks.map((x: { id: string }) => x.id)).toEqual([s2.id]);
    expect(r.body.items[1].subtasks[0].tags).toHaveLength(1);
  });

  test("cursor walk: no repeats or skips, even with inserts and deletes during the walk", async () => {
    const c = await signedInUser(app, admin, uname());
    const made: string[] = [];
    for (let i = 0; i < 7; i++) made.push((await mkTask(c, { title: `t${i}` })).id);
    const seen: string[] = [];
    let r = await c.get("/api/v1/tasks?limit=3");
    seen.push(...ids(r));
    await mkTask(c, { title: "new during walk" });
    await c.delete(`/api/v1/tasks/${made[0]}`);
    while (r.body.next_cursor) {
      r = await c.get(`/api/v1/tasks?limit=3&cursor=${encodeURIComponent(r.body.next_cursor)}`);
      expect(r.status).toBe(200);
      seen.push(...ids(r));
    }
    expect(seen).toEqual([...made].reverse().slice(0, 6));
  });

  test("limit and cursor validation", async () => {
    const c = await signedInUser(app, admin, uname());
    const o = await signedInUser(app, admin, uname());
    for (let i = 0; i < 3; i++) await mkTask(c, { title: `t${i}` });
    for (let i = 0; i < 3; i++) await mkTask(o, { title: `t${i}` });
    for (const q of ["limit=0", "limit=101", "limit=abc", "limit=1.5", "limit=-1", "completed=yes", "due_before=2026-02-30", "due_after=x", "unknown=1"]) {
      const before = dump(app.db);
      const r = await c.get(`/api/v1/tasks?${q}`);
      expect([r.status, r.body.code]).toEqual([422, "validation_failed"]);
      expect(dump(app.db)).toEqual(before);
    }
    expect((await c.get("/api/v1/tasks?limit=100")).status).toBe(200);
    const page = await c.get("/api/v1/tasks?limit=1");
    const cur: string = page.body.next_cursor;
    const next = await c.get(`/api/v1/tasks?limit=1&cursor=${encodeURIComponent(cur)}`);
    expect(next.status).toBe(200);
    // Tampered: one character of the body or of the signature changed.
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === "A" ? "B" : "A") + s.slice(i + 1);
    for (const bad of [flip(cur, 3), flip(cur, cur.length - 2), "garbage", cur + "x", "a.b"]) {
      const r = await c.get(`/api/v1/tasks?cursor=${encodeURIComponent(bad)}`);
      expect([r.status, r.body.code]).toEqual([422, "invalid_cursor"]);
    }
    // Another user's cursor, and a cursor of another endpoint.
    const theirs = (await o.get("/api/v1/tasks?limit=1")).body.next_cursor;
    expect((await c.get(`/api/v1/tasks?cursor=${encodeURIComponent(theirs)}`)).body.code).toBe("invalid_cursor");
    const audit = (await c.get("/api/v1/audit-logs?limit=1")).body.next_cursor;
    if (audit) expect((await c.get(`/api/v1/tasks?cursor=${encodeURIComponent(audit)}`)).body.code).toBe("invalid_cursor");
    await c.delete(`/api/v1/tasks/${ids(page)[0]}`);
    const trashCursor = (await c.get("/api/v1/trash?limit=1")).body;
    expect(trashCursor.next_cursor).toBeNull();
    expect((await c.get(`/api/v1/trash?cursor=${encodeURIComponent(cur)}`)).body.code).toBe("invalid_cursor");
  });

  test("filters: list, completed, tag; foreign ids give an empty page", async () => {
    const c = await signedInUser(app, admin, uname());
    const o = await signedInUser(app, admin, uname());
    const l = await mkList(c, "L");
    const tg = await mkTag(c, "tg");
    const a = await mkTask(c, { title: "a", list_id: l, tag_ids: [tg] });
    const b = await mkTask(c, { title: "b", completed: true });
    const d = await mkTask(c, { title: "d", list_id: l, completed: true });
    expect(ids(await c.get(`/api/v1/tasks?list_id=${l}`))).toEqual([d.id, a.id]);
    expect(ids(await c.get(`/api/v1/tasks?completed=true`))).toEqual([d.id, b.id]);
    expect(ids(await c.get(`/api/v1/tasks?completed=false`))).toEqual([a.id]);
    expect(ids(await c.get(`/api/v1/tasks?tag_id=${tg}`))).toEqual([a.id]);
    expect(ids(await c.get(`/api/v1/tasks?list_id=${l}&completed=true`))).toEqual([d.id]);
    const theirList = await mkList(o, "theirs");
    const theirTag = await mkTag(o, "theirs");
    await mkTask(o, { title: "x", list_id: theirList, tag_ids: [theirTag] });
    for (const q of [`list_id=${theirList}`, `tag_id=${theirTag}`, "list_id=missing", "tag_id=missing"]) {
      const r = await c.get(`/api/v1/tasks?${q}`);
      expect(r.status).toBe(200);
      expect(r.body).toEqual({ items: [], next_cursor: null });
    }
  });

  test("due filters are inclusive; a timed due_at falls on its date in the user's zone", async () => {
    const c = await signedInUser(app, admin, uname(), { timezone: "Asia/Tokyo" });
    const dateOnly = await mkTask(c, { title: "d", due_at: "2026-12-01" });
    // 2026-12-01T20:00Z is 2026-12-02 05:00 in Tokyo.
    const lateUtc = await mkTask(c, { title: "late", due_at: "2026-12-01T20:00:00Z" });
    // 2026-11-30T15:00Z is 2026-12-01 00:00 in Tokyo.
    const midnight = await mkTask(c, { title: "midnight", due_at: "2026-11-30T15:00:00Z" });
    await mkTask(c, { title: "none" });
    const q = async (s: string) => ids(await c.get(`/api/v1/tasks?${s}`)).sort();
    expect(await q("due_before=2026-12-01")).toEqual([dateOnly.id, midnight.id].sort());
    expect(await q("due_after=2026-12-02")).toEqual([lateUtc.id]);
    expect(await q("due_after=2026-12-01&due_before=2026-12-01")).toEqual([dateOnly.id, midnight.id].sort());
    expect(await q("due_before=2026-11-30")).toEqual([]);
    expect(await q("due_after=2026-12-01")).toEqual([dateOnly.id, lateUtc.id, midnight.id].sort());
    expect(await q("due_before=2026-12-02")).toEqual([dateOnly.id, lateUtc.id, midnight.id].sort());
  });
});
