import { describe, expect, test } from "bun:test";
import { ADMIN, makeTestApp, setupAdmin, signedInUser, type TestApp, type TestClient } from "../helpers/app";
import { expectProblem } from "../helpers/problem";

// docs/spec/contract.md §2: GET /audit-logs, a cursor page (newest first) of the user's own entries.

async function withApp(fn: (app: TestApp) => Promise<void>): Promise<void> {
  const app = makeTestApp();
  try {
    await fn(app);
  } finally {
    app.close();
  }
}

interface Entry {
  id: string;
  at: string;
  action: string;
  ip: string | null;
  user_agent: string | null;
  target_type: string | null;
  target_id: string | null;
  detail: Record<string, unknown> | null;
}

async function allEntries(c: TestClient, limit = 100): Promise<Entry[]> {
  const out: Entry[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 1000; i++) {
    const r: { status: number; body: { items: Entry[]; next_cursor: string | null } } = await c.get(
      `/api/v1/audit-logs?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
    );
    expect(r.status).toBe(200);
    out.push(...r.body.items);
    cursor = r.body.next_cursor;
    if (!cursor) break;
  }
  return out;
}

describe("audit log entries", () => {
  test("setup, login, login failure, logout, password change, session revocation, user creation are recorded", () =>
    withApp(async (app) => {
      const admin = await setupAdmin(app);
      const ua = { headers: { "user-agent": "AuditTest/1.0" } };
      await app.client({ ip: "10.0.0.7" }).post("/api/v1/auth/login", { username: "owner", password: "wrong password" }, ua);
      const second = app.client({ ip: "10.0.0.8" });
      await second.post("/api/v1/auth/login", ADMIN, ua);
      const third = app.client();
      await third.post("/api/v1/auth/login", ADMIN);
      const thirdId = (await third.get("/api/v1/sessions")).body.items.find((s: { current: boolean }) => s.current).id;
      expect((await admin.delete(`/api/v1/sessions/${thirdId}`)).status).toBe(204);
      expect((await second.post("/api/v1/auth/logout")).status).toBe(204);
      await signedInUser(app, admin, "bob");
      expect((await admin.delete("/api/v1/sessions/others")).status).toBe(204);
      expect((await admin.post("/api/v1/auth/change-password", { current_password: ADMIN.password, new_password: "another secret" })).status).toBe(204);

      const entries = await allEntries(admin);
      const actions = entries.map((e) => e.action);
      expect(actions).toEqual([
        "password_changed",
        "sessions_revoked",
        "user_created",
        "logout",
        "session_revoked",
        "login",
        "login",
        "login_failed",
        "setup",
      ]);
      for (const e of entries) {
        expect(Object.keys(e).sort()).toEqual(["action", "at", "detail", "id", "ip", "target_id", "target_type", "user_agent"]);
        expect(e.at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      }
      const failed = entries.find((e) => e.action === "login_failed")!;
      expect(failed.ip).toBe("10.0.0.7");
      expect(failed.user_agent).toBe("AuditTest/1.0");
      const revoked = entries.find((e) => e.action === "session_revoked")!;
      expect(revoked).toMatchObject({ target_type: "session", target_id: thirdId });
      const created = entries.find((e) => e.action === "user_created")!;
      expect(created.target_type).toBe("user");
      expect(created.detail).toEqual({ username: "bob" });
      const logout = entries.find((e) => e.action === "logout")!;
      expect(logout.ip).toBe("10.0.0.8");
      // No secret ever lands in the log.
      const text = JSON.stringify(entries);
      expect(text).not.toContain("wrong password");
      expect(text).not.toContain(ADMIN.password);
      expect(text).not.toContain("another secret");
    }));

  test("a failed login for an unknown username lands in nobody's log", () =>
    withApp(async (app) => {
      const admin = await setupAdmin(app);
      await app.client().post("/api/v1/auth/login", { username: "ghost", password: "whatever-1" });
      const entries = await allEntries(admin);
      expect(entries.map((e) => e.action)).toEqual(["setup"]);
    }));

  test("users see only their own entries", () =>
    withApp(async (app) => {
      const admin = await setupAdmin(app);
      const bob = await signedInUser(app, admin, "bob");
      const bobEntries = await allEntries(bob);
      expect(bobEntries.map((e) => e.action)).toEqual(["login"]);
      const adminIds = new Set((await allEntries(admin)).map((e) => e.id));
      expect(adminIds.has(bobEntries[0]!.id)).toBe(false);
    }));
});

describe("audit log pagination", () => {
  test("newest first; pages neither repeat nor skip, also when entries are added during the walk", () =>
    withApp(async (app) => {
      const admin = await setupAdmin(app);
      for (let i = 0; i < 12; i++) await app.client({ ip: `10.5.0.${i}` }).post("/api/v1/auth/login", ADMIN);
      const full = await allEntries(admin);
      expect(full).toHaveLength(13);
      const ids = full.map((e) => e.id);
      expect([...ids].sort().reverse()).toEqual(ids);
      const ats = full.map((e) => e.at);
      expect([...ats].sort().reverse()).toEqual(ats);

      // Walk in pages of 5 and add entries between pages.
      const seen: string[] = [];
      let r = await admin.get("/api/v1/audit-logs?limit=5");
      expect(r.body.items).toHaveLength(5);
      seen.push(...r.body.items.map((e: Entry) => e.id));
      await app.client({ ip: "10.6.0.1" }).post("/api/v1/auth/login", ADMIN);
      while (r.body.next_cursor) {
        r = await admin.get(`/api/v1/audit-logs?limit=5&cursor=${encodeURIComponent(r.body.next_cursor)}`);
        expect(r.status).toBe(200);
        seen.push(...r.body.items.map((e: Entry) => e.id));
      }
      expect(seen).toEqual(ids);
      expect(r.body.next_cursor).toBeNull();
    }));

  test("default limit is 50; a page exactly as long as what is left has next_cursor null", () =>
    withApp(async (app) => {
      const admin = await setupAdmin(app);
      for (let i = 0; i < 54; i++) await app.client().post("/api/v1/auth/login", ADMIN);
      const r = await admin.get("/api/v1/audit-logs");
      expect(r.body.items).toHaveLength(50);
      expect(r.body.next_cursor).toBeString();
      const rest = await admin.get(`/api/v1/audit-logs?cursor=${encodeURIComponent(r.body.next_cursor)}`);
      expect(rest.body.items).toHaveLength(5);
      expect(rest.body.next_cursor).toBeNull();
      const exact = await admin.get("/api/v1/audit-logs?limit=55");
      expect(exact.body.items).toHaveLength(55);
      expect(exact.body.next_cursor).toBeNull();
    }));

  test("limit 0, 101, -1, 1.5, abc and empty are 422 validation_failed; 1 and 100 are fine", () =>
    withApp(async (app) => {
      const admin = await setupAdmin(app);
      for (const l of ["0", "101", "-1", "1.5", "abc", "", "1e2x", "1e1", "0x10", "%2B5", "%207", "5%20", "Infinity", "NaN", "99999999999"]) {
        const r = await admin.get(`/api/v1/audit-logs?limit=${l}`);
        expectProblem(r, 422, "validation_failed");
        expect(r.body.errors.map((e: { path: string }) => e.path)).toContain("limit");
      }
      expect((await admin.get("/api/v1/audit-logs?limit=1")).status).toBe(200);
      expect((await admin.get("/api/v1/audit-logs?limit=100")).status).toBe(200);
      expect((await admin.get("/api/v1/audit-logs?limit=07")).status).toBe(200);
      expectProblem(await admin.get("/api/v1/audit-logs?limit=10&sort=asc"), 422, "validation_failed");
    }));

  test("tampered, foreign-user, other-endpoint and garbage cursors are 422 invalid_cursor", () =>
    withApp(async (app) => {
      const admin = await setupAdmin(app);
      for (let i = 0; i < 3; i++) await app.client({ ip: `10.9.0.${i}` }).post("/api/v1/auth/login", ADMIN);
      const page = (await admin.get("/api/v1/audit-logs?limit=1")).body;
      const cursor: string = page.next_cursor;
      expect(cursor).toBeString();
      const [body, sig] = cursor.split(".") as [string, string];
      const decoded = JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as unknown[];

      const reencoded = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
      const bob = await signedInUser(app, admin, "bob");
      for (let i = 0; i < 2; i++) await app.client({ ip: `10.9.1.${i}` }).post("/api/v1/auth/login", { username: "bob", password: "bob-password" });
      const bobCursor: string = (await bob.get("/api/v1/audit-logs?limit=1")).body.next_cursor;

      const bad = [
        cursor.slice(0, -1) + (cursor.endsWith("A") ? "B" : "A"), // signature byte changed
        `${reencoded([decoded[0], decoded[1], ["ffffffff-ffff-7fff-bfff-ffffffffffff"]])}.${sig}`, // key changed, old signature
        `${reencoded(["tasks", decoded[1], decoded[2]])}.${sig}`, // other endpoint
        bobCursor, // issued to another user
        "garbage",
        ".",
        "x".repeat(3000),
        `${body}.`,
      ];
      for (const c of bad) {
        const r = await admin.get(`/api/v1/audit-logs?cursor=${encodeURIComponent(c)}`);
        expect([422]).toContain(r.status);
        expect(["invalid_cursor", "validation_failed"]).toContain(r.body.code);
        if (c !== "x".repeat(3000)) expectProblem(r, 422, "invalid_cursor");
      }
      // The admin's own cursor still works, and bob's works for bob.
      expect((await admin.get(`/api/v1/audit-logs?cursor=${encodeURIComponent(cursor)}`)).status).toBe(200);
      expect((await bob.get(`/api/v1/audit-logs?cursor=${encodeURIComponent(bobCursor)}`)).status).toBe(200);
    }));
});
