import { createHmac } from "node:crypto";
import { lazy } from "../../core/lazy";
import type { ReminderMessage } from "./channels.types";
import { outboundPost, type OutboundRule } from "./outbound";
import type { SmtpSettings } from "./channels.email";
import type { ChannelRow } from "./channels.repo";

export type { ReminderMessage };

// Loaded on a channel's first use: a server whose users never set up e-mail or push does not hold
// nodemailer or web-push (their modules are a few MiB once imported).
const loadWebPush = lazy(async () => (await import("web-push")).default);
const loadEmail = lazy(() => import("./channels.email"));

export interface SendOutcome {
  ok: boolean;
  /** The receiver's status (never its body). */
  status: number | null;
  error: string | null;
}

export interface SendContext {
  rule: OutboundRule;
  smtp: SmtpSettings | null;
  vapid: { publicKey: string; privateKey: string; subject: string };
}

/** The webhook/web-push body: exactly the spec's fields (no internal ones such as priority). */
export function messageBody(m: ReminderMessage): string {
  const { priority: _p, ...target } = m.target;
  void _p;
  return JSON.stringify({ event: m.event, id: m.id, reminder_id: m.reminder_id, fire_at: m.fire_at, late: m.late, target, actions: m.actions });
}

export function signature(secret: string, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
}

/** A header value as ntfy reads it: RFC 2047 encoded-word when it is not plain ASCII. */
function headerText(s: string): string {
  const clean = s.replace(/[\r\n]+/g, " ");
  return /^[\x20-\x7e]*$/.test(clean) ? clean : `=?UTF-8?B?${Buffer.from(clean).toString("base64")}?=`;
}

/** ntfy priorities (1 min … 5 max) from the task's (0 none, 1 low, 2 medium, 3 high); habits and countdowns: ntfy's default 3. */
export function ntfyPriority(p: number | undefined): number {
  return p === 3 ? 5 : p === 2 ? 4 : p === 1 ? 2 : 3;
}

const describeError = (e: unknown) => (e instanceof Error ? e.message : String(e)).slice(0, 300);

export async function sendToChannel(ctx: SendContext, ch: ChannelRow, m: ReminderMessage): Promise<SendOutcome> {
  const config = JSON.parse(ch.config) as Record<string, unknown>;
  const secrets = JSON.parse(ch.secrets) as Record<string, unknown>;
  try {
    switch (ch.type) {
      case "webhook": {
        const body = messageBody(m);
        const res = await outboundPost(ctx.rule, String(config.url), {
          "content-type": "application/json",
          "x-signature": signature(String(secrets.secret), body),
          "x-delivery-id": m.id,
        }, body);
        return outcomeOf(res.status);
      }
      case "ntfy": {
        const url = `${String(config.server).replace(/\/+$/, "")}/${encodeURIComponent(String(config.topic))}`;
        const headers: Record<string, string> = {
          title: headerText(m.event === "test" ? "Test notification" : m.target.title),
          priority: String(m.event === "alert" ? 4 : ntfyPriority(m.target.priority)),
          tags: (m.event === "alert" ? ["warning", "instance"] : ["alarm_clock", m.target.type, ...(m.late ? ["late"] : [])]).join(","),
          "content-type": "text/plain; charset=utf-8",
        };
        if (m.actions) headers.actions = `http, Done, ${m.actions.done}, method=POST, clear=true; http, Snooze 10 min, ${m.actions.snooze}, method=POST, clear=true`;
        if (typeof secrets.token === "string" && secrets.token) headers.authorization = `Bearer ${secrets.token}`;
        const res = await outboundPost(ctx.rule, url, headers, m.target.title);
        return outcomeOf(res.status);
      }
      case "email": {
        if (!ctx.smtp) return { ok: false, status: null, error: "no SMTP server is configured (PUT /admin/smtp)" };
        await (await loadEmail()).sendMail(ctx.smtp, String(config.address), m);
        return { ok: true, status: null, error: null };
      }
      case "webpush": {
        const sub = config.subscription as { endpoint: string; keys: { p256dh: string; auth: string } };
        const req = (await loadWebPush()).generateRequestDetails({ endpoint: sub.endpoint, keys: { p256dh: String(secrets.p256dh), auth: String(secrets.auth) } }, messageBody(m), {
          vapidDetails: ctx.vapid,
          TTL: 24 * 3600,
          contentEncoding: "aes128gcm",
          urgency: "high",
        });
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(req.headers)) headers[k.toLowerCase()] = String(v);
        const res = await outboundPost(ctx.rule, req.endpoint, headers, req.body ?? new Uint8Array());
        return outcomeOf(res.status);
      }
    }
  } catch (e) {
    return { ok: false, status: null, error: describeError(e) };
  }
}

function outcomeOf(status: number): SendOutcome {
  return status >= 200 && status < 300 ? { ok: true, status, error: null } : { ok: false, status, error: `the receiver answered ${status}` };
}
