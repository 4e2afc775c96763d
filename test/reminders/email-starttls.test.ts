import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SMTPServer } from "smtp-server";
import { simpleParser, type ParsedMail } from "mailparser";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AppHandle } from "../../src/app";
import { ADMIN, TestClient } from "../helpers/app";
import { AppProcess, serverEnv } from "../helpers/spawn";

/**
 * E-mail over STARTTLS to an SMTP server (smtp-server) whose certificate is signed by a private CA
 * made here with the openssl CLI: the real server (`bun src/main.ts`, or APP_EXE) started with
 * NODE_EXTRA_CA_CERTS=<the CA> delivers a reminder that arrives over TLS (authentication is only
 * offered after STARTTLS) with a text and an HTML part; the same server started without it
 * refuses the certificate, and the delivery's error says the certificate is not trusted and how
 * to trust a private CA. The same variable is how an https webhook with such a certificate is
 * trusted (the same runtime trust store).
 */
const hasOpenssl = Bun.which("openssl") !== null;
if (!hasOpenssl) console.warn("SKIPPED email-starttls.test.ts: the openssl CLI is missing (apt-get install -y openssl)");

const dir = mkdtempSync(join(tmpdir(), "app-starttls-"));
const mails: { parsed: ParsedMail; secure: boolean; user: unknown }[] = [];
let smtp: SMTPServer;
let port = 0;
const servers: AppProcess[] = [];
let https: ReturnType<typeof Bun.serve> | null = null;
const hooks: string[] = [];

function openssl(...args: string[]): void {
  const r = Bun.spawnSync(["openssl", ...args], { cwd: dir, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`openssl ${args[0]}: ${r.stderr.toString()}`);
}

beforeAll(async () => {
  if (!hasOpenssl) return;
  // A private CA, and the SMTP server's certificate (127.0.0.1, localhost) signed by it.
  openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=Test Private CA", "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign");
  openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "smtp.key", "-out", "smtp.csr", "-subj", "/CN=localhost");
  writeFileSync(join(dir, "ext.cnf"), "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n");
  openssl("x509", "-req", "-in", "smtp.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "smtp.pem", "-days", "2", "-extfile", "ext.cnf");
  smtp = new SMTPServer({
    key: readFileSync(join(dir, "smtp.key")),
    cert: readFileSync(join(dir, "smtp.pem")),
    // STARTTLS is offered (secure: false, a certificate); AUTH only once the connection is encrypted.
    allowInsecureAuth: false,
    onAuth(auth, _s, cb) {
      if (auth.username === "mailer" && auth.password === "pw-tls") cb(null, { user: "mailer" });
      else cb(new Error("bad credentials"));
    },
    onData(stream, session, cb) {
      simpleParser(stream).then(
        (parsed) => {
          mails.push({ parsed, secure: session.secure, user: session.user });
          cb();
        },
        (e) => cb(e),
      );
    },
    logger: false,
  });
  await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", () => resolve()));
  port = (smtp.server.address() as AddressInfo).port;
  // An https webhook receiver with the same CA-signed certificate.
  https = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    tls: { key: readFileSync(join(dir, "smtp.key"), "utf8"), cert: readFileSync(join(dir, "smtp.pem"), "utf8") },
    fetch: async (req) => {
      hooks.push(await req.text());
      return new Response("ok");
    },
  });
});
afterAll(async () => {
  for (const s of servers) await s.stop();
  smtp?.close();
  https?.stop(true);
  rmSync(dir, { recursive: true, force: true });
});

function clientOf(base: string): TestClient {
  const handle = { fetch: (req: Request) => fetch(new Request(req.url.replace("http://localhost", base), req)) } as unknown as AppHandle;
  return new TestClient(handle, "127.0.0.1");
}

