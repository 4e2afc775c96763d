import { afterAll, describe, expect, test } from "bun:test";
import { makeTestApp, setupAdmin, signedInUser } from "./helpers/app";
import { mkTag, mkTask, rejected, uname } from "./helpers/tasks";

const app = makeTestApp();
const admin = await setupAdmin(app);
afterAll(() => app.close());

describe("tags", () => {
  test("create, read, list by name, rename, recolour", async () => {
    const c = await signedInUser(app, admin, uname());
    const r = await c.post("/api/v1/tags", { name: "Work", color: "#A1b2C3" });
    expect(r.status).toBe(201);
    expect(r.headers.get("location")).toBe(`/api/v1/tags/${r.body.id}`);
    expect(r.body).toEqual({ id: r.body.id, name: "Work", color: "#A1b2C3" });
    await mkTag(c, "errands");
    expect((await c.get("/api/v1/tags")).body.items.map((t: { name: string }) => t.name)).toEqual(["errands", "Work"]);
    expect((await c.get(`/api/v1/tags/${r.body.id}`)).body.name).toBe("Work");
    const p = await c.patch(`/api/v1/tags/${r.body.id}`, { color: "#000000" });
    expect(p.body).toEqual({ id: r.body.id, name: "Work", color: "#000000" });
    // Changing only the case of its own name is allowed.
    expect((await c.patch(`/api/v1/tags/${r.body.id}`, { name: "WORK" })).body.name).toBe("WORK");
  });

  test("names are unique per user, case-insensitively and Unicode-aware", async () => {
    const c = await signedInUser(app, admin, uname());
    const other = await signedInUser(app, admin, uname());
    await mkTag(c, "Work");
    await mkTag(c, "Émile");
    await mkTag(c, "ΣΟΦΙΑ");
    const home = await mkTag(c, "home");
    for (const name of ["work", "WORK", "Ｗｏｒｋ", "émile", "ÉMILE", "σοφια", " work "]) {
      const r = await rejected(app, () => c.post("/api/v1/tags", { name, color: "#111111" }), 409, "name_taken");
      expect(r.body.errors[0].path).toBe("name");
    }
    await rejected(app, () => c.patch(`/api/v1/tags/${home}`, { name: "wOrK" }), 409, "name_taken");
    // Another user may use the same name.
    expect((await other.post("/api/v1/tags", { name: "work", color: "#111111" })).status).toBe(201);
    // Distinct letters stay distinct.
    expect((await c.post("/api/v1/tags", { name: "Emile", color: "#111111" })).status).toBe(201);
  });

  test("invalid bodies are 422", async () => {
    const c = await signedInUser(app, admin, uname());
    const t = await mkTag(c, "x");
    for (const body of [
      { name: "a" },
      { color: "#111111" },
      { name: "a", color: "red" },
      { name: "a", color: "#12345" },
      { name: "a", color: "#1234567" },
      { name: "", color: "#111111" },
      { name: "a".repeat(65), color: "#111111" },
      { name: "a", color: "#111111", extra: true },
      { name: 1, color: "#111111" },
    ]) {
      await rejected(app, () => c.post("/api/v1/tags", body), 422, "validation_failed");
    }
    await rejected(app, () => c.patch(`/api/v1/tags/${t}`, { color: "blue" }), 422, "validation_failed");
    await rejected(app, () => c.patch(`/api/v1/tags/${t}`, { nope: 1 }), 422, "validation_failed");
  });

  test("another user's tag is 404", async () => {
    const a = await signedInUser(app, admin, uname());
    const b = await signedInUser(app, admin, uname());
    const t = await mkTag(a, "mine");
    expect((await b.get(`/api/v1/tags/${t}`)).status).toBe(404);
    await rejected(app, () => b.patch(`/api/v1/tags/${t}`, { name: "x" }), 404, "not_found");
    await rejected(app, () => b.delete(`/api/v1/tags/${t}`), 404, "not_found");
    expect((await b.get("/api/v1/tags")).body.items).toEqual([]);
  });

  test("delete removes the tag from every task and bumps their versions", async () => {
    const c = await signedInUser(app, admin, uname());
    const t1 = await mkTag(c, "one");
    const t2 = await mkTag(c, "two");
    const task = await mkTask(c, { title: "x", tag_ids: [t1, t2] });
    expect(task.tags.map((t: { name: string }) => t.name)).toEqual(["one", "two"]);
    const d = await c.delete(`/api/v1/tags/${t1}`);
    expect(d.status).toBe(204);
    const after = (await c.get(`/api/v1/tasks/${task.id}`)).body;
    expect(after.tags.map((t: { name: string }) => t.name)).toEqual(["two"]);
    expect(after.version).toBe(task.version + 1);
    expect((await c.get(`/api/v1/tags/${t1}`)).status).toBe(404);
  });
});
