import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ADMIN, dump, makeTestApp, setupAdmin, signedInUser, type TestApp, type TestClient } from "../helpers/app";
import { expectProblem } from "../helpers/problem";

// docs/spec/contract.md §2: every POST/PUT/PATCH/DELETE carrying a session cookie needs X-CSRF-Token equal to
// the app_csrf cookie, bound to the session (HMAC); otherwise 403 csrf_failed and nothing is done.
// Checked before validation, so a forged write with an invalid body is 403, not 422.

let app: TestApp;
let admin: TestClient;
let bob: TestClient;

beforeAll(async () => {
  app = makeTestApp();
  admin = await setupAdmin(app);
  bob = await signedInUser(app, admin, "bob");
});
afterAll(() => app.close());

const SESSION_STARTING = new Set(["/api/v1/setup/initialize", "/api/v1/auth/login"]);
/**
 * Writes whose credential is a signed token in the URL, never the session (a notification's
 * done/snooze link): the session is not even read there, so a forged CSRF pair gains nothing
 * (test/reminders/delivery.test.ts: a forged link is 404 with or without a session).
 */
const TOKEN_ROUTES = new Set(["/api/v1/reminder-actions/:token"]);
const SOME_ID = "01900000-0000-7000-8000-000000000000";

/** Every write route the app serves (features other helpers add are covered as they land). */
function writeRoutes(): { method: string; path: string }[] {
  const seen = new Set<string>();
  const out: { method: string; path: string }[] = [];
  for (const r of app.handle.app.routes as { method: string; path: string }[]) {
    if (!["POST", "PUT", "PATCH", "DELETE"].includes(r.method)) continue;
    if (!r.path.startsWith("/api/") || SESSION_STARTING.has(r.path) || TOKEN_ROUTES.has(r.path)) continue;
    const path = r.path.replace(/:[A-Za-z_]+/g, (m) => (m.includes("date") ? "2026-01-01" : SOME_ID));
    const key = `${r.method} ${path}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ method: r.method, path });
  }
  return out;
}

function cookieHeader(c: TestClient, overrides: Record<string, string> = {}): string {
  const jar = new Map(c.jar);
  for (const [k, v] of Object.entries(overrides)) jar.set(k, v);
  return [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
}

type Forgery = { name: string; headers: () => Record<string, string> };

const forgeries: Forgery[] = [
  { name: "no header", headers: () => ({ cookie: cookieHeader(admin) }) },
  { name: "header differs from cookie", headers: () => ({ cookie: cookieHeader(admin), "x-csrf-token": admin.jar.get("app_csrf")!.slice(0, -2) + "AA" }) },
  { name: "empty header", headers: () => ({ cookie: cookieHeader(admin), "x-csrf-token": "" }) },
  { name: "wrong length", headers: () => ({ cookie: cookieHeader(admin), "x-csrf-token": "x" }) },
  { name: "very long", headers: () => ({ cookie: cookieHeader(admin), "x-csrf-token": "x".repeat(5000) }) },
  { name: "non-ASCII", headers: () => ({ cookie: cookieHeader(admin), "x-csrf-token": "é".repeat(43) }) },
  {
    name: "another session's token pair (bob's csrf cookie and header with admin's session)",
    headers: () => ({ cookie: cookieHeader(admin, { app_csrf: bob.jar.get("app_csrf")! }), "x-csrf-token": bob.jar.get("app_csrf")! }),
  },
  {
    name: "planted cookie: attacker-chosen csrf cookie and matching header",
    headers: () => ({ cookie: cookieHeader(admin, { app_csrf: "planted-by-attacker" }), "x-csrf-token": "planted-by-attacker" }),
  },
  {
    name: "header only, no csrf cookie",
    headers: () => ({ cookie: `app_session=${admin.jar.get("app_session")}`, "x-csrf-token": admin.jar.get("app_csrf")! }),
  },
];

describe("CSRF on every cookie-authenticated write", () => {
  test("the app has write routes to check", () => {
    const routes = writeRoutes();
    expect(routes.map((r) => `${r.method} ${r.path}`)).toEqual(
      expect.arrayContaining(["POST /api/v1/auth/logout", "POST /api/v1/auth/change-password", "PATCH /api/v1/me", "POST /api/v1/users", "DELETE /api/v1/sessions/others"]),
    );
  });

  for (const f of forgeries) {
    test(`403 csrf_failed, nothing changed: ${f.name}`, async () => {
      const before = dump(app.db, ["__drizzle_migrations"].concat(["audit_logs"]));
      const sessionsBefore = app.db.sqlite.query("SELECT id, revoked_at FROM sessions ORDER BY id").all();
      for (const { method, path } of writeRoutes()) {
        // An invalid body: the CSRF answer must come before validation.
        const r = await app.client().request(method, path, {
          body: JSON.stringify({ definitely_not_a_field: true }),
          headers: { "content-type": "application/json", ...f.headers() },
        });
        if (r.status !== 403) throw new Error(`${method} ${path} answered ${r.status} ${r.text} for a forged write (${f.name})`);
        expectProblem(r, 403, "csrf_failed");
        expect(r.headers.getSetCookie()).toEqual([]);
      }
      // Sessions untouched (no logout, no revocation), no row anywhere changed.
      expect(app.db.sqlite.query("SELECT id, revoked_at FROM sessions ORDER BY id").all()).toEqual(sessionsBefore);
      const after = dump(app.db, ["__drizzle_migrations", "audit_logs"]);
      // last_seen_at may be touched by a read; compare sessions without it.
      const strip = (d: Record<string, unknown[]>) => ({
        ...d,
        sessions: (d.sessions as string[]).map((s) => {
          const o = JSON.parse(s) as Record<string, unknown>;
          delete o.last_seen_at;
          return o;
        }),
      });
      expect(strip(after)).toEqual(strip(before));
      expect((await admin.get("/api/v1/me")).status).toBe(200);
    });
  }

  test("the right token passes (the checks above are not refusing everything)", async () => {
    const r = await admin.patch("/api/v1/me", { display_name: "Owner" });
    expect(r.status).toBe(200);
    // And with a header but an invalid body, validation answers (CSRF passed).
    expectProblem(await admin.patch("/api/v1/me", { nope: 1 }), 422, "validation_failed");
  });

  test("each session's token is its own: bob's token works for bob only", async () => {
    expect((await bob.patch("/api/v1/me", { display_name: "Bob" })).status).toBe(200);
    const mixed = await app.client().request("PATCH", "/api/v1/me", {
      json: { display_name: "Hacked" },
      headers: { cookie: cookieHeader(admin), "x-csrf-token": bob.jar.get("app_csrf")! },
    });
    expectProblem(mixed, 403, "csrf_failed");
  });

  test("a new session gets a new CSRF token; the old session's token does not work with it", async () => {
    const c = app.client();
    await c.post("/api/v1/auth/login", ADMIN);
    const oldCsrf = c.jar.get("app_csrf")!;
    await c.post("/api/v1/auth/login", ADMIN);
    expect(c.jar.get("app_csrf")).not.toBe(oldCsrf);
    const r = await c.request("PATCH", "/api/v1/me", {
      json: { display_name: "x" },
      headers: { cookie: cookieHeader(c, { app_csrf: oldCsrf }), "x-csrf-token": oldCsrf },
    });
    expectProblem(r, 403, "csrf_failed");
  });

  test("reads need no CSRF token", async () => {
    const r = await app.client().get("/api/v1/me", { headers: { cookie: cookieHeader(admin) } });
    expect(r.status).toBe(200);
  });

  test("writes without any session cookie are 401, not 403 (nothing to forge)", async () => {
    const r = await app.client().patch("/api/v1/me", { display_name: "x" });
    expectProblem(r, 401, "unauthenticated");
  });

  test("a write with an unknown session cookie but a bad token is refused (403 or 401), never done", async () => {
    const r = await app.client().request("PATCH", "/api/v1/me", {
      json: { display_name: "x" },
      headers: { cookie: "app_session=forged; app_csrf=forged", "x-csrf-token": "forged" },
    });
    expect([401, 403]).toContain(r.status);
  });
});
