// API tokens and app passwords (issue 16, devices.md "Tokens"): the management endpoints, Bearer on
// the JSON API with its scopes, HTTP Basic on the CalDAV paths, throttling, audit and last use,
// all through the real HTTP stack (core/auth/guard.ts is the one place credentials are resolved).
import { describe, expect, test } from "bun:test";
import { ADMIN, FixedClock, dump, makeTestApp, rejected, setupAdmin, signedInUser, type TestApp, type TestClient, type TestResponse } from "../helpers/app";
import { expectProblem } from "../helpers/problem";
import { ServerSecret } from "../../src/core/secret";
import { tokenSecretHash } from "../../src/core/auth/token-credentials";

const T0 = new Date("2026-11-26T10:00:00Z");

async function withApp(fn: (app: TestApp, clock: FixedClock) => Promise<void>): Promise<void> {
  const clock = new FixedClock(T0);
  const app = makeTestApp({ clock });
  try {
    await fn(app, clock);
  } finally {
    app.close();
  }
}

async function createToken(c: TestClient, body: Record<string, unknown>): Promise<{ id: string; secret: string; body: Record<string, unknown> }> {
  const r = await c.post("/api/v1/tokens", body);
  if (r.status !== 201) throw new Error(`token creation failed: ${r.status} ${r.text}`);
  return { id: r.body.id, secret: r.body.secret, body: r.body };
}

/** A request with only `Authorization: Bearer` (no cookie jar, so no cookie and no CSRF header). */
function bearer(app: TestApp, secret: string, method: string, path: string, json?: unknown, ip = "127.0.0.1"): Promise<TestResponse> {
  return app.client({ ip }).request(method, path, { json, headers: { authorization: `Bearer ${secret}` } });
}

function basicHeader(username: string, secret: string): string {
  return `Basic ${Buffer.from(`${username}:${secret}`, "utf8").toString("base64")}`;
}

function dav(app: TestApp, method: string, path: string, headers: Record<string, string> = {}, ip = "127.0.0.1"): Promise<TestResponse> {
  return app.client({ ip }).request(method, path, { headers });
}

/** The user the request log says a request was made as (the guard's principal), by request id. */
function loggedUser(app: TestApp, r: TestResponse): string | null | undefined {
  const id = r.headers.get("x-request-id");
  for (const line of app.logs) {
    const e = JSON.parse(line) as { request_id?: string; user_id?: string | null };
    if (e.request_id === id) return e.user_id;
  }
  return undefined;
}

function auditActions(app: TestApp): { action: string; user_id: string | null; target_id: string | null; detail: string | null; ip: string | null }[] {
  return app.db.sqlite.query("SELECT action, user_id, target_id, detail, ip FROM audit_logs ORDER BY id").all() as never;
}

