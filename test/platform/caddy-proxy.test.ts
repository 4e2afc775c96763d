import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import tls from "node:tls";
import { caldavThroughProxy, methodsThroughProxy, haveCaddy, haveOpenssl, headerOf, rawRequest, startReadmeCaddy, startUpstream, sessionOf, type Answer, type RunningProxy } from "../helpers/proxy";

// The README's Caddy site, for real: Debian's caddy runs the README's own block (read from
// README.md at run time by test/helpers/proxy.ts readmeCaddySite; only what must differ on a test machine is replaced: the site address
// becomes https://localhost:<free port>, a `tls` line names a self-signed certificate instead of
// Let's Encrypt, the upstream port) in front of the server started with trust-proxy. Sign-in from
// the https page on a port other than 443 (Host and Origin with the port), __Host- cookies, an
// Origin of another port refused, X-Forwarded-For from Caddy (a client's own is replaced), Server-
// Sent Events at once, plain http redirected. Skips without caddy/openssl
// (`apt-get install -y caddy openssl`; .ci/run installs caddy).

const skip = !haveCaddy || !haveOpenssl;
if (skip) console.warn("caddy-proxy.test.ts: skipped (needs caddy and openssl: apt-get install -y caddy openssl)");

let upstream: Awaited<ReturnType<typeof startUpstream>> | null = null;
let caddy: RunningProxy | null = null;
let port = 0;
let httpPort = 0;

const request = (method: string, path: string, headers: Record<string, string>, json?: unknown, plain = false): Promise<Answer> =>
  rawRequest(plain ? httpPort : port, plain, method, path, headers, json);

beforeAll(async () => {
  if (skip) return;
  upstream = await startUpstream();
  caddy = await startReadmeCaddy(upstream.port);
  ({ port, httpPort } = caddy);
});

afterAll(async () => {
  await caddy?.stop();
  await upstream?.stop();
});

describe.skipIf(skip)("behind the README's Caddy (TLS)", () => {
  const creds = { username: "owner", password: "correct horse battery" };

  test("on a port other than 443: setup and sign-in from the https page work, with __Host- cookies; an Origin of another port is refused; the client's address is Caddy's X-Forwarded-For, not one the client sent", async () => {
    const host = `localhost:${port}`;
    const origin = `https://${host}`;
    const cross = await request("POST", "/api/v1/setup/initialize", { host, origin: "https://localhost" }, creds);
    expect(cross.status).toBe(403);
    expect(JSON.parse(cross.body).code).toBe("csrf_failed");
    const r = await request("POST", "/api/v1/setup/initialize", { host, origin, "sec-fetch-site": "same-origin" }, creds);
    expect({ status: r.status, body: r.status === 201 ? "" : r.body }).toEqual({ status: 201, body: "" });
    expect(r.setCookies.map((c) => c.slice(0, c.indexOf("="))).sort()).toEqual(["__Host-app_csrf", "__Host-app_session"]);
    for (const c of r.setCookies) expect(c).toMatch(/;\s*Secure/i);
    const login = await request("POST", "/api/v1/auth/login", { host, origin, "x-forwarded-for": "203.0.113.9" }, creds);
    expect(login.status).toBe(200);
    const { cookie, csrf } = sessionOf(login);
    const patched = await request("PATCH", "/api/v1/me", { host, origin, cookie, "x-csrf-token": csrf }, { display_name: "Through Caddy" });
    expect(patched.status).toBe(200);
    expect(JSON.parse(patched.body).display_name).toBe("Through Caddy");
    const sessions = JSON.parse((await request("GET", "/api/v1/sessions", { host, cookie })).body) as { items: { ip: string; current: boolean }[] };
    expect(sessions.items.find((s) => s.current)?.ip).toBe("127.0.0.1");
  });

  test("Server-Sent Events pass through at once: a change made through Caddy arrives on an open stream", async () => {
    const host = `localhost:${port}`;
    const login = await request("POST", "/api/v1/auth/login", { host, origin: `https://${host}` }, creds);
    const { cookie, csrf } = sessionOf(login);
    let got = "";
    const sock = tls.connect({ host: "127.0.0.1", port, servername: "localhost", rejectUnauthorized: false });
    sock.on("data", (d: Buffer) => (got += d.toString("utf8")));
    await new Promise<void>((ok, fail) => {
      sock.on("error", fail);
      sock.on("secureConnect", () => {
        sock.write(["GET /api/v1/events HTTP/1.1", `host: ${host}`, `cookie: ${cookie}`, "accept: text/event-stream", "", ""].join("\r\n"));
        ok();
      });
    });
    const until = async (re: RegExp) => {
      for (let i = 0; i < 200 && !re.test(got); i++) await Bun.sleep(25);
      return re.test(got);
    };
    expect(await until(/: connected/)).toBe(true);
    expect(got).toMatch(/^HTTP\/1\.1 200/);
    const created = await request("POST", "/api/v1/tasks", { host, cookie, "x-csrf-token": csrf, origin: `https://${host}` }, { title: "through caddy" });
    expect(created.status).toBe(201);
    const id = JSON.parse(created.body).id as string;
    expect(await until(new RegExp(`event: task\\.changed\\r?\\n(?:[^\\n]*\\r?\\n)*?data: \\{[^\\n]*"id":"${id}"`))).toBe(true);
    sock.destroy();
  });

  test("CalDAV through Caddy: the well-known redirect, OPTIONS, PROPFIND and REPORT with an app password", async () => {
    await caldavThroughProxy((m, p, h, b) => rawRequest(port, false, m, p, h, b), creds, { host: `localhost:${port}`, origin: `https://localhost:${port}` });
  });

  test("a method the server does not know gets Caddy's 405, not a 502; every method the app and CalDAV clients use passes", async () => {
    await methodsThroughProxy(port);
  });

  test("plain http is redirected to https, path and query kept", async () => {
    const r = await request("GET", "/tasks?list=inbox", { host: `localhost:${httpPort}` }, undefined, true);
    expect([301, 308]).toContain(r.status);
    // To the name's https on the standard port, as nginx's `return 301 https://$host$request_uri` does
    // (the README's site is on 443; only this test listens elsewhere).
    expect(headerOf(r, "location")).toBe("https://localhost/tasks?list=inbox");
  });
});
