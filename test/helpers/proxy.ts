// What the reverse-proxy tests (nginx-proxy, caddy-proxy, and the CalDAV clients' tests run against
// APP_EXE behind a proxy) share: raw HTTP/1.1 requests over TLS or plain TCP (exactly the bytes a
// browser would send: Host and Origin as given, no client library adding its own), a free port, a
// self-signed certificate for "localhost", a session's cookies, and the README's nginx and Caddy
// sites themselves, started for real in front of an upstream.
import { expect } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { AppProcess, serverEnv } from "./spawn";
import net from "node:net";
import tls from "node:tls";

export interface Answer {
  status: number;
  headers: string[];
  setCookies: string[];
  body: string;
}

/**
 * One request to 127.0.0.1:`port`: HTTPS (any certificate, SNI "localhost") unless `plain`. The
 * Host header defaults to what a browser on https://localhost (port 443) sends; pass `host` in
 * `headers` to send another. A JSON body is sent when `body` is not a string; a string as is.
 */
export function rawRequest(port: number, plain: boolean, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Answer> {
  return new Promise((done, fail) => {
    const sock = plain ? net.connect({ host: "127.0.0.1", port }) : tls.connect({ host: "127.0.0.1", port, servername: "localhost", rejectUnauthorized: false });
    const chunks: Buffer[] = [];
    sock.on("data", (d: Buffer) => chunks.push(d));
    sock.on("error", fail);
    sock.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const [head, ...rest] = text.split("\r\n\r\n");
      const lines = head!.split("\r\n");
      done({
        status: Number(lines[0]!.split(" ")[1]),
        headers: lines.slice(1),
        setCookies: lines.filter((l) => /^set-cookie:/i.test(l)).map((l) => l.slice(l.indexOf(":") + 1).trim()),
        body: rest.join("\r\n\r\n"),
      });
    });
    sock.on(plain ? "connect" : "secureConnect", () => {
      const text = body === undefined ? "" : typeof body === "string" ? body : JSON.stringify(body);
      const h: Record<string, string> = { host: "localhost", connection: "close", ...headers };
      if (body !== undefined) {
        if (typeof body !== "string") h["content-type"] = "application/json";
        h["content-length"] = String(Buffer.byteLength(text));
      }
      sock.write([`${method} ${path} HTTP/1.1`, ...Object.entries(h).map(([k, v]) => `${k}: ${v}`), "", ""].join("\r\n") + text);
    });
  });
}

/**
 * A request with a body of raw bytes to 127.0.0.1:`port` (HTTPS unless `plain`), written as a client
 * with a large upload does: in pieces, waiting when the socket is full; with Content-Length, or
 * chunked (`chunked`: no length, Transfer-Encoding: chunked). The answer is whatever arrived before
 * the connection ended, also when the server stopped reading and the write failed (a client reads
 * an early answer then); status 0 when nothing arrived, with the error in `body`.
 */