describe("managing tokens (session only)", () => {
  test("POST answers 201 with the secret once; GET lists newest first without it; only its keyed hash is stored", () =>
    withApp(async (app, clock) => {
      const c = await setupAdmin(app);
      const created = await c.post("/api/v1/tokens", { name: "  phone  ", scopes: ["caldav", "read"] });
      expect(created.status).toBe(201);
      const a = { id: created.body.id as string, secret: created.body.secret as string, body: created.body as Record<string, unknown> };
      expect(created.headers.get("location")).toBe(`/api/v1/tokens/${a.id}`);
      expect(Object.keys(a.body).sort()).toEqual(["created_at", "expires_at", "id", "last_used_at", "last_used_ip", "name", "scopes", "secret"]);
      expect(a.body).toMatchObject({ name: "phone", scopes: ["caldav", "read"], created_at: T0.toISOString(), expires_at: null, last_used_at: null, last_used_ip: null });
      // app_ + 256 bits in base64url (43 characters): at least 128 bits as pinned.
      expect(a.secret).toMatch(/^app_[A-Za-z0-9_-]{43}$/);
      const one = await c.get(`/api/v1/tokens/${a.id}`);
      expect(one.status).toBe(200);
      const { secret: _shownOnce, ...withoutSecret } = a.body;
      expect(one.body).toEqual(withoutSecret);
      clock.advance(1000);
      const b = await createToken(c, { name: "script", scopes: ["write", "read"], expires_at: "2027-01-01T01:00:00+01:00" });
      expect(b.body.scopes).toEqual(["read", "write"]);
      expect(b.body.expires_at).toBe("2027-01-01T00:00:00.000Z");
      expect(b.secret).not.toBe(a.secret);

      const list = await c.get("/api/v1/tokens");
      expect(list.status).toBe(200);
      expect(list.body.items.map((t: { id: string }) => t.id)).toEqual([b.id, a.id]);
      expect(list.text).not.toContain(a.secret);
      expect(list.text).not.toContain("secret");
      const stored = tokenSecretHash(ServerSecret.loadOrCreate(app.dir), a.secret);
      expect(list.text).not.toContain(stored);
      // Stored: the hash, never the secret.
      const rows = JSON.stringify(dump(app.db));
      expect(rows).not.toContain(a.secret.slice(4));
      expect(rows).toContain(stored);
    }));

  test("validation: 422 validation_failed on the field, nothing stored", () =>
    withApp(async (app) => {
      const c = await setupAdmin(app);
      const cases: [unknown, string][] = [
        [{ scopes: ["read"] }, "name"],
        [{ name: "   ", scopes: ["read"] }, "name"],
        [{ name: "x".repeat(101), scopes: ["read"] }, "name"],
        [{ name: 5, scopes: ["read"] }, "name"],
        [{ name: "a" }, "scopes"],
        [{ name: "a", scopes: [] }, "scopes"],
        [{ name: "a", scopes: "read" }, "scopes"],
        [{ name: "a", scopes: ["admin"] }, "scopes.0"],
        [{ name: "a", scopes: ["read", "read"] }, "scopes"],
        [{ name: "a", scopes: ["read"], expires_at: "tomorrow" }, "expires_at"],
        [{ name: "a", scopes: ["read"], expires_at: "2026-12-01" }, "expires_at"],
        [{ name: "a", scopes: ["read"], expires_at: "2026-11-26T09:59:59Z" }, "expires_at"],
        [{ name: "a", scopes: ["read"], expires_at: T0.toISOString() }, "expires_at"],
        [{ name: "a", scopes: ["read"], secret: "mine" }, ""],
      ];
      for (const [body, path] of cases) {
        const r = await rejected(app, () => c.post("/api/v1/tokens", body), 422, "validation_failed");
        expectProblem(r, 422, "validation_failed");
        if (path) expect(r.body.errors.map((e: { path: string }) => e.path)).toContain(path);
      }
      expect((await c.get("/api/v1/tokens")).body.items).toEqual([]);
    }));

  test("null expires_at means no expiry", () =>
    withApp(async (app) => {
      const c = await setupAdmin(app);
      const t = await createToken(c, { name: "a", scopes: ["read"], expires_at: null });
      expect(t.body.expires_at).toBeNull();
    }));

  test("at most 100 tokens per user: the 101st is 409 state_conflict; revoking one makes room", () =>
    withApp(async (app) => {
      const c = await setupAdmin(app);
      let first = "";
      for (let i = 0; i < 100; i++) {
        const t = await createToken(c, { name: `t${i}`, scopes: ["read"] });
        if (i === 0) first = t.id;
      }
      await rejected(app, () => c.post("/api/v1/tokens", { name: "one more", scopes: ["read"] }), 409, "state_conflict");
      expect((await c.delete(`/api/v1/tokens/${first}`)).status).toBe(204);
      await createToken(c, { name: "one more", scopes: ["read"] });
    }));

  test("DELETE: 204, then gone from the list; another user's token, an unknown id, a revoked one: 404 and nothing changes", () =>
    withApp(async (app) => {
      const admin = await setupAdmin(app);
      const bob = await signedInUser(app, admin, "bob");
      const mine = await createToken(admin, { name: "mine", scopes: ["read"] });
      const bobs = await createToken(bob, { name: "bob's", scopes: ["read"] });

      await rejected(app, () => admin.delete(`/api/v1/tokens/${bobs.id}`), 404, "not_found");
      await rejected(app, () => admin.get(`/api/v1/tokens/${bobs.id}`), 404, "not_found");
      await rejected(app, () => admin.delete("/api/v1/tokens/00000000-0000-0000-0000-000000000000"), 404, "not_found");
      expect((await bearer(app, bobs.secret, "GET", "/api/v1/lists")).status).toBe(200);
      // bob's list shows bob's token only, and the admin's the admin's.
      expect((await bob.get("/api/v1/tokens")).body.items.map((t: { id: string }) => t.id)).toEqual([bobs.id]);
      expect((await admin.get("/api/v1/tokens")).body.items.map((t: { id: string }) => t.id)).toEqual([mine.id]);

      expect((await admin.delete(`/api/v1/tokens/${mine.id}`)).status).toBe(204);
      expect((await admin.get("/api/v1/tokens")).body.items).toEqual([]);
      await rejected(app, () => admin.delete(`/api/v1/tokens/${mine.id}`), 404, "not_found");
      await rejected(app, () => admin.get(`/api/v1/tokens/${mine.id}`), 404, "not_found");
      await rejected(app, () => admin.delete(`/api/v1/tokens/${"x".repeat(65)}`), 422, "validation_failed");
    }));

  test("a revoked token's row is kept 30 days (its uses are audited against its owner), then deleted by the next new token", () =>
    withApp(async (app, clock) => {
      const c = await setupAdmin(app);
      const old = await createToken(c, { name: "old", scopes: ["read"] });
      await c.delete(`/api/v1/tokens/${old.id}`);
      const rows = () => (app.db.sqlite.query("SELECT id FROM api_tokens ORDER BY id").all() as { id: string }[]).map((r) => r.id);
      clock.advance(30 * 24 * 3600_000 - 1000);
      // (The session has been idle too long by now: sign in again.)
      expect((await c.post("/api/v1/auth/login", ADMIN)).status).toBe(200);
      const a = await createToken(c, { name: "a", scopes: ["read"] });
      expect(rows()).toEqual([old.id, a.id]);
      clock.advance(2000);
      const b = await createToken(c, { name: "b", scopes: ["read"] });
      expect(rows()).toEqual([a.id, b.id]);
    }));

  test("a session's token writes still need the CSRF header", () =>
    withApp(async (app) => {
      const c = await setupAdmin(app);
      await rejected(app, () => c.post("/api/v1/tokens", { name: "a", scopes: ["read"] }, { csrf: false }), 403, "csrf_failed");
    }));

  test("without a session: 401", () =>
    withApp(async (app) => {
      await setupAdmin(app);
      expectProblem(await app.client().get("/api/v1/tokens"), 401, "unauthenticated");
    }));

  test("created and revoked tokens are audited with the token's id", () =>
    withApp(async (app) => {
      const c = await setupAdmin(app);
      const t = await createToken(c, { name: "phone", scopes: ["caldav"] });
      await c.delete(`/api/v1/tokens/${t.id}`);
      const rows = auditActions(app).filter((r) => r.action.startsWith("token_"));
      expect(rows.map((r) => [r.action, r.target_id])).toEqual([
        ["token_created", t.id],
        ["token_revoked", t.id],
      ]);
      expect(JSON.parse(rows[0]!.detail!)).toEqual({ name: "phone", scopes: ["caldav"], expires_at: null });
      // The user sees them in their security log.
      const log = await c.get("/api/v1/audit-logs");
      expect(log.body.items.map((e: { action: string }) => e.action)).toContain("token_created");
    }));
});

