import { afterEach, describe, expect, test } from "bun:test";
import { ADMIN, makeTestApp, setupAdmin, type TestApp } from "../helpers/app";
import { cookieHeader, rawRequest, serve, setCookies, SocketClient, type RawAnswer, type ServedApp } from "../helpers/server";

// Issue 11 §2 and §6, over a real socket:
// - login and setup compare the Origin's scheme too, not only its host: `https://host` posting to
//   the plain-http server is refused; behind a trusted proxy X-Forwarded-Proto decides.
// - over HTTPS (directly or through a trusted proxy) the session and CSRF cookies are named
//   `__Host-app_session` / `__Host-app_csrf` (Secure, Path=/, no Domain); over plain http the names
//   stay `app_session` / `app_csrf`. A plain cookie is not accepted on an HTTPS request.

let app: TestApp | null = null;
let server: ServedApp | null = null;
afterEach(() => {
  server?.stop();
  app?.close();
  server = null;
  app = null;
});

function start(trustProxy: boolean): { app: TestApp; server: ServedApp } {
  app = makeTestApp({ config: { trustProxy } });
  server = serve(app);
  return { app, server };
}

const post = (path: string, json: unknown, headers: Record<string, string>) => ({ method: "POST", path, json, headers });

function expectCsrfFailed(a: RawAnswer): void {
  expect({ status: a.status, code: a.json?.code }).toEqual({ status: 403, code: "csrf_failed" });
}

interface CookieLine {
  name: string;
  attrs: Map<string, string>;
}

function cookieLines(a: { headers: Headers } | RawAnswer): CookieLine[] {
  const lines = a.headers instanceof Headers ? a.headers.getSetCookie() : (a.headers.get("set-cookie") ?? []);
  return lines.map((line) => {
    const [pair, ...rest] = line.split(";").map((s) => s.trim());
    const attrs = new Map<string, string>();
    for (const x of rest) {
      const i = x.indexOf("=");
      attrs.set((i < 0 ? x : x.slice(0, i)).toLowerCase(), i < 0 ? "" : x.slice(i + 1));
    }
    return { name: pair!.slice(0, pair!.indexOf("=")), attrs };
  });
}

describe("login and setup: the Origin's scheme counts", () => {
  test("plain http server (no proxy): Origin https://<same host> is refused, http://<same host> accepted", async () => {
    const { app, server } = start(false);
    await setupAdmin(app);
    const host = `127.0.0.1:${server.port}`;
    // Before: accepted (only the host was compared).
    const https = await rawRequest(server.port, post("/api/v1/auth/login", ADMIN, { origin: `https://${host}` }));
    expectCsrfFailed(https);
    expect(https.json.detail).toContain("--trust-proxy");
    expect(https.headers.get("set-cookie")).toBeUndefined();
    expect((await rawRequest(server.port, post("/api/v1/auth/login", ADMIN, { origin: `http://${host}` }))).status).toBe(200);
    // Another port is another origin.
    expectCsrfFailed(await rawRequest(server.port, post("/api/v1/auth/login", ADMIN, { origin: `http://127.0.0.1:${server.port + 1}` })));
  });

  test("setup from an https Origin to the plain-http server is refused and creates nothing", async () => {
    const { app, server } = start(false);
    expectCsrfFailed(await rawRequest(server.port, post("/api/v1/setup/initialize", ADMIN, { origin: `https://127.0.0.1:${server.port}` })));
    expect(app.db.sqlite.query("SELECT count(*) AS n FROM users").get()).toEqual({ n: 0 });
    expect((await rawRequest(server.port, post("/api/v1/setup/initialize", ADMIN, { origin: `http://127.0.0.1:${server.port}` }))).status).toBe(201);
  });

  test("behind a trusted proxy, X-Forwarded-Proto and X-Forwarded-Host decide (as the README's nginx sends them)", async () => {
    const { app, server } = start(true);
    await setupAdmin(app);
    const viaProxy = { "x-forwarded-proto": "https", "x-forwarded-host": "tasks.example", "x-forwarded-for": "192.168.1.5" };
    expect((await rawRequest(server.port, post("/api/v1/auth/login", ADMIN, { ...viaProxy, origin: "https://tasks.example" }))).status).toBe(200);
    // The default port, written or not, is the same origin.
    expect((await rawRequest(server.port, post("/api/v1/auth/login", ADMIN, { ...viaProxy, "x-forwarded-host": "tasks.example:443", origin: "https://tasks.example" }))).status).toBe(200);
    expect((await rawRequest(server.port, post("/api/v1/auth/login", ADMIN, { ...viaProxy, origin: "https://TASKS.example" }))).status).toBe(200);
    // Before: accepted (same host, other scheme).
    expectCsrfFailed(await rawRequest(server.port, post("/api/v1/auth/login", ADMIN, { ...viaProxy, origin: "http://tasks.example" })));
    expectCsrfFailed(await rawRequest(server.port, post("/api/v1/auth/login", ADMIN, { ...viaProxy, origin: "https://tasks.example:8443" })));
    expectCsrfFailed(await rawRequest(server.port, post("/api/v1/auth/login", ADMIN, { ...viaProxy, origin: "https://evil.example" })));
    // Proxy saying http (or nothing): the page must be http too.
    const plainProxy = { "x-forwarded-proto": "http", "x-forwarded-host": "nas.lan" };
    expect((await rawRequest(server.port, post("/api/v1/auth/login", ADMIN, { ...plainProxy, origin: "http://nas.lan" }))).status).toBe(200);
    expectCsrfFailed(await rawRequest(server.port, post("/api/v1/auth/login", ADMIN, { ...plainProxy, origin: "https://nas.lan" })));
    expect((await rawRequest(server.port, post("/api/v1/auth/login", ADMIN, { origin: `http://127.0.0.1:${server.port}` }))).status).toBe(200);
  });

  test("an untrusted client's X-Forwarded-Proto does not make an https Origin acceptable", async () => {
    const { app, server } = start(false);
    await setupAdmin(app);
    expectCsrfFailed(
      await rawRequest(server.port, post("/api/v1/auth/login", ADMIN, { "x-forwarded-proto": "https", origin: `https://127.0.0.1:${server.port}` })),
    );
  });
});

