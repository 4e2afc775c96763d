import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import tls from "node:tls";
import { caldavThroughProxy, methodsThroughProxy, haveNginx, haveOpenssl, rawRequest, startReadmeNginx, startUpstream, sessionOf, uploadRequest, type Answer, type RunningProxy } from "../helpers/proxy";

// The README's nginx site, for real: nginx terminates TLS with the README's own block (read from
// README.md at run time by test/helpers/proxy.ts readmeNginxSite; only what must differ on a test machine is replaced: the listen addresses,
// the certificate paths and the upstream port) in front of the server started with trust-proxy.
// Sign-in works from the https page as a browser on port 443 sends it (Host without a port) and on
// the port nginx really listens on here, which is not 443 (Host and Origin with the port: this is
// what `X-Forwarded-Host $host` broke); the __Host- cookies are set; an Origin of another scheme or
// port is refused; plain http is redirected. Skips without nginx/openssl
// (`apt-get install -y nginx openssl`; .ci/run installs nginx).

const skip = !haveNginx || !haveOpenssl;
if (skip) console.warn("nginx-proxy.test.ts: skipped (needs nginx and openssl: apt-get install -y nginx openssl)");

let upstream: Awaited<ReturnType<typeof startUpstream>> | null = null;
let nginx: RunningProxy | null = null;
/** nginx's TLS port (any free port, never 443) and its plain-http port (the redirect). */
let port = 0;
let httpPort = 0;

/** One request through nginx: HTTPS to its TLS port unless `plain` (test/helpers/proxy.ts). */
const request = (method: string, path: string, headers: Record<string, string>, json?: unknown, plain = false): Promise<Answer> =>
  rawRequest(plain ? httpPort : port, plain, method, path, headers, json);

beforeAll(async () => {
  if (skip) return;
  upstream = await startUpstream();
  nginx = await startReadmeNginx(upstream.port);
  ({ port, httpPort } = nginx);
});

afterAll(async () => {
  await nginx?.stop();
  await upstream?.stop();
});