describe("Authorization: Bearer on the JSON API", () => {
  test("a write token writes without any CSRF header or cookie; a read token reads", () =>
    withApp(async (app) => {
      const c = await setupAdmin(app);
      const w = await createToken(c, { name: "w", scopes: ["write"] });
      const created = await bearer(app, w.secret, "POST", "/api/v1/lists", { name: "From a script" });
      expect(created.status).toBe(201);
      // The README's curl example: a task into the inbox.
      const task = await bearer(app, w.secret, "POST", "/api/v1/tasks", { title: "Renew the passport" });
      expect(task.status).toBe(201);
      const r = await createToken(c, { name: "r", scopes: ["read"] });
      const lists = await bearer(app, r.secret, "GET", "/api/v1/lists");
      expect(lists.status).toBe(200);
      expect(JSON.stringify(lists.body)).toContain("From a script");
      const me = await bearer(app, r.secret, "GET", "/api/v1/me");
      expect(me.status).toBe(200);
      expect(me.body.username).toBe(ADMIN.username);
    }));

  test("scope matrix: read = GET/HEAD only, write = all methods, caldav alone = nothing on the JSON API", () =>
    withApp(async (app) => {
      const c = await setupAdmin(app);
      const list = (await c.post("/api/v1/lists", { name: "L" })).body;
      const allowed: Record<string, Record<string, boolean>> = {
        read: { GET: true, HEAD: true, POST: false, PATCH: false, DELETE: false },
        write: { GET: true, HEAD: true, POST: true, PATCH: true, DELETE: true },
        caldav: { GET: false, HEAD: false, POST: false, PATCH: false, DELETE: false },
        "caldav,read": { GET: true, HEAD: true, POST: false, PATCH: false, DELETE: false },
        "caldav,read,write": { GET: true, HEAD: true, POST: true, PATCH: true, DELETE: true },
      };
      for (const [scopes, methods] of Object.entries(allowed)) {
        const t = await createToken(c, { name: scopes, scopes: scopes.split(",") });
        for (const [method, ok] of Object.entries(methods)) {
          const task = (await c.post("/api/v1/tasks", { title: `t ${scopes} ${method}`, list_id: list.id })).body;
          const run = () =>
            method === "GET" || method === "HEAD"
              ? bearer(app, t.secret, method, `/api/v1/tasks/${task.id}`)
              : method === "POST"
                ? bearer(app, t.secret, "POST", "/api/v1/tasks", { title: "new", list_id: list.id })
                : method === "PATCH"
                  ? bearer(app, t.secret, "PATCH", `/api/v1/tasks/${task.id}`, { title: "renamed", version: task.version })
                  : bearer(app, t.secret, "DELETE", `/api/v1/tasks/${task.id}`);
          if (ok) {
            const r = await run();
            expect({ scopes, method, status: r.status }).toEqual({ scopes, method, status: r.status < 300 ? r.status : -1 });
          } else if (method === "HEAD") {
            const r = await run();
            expect({ scopes, method, status: r.status }).toEqual({ scopes, method, status: 403 });
          } else {
            const r = await rejected(app, run, 403, "forbidden");
            expect(r.body.detail).toContain("scopes");
          }
        }
      }
    }));

  test("a token may not manage tokens, sessions, the account, nor administer: 403 whatever its scopes", () =>
    withApp(async (app) => {
      const c = await setupAdmin(app);
      const t = await createToken(c, { name: "all", scopes: ["read", "write", "caldav"] });
      const other = await createToken(c, { name: "other", scopes: ["read"] });
      const cases: [string, string, unknown?][] = [
        ["GET", "/api/v1/tokens"],
        ["POST", "/api/v1/tokens", { name: "x", scopes: ["write"] }],
        ["DELETE", `/api/v1/tokens/${other.id}`],
        ["GET", "/api/v1/tokens/"],
        ["GET", `/api/v1/tokens/${other.id}`],
        ["GET", "/api/v1/%74okens"],
        ["GET", "/api/v1/sessions"],
        ["DELETE", "/api/v1/sessions/others"],
        ["POST", "/api/v1/auth/logout"],
        ["POST", "/api/v1/auth/change-password", { current_password: ADMIN.password, new_password: "another fine password 9" }],
        ["POST", "/api/v1/auth/login", ADMIN],
        ["POST", "/api/v1/setup/initialize", ADMIN],
        ["PATCH", "/api/v1/me", { display_name: "Changed" }],
        ["GET", "/api/v1/audit-logs"],
        ["GET", "/api/v1/users"],
        ["POST", "/api/v1/users", { username: "eve", password: "eve's good password 1" }],
        ["GET", "/api/v1/admin/smtp"],
        ["GET", "/api/v1/admin/backups"],
        ["PUT", "/api/v1/admin/outbound", { allow_private: true }],
      ];
      for (const [method, path, json] of cases) {
        const r = await rejected(app, () => bearer(app, t.secret, method, path, json), 403, "forbidden");
        expect({ path, detail: r.body.detail }).toEqual({ path, detail: expect.stringContaining("API tokens cannot") });
      }
      // The other token still works: nothing was revoked.
      expect((await bearer(app, other.secret, "GET", "/api/v1/lists")).status).toBe(200);
      // Sharing's exact-name lookup is not administration.
      expect((await bearer(app, t.secret, "GET", "/api/v1/users/lookup?username=owner")).status).toBe(200);
    }));

  test("the OpenAPI document offers bearerToken exactly on the operations the guard lets a token perform", () =>
    withApp(async (app) => {
      const c = await setupAdmin(app);
      const t = await createToken(c, { name: "all", scopes: ["read", "write"] });
      const doc = (await c.get("/api/openapi.json")).body as { paths: Record<string, Record<string, { security: Record<string, unknown>[] }>> };
      let offered = 0;
      let refused = 0;
      for (const [path, ops] of Object.entries(doc.paths)) {
        for (const [method, op] of Object.entries(ops)) {
          if (op.security.length === 0) continue; // public
          const concrete = path.replace(/\{[^}]+\}/g, "00000000-0000-0000-0000-000000000000");
          // The event stream never ends: its status is read and the stream dropped.
          const r =
            path === "/api/v1/events"
              ? await app.handle.fetch(new Request(`http://localhost${path}`, { headers: { authorization: `Bearer ${t.secret}` } })).then(async (res) => {
                  await res.body?.cancel();
                  return { status: res.status, body: null };
                })
              : await bearer(app, t.secret, method.toUpperCase(), concrete, method === "get" ? undefined : {});
          const bearerOffered = op.security.some((s) => "bearerToken" in s);
          const tokenRefused = r.status === 403 && String(r.body?.detail).includes("API tokens cannot");
          expect({ op: `${method} ${path}`, tokenRefused }).toEqual({ op: `${method} ${path}`, tokenRefused: !bearerOffered });
          expect({ op: `${method} ${path}`, serverError: r.status >= 500 }).toEqual({ op: `${method} ${path}`, serverError: false });
          if (bearerOffered) offered++;
          else refused++;
        }
      }
      expect(offered).toBeGreaterThan(100);
      expect(refused).toBeGreaterThan(15);
    }));

  test("a session cookie and a Bearer token together: 400 malformed_request, even when both are valid", () =>
    withApp(async (app) => {
      const c = await setupAdmin(app);
      const t = await createToken(c, { name: "w", scopes: ["read", "write"] });
      const auth = { authorization: `Bearer ${t.secret}` };
      expectProblem(await c.get("/api/v1/lists", { headers: auth }), 400, "malformed_request");
      // A write with the right CSRF header too.
      await rejected(app, () => c.post("/api/v1/lists", { name: "twice" }, { headers: auth }), 400, "malformed_request");
      // A wrong bearer beside a good cookie is refused the same way (not silently ignored).
      expectProblem(await c.get("/api/v1/lists", { headers: { authorization: "Bearer nope" } }), 400, "malformed_request");
    }));

  test("wrong, revoked (effective on the next request), expired: 401 unauthenticated", () =>
    withApp(async (app, clock) => {
      const c = await setupAdmin(app);
      for (const secret of ["app_nope", "", "   ", `${"a".repeat(5000)}`]) {
        expectProblem(await app.client().get("/api/v1/lists", { headers: { authorization: `Bearer ${secret}` } }), 401, "unauthenticated");
      }
      const t = await createToken(c, { name: "r", scopes: ["read"] });
      expect((await bearer(app, t.secret, "GET", "/api/v1/lists")).status).toBe(200);
      expect((await c.delete(`/api/v1/tokens/${t.id}`)).status).toBe(204);
      const revoked = await bearer(app, t.secret, "GET", "/api/v1/lists");
      expectProblem(revoked, 401, "unauthenticated");

      const e = await createToken(c, { name: "e", scopes: ["read"], expires_at: new Date(T0.getTime() + 3600_000).toISOString() });
      clock.advance(3600_000 - 1);
      expect((await bearer(app, e.secret, "GET", "/api/v1/lists")).status).toBe(200);
      clock.advance(1);
      expectProblem(await bearer(app, e.secret, "GET", "/api/v1/lists"), 401, "unauthenticated");
      // Still listed (with its expiry) until revoked.
      expect((await c.get("/api/v1/tokens")).body.items.map((x: { id: string }) => x.id)).toEqual([e.id]);
    }));

  test("revoking a token ends an event stream opened with it", () =>
    withApp(async (app) => {
      const c = await setupAdmin(app);
      const t = await createToken(c, { name: "r", scopes: ["read"] });
      const res = await app.handle.fetch(new Request("http://localhost/api/v1/events", { headers: { authorization: `Bearer ${t.secret}` } }), { requestIP: () => ({ address: "127.0.0.1" }) });
      expect(res.status).toBe(200);
      const reader = res.body!.getReader();
      expect((await c.delete(`/api/v1/tokens/${t.id}`)).status).toBe(204);
      const ended = (async () => {
        for (;;) if ((await reader.read()).done) return "ended";
      })();
      expect(await Promise.race([ended, Bun.sleep(3000).then(() => "still open")])).toBe("ended");
      expectProblem(await bearer(app, t.secret, "GET", "/api/v1/events"), 401, "unauthenticated");
    }));

  test("disabling an account revokes its tokens", () =>
    withApp(async (app) => {
      const admin = await setupAdmin(app);
      const bob = await signedInUser(app, admin, "bob");
      const t = await createToken(bob, { name: "r", scopes: ["read"] });
      expect((await bearer(app, t.secret, "GET", "/api/v1/lists")).status).toBe(200);
      app.handle.account.operatorSetDisabled("bob", true);
      expectProblem(await bearer(app, t.secret, "GET", "/api/v1/lists"), 401, "unauthenticated");
      // Revoked, not suspended: enabling the account again does not bring the token back.
      app.handle.account.operatorSetDisabled("bob", false);
      expectProblem(await bearer(app, t.secret, "GET", "/api/v1/lists"), 401, "unauthenticated");
    }));

  test("a password change revokes no token", () =>
    withApp(async (app) => {
      const c = await setupAdmin(app);
      const t = await createToken(c, { name: "r", scopes: ["read"] });
      const r = await c.post("/api/v1/auth/change-password", { current_password: ADMIN.password, new_password: "a brand new passphrase 7" });
      expect(r.status).toBe(204);
      expect((await bearer(app, t.secret, "GET", "/api/v1/lists")).status).toBe(200);
      expect((await c.get("/api/v1/tokens")).body.items).toHaveLength(1);
    }));

  test("HTTP Basic is not a credential on the JSON API (not even with an app password)", () =>
    withApp(async (app) => {
      const c = await setupAdmin(app);
      const t = await createToken(c, { name: "all", scopes: ["read", "write", "caldav"] });
      for (const secret of [t.secret, ADMIN.password]) {
        const r = await app.client().get("/api/v1/lists", { headers: { authorization: basicHeader(ADMIN.username, secret) } });
        expectProblem(r, 401, "unauthenticated");
        expect(r.body.detail).toContain("Basic is not accepted");
      }
      // With a session cookie a Basic header (a proxy's own auth) is simply not used.
      expect((await c.get("/api/v1/lists", { headers: { authorization: basicHeader("proxy", "pw") } })).status).toBe(200);
    }));

  test("last_used_at and last_used_ip: written on use, at most once a minute", () =>
    withApp(async (app, clock) => {
      const c = await setupAdmin(app);
      const t = await createToken(c, { name: "r", scopes: ["read"] });
      const lastUse = async () => (await c.get("/api/v1/tokens")).body.items[0] as { last_used_at: string | null; last_used_ip: string | null };
      clock.advance(5000);
      await bearer(app, t.secret, "GET", "/api/v1/lists", undefined, "192.0.2.7");
      const at1 = clock.now().toISOString();
      expect(await lastUse()).toMatchObject({ last_used_at: at1, last_used_ip: "192.0.2.7" });
      clock.advance(30_000);
      await bearer(app, t.secret, "GET", "/api/v1/lists", undefined, "192.0.2.8");
      expect(await lastUse()).toMatchObject({ last_used_at: at1, last_used_ip: "192.0.2.7" });
      clock.advance(30_000);
      await bearer(app, t.secret, "GET", "/api/v1/lists", undefined, "192.0.2.9");
      expect(await lastUse()).toMatchObject({ last_used_at: clock.now().toISOString(), last_used_ip: "192.0.2.9" });
      // A refused request (a read token writing) records no use: it leaves the data as it was.
      clock.advance(61_000);
      await rejected(app, () => bearer(app, t.secret, "POST", "/api/v1/lists", { name: "no" }, "192.0.2.10"), 403, "forbidden");
      // Each recorded use is in the owner's audit log too (token_used), at the same once-a-minute pace.
      const used = auditActions(app).filter((r) => r.action === "token_used");
      expect(used.map((r) => [r.target_id, r.ip, JSON.parse(r.detail!)])).toEqual([
        [t.id, "192.0.2.7", { via: "bearer" }],
        [t.id, "192.0.2.9", { via: "bearer" }],
      ]);
    }));

  test("failed uses are audited: to the owner when the token is known, without a user when not", () =>
    withApp(async (app) => {
      const c = await setupAdmin(app);
      const t = await createToken(c, { name: "r", scopes: ["read"] });
      await c.delete(`/api/v1/tokens/${t.id}`);
      await bearer(app, t.secret, "GET", "/api/v1/lists", undefined, "198.51.100.1");
      await bearer(app, "app_unknown", "GET", "/api/v1/lists", undefined, "198.51.100.2");
      const failed = auditActions(app).filter((r) => r.action === "token_failed");
      const me = (await c.get("/api/v1/me")).body.id;
      expect(failed.map((r) => [r.user_id, r.target_id, r.ip])).toEqual([
        [me, t.id, "198.51.100.1"],
        [null, null, "198.51.100.2"],
      ]);
      expect(JSON.parse(failed[0]!.detail!)).toEqual({ via: "bearer", token_id: t.id });
    }));

  test("throttled like a login, per address: a revoked token used again and again (a stale phone) waits, and never holds its owner's sign-in or other tokens", () =>
    withApp(async (app) => {
      const c = await setupAdmin(app);
      const t = await createToken(c, { name: "old phone", scopes: ["read"] });
      await c.delete(`/api/v1/tokens/${t.id}`);
      for (let i = 0; i < 5; i++) expectProblem(await bearer(app, t.secret, "GET", "/api/v1/lists", undefined, "10.9.0.1"), 401, "unauthenticated");
      // The address must now wait, for this token and for any other...
      const held = await bearer(app, t.secret, "GET", "/api/v1/lists", undefined, "10.9.0.1");
      expectProblem(held, 429, "rate_limited");
      expect(Number(held.headers.get("retry-after"))).toBeGreaterThan(0);
      const good = await createToken(c, { name: "good", scopes: ["read"] });
      expectProblem(await bearer(app, good.secret, "GET", "/api/v1/lists", undefined, "10.9.0.1"), 429, "rate_limited");
      // ...but the owner's name is not held: sign-in and the good token from elsewhere work.
      expect((await app.client({ ip: "10.9.1.1" }).post("/api/v1/auth/login", ADMIN)).status).toBe(200);
      expect((await bearer(app, good.secret, "GET", "/api/v1/lists", undefined, "10.9.1.2")).status).toBe(200);
    }));

  test("failed logins for a name do not hold that user's good token (no one can stop a user's apps by failing sign-ins for their name)", () =>
    withApp(async (app) => {
      const c = await setupAdmin(app);
      const t = await createToken(c, { name: "r", scopes: ["read"] });
      for (let i = 0; i < 6; i++) {
        const r = await app.client({ ip: `10.8.0.${i}` }).post("/api/v1/auth/login", { username: ADMIN.username, password: "wrong password" });
        expect([401, 429]).toContain(r.status);
      }
      // The name is held for sign-in (the right password waits)...
      expectProblem(await app.client({ ip: "10.8.2.1" }).post("/api/v1/auth/login", ADMIN), 429, "rate_limited");
      // ...not for the user's token.
      expect((await bearer(app, t.secret, "GET", "/api/v1/lists", undefined, "10.8.1.1")).status).toBe(200);
    }));

  test("a sign-in under a name that is the token throttle's key for an address (it holds a NUL) cannot hold that address's tokens", () =>
    withApp(async (app) => {
      const c = await setupAdmin(app);
      const t = await createToken(c, { name: "r", scopes: ["read"] });
      for (let i = 0; i < 6; i++) {
        const r = await app.client({ ip: `10.7.0.${i}` }).post("/api/v1/auth/login", { username: "\u0000token@10.7.9.9", password: "wrong password" });
        expect([401, 429]).toContain(r.status);
      }
      expect((await bearer(app, t.secret, "GET", "/api/v1/lists", undefined, "10.7.9.9")).status).toBe(200);
    }));

  test("a good token does not clear its owner's failed logins (a syncing phone must not reset a password guesser's count)", () =>
    withApp(async (app) => {
      const c = await setupAdmin(app);
      const t = await createToken(c, { name: "r", scopes: ["read"] });
      for (let i = 0; i < 4; i++) {
        expectProblem(await app.client({ ip: `10.4.0.${i}` }).post("/api/v1/auth/login", { username: ADMIN.username, password: "wrong password" }), 401, "invalid_credentials");
      }
      for (let i = 0; i < 3; i++) expect((await bearer(app, t.secret, "GET", "/api/v1/lists", undefined, "10.4.1.1")).status).toBe(200);
      expectProblem(await app.client({ ip: "10.4.0.9" }).post("/api/v1/auth/login", { username: ADMIN.username, password: "wrong password" }), 401, "invalid_credentials");
      // The fifth failure holds the name: the right password waits too.
      expectProblem(await app.client({ ip: "10.4.2.1" }).post("/api/v1/auth/login", ADMIN), 429, "rate_limited");
    }));

  test("unknown secrets are throttled per address; another address and other users are not held up", () =>
    withApp(async (app, clock) => {
      const c = await setupAdmin(app);
      const t = await createToken(c, { name: "r", scopes: ["read"] });
      for (let i = 0; i < 5; i++) expectProblem(await bearer(app, `app_guess${i}`, "GET", "/api/v1/lists", undefined, "203.0.113.5"), 401, "unauthenticated");
      expectProblem(await bearer(app, "app_guess-more", "GET", "/api/v1/lists", undefined, "203.0.113.5"), 429, "rate_limited");
      // The owner's token from elsewhere, and their sign-in, are unaffected.
      expect((await bearer(app, t.secret, "GET", "/api/v1/lists", undefined, "192.0.2.1")).status).toBe(200);
      expect((await app.client({ ip: "192.0.2.2" }).post("/api/v1/auth/login", ADMIN)).status).toBe(200);
      // The address's own count (the login one) keeps growing: 20 failures hold every request from it.
      for (let i = 0; i < 20; i++) {
        // Past the per-name wait (at most a minute), well within the address's quiet hour.
        clock.advance(61_000);
        expectProblem(await bearer(app, `app_more${i}`, "GET", "/api/v1/lists", undefined, "203.0.113.5"), 401, "unauthenticated");
      }
      expectProblem(await bearer(app, t.secret, "GET", "/api/v1/lists", undefined, "203.0.113.5"), 429, "rate_limited");
    }));

  test("Bearer is only read on /api/v1: elsewhere (the web app) it is not a credential", () =>
    withApp(async (app) => {
      const c = await setupAdmin(app);
      const t = await createToken(c, { name: "r", scopes: ["read"] });
      const r = await bearer(app, t.secret, "GET", "/");
      expect(r.status).toBe(200);
      expect(loggedUser(app, r)).toBeNull();
    }));
});

