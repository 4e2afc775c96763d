import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { dump, FixedClock, makeTestApp, setupAdmin, signedInUser, type TestClient, type TestResponse } from "./helpers/app";
import { rejected as rejectedIn } from "./helpers/app";

const clock = new FixedClock(new Date("2026-11-25T10:00:00.000Z"));
const app = makeTestApp({ clock });
let alice: TestClient;
let bob: TestClient;

beforeAll(async () => {
  alice = await setupAdmin(app);
  bob = await signedInUser(app, alice, "bob");
});
afterAll(() => app.close());

async function newMemo(c: TestClient, content = "# hello\n\n*world*") {
  clock.advance(1000);
  const r = await c.post("/api/v1/memos", { content });
  expect(r.status).toBe(201);
  return r.body;
}

const rejected = (run: () => Promise<TestResponse>, status: number, code: string) => rejectedIn(app, run, status, code);

describe("memos", () => {
  test("create answers 201, Location and the memo; GET reads it", async () => {
    const r = await alice.post("/api/v1/memos", { content: "中文 **markdown** ✓", pinned: true });
    expect(r.status).toBe(201);
    expect(r.headers.get("location")).toBe(`/api/v1/memos/${r.body.id}`);
    expect(r.body).toMatchObject({ content: "中文 **markdown** ✓", pinned: true, version: 1, deleted_at: null });
    expect(r.body.created_at).toBe("2026-11-25T10:00:00.000Z");
    const g = await alice.get(`/api/v1/memos/${r.body.id}`);
    expect(g.status).toBe(200);
    expect(g.body).toEqual(r.body);
    expect((await alice.post("/api/v1/memos", { content: "x" })).body.pinned).toBe(false);
  });

  test("create validation: empty, too long, wrong types, unknown fields", async () => {
    await rejected(() => alice.post("/api/v1/memos", { content: "" }), 422, "validation_failed");
    await rejected(() => alice.post("/api/v1/memos", { content: "a".repeat(100_001) }), 422, "validation_failed");
    await rejected(() => alice.post("/api/v1/memos", { content: 5 }), 422, "validation_failed");
    await rejected(() => alice.post("/api/v1/memos", { content: "x", pinned: "yes" }), 422, "validation_failed");
    const u = await rejected(() => alice.post("/api/v1/memos", { content: "x", title: "t" }), 422, "validation_failed");
    expect(u.body.errors).toContainEqual({ path: "title", message: "unknown field" });
    await rejected(() => alice.post("/api/v1/memos", {}), 422, "validation_failed");
    const ok = await alice.post("/api/v1/memos", { content: "a".repeat(100_000) });
    expect(ok.status).toBe(201);
  });

  test("patch needs the current version; stale is 409 and changes nothing", async () => {
    const m = await newMemo(alice);
    await rejected(() => alice.patch(`/api/v1/memos/${m.id}`, { content: "no version" }), 422, "validation_failed");
    await rejected(() => alice.patch(`/api/v1/memos/${m.id}`, { content: "v", version: "1" }), 422, "validation_failed");
    await rejected(() => alice.patch(`/api/v1/memos/${m.id}`, { content: "v", version: 1, extra: 1 }), 422, "validation_failed");
    await rejected(() => alice.patch(`/api/v1/memos/${m.id}`, { content: "", version: 1 }), 422, "validation_failed");
    clock.advance(5000);
    const p = await alice.patch(`/api/v1/memos/${m.id}`, { content: "edited", pinned: true, version: 1 });
    expect(p.status).toBe(200);
    expect(p.body).toMatchObject({ content: "edited", pinned: true, version: 2, created_at: m.created_at });
    expect(p.body.updated_at).not.toBe(m.updated_at);
    const stale = await rejected(() => alice.patch(`/api/v1/memos/${m.id}`, { content: "lost", version: 1 }), 409, "version_conflict");
    expect(stale.body.errors).toEqual([{ path: "version", message: "expected 2" }]);
    const p2 = await alice.patch(`/api/v1/memos/${m.id}`, { pinned: false, version: 2 });
    expect(p2.body).toMatchObject({ content: "edited", pinned: false, version: 3 });
    // A patch with nothing to change checks the version and changes nothing.
    const before = dump(app.db);
    expect((await alice.patch(`/api/v1/memos/${m.id}`, { version: 3 })).body).toEqual(p2.body);
    expect(dump(app.db)).toEqual(before);
    await rejected(() => alice.patch(`/api/v1/memos/${m.id}`, { version: 2 }), 409, "version_conflict");
    await rejected(() => alice.patch(`/api/v1/memos/${m.id}`, { content: "a".repeat(100_001), version: 3 }), 422, "validation_failed");
  });

  test("two writers with the same version: exactly one wins", async () => {
    const m = await newMemo(alice);
    const [a, b] = await Promise.all([
      alice.patch(`/api/v1/memos/${m.id}`, { content: "A", version: 1 }),
      alice.patch(`/api/v1/memos/${m.id}`, { content: "B", version: 1 }),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    expect((await alice.get(`/api/v1/memos/${m.id}`)).body.version).toBe(2);
  });

  test("another user's memo is 404 exactly like a missing one, for every operation", async () => {
    const m = await newMemo(alice);
    const missing = "01900000-0000-7000-8000-000000000000";
    for (const id of [m.id, missing]) {
      expect((await bob.get(`/api/v1/memos/${id}`)).status).toBe(404);
      await rejected(() => bob.patch(`/api/v1/memos/${id}`, { content: "x", version: 1 }), 404, "not_found");
      await rejected(() => bob.delete(`/api/v1/memos/${id}`), 404, "not_found");
      await rejected(() => bob.post(`/api/v1/memos/${id}/restore`), 404, "not_found");
      await rejected(() => bob.delete(`/api/v1/memos/${id}/purge`), 404, "not_found");
    }
    const a = await bob.get(`/api/v1/memos/${m.id}`);
    const b = await bob.get(`/api/v1/memos/${missing}`);
    expect(a.body).toEqual(b.body);
  });

  test("soft delete, read with state, list deleted, restore, purge only soft-deleted", async () => {
    const m = await newMemo(alice, "to delete");
    await rejected(() => alice.delete(`/api/v1/memos/${m.id}/purge`), 409, "not_archived");
    // Restore is for a deleted memo only (docs/spec/contract.md §12).
    const live = await rejected(() => alice.post(`/api/v1/memos/${m.id}/restore`), 409, "state_conflict");
    expect(live.body.detail).toContain("not deleted");
    const d = await alice.delete(`/api/v1/memos/${m.id}`);
    expect(d.status).toBe(204);
    expect(d.text).toBe("");
    const g = await alice.get(`/api/v1/memos/${m.id}`);
    expect(g.status).toBe(200);
    expect(g.body.deleted_at).toBe(clock.now().toISOString());
    expect(g.body.version).toBe(2);
    // A deleted memo cannot be edited until restored.
    await rejected(() => alice.patch(`/api/v1/memos/${m.id}`, { content: "x", version: 2 }), 404, "not_found");
    // Deleting again changes nothing.
    const before = dump(app.db);
    expect((await alice.delete(`/api/v1/memos/${m.id}`)).status).toBe(204);
    expect(dump(app.db)).toEqual(before);
    const active = await alice.get("/api/v1/memos?limit=100");
    expect(active.body.items.map((x: { id: string }) => x.id)).not.toContain(m.id);
    const deleted = await alice.get("/api/v1/memos?deleted=true");
    expect(deleted.body.items.map((x: { id: string }) => x.id)).toContain(m.id);
    const r = await alice.post(`/api/v1/memos/${m.id}/restore`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: m.id, deleted_at: null, version: 3 });
    // Restoring again: it is no longer deleted.
    await rejected(() => alice.post(`/api/v1/memos/${m.id}/restore`), 409, "state_conflict");
    await alice.delete(`/api/v1/memos/${m.id}`);
    const p = await alice.delete(`/api/v1/memos/${m.id}/purge`);
    expect(p.status).toBe(204);
    expect((await alice.get(`/api/v1/memos/${m.id}`)).status).toBe(404);
  });

  test("cursor pages: newest first, no repeat or skip while items are added and removed", async () => {
    const c = await signedInUser(app, alice, "pager");
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push((await newMemo(c, `memo ${i}`)).id);
    const newestFirst = [...ids].reverse();
    const p1 = await c.get("/api/v1/memos?limit=3");
    expect(p1.body.items.map((x: { id: string }) => x.id)).toEqual(newestFirst.slice(0, 3));
    expect(typeof p1.body.next_cursor).toBe("string");
    // During the walk: a new memo (newer, so before the cursor) and a deleted one from page 1.
    await newMemo(c, "late");
    await c.delete(`/api/v1/memos/${newestFirst[0]}`);
    const p2 = await c.get(`/api/v1/memos?limit=3&cursor=${encodeURIComponent(p1.body.next_cursor)}`);
    expect(p2.body.items.map((x: { id: string }) => x.id)).toEqual(newestFirst.slice(3, 6));
    const p3 = await c.get(`/api/v1/memos?limit=3&cursor=${encodeURIComponent(p2.body.next_cursor)}`);
    expect(p3.body.items.map((x: { id: string }) => x.id)).toEqual(newestFirst.slice(6));
    expect(p3.body.next_cursor).toBeNull();
    // Same created_at for several memos: the id breaks the tie and the walk is still complete.
    const t = await signedInUser(app, alice, "ties");
    const tied: string[] = [];
    for (let i = 0; i < 5; i++) tied.push((await t.post("/api/v1/memos", { content: `t${i}` })).body.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const r: { body: { items: { id: string }[]; next_cursor: string | null } } = await t.get(
        `/api/v1/memos?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
      );
      seen.push(...r.body.items.map((x) => x.id));
      cursor = r.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual([...tied].sort().reverse());
  });

  test("limit and cursor validation", async () => {
    for (const q of ["limit=0", "limit=101", "limit=abc", "limit=1.5", "deleted=maybe", "other=1"]) {
      const r = await alice.get(`/api/v1/memos?${q}`);
      expect(r.status).toBe(422);
      expect(r.body.code).toBe("validation_failed");
    }
    expect((await alice.get("/api/v1/memos?limit=1")).body.items).toHaveLength(1);
    expect((await alice.get("/api/v1/memos?limit=100")).status).toBe(200);
    const p = await alice.get("/api/v1/memos?limit=1");
    const cur: string = p.body.next_cursor;
    const tampered = cur.slice(0, -2) + (cur.endsWith("A") ? "BB" : "AA");
    expect((await alice.get(`/api/v1/memos?cursor=${encodeURIComponent(tampered)}`)).body.code).toBe("invalid_cursor");
    expect((await bob.get(`/api/v1/memos?cursor=${encodeURIComponent(cur)}`)).body.code).toBe("invalid_cursor");
    // A cursor of the active walk is not one of the deleted walk, nor of another endpoint.
    expect((await alice.get(`/api/v1/memos?deleted=true&cursor=${encodeURIComponent(cur)}`)).body.code).toBe("invalid_cursor");
    const audit = await alice.get("/api/v1/audit-logs?limit=1");
    expect((await alice.get(`/api/v1/memos?cursor=${encodeURIComponent(audit.body.next_cursor)}`)).body.code).toBe("invalid_cursor");
    expect((await alice.get("/api/v1/memos?cursor=garbage")).body.code).toBe("invalid_cursor");
  });

  test("CSRF is required on writes", async () => {
    const m = await newMemo(alice);
    await rejected(() => alice.patch(`/api/v1/memos/${m.id}`, { content: "x", version: 1 }, { csrf: false }), 403, "csrf_failed");
    await rejected(() => alice.delete(`/api/v1/memos/${m.id}`, { csrf: false }), 403, "csrf_failed");
  });

  test("page queries use the partial indexes without a sort", () => {
    for (const cond of ["deleted_at IS NULL", "deleted_at IS NOT NULL"]) {
      const plan = app.db.sqlite
        .query(
          `EXPLAIN QUERY PLAN SELECT * FROM memos WHERE user_id = ? AND ${cond} AND (created_at < ? OR (created_at = ? AND id < ?)) ORDER BY created_at DESC, id DESC LIMIT 51`,
        )
        .all("u", "a", "a", "b") as { detail: string }[];
      const text = plan.map((p) => p.detail).join(" | ");
      expect(text).toContain(cond.includes("NOT") ? "memos_deleted_idx" : "memos_active_idx");
      expect(text).not.toContain("TEMP B-TREE");
    }
  });

  test("openapi documents every memo operation", async () => {
    const d = await alice.get("/api/openapi.json");
    const paths = d.body.paths;
    expect(Object.keys(paths["/api/v1/memos"])).toEqual(expect.arrayContaining(["get", "post"]));
    expect(Object.keys(paths["/api/v1/memos/{memo_id}"])).toEqual(expect.arrayContaining(["get", "patch", "delete"]));
    expect(paths["/api/v1/memos/{memo_id}/purge"].delete.responses["409"]).toBeDefined();
    expect(paths["/api/v1/memos/{memo_id}"].patch.responses["409"]).toBeDefined();
  });
});