describe.skipIf(skip)("behind the README's nginx (TLS)", () => {
  const creds = { username: "owner", password: "correct horse battery" };

  test("on port 443 (Host without a port): setup from the https page works, with __Host- cookies; an http Origin is refused; the session works through the proxy", async () => {
    const cross = await request("POST", "/api/v1/setup/initialize", { origin: "http://localhost" }, creds);
    expect(cross.status).toBe(403);
    expect(JSON.parse(cross.body).code).toBe("csrf_failed");
    const r = await request("POST", "/api/v1/setup/initialize", { origin: "https://localhost", "sec-fetch-site": "same-origin" }, creds);
    expect(r.status).toBe(201);
    const names = r.setCookies.map((c) => c.slice(0, c.indexOf("="))).sort();
    expect(names).toEqual(["__Host-app_csrf", "__Host-app_session"]);
    for (const c of r.setCookies) expect(c).toMatch(/;\s*Secure/i);
    const { cookie, csrf } = sessionOf(r);
    expect((await request("GET", "/api/v1/me", { cookie })).status).toBe(200);
    const patched = await request("PATCH", "/api/v1/me", { cookie, "x-csrf-token": csrf }, { display_name: "Through nginx" });
    expect(patched.status).toBe(200);
    expect(JSON.parse(patched.body).display_name).toBe("Through nginx");
    // The client address came from X-Forwarded-For.
    const sessions = await request("GET", "/api/v1/sessions", { cookie });
    expect(JSON.parse(sessions.body).items[0].ip).toBe("127.0.0.1");
    // Logging in again from the https page works too.
    const again = await request("POST", "/api/v1/auth/login", { origin: "https://localhost" }, creds);
    expect(again.status).toBe(200);
  });

  test(`on a port other than 443 (the browser sends Host and Origin with the port): sign-in works; an Origin without the port is refused`, async () => {
    expect(port).not.toBe(443);
    const host = `localhost:${port}`;
    const origin = `https://${host}`;
    // What a browser at https://localhost:<port>/ sends: the port is in Host and in Origin.
    const login = await request("POST", "/api/v1/auth/login", { host, origin, "sec-fetch-site": "same-origin" }, creds);
    expect({ status: login.status, body: login.status === 200 ? "" : login.body }).toEqual({ status: 200, body: "" });
    expect(login.setCookies.map((c) => c.slice(0, c.indexOf("="))).sort()).toEqual(["__Host-app_csrf", "__Host-app_session"]);
    const { cookie, csrf } = sessionOf(login);
    const me = await request("GET", "/api/v1/me", { host, cookie });
    expect(me.status).toBe(200);
    expect(JSON.parse(me.body).username).toBe("owner");
    const patched = await request("PATCH", "/api/v1/me", { host, origin, cookie, "x-csrf-token": csrf }, { display_name: "On another port" });
    expect(patched.status).toBe(200);
    // The port counts: the same host on 443 is another origin.
    const otherPort = await request("POST", "/api/v1/auth/login", { host, origin: "https://localhost" }, creds);
    expect(otherPort.status).toBe(403);
    expect(JSON.parse(otherPort.body).code).toBe("csrf_failed");
  });

  test("Server-Sent Events pass through at once (proxy_buffering off): a change made through nginx arrives on an open stream", async () => {
    const login = await request("POST", "/api/v1/auth/login", { origin: "https://localhost" }, creds);
    const { cookie, csrf } = sessionOf(login);
    let got = "";
    const sock = tls.connect({ host: "127.0.0.1", port, servername: "localhost", rejectUnauthorized: false });
    sock.on("data", (d: Buffer) => (got += d.toString("utf8")));
    await new Promise<void>((ok, fail) => {
      sock.on("error", fail);
      sock.on("secureConnect", () => {
        sock.write(["GET /api/v1/events HTTP/1.1", "host: localhost", `cookie: ${cookie}`, "accept: text/event-stream", "", ""].join("\r\n"));
        ok();
      });
    });
    const until = async (re: RegExp) => {
      for (let i = 0; i < 200 && !re.test(got); i++) await Bun.sleep(25);
      return re.test(got);
    };
    expect(await until(/: connected/)).toBe(true);
    expect(got).toMatch(/^HTTP\/1\.1 200/);
    expect(got.toLowerCase()).toContain("content-type: text/event-stream");
    const created = await request("POST", "/api/v1/tasks", { cookie, "x-csrf-token": csrf, origin: "https://localhost" }, { title: "through nginx" });
    expect(created.status).toBe(201);
    const id = JSON.parse(created.body).id as string;
    // The stream is still open (no response end): the event arrived while it streams.
    expect(await until(new RegExp(`event: task\\.changed\\ndata: \\{[^\\n]*"id":"${id}"`))).toBe(true);
    sock.destroy();
  });

  test("CalDAV through the proxy: the well-known redirect, OPTIONS, PROPFIND and REPORT with an app password", async () => {
    await caldavThroughProxy((m, p, h, b) => rawRequest(port, false, m, p, h, b), creds, { origin: "https://localhost" });
  });

  test("a body the server refuses before reading it all gets the server's answer through nginx (413 over a limit, 401 without credentials), not nginx's 502", async () => {
    // The server stops reading a body it refuses. Over HTTP/1.0 with Connection: close (nginx's default)
    // it then closes with bytes unread, the connection is reset and nginx, still sending, answers 502
    // Bad Gateway; the README's `proxy_http_version 1.1` and empty Connection header keep it open.
    const login = await request("POST", "/api/v1/auth/login", { origin: "https://localhost" }, creds);
    const { cookie, csrf } = sessionOf(login);
    const big = new TextEncoder().encode(JSON.stringify({ title: "x".repeat(20 * 1024 * 1024) }));
    const tooLarge = await uploadRequest(port, false, "POST", "/api/v1/tasks", { cookie, "x-csrf-token": csrf, origin: "https://localhost", "content-type": "application/json" }, big);
    expect({ status: tooLarge.status, code: tooLarge.status === 413 ? JSON.parse(tooLarge.body).code : tooLarge.body.slice(0, 200) }).toEqual({ status: 413, code: "payload_too_large" });
    const chunked = await uploadRequest(port, false, "POST", "/api/v1/tasks", { cookie, "x-csrf-token": csrf, origin: "https://localhost", "content-type": "application/json" }, big, { chunked: true });
    expect(chunked.status).toBe(413);
    const anonymous = await uploadRequest(port, false, "PUT", "/dav/calendars/owner/inbox/x.ics", { "content-type": "text/calendar" }, big);
    expect(anonymous.status).toBe(401);
  });

  test("a calendar feed's URL is the browser's https origin (port included), and the feed answers through nginx", async () => {
    for (const host of ["localhost", `localhost:${port}`]) {
      const login = await request("POST", "/api/v1/auth/login", { host, origin: `https://${host}` }, creds);
      const { cookie, csrf } = sessionOf(login);
      const created = await request("POST", "/api/v1/feeds", { host, cookie, "x-csrf-token": csrf, origin: `https://${host}` }, { scope: "all", include: ["tasks"] });
      expect(created.status).toBe(201);
      const url = JSON.parse(created.body).url as string;
      expect(url).toMatch(new RegExp(`^https://${host}/feeds/[^/]+\\.ics$`));
      const feed = await request("GET", new URL(url).pathname, { host });
      expect(feed.status).toBe(200);
      expect(feed.headers.find((h) => /^content-type:/i.test(h))?.replace(/^content-type:\s*/i, "")).toBe("text/calendar; charset=utf-8");
      expect(feed.body).toContain("BEGIN:VCALENDAR");
    }
  });

  test("a method the server does not know gets nginx's 405, not a 502; every method the app and CalDAV clients use passes", async () => {
    await methodsThroughProxy(port);
  });

  test("plain http is redirected to https, path and query kept", async () => {
    const r = await request("GET", "/tasks?list=inbox", {}, undefined, true);
    expect(r.status).toBe(301);
    expect(r.headers.find((h) => /^location:/i.test(h))?.replace(/^location:\s*/i, "")).toBe("https://localhost/tasks?list=inbox");
  });
});
