import nodemailer from "nodemailer";
import type { ReminderMessage } from "./channels.types";

/** The administrator's SMTP settings (PUT /admin/smtp); the password is write-only. */
export interface SmtpSettings {
  host: string;
  port: number;
  security: "tls" | "starttls" | "none";
  username: string | null;
  password: string | null;
  from: string;
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

/** One message per reminder: a plain-text and an HTML part, the subject starting with the title. */
export function mailOf(m: ReminderMessage): { subject: string; text: string; html: string } {
  const title = m.event === "test" ? "Test notification" : m.target.title;
  const subject = m.event === "test" ? "Test notification: your e-mail channel works" : m.event === "alert" ? `${title} (server alert)` : `${title} (reminder${m.late ? ", late" : ""})`;
  const when = m.target.due_at ? `Due: ${m.target.due_at}` : m.event === "alert" ? `At: ${m.fire_at}` : `Reminder time: ${m.fire_at}`;
  const list = m.target.list ? `List: ${m.target.list.name}` : null;
  const lines = [title, "", when, ...(list ? [list] : []), ...(m.late ? ["", "This reminder is late: the server could not send it on time."] : [])];
  const actionsText = m.actions ? ["", `Mark done: ${m.actions.done}`, `Snooze 10 minutes: ${m.actions.snooze}`, "(Each link works once, for 24 hours; it needs a POST, which the buttons of the HTML part send.)"] : [];
  const text = [...lines, ...actionsText].join("\n");
  const buttons = m.actions
    ? `<form method="post" action="${escapeHtml(m.actions.done)}" style="display:inline"><button type="submit">Done</button></form> <form method="post" action="${escapeHtml(m.actions.snooze)}" style="display:inline"><button type="submit">Snooze 10 min</button></form>`
    : "";
  const html = `<!doctype html><html><body><h1 style="font-size:1.2em">${escapeHtml(title)}</h1><p>${escapeHtml(when)}${list ? `<br>${escapeHtml(list)}` : ""}</p>${m.late ? "<p><em>This reminder is late: the server could not send it on time.</em></p>" : ""}${buttons}</body></html>`;
  return { subject, text, html };
}

/** Sends through the administrator's SMTP server (implicit TLS, STARTTLS required, or plain), with short timeouts. */
export async function sendMail(s: SmtpSettings, to: string, m: ReminderMessage): Promise<void> {
  const transport = nodemailer.createTransport({
    host: s.host,
    port: s.port,
    secure: s.security === "tls",
    requireTLS: s.security === "starttls",
    ignoreTLS: s.security === "none",
    auth: s.username ? { user: s.username, pass: s.password ?? "" } : undefined,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 20_000,
  });
  try {
    const { subject, text, html } = mailOf(m);
    await transport.sendMail({ from: s.from, to, subject, text, html, headers: { "X-Delivery-Id": m.id } });
  } catch (e) {
    throw clearerTlsError(e);
  } finally {
    transport.close();
  }
}

/** OpenSSL's verdicts on a certificate it does not trust (nodemailer keeps them as `originalCode`). */
const UNTRUSTED = new Set([
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "CERT_UNTRUSTED",
  "CERT_SIGNATURE_FAILURE",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "ERR_TLS_CERT_ALTNAME_INVALID",
]);

/**
 * An untrusted SMTP certificate says so, and how an administrator trusts a private CA: the
 * delivery's `last_error` (and a test's 502) otherwise reads "unable to verify the first certificate".
 */
function clearerTlsError(e: unknown): unknown {
  const code = (e as { originalCode?: unknown; code?: unknown } | null)?.originalCode ?? (e as { code?: unknown } | null)?.code;
  if (typeof code !== "string" || !UNTRUSTED.has(code)) return e;
  return new Error(`the SMTP server's TLS certificate is not trusted (${(e as Error).message}); a certificate from a private CA is trusted by starting the server with NODE_EXTRA_CA_CERTS=<the CA's PEM file>`);
}