describe("cookie names follow the scheme", () => {
  test("over plain http: app_session (HttpOnly) and app_csrf, not Secure", async () => {
    const { app, server } = start(true);
    await setupAdmin(app);
    const r = await rawRequest(server.port, post("/api/v1/auth/login", ADMIN, {}));
    expect(r.status).toBe(200);
    const lines = cookieLines(r);
    expect(lines.map((l) => l.name).sort()).toEqual(["app_csrf", "app_session"]);
    for (const l of lines) expect(l.attrs.has("secure")).toBe(false);
  });

  test("over HTTPS through a trusted proxy: __Host-app_session and __Host-app_csrf, Secure, Path=/, no Domain; they work for reads and writes", async () => {
    const { app, server } = start(true);
    await setupAdmin(app);
    const https = { "x-forwarded-proto": "https", "x-forwarded-host": "tasks.example" };
    const c = new SocketClient(server.base, https);
    const r = await c.post("/api/v1/auth/login", ADMIN);
    expect(r.status).toBe(200);
    const lines = cookieLines(r);
    // Before: app_session and app_csrf.
    expect(lines.map((l) => l.name).sort()).toEqual(["__Host-app_csrf", "__Host-app_session"]);
    for (const l of lines) {
      expect(l.attrs.has("secure")).toBe(true);
      expect(l.attrs.get("path")).toBe("/");
      expect(l.attrs.has("domain")).toBe(false);
      expect(l.attrs.get("samesite")?.toLowerCase()).toBe("lax");
    }
    expect(lines.find((l) => l.name === "__Host-app_session")!.attrs.has("httponly")).toBe(true);
    expect(lines.find((l) => l.name === "__Host-app_csrf")!.attrs.has("httponly")).toBe(false);
    expect((await c.get("/api/v1/me")).status).toBe(200);
    const patched = await c.request("PATCH", "/api/v1/me", { display_name: "Owner over https" });
    expect(patched.status).toBe(200);
    // The CSRF token must match the __Host- cookie; a plain app_csrf cookie beside it is not used.
    const planted = await c.request("PATCH", "/api/v1/me", { display_name: "x" }, {
      cookie: `${cookieHeader(c.jar)}; app_csrf=planted`,
      "x-csrf-token": "planted",
    });
    expect({ status: planted.status, code: planted.json.code }).toEqual({ status: 403, code: "csrf_failed" });
    // Change-password rotates them under the same names; logout clears them.
    const changed = await c.post("/api/v1/auth/change-password", { current_password: ADMIN.password, new_password: "plum orbit canvas 42" });
    expect(changed.status).toBe(204);
    expect(cookieLines(changed).map((l) => l.name).sort()).toEqual(["__Host-app_csrf", "__Host-app_session"]);
    const out = await c.post("/api/v1/auth/logout");
    expect(out.status).toBe(204);
    const cleared = cookieLines(out);
    expect(cleared.map((l) => l.name).sort()).toEqual(["__Host-app_csrf", "__Host-app_session"]);
    for (const l of cleared) {
      expect(l.attrs.get("max-age")).toBe("0");
      expect(l.attrs.has("secure")).toBe(true);
    }
    // The password change ended every other session; the logout ended this one.
    expect(app.db.sqlite.query("SELECT count(*) AS n FROM sessions WHERE revoked_at IS NULL").get()).toEqual({ n: 0 });
  });

  test("a plain app_session cookie is not accepted over HTTPS (no downgrade); signing in there clears the old pair", async () => {
    const { app, server } = start(true);
    await setupAdmin(app);
    // A session made over plain http, e.g. before the server was put behind TLS.
    const plain = await rawRequest(server.port, post("/api/v1/auth/login", ADMIN, {}));
    const jar = setCookies(plain);
    expect([...jar.keys()].sort()).toEqual(["app_csrf", "app_session"]);
    const https = { "x-forwarded-proto": "https", "x-forwarded-host": "tasks.example" };
    // Over http it works...
    expect((await rawRequest(server.port, { method: "GET", path: "/api/v1/me", headers: { cookie: cookieHeader(jar) } })).status).toBe(200);
    // ...over https it is not taken (before: 200).
    const me = await rawRequest(server.port, { method: "GET", path: "/api/v1/me", headers: { ...https, cookie: cookieHeader(jar) } });
    expect({ status: me.status, code: me.json.code }).toEqual({ status: 401, code: "unauthenticated" });
    expect(me.json.detail).toContain("sign in again");
    const write = await rawRequest(server.port, { method: "PATCH", path: "/api/v1/me", json: { display_name: "x" }, headers: { ...https, cookie: cookieHeader(jar), "x-csrf-token": jar.get("app_csrf")! } });
    expect(write.status).toBe(401);
    expect(app.db.sqlite.query("SELECT display_name FROM users").get()).toEqual({ display_name: "owner" });
    // Signing in over https with the old cookies sets the __Host- pair and clears the plain one.
    const again = await rawRequest(server.port, post("/api/v1/auth/login", ADMIN, { ...https, cookie: cookieHeader(jar), origin: "https://tasks.example" }));
    expect(again.status).toBe(200);
    const lines = cookieLines(again);
    expect(lines.map((l) => l.name).sort()).toEqual(["__Host-app_csrf", "__Host-app_session", "app_csrf", "app_session"]);
    for (const l of lines.filter((x) => !x.name.startsWith("__Host-"))) expect(l.attrs.get("max-age")).toBe("0");
    const fresh = setCookies(again);
    expect((await rawRequest(server.port, { method: "GET", path: "/api/v1/me", headers: { ...https, cookie: cookieHeader(fresh) } })).status).toBe(200);
  });

  test("a __Host- session cookie also works on a request the server sees as plain http (a browser only stores one set over https)", async () => {
    const { app, server } = start(true);
    await setupAdmin(app);
    const r = await rawRequest(server.port, post("/api/v1/auth/login", ADMIN, { "x-forwarded-proto": "https" }));
    const jar = setCookies(r);
    expect((await rawRequest(server.port, { method: "GET", path: "/api/v1/me", headers: { cookie: cookieHeader(jar) } })).status).toBe(200);
    const write = await rawRequest(server.port, {
      method: "PATCH",
      path: "/api/v1/me",
      json: { display_name: "Plain" },
      headers: { cookie: cookieHeader(jar), "x-csrf-token": jar.get("__Host-app_csrf")! },
    });
    expect(write.status).toBe(200);
  });
});