/** A real server on a fresh data directory, SMTP set to STARTTLS, one e-mail channel; a reminder due in 1.5 s. */
async function serverWithReminder(name: string, env: Record<string, string>) {
  const data = mkdtempSync(join(dir, `${name}-`));
  const s = await AppProcess.start(["--data-dir", data, "--port", "0", "--log-format", "json"], { env: serverEnv(env) });
  servers.push(s);
  const c = clientOf(s.base);
  expect((await c.post("/api/v1/setup/initialize", ADMIN)).status).toBe(201);
  expect((await c.put("/api/v1/admin/smtp", { host: "127.0.0.1", port, security: "starttls", username: "mailer", password: "pw-tls", from: "Tasks <tasks@example.org>" })).status).toBe(200);
  const ch = await c.post("/api/v1/notification-channels", { type: "email", name: "Mail", config: { address: `${name}@example.org` } });
  expect(ch.status).toBe(201);
  const t = await c.post("/api/v1/tasks", { title: `Call the plumber (${name})` });
  expect((await c.post(`/api/v1/tasks/${t.body.id}/reminders`, { kind: "at", at: new Date(Date.now() + 1500).toISOString() })).status).toBe(201);
  const hook = await c.post("/api/v1/notification-channels", { type: "webhook", name: "Hook", enabled: false, config: { url: `https://127.0.0.1:${https!.port}/hook` } });
  expect(hook.status).toBe(201);
  return { c, channelId: ch.body.id as string, hookId: hook.body.id as string };
}

/** The first delivery once an attempt has ended: delivered, or an error recorded. */
async function firstOutcome(c: TestClient) {
  const end = Date.now() + 20_000;
  for (;;) {
    const d = (await c.get("/api/v1/deliveries")).body.items[0] as { status: string; attempts: number; last_error: string | null } | undefined;
    if (d && (d.status === "delivered" || d.last_error !== null)) return d;
    if (Date.now() > end) throw new Error(`no delivery outcome in time: ${JSON.stringify(d)}`);
    await Bun.sleep(100);
  }
}

describe.skipIf(!hasOpenssl)("e-mail over STARTTLS with a private CA", () => {
  test("trusted through NODE_EXTRA_CA_CERTS: the test and the reminder arrive encrypted, authenticated, with text and HTML parts", async () => {
    const { c, channelId, hookId } = await serverWithReminder("trusted", { NODE_EXTRA_CA_CERTS: join(dir, "ca.pem") });
    const d = await firstOutcome(c);
    expect(d).toMatchObject({ status: "delivered", attempts: 1, last_error: null });
    const m = mails.find((x) => x.parsed.subject?.startsWith("Call the plumber (trusted)"));
    expect(m).toBeDefined();
    expect(m!.secure).toBe(true);
    expect(m!.user).toBe("mailer");
    expect(m!.parsed.to && !Array.isArray(m!.parsed.to) ? m!.parsed.to.text : "").toBe("trusted@example.org");
    expect(m!.parsed.text).toContain("Call the plumber (trusted)");
    expect(m!.parsed.html).toContain("<h1 style=\"font-size:1.2em\">Call the plumber (trusted)</h1>");
    expect(m!.parsed.headers.get("x-delivery-id")).toBe((await c.get("/api/v1/deliveries")).body.items[0].id);
    // The channel's test goes the same way.
    const n = mails.length;
    expect((await c.post(`/api/v1/notification-channels/${channelId}/test`)).body).toEqual({ status: "delivered" });
    expect(mails).toHaveLength(n + 1);
    expect(mails[n]!.secure).toBe(true);
    // An https webhook (disabled: tested only by hand) with a certificate of the same CA.
    const h = hooks.length;
    expect((await c.post(`/api/v1/notification-channels/${hookId}/test`)).body).toEqual({ status: "delivered" });
    expect(hooks).toHaveLength(h + 1);
  }, 40_000);

  test("without the CA: refused; the delivery keeps retrying with an error that says the certificate is not trusted", async () => {
    const n = mails.length;
    const h = hooks.length;
    const { c, channelId, hookId } = await serverWithReminder("untrusted", {});
    const d = await firstOutcome(c);
    expect(d.status).toBe("retrying");
    expect(d.last_error).toMatch(/^the SMTP server's TLS certificate is not trusted \(.+\); a certificate from a private CA is trusted by starting the server with NODE_EXTRA_CA_CERTS/);
    const t = await c.post(`/api/v1/notification-channels/${channelId}/test`);
    expect(t.status).toBe(502);
    expect(t.body.code).toBe("delivery_failed");
    expect(JSON.stringify(t.body.errors)).toContain("TLS certificate is not trusted");
    expect(mails).toHaveLength(n);
    const hook = await c.post(`/api/v1/notification-channels/${hookId}/test`);
    expect(hook.status).toBe(502);
    expect(JSON.stringify(hook.body.errors)).toMatch(/certificate/);
    expect(hooks).toHaveLength(h);
  }, 40_000);
});
