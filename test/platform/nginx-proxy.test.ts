import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import tls from "node:tls";
import { makeTestApp, type TestApp } from "../helpers/app";
import { serve, type ServedApp } from "../helpers/server";

// The README's nginx set-up, for real: nginx terminates TLS with the README's `location` block
// (copied from README.md at run time, only the upstream port changed) in front of the server
// started with trust-proxy. Sign-in from the https page works and gets the __Host- cookies; the
// same host over plain http as Origin is refused (the scheme counts). Skips without nginx/openssl
// (`apt-get install -y nginx openssl`; .ci/run installs nginx).

const haveNginx = Bun.which("nginx") !== null || Bun.which("/usr/sbin/nginx") !== null;
const haveOpenssl = Bun.which("openssl") !== null;
const skip = !haveNginx || !haveOpenssl;
if (skip) console.warn("nginx-proxy.test.ts: skipped (needs nginx and openssl: apt-get install -y nginx openssl)");

let dir = "";
let app: TestApp;
let upstream: ServedApp;
let nginx: ReturnType<typeof Bun.spawn> | null = null;
let port = 0;

/** The nginx block of the README's "Behind a reverse proxy" section. */
function readmeLocationBlock(upstreamPort: number): string {
  const readme = readFileSync(resolve(import.meta.dir, "../../README.md"), "utf8");
  const section = readme.slice(readme.indexOf("## Behind a reverse proxy"));
  const start = section.indexOf("```nginx\n") + "```nginx\n".length;
  const block = section.slice(start, section.indexOf("```", start));
  expect(block).toContain("proxy_pass http://127.0.0.1:8080;");
  return block.replace("proxy_pass http://127.0.0.1:8080;", `proxy_pass http://127.0.0.1:${upstreamPort};`);
}

interface Answer {
  status: number;
  setCookies: string[];
  body: string;
}

/** One HTTPS request through nginx, with the Host a browser on https://localhost sends. */
function request(method: string, path: string, headers: Record<string, string>, json?: unknown): Promise<Answer> {
  return new Promise((done, fail) => {
    const sock = tls.connect({ host: "127.0.0.1", port, servername: "localhost", rejectUnauthorized: false });
    const chunks: Buffer[] = [];
    sock.on("data", (d: Buffer) => chunks.push(d));
    sock.on("error", fail);
    sock.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const [head, ...rest] = text.split("\r\n\r\n");
      const lines = head!.split("\r\n");
      done({
        status: Number(lines[0]!.split(" ")[1]),
        setCookies: lines.filter((l) => /^set-cookie:/i.test(l)).map((l) => l.slice(l.indexOf(":") + 1).trim()),
        body: rest.join("\r\n\r\n"),
      });
    });
    sock.on("secureConnect", () => {
      const body = json === undefined ? "" : JSON.stringify(json);
      const h: Record<string, string> = { host: "localhost", connection: "close", ...headers };
      if (json !== undefined) Object.assign(h, { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) });
      sock.write([`${method} ${path} HTTP/1.1`, ...Object.entries(h).map(([k, v]) => `${k}: ${v}`), "", ""].join("\r\n") + body);
    });
  });
}

beforeAll(async () => {
  if (skip) return;
  dir = mkdtempSync(join(tmpdir(), "app-nginx-"));
  for (const d of ["body", "proxy", "fastcgi", "uwsgi", "scgi"]) mkdirSync(join(dir, d));
  const openssl = Bun.spawnSync(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost", "-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem")], { stderr: "pipe" });
  if (openssl.exitCode !== 0) throw new Error(`openssl: ${openssl.stderr.toString()}`);
  app = makeTestApp({ config: { trustProxy: true } });
  upstream = serve(app);
  // A free port for nginx: bind one, note it, let it go.
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  port = probe.port;
  probe.stop(true);
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
  server {
    listen 127.0.0.1:${port} ssl;
    server_name localhost;
    ssl_certificate ${dir}/cert.pem;
    ssl_certificate_key ${dir}/key.pem;
${readmeLocationBlock(upstream.port)}
  }
}`;
  writeFileSync(join(dir, "nginx.conf"), conf);
  nginx = Bun.spawn([Bun.which("nginx") ?? "/usr/sbin/nginx", "-p", dir, "-c", join(dir, "nginx.conf"), "-g", "daemon off;"], { stdout: "ignore", stderr: "pipe" });
  for (let i = 0; i < 200; i++) {
    try {
      await request("GET", "/api/v1/health/live", {});
      return;
    } catch {
      await Bun.sleep(25);
    }
  }
  throw new Error(`nginx did not start: ${readFileSync(join(dir, "error.log"), "utf8")}`);
});

afterAll(async () => {
  if (nginx) {
    nginx.kill("SIGQUIT");
    await nginx.exited;
  }
  upstream?.stop();
  app?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(skip)("behind the README's nginx (TLS)", () => {
  test("setup from the https page works, with __Host- cookies; an http Origin is refused; the session works through the proxy", async () => {
    const creds = { username: "owner", password: "correct horse battery" };
    const cross = await request("POST", "/api/v1/setup/initialize", { origin: "http://localhost" }, creds);
    expect(cross.status).toBe(403);
    expect(JSON.parse(cross.body).code).toBe("csrf_failed");
    const r = await request("POST", "/api/v1/setup/initialize", { origin: "https://localhost", "sec-fetch-site": "same-origin" }, creds);
    expect(r.status).toBe(201);
    const names = r.setCookies.map((c) => c.slice(0, c.indexOf("="))).sort();
    expect(names).toEqual(["__Host-app_csrf", "__Host-app_session"]);
    for (const c of r.setCookies) expect(c).toMatch(/;\s*Secure/i);
    const jar = new Map(r.setCookies.map((c) => [c.slice(0, c.indexOf("=")), c.slice(c.indexOf("=") + 1, c.indexOf(";"))]));
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
    expect((await request("GET", "/api/v1/me", { cookie })).status).toBe(200);
    const patched = await request("PATCH", "/api/v1/me", { cookie, "x-csrf-token": jar.get("__Host-app_csrf")! }, { display_name: "Through nginx" });
    expect(patched.status).toBe(200);
    expect(JSON.parse(patched.body).display_name).toBe("Through nginx");
    // The client address came from X-Forwarded-For.
    const sessions = await request("GET", "/api/v1/sessions", { cookie });
    expect(JSON.parse(sessions.body).items[0].ip).toBe("127.0.0.1");
    // Logging in again from the https page works too.
    const again = await request("POST", "/api/v1/auth/login", { origin: "https://localhost" }, creds);
    expect(again.status).toBe(200);
  });
});
