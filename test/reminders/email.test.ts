import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SMTPServer } from "smtp-server";
import { simpleParser, type ParsedMail } from "mailparser";
import type { AddressInfo } from "node:net";
import { FixedClock, makeTestApp, rejected, setupAdmin, type TestClient } from "../helpers/app";
import { mkTask } from "../helpers/tasks";

/**
 * E-mail through a real local SMTP server (smtp-server): the message has a plain-text and an HTML
 * part and a subject starting with the title; authentication is used; `starttls` refuses a server
 * that does not offer STARTTLS (no silent downgrade to plain text), and TLS certificates are
 * verified (a self-signed one is refused).
 */
const clock = new FixedClock(new Date("2026-11-25T10:00:00.000Z"));
const app = makeTestApp({ clock });
app.handle.channels.publicUrl = "http://localhost";
const mails: { from: string; to: string[]; parsed: ParsedMail; user: string | undefined; secure: boolean }[] = [];

function smtp(opts: Partial<ConstructorParameters<typeof SMTPServer>[0]>): Promise<{ server: SMTPServer; port: number }> {
  const server = new SMTPServer({
    authOptional: true,
    onAuth(auth, _s, cb) {
      if (auth.username === "mailer" && auth.password === "pw-123") cb(null, { user: "mailer" });
      else cb(new Error("bad credentials"));
    },
    onData(stream, session, cb) {
      simpleParser(stream).then(
        (parsed) => {
          mails.push({ from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "", to: session.envelope.rcptTo.map((r) => r.address), parsed, user: session.user as string | undefined, secure: session.secure });
          cb();
        },
        (e) => cb(e),
      );
    },
    logger: false,
    ...opts,
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({ server, port: (server.server.address() as AddressInfo).port })));
}

let alice: TestClient;
let plain: { server: SMTPServer; port: number };
let starttls: { server: SMTPServer; port: number };

beforeAll(async () => {
  alice = await setupAdmin(app);
  // Plain (authentication allowed without TLS for the test relay) and a STARTTLS one with its built-in self-signed certificate.
  plain = await smtp({ disabledCommands: ["STARTTLS"], allowInsecureAuth: true });
  starttls = await smtp({ allowInsecureAuth: false });
});
afterAll(() => {
  plain.server.close();
  starttls.server.close();
  app.close();
});

describe("e-mail channel", () => {
  test("admin SMTP settings: password write-only; a reminder arrives as text + HTML with the title first in the subject", async () => {
    const put = await alice.put("/api/v1/admin/smtp", { host: "127.0.0.1", port: plain.port, security: "none", username: "mailer", password: "pw-123", from: "Tasks <tasks@example.org>" });
    expect(put.status).toBe(200);
    expect(put.body).toEqual({ host: "127.0.0.1", port: plain.port, security: "none", username: "mailer", password_set: true, from: "Tasks <tasks@example.org>" });
    expect((await alice.get("/api/v1/admin/smtp")).text).not.toContain("pw-123");
    const ch = await alice.post("/api/v1/notification-channels", { type: "email", name: "Mail", config: { address: "alice@example.org" } });
    expect(ch.status).toBe(201);
    const test1 = await alice.post(`/api/v1/notification-channels/${ch.body.id}/test`);
    expect(test1.status).toBe(200);
    expect(mails).toHaveLength(1);
    expect(mails[0]!.user).toBe("mailer");

    const t = await mkTask(alice, { title: "Renew passport <urgent>", due_at: "2026-11-25T11:00:00Z" });
    await alice.post(`/api/v1/tasks/${t.id}/reminders`, { kind: "before_due", minutes_before: 15 });
    clock.set("2026-11-25T10:45:00.000Z");
    await app.handle.scheduler.runDue();
    expect(mails).toHaveLength(2);
    const m = mails[1]!;
    expect(m.to).toEqual(["alice@example.org"]);
    expect(m.from).toBe("tasks@example.org");
    expect(m.parsed.subject).toStartWith("Renew passport <urgent>");
    expect(m.parsed.text).toContain("Renew passport <urgent>");
    expect(m.parsed.text).toContain("Due: 2026-11-25T11:00:00.000Z");
    expect(m.parsed.text).toMatch(/Mark done: http:\/\/localhost\/api\/v1\/reminder-actions\/\S+/);
    expect(m.parsed.html).toContain("Renew passport &#60;urgent&#62;");
    expect(m.parsed.html).not.toContain("<urgent>");
    expect(m.parsed.html).toContain('<form method="post" action="http://localhost/api/v1/reminder-actions/');
    expect(m.parsed.headers.get("x-delivery-id")).toBe((await alice.get("/api/v1/deliveries")).body.items[0].id);
    // A wrong password fails with the SMTP error, as a 502.
    await alice.put("/api/v1/admin/smtp", { host: "127.0.0.1", port: plain.port, security: "none", username: "mailer", password: "wrong", from: "tasks@example.org" });
    const bad = await alice.post(`/api/v1/notification-channels/${ch.body.id}/test`);
    expect(bad.status).toBe(502);
    expect(bad.body.code).toBe("delivery_failed");
  });

  test("starttls is required when asked for (no downgrade); a self-signed certificate is refused", async () => {
    const ch = (await alice.get("/api/v1/notification-channels")).body.items.find((c: { type: string }) => c.type === "email");
    await alice.put("/api/v1/admin/smtp", { host: "127.0.0.1", port: plain.port, security: "starttls", username: "mailer", password: "pw-123", from: "tasks@example.org" });
    const n = mails.length;
    const noTls = await alice.post(`/api/v1/notification-channels/${ch.id}/test`);
    expect(noTls.status).toBe(502);
    await alice.put("/api/v1/admin/smtp", { host: "127.0.0.1", port: starttls.port, security: "starttls", username: "mailer", password: "pw-123", from: "tasks@example.org" });
    const selfSigned = await alice.post(`/api/v1/notification-channels/${ch.id}/test`);
    expect(selfSigned.status).toBe(502);
    expect(JSON.stringify(selfSigned.body.errors)).toMatch(/certificate/i);
    expect(mails).toHaveLength(n);
  });

  test("bad SMTP settings are 422 and change nothing", async () => {
    await rejected(app, () => alice.put("/api/v1/admin/smtp", { host: "x", port: 0, security: "starttls", from: "a@b.c" }), 422, "validation_failed");
    await rejected(app, () => alice.put("/api/v1/admin/smtp", { host: "x", port: 25, security: "ssl", from: "a@b.c" }), 422, "validation_failed");
  });
});
