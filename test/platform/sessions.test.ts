import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { ADMIN, dump, FixedClock, makeTestApp, setupAdmin, signedInUser, type TestApp, type TestClient } from "../helpers/app";
import { expectProblem } from "../helpers/problem";
import { Config, SESSION_SECONDS_MAX } from "../../src/config";

// docs/spec/contract.md §2: sessions, logout, change-password.

async function withApp(fn: (app: TestApp) => Promise<void>, opts: Parameters<typeof makeTestApp>[0] = {}): Promise<void> {
  const app = makeTestApp(opts);
  try {
    await fn(app);
  } finally {
    app.close();
  }
}

async function login(app: TestApp, creds = ADMIN, ua?: string): Promise<TestClient> {
  const c = app.client();
  const r = await c.post("/api/v1/auth/login", creds, ua ? { headers: { "user-agent": ua } } : {});
  expect(r.status).toBe(200);
  return c;
}

/** A client that presents only the given session token. */
function withToken(app: TestApp, token: string) {
  return app.client().get("/api/v1/me", { headers: { cookie: `app_session=${token}` } });
}

describe("session tokens", () => {
  test("at least 128 bits of randomness, distinct per login, only the SHA-256 stored", () =>
    withApp(async (app) => {
      await setupAdmin(app);
      const tokens: string[] = [];
      for (let i = 0; i < 5; i++) tokens.push((await login(app)).jar.get("app_session")!);
      expect(new Set(tokens).size).toBe(5);
      for (const t of tokens) {
        expect(t).toMatch(/^[A-Za-z0-9_-]+$/);
        expect(Buffer.from(t, "base64url").length).toBeGreaterThanOrEqual(16);
      }
      // No table holds a raw token; the session rows hold its SHA-256.
      const everything = JSON.stringify(dump(app.db, []));
      for (const t of tokens) expect(everything).not.toContain(t);
      const hashes = app.db.sqlite.query<{ token_hash: string }, []>("SELECT token_hash FROM sessions").all().map((r) => r.token_hash);
      for (const t of tokens) expect(hashes).toContain(createHash("sha256").update(t).digest("hex"));
    }));

  test("unknown, tampered, empty and revoked tokens are 401", () =>
    withApp(async (app) => {
      await setupAdmin(app);
      const c = await login(app);
      const token = c.jar.get("app_session")!;
      const flipped = token.slice(0, -1) + (token.endsWith("A") ? "B" : "A");
      expectProblem(await withToken(app, flipped), 401, "unauthenticated");
      expectProblem(await withToken(app, token + "x"), 401, "unauthenticated");
      expectProblem(await withToken(app, ""), 401, "unauthenticated");
      expectProblem(await withToken(app, "%%%;;"), 401, "unauthenticated");
      expect((await withToken(app, token)).status).toBe(200);
      expect((await c.post("/api/v1/auth/logout")).status).toBe(204);
      expectProblem(await withToken(app, token), 401, "unauthenticated");
    }));

  test("idle expiry: a session unused for the idle lifetime ends; use keeps it alive", async () => {
    const clock = new FixedClock(new Date("2026-11-20T10:00:00Z"));
    await withApp(
      async (app) => {
        await setupAdmin(app);
        const c = await login(app);
        clock.advance(3_599_000);
        expect((await c.get("/api/v1/me")).status).toBe(200);
        clock.advance(3_599_000);
        expect((await c.get("/api/v1/me")).status).toBe(200);
        clock.advance(3_600_000);
        expectProblem(await c.get("/api/v1/me"), 401, "unauthenticated");
        // Using an idle-expired session does not touch it (it stays ended).
        const seen = app.db.sqlite.query("SELECT last_seen_at FROM sessions ORDER BY created_at DESC LIMIT 1").get();
        clock.advance(120_000);
        expectProblem(await c.get("/api/v1/me"), 401, "unauthenticated");
        expect(app.db.sqlite.query("SELECT last_seen_at FROM sessions ORDER BY created_at DESC LIMIT 1").get()).toEqual(seen);
      },
      { clock, config: { sessionIdleSeconds: 3600, sessionAbsoluteSeconds: 86_400 } },
    );
  });

  test("absolute expiry: even a session in constant use ends after the absolute lifetime", async () => {
    const clock = new FixedClock(new Date("2026-11-20T10:00:00Z"));
    await withApp(
      async (app) => {
        await setupAdmin(app);
        const c = await login(app);
        for (let t = 0; t < 86_400 - 3000; t += 3000) {
          clock.advance(3000_000);
          const r = await c.get("/api/v1/me");
          if (t + 3000 < 86_400) expect(r.status).toBe(200);
        }
        clock.advance(3000_000);
        expectProblem(await c.get("/api/v1/me"), 401, "unauthenticated");
      },
      { clock, config: { sessionIdleSeconds: 3600, sessionAbsoluteSeconds: 86_400 } },
    );
  });

  test("the session cookie lives as long as the absolute lifetime", () =>
    withApp(
      async (app) => {
        const r = await app.client().post("/api/v1/setup/initialize", ADMIN);
        const line = r.headers.getSetCookie().find((l) => l.startsWith("app_session="))!;
        expect(line).toMatch(/Max-Age=7200(;|$)/);
      },
      { config: { sessionIdleSeconds: 600, sessionAbsoluteSeconds: 7200 } },
    ));
});