export function uploadRequest(port: number, plain: boolean, method: string, path: string, headers: Record<string, string>, body: Uint8Array, o: { chunked?: boolean } = {}): Promise<Answer> {
  return new Promise((done) => {
    const sock = plain ? net.connect({ host: "127.0.0.1", port }) : tls.connect({ host: "127.0.0.1", port, servername: "localhost", rejectUnauthorized: false });
    const chunks: Buffer[] = [];
    let error = "";
    sock.on("data", (d: Buffer) => chunks.push(d));
    sock.on("error", (e) => (error ||= String(e)));
    sock.on("close", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const [head, ...rest] = text.split("\r\n\r\n");
      const lines = head!.split("\r\n");
      const status = Number(lines[0]!.split(" ")[1]);
      if (!text || !Number.isFinite(status)) return done({ status: 0, headers: [], setCookies: [], body: error || "the connection ended without an answer" });
      done({ status, headers: lines.slice(1), setCookies: [], body: rest.join("\r\n\r\n") });
    });
    sock.on(plain ? "connect" : "secureConnect", async () => {
      const h: Record<string, string> = { host: "localhost", connection: "close", ...headers };
      if (o.chunked) h["transfer-encoding"] = "chunked";
      else h["content-length"] = String(body.byteLength);
      const write = (b: Uint8Array | string) =>
        sock.destroyed || sock.write(b)
          ? Promise.resolve()
          : new Promise<void>((ok) => {
              const go = () => {
                sock.off("drain", go);
                sock.off("close", go);
                ok();
              };
              sock.on("drain", go);
              sock.on("close", go);
            });
      await write([`${method} ${path} HTTP/1.1`, ...Object.entries(h).map(([k, v]) => `${k}: ${v}`), "", ""].join("\r\n"));
      const piece = 64 * 1024;
      for (let at = 0; at < body.byteLength && !sock.destroyed; at += piece) {
        const part = body.subarray(at, at + piece);
        if (o.chunked) await write(`${part.byteLength.toString(16)}\r\n`);
        await write(part);
        if (o.chunked) await write("\r\n");
      }
      if (o.chunked && !sock.destroyed) await write("0\r\n\r\n");
    });
  });
}

/** The value of a response header (first one), or undefined. */
export function headerOf(r: Answer, name: string): string | undefined {
  const line = r.headers.find((h) => h.toLowerCase().startsWith(`${name.toLowerCase()}:`));
  return line?.slice(line.indexOf(":") + 1).trim();
}

/** A free port on 127.0.0.1: bind one, note it, let it go. */
export function freePort(): number {
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const p = probe.port;
  probe.stop(true);
  return p;
}

/** The cookie header and CSRF token a browser would send after this answer. */
export function sessionOf(r: Answer): { cookie: string; csrf: string } {
  const jar = new Map(r.setCookies.map((c) => [c.slice(0, c.indexOf("=")), c.slice(c.indexOf("=") + 1, c.indexOf(";"))]));
  return { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join("; "), csrf: jar.get("__Host-app_csrf") ?? "" };
}

/** A one-day self-signed certificate for CN=localhost in `dir` (cert.pem, key.pem), made by openssl. */
export function selfSignedLocalhost(dir: string): { certificate: string; key: string } {
  const certificate = join(dir, "cert.pem");
  const key = join(dir, "key.pem");
  const openssl = Bun.spawnSync(
    ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost", "-keyout", key, "-out", certificate],
    { stderr: "pipe" },
  );
  if (openssl.exitCode !== 0) throw new Error(`openssl: ${openssl.stderr.toString()}`);
  return { certificate, key };
}

/** Sends one request through the proxy under test (a string body as is, another as JSON). */
export type ProxySend = (method: string, path: string, headers: Record<string, string>, body?: unknown) => Promise<Answer>;

/**
 * HTTP methods through a README proxy (`port`: its TLS port): one the server does not know gets the
 * proxy's own 405 (or its parser's 400 for a lower-case one), never a 502; each method the web app,
 * the API and CalDAV clients use reaches the server and gets its answer.
 */
