import { afterAll, describe, expect, test } from "bun:test";
import { makeTestApp, setupAdmin, signedInUser } from "./helpers/app";
import { mkList, rejected, uname } from "./helpers/tasks";

const app = makeTestApp();
const admin = await setupAdmin(app);
afterAll(() => app.close());

describe("folders", () => {
  test("create, read, rename, list by position", async () => {
    const c = await signedInUser(app, admin, uname());
    const r = await c.post("/api/v1/folders", { name: "  Work  " });
    expect(r.status).toBe(201);
    expect(r.headers.get("location")).toBe(`/api/v1/folders/${r.body.id}`);
    expect(Object.keys(r.body).sort()).toEqual(["created_at", "id", "name", "position", "updated_at"]);
    expect(r.body.name).toBe("Work");
    expect(r.body.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    const r2 = await c.post("/api/v1/folders", { name: "Home" });
    expect(r2.body.position).toBeGreaterThan(r.body.position);
    expect((await c.get(`/api/v1/folders/${r.body.id}`)).body.name).toBe("Work");
    const p = await c.patch(`/api/v1/folders/${r.body.id}`, { name: "Office" });
    expect(p.status).toBe(200);
    expect(p.body.name).toBe("Office");
    const all = await c.get("/api/v1/folders");
    expect(all.body.items.map((f: { name: string }) => f.name)).toEqual(["Office", "Home"]);
  });

  test("invalid bodies are 422 and change nothing", async () => {
    const c = await signedInUser(app, admin, uname());
    const f = (await c.post("/api/v1/folders", { name: "A" })).body.id;
    await rejected(app, () => c.post("/api/v1/folders", { name: "" }), 422, "validation_failed");
    await rejected(app, () => c.post("/api/v1/folders", { name: "   " }), 422, "validation_failed");
    await rejected(app, () => c.post("/api/v1/folders", { name: 5 }), 422, "validation_failed");
    await rejected(app, () => c.post("/api/v1/folders", { name: "x".repeat(201) }), 422, "validation_failed");
    await rejected(app, () => c.post("/api/v1/folders", { name: "ok", extra: 1 }), 422, "validation_failed");
    await rejected(app, () => c.post("/api/v1/folders", {}), 422, "validation_failed");
    await rejected(app, () => c.patch(`/api/v1/folders/${f}`, { name: "a", position: 3 }), 422, "validation_failed");
    await rejected(app, () => c.request("POST", "/api/v1/folders", { body: "{nope", headers: { "content-type": "application/json" } }), 400, "malformed_request");
  });

  test("another user's folder is 404 like a missing one", async () => {
    const a = await signedInUser(app, admin, uname());
    const b = await signedInUser(app, admin, uname());
    const f = (await a.post("/api/v1/folders", { name: "A" })).body.id;
    expect((await b.get(`/api/v1/folders/${f}`)).status).toBe(404);
    expect((await b.get(`/api/v1/folders/nope`)).body.code).toBe("not_found");
    await rejected(app, () => b.patch(`/api/v1/folders/${f}`, { name: "B" }), 404, "not_found");
    await rejected(app, () => b.delete(`/api/v1/folders/${f}`), 404, "not_found");
    expect((await b.get("/api/v1/folders")).body.items).toEqual([]);
  });

  test("delete is soft; its lists move to root; then 404", async () => {
    const c = await signedInUser(app, admin, uname());
    const f = (await c.post("/api/v1/folders", { name: "A" })).body.id;
    const l = await mkList(c, "In A", { folder_id: f });
    expect((await c.get(`/api/v1/lists/${l}`)).body.folder_id).toBe(f);
    const d = await c.delete(`/api/v1/folders/${f}`);
    expect(d.status).toBe(204);
    expect(d.text).toBe("");
    expect((await c.get(`/api/v1/folders/${f}`)).status).toBe(404);
    expect((await c.get("/api/v1/folders")).body.items).toEqual([]);
    expect((await c.get(`/api/v1/lists/${l}`)).body.folder_id).toBeNull();
    expect(app.db.sqlite.query("SELECT deleted_at FROM folders WHERE id = ?").get(f)).toEqual({ deleted_at: expect.any(String) });
    await rejected(app, () => c.delete(`/api/v1/folders/${f}`), 404, "not_found");
    await rejected(app, () => c.patch(`/api/v1/folders/${f}`, { name: "x" }), 404, "not_found");
    // A deleted folder cannot receive lists.
    await rejected(app, () => c.post("/api/v1/lists", { name: "x", folder_id: f }), 422, "invalid_reference");
  });

  test("reorder needs exactly the active folders", async () => {
    const c = await signedInUser(app, admin, uname());
    const other = await signedInUser(app, admin, uname());
    const [a, b, d] = [
      (await c.post("/api/v1/folders", { name: "a" })).body.id,
      (await c.post("/api/v1/folders", { name: "b" })).body.id,
      (await c.post("/api/v1/folders", { name: "d" })).body.id,
    ];
    const gone = (await c.post("/api/v1/folders", { name: "gone" })).body.id;
    await c.delete(`/api/v1/folders/${gone}`);
    const foreign = (await other.post("/api/v1/folders", { name: "x" })).body.id;
    const r = await c.post("/api/v1/folders/reorder", { ids: [d, a, b] });
    expect(r.status).toBe(200);
    expect(r.body.items.map((f: { id: string }) => f.id)).toEqual([d, a, b]);
    expect((await c.get("/api/v1/folders")).body.items.map((f: { id: string }) => f.id)).toEqual([d, a, b]);
    for (const ids of [[a, b], [a, b, d, d], [a, b, d, gone], [a, b, d, foreign], [a, b, foreign], []]) {
      await rejected(app, () => c.post("/api/v1/folders/reorder", { ids }), 422, "validation_failed");
    }
    await rejected(app, () => c.post("/api/v1/folders/reorder", { ids: "a" }), 422, "validation_failed");
  });
});