describe("GET /sessions, DELETE /sessions/{id}, DELETE /sessions/others", () => {
  test("lists live sessions with the pinned fields and marks the current one", () =>
    withApp(async (app) => {
      await setupAdmin(app);
      const a = await login(app, ADMIN, "Browser A");
      const b = await login(app, ADMIN, "Browser B");
      await (await login(app)).post("/api/v1/auth/logout");
      const r = await a.get("/api/v1/sessions");
      expect(r.status).toBe(200);
      expect(Object.keys(r.body)).toEqual(["items"]);
      // setup's session, A, B (the logged-out one is not live).
      expect(r.body.items).toHaveLength(3);
      for (const s of r.body.items) {
        expect(Object.keys(s).sort()).toEqual(["created_at", "current", "expires_at", "id", "ip", "last_seen_at", "user_agent"]);
        for (const k of ["created_at", "last_seen_at", "expires_at"]) expect(s[k]).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
        expect(s.ip).toBe("127.0.0.1");
      }
      const current = r.body.items.filter((s: { current: boolean }) => s.current);
      expect(current).toHaveLength(1);
      expect(current[0].user_agent).toBe("Browser A");
      const fromB = await b.get("/api/v1/sessions");
      expect(fromB.body.items.find((s: { current: boolean }) => s.current).user_agent).toBe("Browser B");
      // No token or hash is exposed.
      expect(r.text).not.toContain(a.jar.get("app_session")!);
      expect(r.text).not.toMatch(/[0-9a-f]{64}/);
    }));

  test("DELETE /sessions/{id} ends that session (204); again or unknown is 404", () =>
    withApp(async (app) => {
      await setupAdmin(app);
      const a = await login(app, ADMIN, "A");
      const b = await login(app, ADMIN, "B");
      const bId = (await b.get("/api/v1/sessions")).body.items.find((s: { current: boolean }) => s.current).id;
      const r = await a.delete(`/api/v1/sessions/${bId}`);
      expect(r.status).toBe(204);
      expect(r.text).toBe("");
      expectProblem(await b.get("/api/v1/me"), 401, "unauthenticated");
      expectProblem(await a.delete(`/api/v1/sessions/${bId}`), 404, "not_found");
      expectProblem(await a.delete(`/api/v1/sessions/01900000-0000-7000-8000-000000000000`), 404, "not_found");
      expect((await a.get("/api/v1/me")).status).toBe(200);
    }));

  test("another user's session id is 404 exactly like a missing one, and that session lives on", () =>
    withApp(async (app) => {
      const admin = await setupAdmin(app);
      const bob = await signedInUser(app, admin, "bob");
      const bobSession = (await bob.get("/api/v1/sessions")).body.items[0].id;
      const before = app.db.sqlite.query("SELECT * FROM sessions ORDER BY id").all();
      const foreign = await admin.delete(`/api/v1/sessions/${bobSession}`);
      const missing = await admin.delete(`/api/v1/sessions/01900000-0000-7000-8000-000000000000`);
      expectProblem(foreign, 404, "not_found");
      expect(foreign.text).toBe(missing.text);
      expect(app.db.sqlite.query("SELECT * FROM sessions ORDER BY id").all()).toEqual(before);
      expect((await bob.get("/api/v1/me")).status).toBe(200);
      // Bob's list never shows the admin's sessions and vice versa.
      const adminIds = (await admin.get("/api/v1/sessions")).body.items.map((s: { id: string }) => s.id);
      expect(adminIds).not.toContain(bobSession);
    }));

  test("an over-long session id is 422 (or 404), never 500", () =>
    withApp(async (app) => {
      const admin = await setupAdmin(app);
      const r = await admin.delete(`/api/v1/sessions/${"x".repeat(500)}`);
      expect([404, 422]).toContain(r.status);
    }));

  test("DELETE /sessions/others ends every other session of the user only", () =>
    withApp(async (app) => {
      const admin = await setupAdmin(app);
      const bob = await signedInUser(app, admin, "bob");
      const a = await login(app);
      const b = await login(app);
      const r = await a.delete("/api/v1/sessions/others");
      expect(r.status).toBe(204);
      expect(r.text).toBe("");
      expectProblem(await b.get("/api/v1/me"), 401, "unauthenticated");
      expectProblem(await admin.get("/api/v1/me"), 401, "unauthenticated");
      expect((await a.get("/api/v1/me")).status).toBe(200);
      expect((await bob.get("/api/v1/me")).status).toBe(200);
      const list = await a.get("/api/v1/sessions");
      expect(list.body.items).toHaveLength(1);
      expect(list.body.items[0].current).toBe(true);
    }));
});