export async function methodsThroughProxy(port: number): Promise<void> {
  // Bun's server closes the connection unanswered on a method it does not know; behind the proxy
  // that was a 502 Bad Gateway (found by sending BREW through the README's sites).
  for (const method of ["BREW", "FOO", "PRI", "M-SEARCH", "PURGE", "TRACE"]) {
    const r = await rawRequest(port, false, method, "/api/v1/health/ready", {});
    expect({ method, status: r.status }).toEqual({ method, status: 405 });
  }
  // Methods a proxy's own parser may refuse first (nginx: 400 for a lower-case method): a 4xx either way.
  for (const method of ["get", "Put", "CONNECT"]) {
    const r = await rawRequest(port, false, method, "/api/v1/health/ready", {});
    expect({ method, fourXX: r.status >= 400 && r.status < 500 }).toEqual({ method, fourXX: true });
  }
  // The server's own answers for the methods in the list (no credentials: the API's 401, CalDAV's 401; OPTIONS 200).
  for (const [method, path, status] of [
    ["GET", "/api/v1/health/ready", 200],
    ["HEAD", "/api/v1/health/ready", 200],
    ["POST", "/api/v1/tasks", 401],
    ["PUT", "/dav/calendars/owner/x/a.ics", 401],
    ["PATCH", "/api/v1/me", 401],
    ["DELETE", "/api/v1/tasks/x", 401],
    ["OPTIONS", "/dav/", 200],
    ["PROPFIND", "/dav/", 401],
    ["PROPPATCH", "/dav/", 401],
    ["REPORT", "/dav/", 401],
    ["MKCALENDAR", "/dav/calendars/owner/n/", 401],
    ["MKCOL", "/dav/calendars/owner/n/", 401],
    ["MOVE", "/dav/calendars/owner/x/a.ics", 401],
    ["COPY", "/dav/calendars/owner/x/a.ics", 401],
    ["LOCK", "/dav/", 401],
    ["UNLOCK", "/dav/", 401],
  ] as const) {
    const r = await rawRequest(port, false, method, path, {});
    expect({ method, status: r.status }).toEqual({ method, status });
  }
}

/**
 * CalDAV through a reverse proxy, as a phone would first use it: an app password made with a
 * session (`origin`, `host` as the browser sends them), then the well-known redirect, OPTIONS with
 * calendar-access, PROPFIND of the root and the home, and a sync-collection REPORT of a list.
 */
export async function caldavThroughProxy(send: ProxySend, creds: { username: string; password: string }, browser: { host?: string; origin: string }): Promise<void> {
  const hostHeader: Record<string, string> = browser.host ? { host: browser.host } : {};
  const login = await send("POST", "/api/v1/auth/login", { ...hostHeader, origin: browser.origin }, creds);
  expect(login.status).toBe(200);
  const { cookie, csrf } = sessionOf(login);
  const token = await send("POST", "/api/v1/tokens", { ...hostHeader, cookie, "x-csrf-token": csrf, origin: browser.origin }, { name: "phone", scopes: ["caldav"] });
  expect(token.status).toBe(201);
  const basic = `Basic ${Buffer.from(`${creds.username}:${JSON.parse(token.body).secret}`).toString("base64")}`;
  const wk = await send("PROPFIND", "/.well-known/caldav", { ...hostHeader, authorization: basic, depth: "0" });
  expect(wk.status).toBe(301);
  expect(headerOf(wk, "location")).toBe("/dav/");
  const options = await send("OPTIONS", "/dav/", hostHeader);
  expect(headerOf(options, "dav")).toContain("calendar-access");
  const xml = `<d:propfind xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><d:current-user-principal/><c:calendar-home-set/></d:prop></d:propfind>`;
  const dav = { ...hostHeader, authorization: basic, "content-type": "application/xml" };
  const pf = await send("PROPFIND", "/dav/", { ...dav, depth: "0" }, xml);
  expect(pf.status).toBe(207);
  expect(pf.body).toContain(`/dav/calendars/${creds.username}/`);
  const home = await send("PROPFIND", `/dav/calendars/${creds.username}/`, { ...dav, depth: "1" }, xml);
  expect(home.status).toBe(207);
  const coll = /<d:href>(\/dav\/calendars\/[^<]+\/[^<]+\/)<\/d:href>/.exec(home.body)![1]!;
  const sync = await send("REPORT", coll, { ...dav, depth: "1" }, `<d:sync-collection xmlns:d="DAV:"><d:sync-token/><d:sync-level>1</d:sync-level><d:prop><d:getetag/></d:prop></d:sync-collection>`);
  expect(sync.status).toBe(207);
  expect(sync.body).toContain("<d:sync-token>");
}

