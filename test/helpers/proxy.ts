// What the reverse-proxy tests (nginx-proxy, caddy-proxy) share: raw HTTP/1.1 requests over TLS or
// plain TCP (exactly the bytes a browser would send: Host and Origin as given, no client library
// adding its own), a free port, a self-signed certificate for "localhost", a session's cookies.
import { expect } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
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
export async function startUpstream(): Promise<{ port: number; stop: () => Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), "app-upstream-"));
  const server = await AppProcess.start(["serve", "--data-dir", dataDir, "--port", "0", "--trust-proxy", "--log-format", "json"], { env: serverEnv() });
  return {
    port: Number(new URL(server.base).port),
    stop: async () => {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
