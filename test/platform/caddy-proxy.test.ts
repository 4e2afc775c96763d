import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import tls from "node:tls";
import { caldavThroughProxy, freePort, headerOf, rawRequest, selfSignedLocalhost, startUpstream, sessionOf, type Answer } from "../helpers/proxy";

// The README's Caddy site, for real: Debian's caddy runs the README's own block (read from
// README.md at run time; only what must differ on a test machine is replaced: the site address
// becomes https://localhost:<free port>, a `tls` line names a self-signed certificate instead of
// Let's Encrypt, the upstream port) in front of the server started with trust-proxy. Sign-in from
// the https page on a port other than 443 (Host and Origin with the port), __Host- cookies, an
// Origin of another port refused, X-Forwarded-For from Caddy (a client's own is replaced), Server-
// Sent Events at once, plain http redirected. Skips without caddy/openssl
// (`apt-get install -y caddy openssl`; .ci/run installs caddy).

const haveCaddy = Bun.which("caddy") !== null;
const haveOpenssl = Bun.which("openssl") !== null;
const skip = !haveCaddy || !haveOpenssl;
if (skip) console.warn("caddy-proxy.test.ts: skipped (needs caddy and openssl: apt-get install -y caddy openssl)");

let dir = "";
let upstream: Awaited<ReturnType<typeof startUpstream>> | null = null;
let caddy: ReturnType<typeof Bun.spawn> | null = null;
let port = 0;
let httpPort = 0;

/** The Caddyfile block of the README's "Behind a reverse proxy" section, with each placeholder replaced exactly once. */
function readmeSite(o: { port: number; upstreamPort: number; certificate: string; key: string }): string {
  const readme = readFileSync(resolve(import.meta.dir, "../../README.md"), "utf8");
  const section = readme.slice(readme.indexOf("## Behind a reverse proxy"));
  const start = section.indexOf("```caddyfile\n") + "```caddyfile\n".length;
  expect(start).toBeGreaterThan("```caddyfile\n".length);
  let block = section.slice(start, section.indexOf("```", start));
  const replace = (from: RegExp, to: string) => {
    expect({ from: from.source, found: (block.match(new RegExp(from.source, "gm")) ?? []).length }).toEqual({ from: from.source, found: 1 });
    block = block.replace(from, to);
  };
  replace(/^nas\.example\.org \{$/m, `https://localhost:${o.port} {\n    tls ${o.certificate} ${o.key}`);
  replace(/reverse_proxy 127\.0\.0\.1:8080$/m, `reverse_proxy 127.0.0.1:${o.upstreamPort}`);
  return block;
}

const request = (method: string, path: string, headers: Record<string, string>, json?: unknown, plain = false): Promise<Answer> =>
  rawRequest(plain ? httpPort : port, plain, method, path, headers, json);

beforeAll(async () => {
  if (skip) return;
  dir = mkdtempSync(join(tmpdir(), "app-caddy-"));
  const cert = selfSignedLocalhost(dir);
  upstream = await startUpstream();
  do port = freePort();
  while (port === 443);
  httpPort = freePort();
  // Global options for the test machine only: no admin endpoint, its own ports and storage.
  const conf = `{
    admin off
    http_port ${httpPort}
    https_port ${port}
    storage file_system ${dir}/storage
    skip_install_trust
}

${readmeSite({ port, upstreamPort: upstream!.port, certificate: cert.certificate, key: cert.key })}`;
  writeFileSync(join(dir, "Caddyfile"), conf);
  caddy = Bun.spawn(["caddy", "run", "--adapter", "caddyfile", "--config", join(dir, "Caddyfile")], {
    env: { ...process.env, HOME: dir, XDG_DATA_HOME: join(dir, "data"), XDG_CONFIG_HOME: join(dir, "config") },
    stdout: "ignore",
    stderr: "pipe",
  });
  for (let i = 0; i < 200; i++) {
    try {
      if ((await request("GET", "/api/v1/health/live", {})).status === 200) return;
    } catch {
      // not listening yet
    }
    await Bun.sleep(25);
  }
  caddy.kill();
  throw new Error(`caddy did not start: ${await new Response(caddy.stderr as ReadableStream).text()}`);
});

afterAll(async () => {
  if (caddy) {
    caddy.kill("SIGTERM");
    await caddy.exited;
  }
  await upstream?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
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

  test("plain http is redirected to https, path and query kept", async () => {
    const r = await request("GET", "/tasks?list=inbox", { host: `localhost:${httpPort}` }, undefined, true);
    expect([301, 308]).toContain(r.status);
    // To the name's https on the standard port, as nginx's `return 301 https://$host$request_uri` does
    // (the README's site is on 443; only this test listens elsewhere).
    expect(headerOf(r, "location")).toBe("https://localhost/tasks?list=inbox");
  });
});
