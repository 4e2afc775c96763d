import { afterAll, describe, expect, test } from "bun:test";
import { dump, makeTestApp, setupAdmin, signedInUser } from "./helpers/app";
import { inboxOf, mkList, mkTask, rejected, uname } from "./helpers/tasks";

const app = makeTestApp();
const admin = await setupAdmin(app);
afterAll(() => app.close());

const ids = (r: { body: { items: { id: string }[] } }) => r.body.items.map((x) => x.id);

describe("lists", () => {
  test("the inbox comes first; create with and without folder", async () => {
    const c = await signedInUser(app, admin, uname());
    const f = (await c.post("/api/v1/folders", { name: "F" })).body.id;
    const r = await c.post("/api/v1/lists", { name: "Groceries", folder_id: f, color: "#00FF00" });
    expect(r.status).toBe(201);
    expect(r.headers.get("location")).toBe(`/api/v1/lists/${r.body.id}`);
    expect(Object.keys(r.body).sort()).toEqual(["color", "created_at", "deleted_at", "folder_id", "id", "is_inbox", "member_count", "name", "owner", "position", "role", "sort", "updated_at"]);
    expect(r.body).toMatchObject({ role: "owner", member_count: 1 });
    expect(r.body).toMatchObject({ name: "Groceries", folder_id: f, is_inbox: false, color: "#00FF00", deleted_at: null });
    const plain = await mkList(c, "Plain");
    const all = await c.get("/api/v1/lists");
    expect(all.body.items[0]).toMatchObject({ name: "Inbox", is_inbox: true, folder_id: null });
    expect(ids(all).slice(1)).toEqual([r.body.id, plain]);
  });

  test("bodies naming a foreign or missing folder are invalid_reference; bad fields 422", async () => {
    const c = await signedInUser(app, admin, uname());
    const o = await signedInUser(app, admin, uname());
    const foreign = (await o.post("/api/v1/folders", { name: "F" })).body.id;
    await rejected(app, () => c.post("/api/v1/lists", { name: "x", folder_id: foreign }), 422, "invalid_reference");
    await rejected(app, () => c.post("/api/v1/lists", { name: "x", folder_id: "nope" }), 422, "invalid_reference");
    await rejected(app, () => c.post("/api/v1/lists", { name: "" }), 422, "validation_failed");
    await rejected(app, () => c.post("/api/v1/lists", { name: "x", is_inbox: true }), 422, "validation_failed");
    await rejected(app, () => c.post("/api/v1/lists", { name: "x", color: "green" }), 422, "validation_failed");
    const l = await mkList(c, "L");
    await rejected(app, () => c.post(`/api/v1/lists/${l}/move`, { folder_id: foreign }), 422, "invalid_reference");
    await rejected(app, () => c.post(`/api/v1/lists/${l}/move`, {}), 422, "validation_failed");
  });

  test("the inbox cannot be renamed, moved, deleted or purged", async () => {
    const c = await signedInUser(app, admin, uname());
    const inbox = await inboxOf(c);
    const f = (await c.post("/api/v1/folders", { name: "F" })).body.id;
    await rejected(app, () => c.patch(`/api/v1/lists/${inbox}`, { name: "Other" }), 409, "inbox_immutable");
    await rejected(app, () => c.delete(`/api/v1/lists/${inbox}`), 409, "inbox_immutable");
    await rejected(app, () => c.post(`/api/v1/lists/${inbox}/move`, { folder_id: f }), 409, "inbox_immutable");
    await rejected(app, () => c.delete(`/api/v1/lists/${inbox}/purge`), 409, "inbox_immutable");
    // Its colour is not its identity.
    expect((await c.patch(`/api/v1/lists/${inbox}`, { color: "#123456" })).status).toBe(200);
  });

  test("another user's list is 404 everywhere", async () => {
    const a = await signedInUser(app, admin, uname());
    const b = await signedInUser(app, admin, uname());
    const l = await mkList(a, "mine");
    expect((await b.get(`/api/v1/lists/${l}`)).status).toBe(404);
    await rejected(app, () => b.patch(`/api/v1/lists/${l}`, { name: "x" }), 404, "not_found");
    await rejected(app, () => b.delete(`/api/v1/lists/${l}`), 404, "not_found");
    await rejected(app, () => b.post(`/api/v1/lists/${l}/restore`), 404, "not_found");
    await rejected(app, () => b.delete(`/api/v1/lists/${l}/purge`), 404, "not_found");
    await rejected(app, () => b.post(`/api/v1/lists/${l}/move`, { folder_id: null }), 404, "not_found");
  });

  test("archive hides the list and its tasks everywhere; restore brings them back", async () => {
    const c = await signedInUser(app, admin, uname());
    const l = await mkList(c, "Project");
    const t = await mkTask(c, { title: "hidden thing", list_id: l });
    const sub = await mkTask(c, { title: "sub", parent_id: t.id });
    expect((await c.delete(`/api/v1/lists/${l}`)).status).toBe(204);
    expect(ids(await c.get("/api/v1/lists"))).not.toContain(l);
    const archived = await c.get("/api/v1/lists?archived=true");
    expect(ids(archived)).toEqual([l]);
    expect(archived.body.items[0].deleted_at).toEqual(expect.any(String));
    const one = await c.get(`/api/v1/lists/${l}`);
    expect(one.status).toBe(200);
    expect(one.body.deleted_at).not.toBeNull();
    expect((await c.get(`/api/v1/tasks/${t.id}`)).status).toBe(404);
    expect((await c.get(`/api/v1/tasks/${sub.id}`)).status).toBe(404);
    expect((await c.get("/api/v1/tasks")).body.items).toEqual([]);
    expect((await c.get("/api/v1/tasks?q=hidden")).body.items).toEqual([]);
    expect((await c.get(`/api/v1/tasks?list_id=${l}`)).body.items).toEqual([]);
    await rejected(app, () => c.patch(`/api/v1/tasks/${t.id}`, { version: 1, title: "x" }), 404, "not_found");
    // Nothing can be created in or moved into it.
    await rejected(app, () => c.post("/api/v1/tasks", { title: "x", list_id: l }), 422, "invalid_reference");
    const other = await mkTask(c, { title: "other" });
    await rejected(app, () => c.patch(`/api/v1/tasks/${other.id}`, { version: 1, list_id: l }), 422, "invalid_reference");
    await rejected(app, () => c.post("/api/v1/tasks/batch", { task_ids: [other.id], list_id: l }), 422, "invalid_reference");
    await rejected(app, () => c.post("/api/v1/tasks/batch", { task_ids: [t.id], completed: true }), 422, "invalid_reference");
    // Renaming or re-archiving needs it active.
    await rejected(app, () => c.patch(`/api/v1/lists/${l}`, { name: "x" }), 404, "not_found");
    await rejected(app, () => c.delete(`/api/v1/lists/${l}`), 404, "not_found");
    await rejected(app, () => c.post(`/api/v1/lists/${l}/move`, { folder_id: null }), 404, "not_found");
    const r = await c.post(`/api/v1/lists/${l}/restore`);
    expect(r.status).toBe(200);
    expect(r.body.deleted_at).toBeNull();
    expect((await c.get(`/api/v1/tasks/${t.id}`)).body.subtasks.map((s: { id: string }) => s.id)).toEqual([sub.id]);
    expect(ids(await c.get("/api/v1/tasks"))).toContain(t.id);
    await rejected(app, () => c.post(`/api/v1/lists/${l}/restore`), 409, "state_conflict");
  });

  test("purge only when archived; removes its tasks, runs purge hooks, writes the audit log", async () => {
    const c = await signedInUser(app, admin, uname());
    const l = await mkList(c, "Doomed");
    const t = await mkTask(c, { title: "a", list_id: l });
    const s = await mkTask(c, { title: "b", parent_id: t.id });
    await rejected(app, () => c.delete(`/api/v1/lists/${l}/purge`), 409, "not_archived");
    await c.delete(`/api/v1/lists/${l}`);
    const seen: string[][] = [];
    let afterCommit = 0;
    app.handle.taskPurgeHooks.register((_tx, _user, taskIds) => {
      seen.push([...taskIds].sort());
      return () => afterCommit++;
    });
    const r = await c.delete(`/api/v1/lists/${l}/purge`);
    expect(r.status).toBe(204);
    expect(seen).toEqual([[t.id, s.id].sort()]);
    expect(afterCommit).toBe(1);
    expect(app.db.sqlite.query("SELECT count(*) AS n FROM tasks WHERE list_id = ?").get(l)).toEqual({ n: 0 });
    expect((await c.get(`/api/v1/lists/${l}`)).status).toBe(404);
    const audit = await c.get("/api/v1/audit-logs");
    expect(audit.body.items[0]).toMatchObject({ action: "list_purged", target_type: "list", target_id: l });
  });

  test("move between folders and to root; a list in a deleted folder shows at root", async () => {
    const c = await signedInUser(app, admin, uname());
    const f1 = (await c.post("/api/v1/folders", { name: "1" })).body.id;
    const l = await mkList(c, "L");
    const m = await c.post(`/api/v1/lists/${l}/move`, { folder_id: f1 });
    expect(m.status).toBe(200);
    expect(m.body.folder_id).toBe(f1);
    expect((await c.post(`/api/v1/lists/${l}/move`, { folder_id: null })).body.folder_id).toBeNull();
    await c.post(`/api/v1/lists/${l}/move`, { folder_id: f1 });
    // Soft-deleted behind the API's back: presentation alone must show it at root.
    app.db.sqlite.query("UPDATE folders SET deleted_at = '2026-01-01T00:00:00.000Z' WHERE id = ?").run(f1);
    expect((await c.get(`/api/v1/lists/${l}`)).body.folder_id).toBeNull();
    expect((await c.get("/api/v1/lists")).body.items.find((x: { id: string }) => x.id === l).folder_id).toBeNull();
    await rejected(app, () => c.post(`/api/v1/lists/${l}/move`, { folder_id: f1 }), 422, "invalid_reference");
  });

  test("reorder: exactly the active lists except the inbox", async () => {
    const c = await signedInUser(app, admin, uname());
    const inbox = await inboxOf(c);
    const a = await mkList(c, "a");
    const b = await mkList(c, "b");
    const d = await mkList(c, "d");
    const gone = await mkList(c, "gone");
    await c.delete(`/api/v1/lists/${gone}`);
    const r = await c.post("/api/v1/lists/reorder", { ids: [d, b, a] });
    expect(r.status).toBe(200);
    expect(ids(r)).toEqual([d, b, a]);
    expect(ids(await c.get("/api/v1/lists"))).toEqual([inbox, d, b, a]);
    for (const bad of [[inbox, d, b, a], [d, b], [d, b, a, gone], [d, b, a, a], [d, b, a, "nope"]]) {
      await rejected(app, () => c.post("/api/v1/lists/reorder", { ids: bad }), 422, "validation_failed");
    }
  });

  test("archived=abc is 422", async () => {
    const c = await signedInUser(app, admin, uname());
    const before = dump(app.db);
    const r = await c.get("/api/v1/lists?archived=abc");
    expect(r.status).toBe(422);
    expect(dump(app.db)).toEqual(before);
  });
});