describe("logout", () => {
  test("204, both cookies cleared, the session revoked", () =>
    withApp(async (app) => {
      await setupAdmin(app);
      const c = await login(app);
      const token = c.jar.get("app_session")!;
      const r = await c.post("/api/v1/auth/logout");
      expect(r.status).toBe(204);
      expect(r.text).toBe("");
      const cleared = r.headers.getSetCookie();
      for (const name of ["app_session", "app_csrf"]) {
        const line = cleared.find((l) => l.startsWith(`${name}=`));
        expect(line).toBeDefined();
        expect(line!).toMatch(new RegExp(`^${name}=;`));
        expect(line!).toMatch(/Max-Age=0/);
        expect(line!).toMatch(/Path=\//);
      }
      expect(c.jar.size).toBe(0);
      expectProblem(await withToken(app, token), 401, "unauthenticated");
      const row = app.db.sqlite
        .query<{ revoked_at: string | null }, [string]>("SELECT revoked_at FROM sessions WHERE token_hash = ?")
        .get(createHash("sha256").update(token).digest("hex"));
      expect(row?.revoked_at).toMatch(/Z$/);
    }));

  test("logout without a session is 401", () =>
    withApp(async (app) => {
      await setupAdmin(app);
      expectProblem(await app.client().post("/api/v1/auth/logout"), 401, "unauthenticated");
    }));
});

describe("change-password", () => {
  test("204, new cookies (rotated token), every other session ends, the new password works", () =>
    withApp(async (app) => {
      await setupAdmin(app);
      const c = await login(app);
      const other = await login(app);
      const oldToken = c.jar.get("app_session")!;
      const oldCsrf = c.jar.get("app_csrf")!;
      const r = await c.post("/api/v1/auth/change-password", { current_password: ADMIN.password, new_password: "a brand new secret" });
      expect(r.status).toBe(204);
      expect(r.text).toBe("");
      expect(c.jar.get("app_session")).not.toBe(oldToken);
      expect(c.jar.get("app_csrf")).not.toBe(oldCsrf);
      expect((await c.get("/api/v1/me")).status).toBe(200);
      expectProblem(await withToken(app, oldToken), 401, "unauthenticated");
      expectProblem(await other.get("/api/v1/me"), 401, "unauthenticated");
      expect((await c.get("/api/v1/sessions")).body.items).toHaveLength(1);
      expectProblem(await app.client({ ip: "10.9.0.1" }).post("/api/v1/auth/login", ADMIN), 401, "invalid_credentials");
      expect((await app.client().post("/api/v1/auth/login", { username: "owner", password: "a brand new secret" })).status).toBe(200);
    }));

  test("a wrong current password is 401 invalid_credentials and changes nothing", () =>
    withApp(async (app) => {
      await setupAdmin(app);
      const c = await login(app);
      const other = await login(app);
      const before = dump(app.db, ["audit_logs", "__drizzle_migrations"]);
      const r = await c.post("/api/v1/auth/change-password", { current_password: "not it at all", new_password: "a brand new secret" });
      expectProblem(r, 401, "invalid_credentials");
      expect(r.headers.getSetCookie()).toEqual([]);
      expect(dump(app.db, ["audit_logs", "__drizzle_migrations"])).toEqual(before);
      expect((await other.get("/api/v1/me")).status).toBe(200);
      expect((await c.get("/api/v1/me")).status).toBe(200);
    }));

  test("new password length 8..1024; missing or unknown fields are 422; nothing changes", () =>
    withApp(async (app) => {
      await setupAdmin(app);
      const c = await login(app);
      const before = dump(app.db);
      for (const body of [
        { current_password: ADMIN.password, new_password: "1234567" },
        { current_password: ADMIN.password, new_password: "x".repeat(1025) },
        { current_password: ADMIN.password },
        { current_password: ADMIN.password, new_password: "long enough", extra: 1 },
        { current_password: ADMIN.password, new_password: 123456789 },
      ]) {
        expectProblem(await c.post("/api/v1/auth/change-password", body), 422, "validation_failed");
      }
      expect(dump(app.db)).toEqual(before);
      // The boundaries, with passwords the strength rule accepts ("x" × 1024 and "12345678" it refuses).
      const longest = "plum orbit canvas 42 ".padEnd(1024, "x");
      expect((await c.post("/api/v1/auth/change-password", { current_password: ADMIN.password, new_password: longest })).status).toBe(204);
      expect((await c.post("/api/v1/auth/change-password", { current_password: longest, new_password: "Vq7#mZ2!" })).status).toBe(204);
    }));
});

describe("session housekeeping", () => {
  test("GET /sessions leaves out idle-expired sessions; sweep deletes only rows that can never be live again", async () => {
    const clock = new FixedClock(new Date("2026-11-20T10:00:00Z"));
    await withApp(
      async (app) => {
        const admin = await setupAdmin(app);
        const stale = await login(app);
        const revoked = await login(app);
        await revoked.post("/api/v1/auth/logout");
        // Keep the admin's session alive; let `stale` go idle.
        for (let i = 0; i < 3; i++) {
          clock.advance(1800_000);
          expect((await admin.get("/api/v1/me")).status).toBe(200);
        }
        const list = await admin.get("/api/v1/sessions");
        expect(list.body.items).toHaveLength(1);
        expect(list.body.items[0].current).toBe(true);
        expectProblem(await stale.get("/api/v1/me"), 401, "unauthenticated");

        // Nothing is old enough to sweep yet (kept a week for the record).
        expect(app.handle.core.sessions.sweep()).toBe(0);
        clock.advance(8 * 24 * 3600_000);
        expect((await admin.post("/api/v1/auth/login", ADMIN)).status).toBe(200);
        const swept = app.handle.core.sessions.sweep();
        expect(swept).toBeGreaterThanOrEqual(2);
        const left = app.db.sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM sessions WHERE revoked_at IS NULL").get();
        expect(left?.n).toBe(1);
        expect((await admin.get("/api/v1/me")).status).toBe(200);
      },
      { clock, config: { sessionIdleSeconds: 3600, sessionAbsoluteSeconds: 30 * 86_400 } },
    );
  });

  test("behind a trusted proxy the session and audit record the forwarded client address", () =>
    withApp(
      async (app) => {
        await setupAdmin(app);
        const c = app.client({ ip: "10.0.0.1" });
        await c.post("/api/v1/auth/login", ADMIN, { headers: { "x-forwarded-for": "198.51.100.23, 203.0.113.5" } });
        const s = (await c.get("/api/v1/sessions")).body.items.find((x: { current: boolean }) => x.current);
        expect(s.ip).toBe("203.0.113.5");
        const entry = (await c.get("/api/v1/audit-logs?limit=1")).body.items[0];
        expect(entry).toMatchObject({ action: "login", ip: "203.0.113.5" });
      },
      { config: { trustProxy: true } },
    ));

  test("without trust in a proxy, X-Forwarded-For is ignored", () =>
    withApp(async (app) => {
      await setupAdmin(app);
      const c = app.client({ ip: "10.0.0.1" });
      await c.post("/api/v1/auth/login", ADMIN, { headers: { "x-forwarded-for": "198.51.100.23" } });
      const s = (await c.get("/api/v1/sessions")).body.items.find((x: { current: boolean }) => x.current);
      expect(s.ip).toBe("10.0.0.1");
    }));
});

describe("session lifetime settings", () => {
  test("the longest allowed lifetimes (100 years) work; longer ones are refused as configuration", async () => {
    expect(Config.safeParse({ sessionIdleSeconds: SESSION_SECONDS_MAX + 1 }).success).toBe(false);
    expect(Config.safeParse({ sessionAbsoluteSeconds: SESSION_SECONDS_MAX + 1 }).success).toBe(false);
    expect(Config.safeParse({ sessionIdleSeconds: String(10 ** 13) }).success).toBe(false);
    await withApp(
      async (app) => {
        await setupAdmin(app);
        const c = await login(app);
        expect((await c.get("/api/v1/me")).status).toBe(200);
      },
      { config: { sessionIdleSeconds: SESSION_SECONDS_MAX, sessionAbsoluteSeconds: SESSION_SECONDS_MAX } },
    );
  });
});