/**
 * The server behind the proxy: the program under test (APP_EXE, e.g. dist/app, else the sources)
 * as a process with --trust-proxy on a fresh data directory, listening on 127.0.0.1:<port>.
 */
export async function startUpstream(): Promise<{ port: number; dataDir: string; stop: () => Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), "app-upstream-"));
  const server = await AppProcess.start(["serve", "--data-dir", dataDir, "--port", "0", "--trust-proxy", "--log-format", "json"], { env: serverEnv() });
  return {
    port: Number(new URL(server.base).port),
    dataDir,
    stop: async () => {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export const haveNginx = Bun.which("nginx") !== null || Bun.which("/usr/sbin/nginx") !== null;
export const haveCaddy = Bun.which("caddy") !== null;
export const haveOpenssl = Bun.which("openssl") !== null;

/** A reverse proxy running the README's site: its TLS port (never 443), its plain-http port (the redirect), its certificate. */
export interface RunningProxy {
  /** The TLS port clients use (https://localhost:<port>). */
  port: number;
  /** The plain-http port (redirects to https). */
  httpPort: number;
  /** The self-signed certificate (PEM file) clients must trust, and its key. */
  certificate: string;
  key: string;
  stop(): Promise<void>;
}

/** The fenced block of the README's "Behind a reverse proxy" section with this info string (`nginx`, `caddyfile`). */
function readmeBlock(lang: string): string {
  const readme = readFileSync(resolve(import.meta.dir, "../../README.md"), "utf8");
  const section = readme.slice(readme.indexOf("## Behind a reverse proxy"));
  const fence = "```" + lang + "\n";
  expect(section.indexOf(fence)).toBeGreaterThan(0);
  const start = section.indexOf(fence) + fence.length;
  return section.slice(start, section.indexOf("```", start));
}

/** `block` with each pattern replaced, each found exactly once (so a README edit that breaks the substitution fails loudly). */
function substitute(block: string, pairs: [RegExp, string][]): string {
  for (const [from, to] of pairs) {
    const found = block.match(new RegExp(from.source, from.flags.includes("g") ? from.flags : from.flags + "g")) ?? [];
    expect({ from: from.source, found: found.length }).toEqual({ from: from.source, found: 1 });
    block = block.replace(from, to);
  }
  return block;
}

/**
 * The nginx block of the README, with only what must differ on a test machine replaced: the listen
 * addresses (loopback, no IPv6: a container may not have it), the certificate paths, the upstream port.
 */
export function readmeNginxSite(o: { tlsPort: number; httpPort: number; upstreamPort: number; certificate: string; key: string }): string {
  return substitute(readmeBlock("nginx"), [
    [/^(\s*)listen 443 ssl;$/m, `$1listen 127.0.0.1:${o.tlsPort} ssl;`],
    [/^\s*listen \[::\]:443 ssl;\n/m, ""],
    [/^(\s*)listen 80;$/m, `$1listen 127.0.0.1:${o.httpPort};`],
    [/^\s*listen \[::\]:80;\n/m, ""],
    [/^(\s*)ssl_certificate\s+\S+;/m, `$1ssl_certificate ${o.certificate};`],
    [/^(\s*)ssl_certificate_key\s+\S+;/m, `$1ssl_certificate_key ${o.key};`],
    [/proxy_pass http:\/\/127\.0\.0\.1:8080;/, `proxy_pass http://127.0.0.1:${o.upstreamPort};`],
  ]);
}

/**
 * The Caddyfile block of the README, with only what must differ on a test machine replaced: the site
 * address becomes https://localhost:<port>, a `tls` line names a self-signed certificate instead of
 * Let's Encrypt, the upstream port.
 */
export function readmeCaddySite(o: { port: number; upstreamPort: number; certificate: string; key: string }): string {
  return substitute(readmeBlock("caddyfile"), [
    [/^nas\.example\.org \{$/m, `https://localhost:${o.port} {\n    tls ${o.certificate} ${o.key}`],
    [/reverse_proxy 127\.0\.0\.1:8080$/m, `reverse_proxy 127.0.0.1:${o.upstreamPort}`],
  ]);
}

/** Two free ports for a proxy: the TLS one never 443 (a test must show what a browser sends on another port). */
function proxyPorts(): { port: number; httpPort: number } {
  let port: number;
  do port = freePort();
  while (port === 443);
  let httpPort: number;
  do httpPort = freePort();
  while (httpPort === port);
  return { port, httpPort };
}

/** Waits until GET /api/v1/health/live answers 200 through the proxy, or throws with `why()`. */
async function untilLive(port: number, why: () => Promise<string>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    try {
      if ((await rawRequest(port, false, "GET", "/api/v1/health/live", {})).status === 200) return;
    } catch {
      // not listening yet
    }
    await Bun.sleep(25);
  }
  throw new Error(await why());
}

/**
 * Debian's nginx running the README's site (readmeNginxSite) with TLS on a free port, in front of
 * 127.0.0.1:`upstreamPort`; ready once the upstream's health answers through it. Needs nginx and openssl.
 */
export async function startReadmeNginx(upstreamPort: number): Promise<RunningProxy> {
  const dir = mkdtempSync(join(tmpdir(), "app-nginx-"));
  for (const d of ["body", "proxy", "fastcgi", "uwsgi", "scgi"]) mkdirSync(join(dir, d));
  const cert = selfSignedLocalhost(dir);
  const { port, httpPort } = proxyPorts();
  const conf = `
${process.getuid?.() === 0 ? "user root;" : ""}
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
${readmeNginxSite({ tlsPort: port, httpPort, upstreamPort, certificate: cert.certificate, key: cert.key })}
}`;
  writeFileSync(join(dir, "nginx.conf"), conf);
  const nginx = Bun.spawn([Bun.which("nginx") ?? "/usr/sbin/nginx", "-p", dir, "-c", join(dir, "nginx.conf"), "-g", "daemon off;"], { stdout: "ignore", stderr: "pipe" });
  const stop = async () => {
    nginx.kill("SIGQUIT");
    await nginx.exited;
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await untilLive(port, async () => `nginx did not start: ${readFileSync(join(dir, "error.log"), "utf8")}`);
  } catch (e) {
    await stop();
    throw e;
  }
  return { port, httpPort, ...cert, stop };
}

/**
 * Debian's caddy running the README's site (readmeCaddySite) with TLS on a free port, in front of
 * 127.0.0.1:`upstreamPort`; ready once the upstream's health answers through it. Needs caddy and openssl.
 */
export async function startReadmeCaddy(upstreamPort: number): Promise<RunningProxy> {
  const dir = mkdtempSync(join(tmpdir(), "app-caddy-"));
  const cert = selfSignedLocalhost(dir);
  const { port, httpPort } = proxyPorts();
  // Global options for the test machine only: no admin endpoint, its own ports and storage.
  const conf = `{
    admin off
    http_port ${httpPort}
    https_port ${port}
    storage file_system ${dir}/storage
    skip_install_trust
}

${readmeCaddySite({ port, upstreamPort, certificate: cert.certificate, key: cert.key })}`;
  writeFileSync(join(dir, "Caddyfile"), conf);
  const caddy = Bun.spawn(["caddy", "run", "--adapter", "caddyfile", "--config", join(dir, "Caddyfile")], {
    env: { ...process.env, HOME: dir, XDG_DATA_HOME: join(dir, "data"), XDG_CONFIG_HOME: join(dir, "config") },
    stdout: "ignore",
    stderr: "pipe",
  });
  const stop = async () => {
    caddy.kill("SIGTERM");
    await caddy.exited;
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await untilLive(port, async () => {
      caddy.kill();
      return `caddy did not start: ${await new Response(caddy.stderr as ReadableStream).text()}`;
    });
  } catch (e) {
    await stop();
    throw e;
  }
  return { port, httpPort, ...cert, stop };
}