describe("HTTP Basic with an app password on the CalDAV paths", () => {
  const CHALLENGE = 'Basic realm="app", charset="UTF-8"';

  test("no credentials: 401 with the Basic challenge on /dav/ and /.well-known/caldav, any method but OPTIONS", () =>
    withApp(async (app) => {
      await setupAdmin(app);
      for (const [method, path] of [
        ["PROPFIND", "/dav/"],
        ["GET", "/dav/calendars/owner/x/"],
        ["PUT", "/dav/calendars/owner/x/a.ics"],
        ["PROPFIND", "/.well-known/caldav"],
        ["GET", "/.well-known/caldav"],
        ["REPORT", "/dav"],
      ] as const) {
        const r = await dav(app, method, path);
        expectProblem(r, 401, "unauthenticated");
        expect({ path, challenge: r.headers.get("www-authenticate") }).toEqual({ path, challenge: CHALLENGE });
      }
      // OPTIONS needs no credentials (the CalDAV feature answers it).
      const o = await dav(app, "OPTIONS", "/dav/");
      expect(o.status).not.toBe(401);
      expect(loggedUser(app, o)).toBeNull();
    }));

  test("username + a caldav token of that user: authenticated as the user (case-insensitive username)", () =>
    withApp(async (app) => {
      const c = await setupAdmin(app);
      const t = await createToken(c, { name: "phone", scopes: ["caldav"] });
      const me = (await c.get("/api/v1/me")).body.id;
      for (const username of ["owner", "OWNER"]) {
        const r = await dav(app, "PROPFIND", "/dav/principals/owner/", { authorization: basicHeader(username, t.secret) });
        expect(r.status).not.toBe(401);
        expect(loggedUser(app, r)).toBe(me);
      }
      const w = await dav(app, "PROPFIND", "/.well-known/caldav", { authorization: basicHeader("owner", t.secret) });
      expect(w.status).not.toBe(401);
      expect(loggedUser(app, w)).toBe(me);
      // The use is recorded.
      expect((await c.get("/api/v1/tokens")).body.items[0].last_used_at).not.toBeNull();
    }));

  test("every refusal is the same 401 with the same body: account password, wrong scope, other user's token, unknown user, revoked, expired, garbage", () =>
    withApp(async (app, clock) => {
      const admin = await setupAdmin(app);
      const bob = await signedInUser(app, admin, "bob");
      const noCaldav = await createToken(admin, { name: "api", scopes: ["read", "write"] });
      const bobs = await createToken(bob, { name: "bob phone", scopes: ["caldav"] });
      const revoked = await createToken(admin, { name: "old phone", scopes: ["caldav"] });
      await admin.delete(`/api/v1/tokens/${revoked.id}`);
      const expiring = await createToken(admin, { name: "temp", scopes: ["caldav"], expires_at: new Date(T0.getTime() + 60_000).toISOString() });
      clock.advance(60_000);
      const headers = [
        basicHeader("owner", ADMIN.password),
        basicHeader("owner", noCaldav.secret),
        basicHeader("owner", bobs.secret),
        basicHeader("nobody", bobs.secret),
        basicHeader("owner", revoked.secret),
        basicHeader("owner", expiring.secret),
        basicHeader("owner", "app_random"),
        "Basic !!!notbase64",
        "Basic ",
        basicHeader("", bobs.secret),
        `Bearer ${bobs.secret}`,
        "Digest username=\"owner\"",
      ];
      const bodies = new Set<string>();
      for (const [i, authorization] of headers.entries()) {
        // Past the per-username wait each time (five failures in a row hold the name for a while).
        clock.advance(61_000);
        const r = await dav(app, "PROPFIND", "/dav/", { authorization }, `10.7.${i}.1`);
        expectProblem(r, 401, "unauthenticated");
        expect(r.headers.get("www-authenticate")).toBe(CHALLENGE);
        bodies.add(r.text);
      }
      expect(bodies.size).toBe(1);
      // bob's own name with his token works.
      clock.advance(61_000);
      expect((await dav(app, "PROPFIND", "/dav/", { authorization: basicHeader("bob", bobs.secret) })).status).not.toBe(401);
    }));

  test("a session cookie is not a credential on the DAV paths", () =>
    withApp(async (app) => {
      const c = await setupAdmin(app);
      const r = await c.request("PROPFIND", "/dav/");
      expectProblem(r, 401, "unauthenticated");
      expect(r.headers.get("www-authenticate")).toBe(CHALLENGE);
    }));

  test("failed Basic attempts are audited against the named user and throttled per address, never holding the user's sign-in", () =>
    withApp(async (app) => {
      const c = await setupAdmin(app);
      const t = await createToken(c, { name: "phone", scopes: ["caldav"] });
      // A phone given the account password instead of an app password, retrying.
      for (let i = 0; i < 5; i++) {
        expectProblem(await dav(app, "PROPFIND", "/dav/", { authorization: basicHeader("owner", ADMIN.password) }, "10.6.0.1"), 401, "unauthenticated");
      }
      // Throttled like a sign-in, per address: even the right app password waits there...
      expectProblem(await dav(app, "PROPFIND", "/dav/", { authorization: basicHeader("owner", t.secret) }, "10.6.0.1"), 429, "rate_limited");
      // ...while the owner's sign-in and the app password from elsewhere are not held.
      expect((await app.client({ ip: "10.6.1.2" }).post("/api/v1/auth/login", ADMIN)).status).toBe(200);
      expect((await dav(app, "PROPFIND", "/dav/", { authorization: basicHeader("owner", t.secret) }, "10.6.1.1")).status).not.toBe(429);
      const me = (await c.get("/api/v1/me")).body.id;
      const failed = auditActions(app).filter((r) => r.action === "token_failed");
      expect(failed).toHaveLength(5);
      expect(failed.every((r) => r.user_id === me)).toBe(true);
      expect(JSON.parse(failed[0]!.detail!)).toEqual({ via: "basic", username: "owner" });
      // Asking without credentials first (as every client does) is not a failure.
      expect(auditActions(app).filter((r) => r.action === "token_failed")).toHaveLength(5);
    }));

  test("requests without credentials are not counted (clients ask first, then answer the challenge)", () =>
    withApp(async (app) => {
      const c = await setupAdmin(app);
      const t = await createToken(c, { name: "phone", scopes: ["caldav"] });
      for (let i = 0; i < 30; i++) expectProblem(await dav(app, "PROPFIND", "/dav/", {}, "10.5.0.1"), 401, "unauthenticated");
      expect((await dav(app, "PROPFIND", "/dav/", { authorization: basicHeader("owner", t.secret) }, "10.5.0.1")).status).not.toBe(401);
      expect(auditActions(app).filter((r) => r.action === "token_failed")).toHaveLength(0);
    }));
});
