import type { CounterHandle } from "../../core/metrics";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { join } from "node:path";
import { createECDH, randomBytes } from "node:crypto";
import type { Core } from "../../core/core";
import type { AuthUser } from "../../core/auth/principal";
import { writeTx, type Conn } from "../../core/db";
import { AppError, forbidden, notFound, validationFailed, type FieldProblem } from "../../core/errors";
import { newId } from "../../core/ids";
import { toPage, type Page } from "../../core/cursor";
import { findUserById, listUsers } from "../account/account.repo";
import type { TasksService } from "../tasks/tasks.service";
import type { HabitsService } from "../habits/habits.service";
import { findTaskWithList } from "../tasks/tasks.repo";
import { findHabit } from "../habits/habits.repo";
import {
  channelsOfUser,
  countChannels,
  deleteChannel,
  findChannel,
  enabledChannelIds,
  findChannelById,
  findDelivery,
  finishDelivery,
  insertChannel,
  lastDeliveries,
  pageDeliveries,
  pruneActionUses,
  readSetting,
  updateChannel,
  useActionToken,
  writeSetting,
  type ChannelRow,
  type DeliveryRow,
} from "./channels.repo";
import { checkUrlShape, OutboundRefused, refusal, type OutboundRule } from "./outbound";
import { sendToChannel, type ReminderMessage, type SendContext, type SendOutcome } from "./channels.senders";
import type { SmtpSettings } from "./channels.email";
import { actionUrls, readActionToken } from "./reminders.actions";
import type { DeliveryPayload, RemindersService } from "./reminders.service";
import type { Channel, ChannelCreate, ChannelPatch, Delivery, OutboundPut, SmtpPut } from "./channels.schemas";
import { EmailConfig, NtfyConfig, WebhookConfig, WebPushConfig } from "./channels.schemas";

/** Channels per user: enough for every device and service a person uses. */
export const CHANNELS_PER_USER = 20;
/** Retries back off from 30 s, doubling, to at most 5 minutes apart, until the grace has passed. */
export function backoffMs(attempts: number): number {
  return Math.min(30_000 * 2 ** Math.max(0, attempts - 1), 300_000);
}

const deliveryFailed = (detail: string, status: number | null) =>
  new AppError("delivery_failed", detail, { errors: [{ path: "channel", message: status === null ? detail : `the receiver answered ${status}` }] });

/**
 * Notification channels, the deliveries list, the instance's SMTP and outbound settings, the
 * action links, and one delivery attempt (the scheduler's unit of work, off the request path).
 */
export class ChannelsService {
  /** Where action links point (main.ts sets it once the server listens). */
  publicUrl = "http://localhost";
  private vapidKeys: { publicKey: string; privateKey: string } | null = null;

  /** /metrics (when on): each delivery attempt's outcome. */
  private readonly attempts: CounterHandle<"result">;

  constructor(
    private readonly core: Core,
    private readonly reminders: RemindersService,
    private readonly tasks: TasksService,
    private readonly habits: HabitsService,
  ) {
    this.attempts = core.metrics.counter({
      name: "app_reminder_delivery_attempts_total",
      help: "Reminder delivery attempts by outcome: delivered, retrying (failed, tried again later) or failed (given up)",
      labelNames: ["result"],
    });
    for (const result of ["delivered", "retrying", "failed"]) this.attempts.inc({ result }, 0);
  }

  // ---- instance settings --------------------------------------------------------------------------

  outboundRule(): OutboundRule {
    const raw = readSetting(this.core.db, "outbound");
    return raw ? (JSON.parse(raw) as OutboundRule) : { mode: "any" };
  }

  getOutbound(user: AuthUser): { mode: OutboundRule["mode"]; allow: string[] } {
    if (!user.isAdmin) throw forbidden();
    const r = this.outboundRule();
    return { mode: r.mode, allow: r.mode === "allowlist" ? r.allow : [] };
  }

  putOutbound(user: AuthUser, body: OutboundPut): { mode: OutboundRule["mode"]; allow: string[] } {
    if (!user.isAdmin) throw forbidden();
    if (body.mode === "allowlist" && !body.allow?.length) throw validationFailed([{ path: "allow", message: "an allow-list needs at least one entry" }]);
    const rule: OutboundRule = body.mode === "allowlist" ? { mode: "allowlist", allow: body.allow! } : { mode: body.mode };
    writeTx(this.core.db, (tx) => writeSetting(tx, "outbound", JSON.stringify(rule), this.core.clock.now().toISOString()));
    return this.getOutbound(user);
  }

  smtp(): SmtpSettings | null {
    const raw = readSetting(this.core.db, "smtp");
    return raw ? (JSON.parse(raw) as SmtpSettings) : null;
  }

  getSmtp(user: AuthUser) {
    if (!user.isAdmin) throw forbidden();
    const s = this.smtp();
    return s ? { host: s.host, port: s.port, security: s.security, username: s.username, password_set: s.password !== null && s.password !== "", from: s.from } : null;
  }

  putSmtp(user: AuthUser, body: SmtpPut) {
    if (!user.isAdmin) throw forbidden();
    const cur = this.smtp();
    const s: SmtpSettings = {
      host: body.host,
      port: body.port,
      security: body.security,
      username: body.username ?? null,
      password: body.password === undefined ? (cur?.password ?? null) : body.password,
      from: body.from,
    };
    writeTx(this.core.db, (tx) => writeSetting(tx, "smtp", JSON.stringify(s), this.core.clock.now().toISOString()));
    return this.getSmtp(user);
  }

  /** The VAPID key pair, generated into the data directory (0600) on first need. */
  vapid(): { publicKey: string; privateKey: string; subject: string } {
    if (!this.vapidKeys) {
      const file = join(this.core.dataDir, "vapid.json");
      if (existsSync(file)) this.vapidKeys = JSON.parse(readFileSync(file, "utf8")) as { publicKey: string; privateKey: string };
      else {
        // A P-256 key pair as web-push expects it: the uncompressed public point and the private scalar, base64url.
        const ecdh = createECDH("prime256v1");
        ecdh.generateKeys();
        const k = { publicKey: ecdh.getPublicKey().toString("base64url"), privateKey: Buffer.from(ecdh.getPrivateKey().toString("hex").padStart(64, "0"), "hex").toString("base64url") };
        try {
          writeFileSync(file, JSON.stringify(k) + "\n", { mode: 0o600, flag: "wx" });
          this.vapidKeys = k;
        } catch {
          // Another process made it first: use theirs.
          this.vapidKeys = JSON.parse(readFileSync(file, "utf8")) as { publicKey: string; privateKey: string };
        }
      }
    }
    // RFC 8292: a contact (mailto: or https:); the public address when it is https.
    const subject = this.publicUrl.startsWith("https://") ? this.publicUrl : "mailto:reminders@localhost";
    return { ...this.vapidKeys!, subject };
  }

  private sendContext(): SendContext {
    return { rule: this.outboundRule(), smtp: this.smtp(), vapid: this.vapid() };
  }

  // ---- channels -------------------------------------------------------------------------------

  present(r: ChannelRow, last: { status: string; at: string } | undefined): Channel {
    return {
      id: r.id,
      type: r.type,
      name: r.name,
      enabled: r.enabled === 1,
      config: JSON.parse(r.config) as Record<string, unknown>,
      created_at: r.created_at,
      last_delivery: last ? { status: apiStatus(last.status as DeliveryRow["status"]), at: last.at } : null,
    };
  }

  list(user: AuthUser): Channel[] {
    const rows = channelsOfUser(this.core.db, user.id);
    const last = lastDeliveries(this.core.db, rows.map((r) => r.id));
    return rows.map((r) => this.present(r, last.get(r.id)));
  }

  /** Splits a validated config into its public and write-only parts, checking URLs against the outbound rule (after DNS). */
  private async split(type: ChannelRow["type"], config: Record<string, unknown>, keep: Record<string, unknown>): Promise<{ config: Record<string, unknown>; secrets: Record<string, unknown> }> {
    switch (type) {
      case "webhook": {
        const c = WebhookConfig.parse(config);
        await this.checkDestination(c.url, "config.url");
        return { config: { url: c.url }, secrets: { secret: keep.secret ?? randomBytes(32).toString("hex") } };
      }
      case "ntfy": {
        const c = NtfyConfig.parse(config);
        await this.checkDestination(c.server, "config.server");
        return { config: { server: c.server, topic: c.topic }, secrets: { token: c.token ?? keep.token ?? null } };
      }
      case "email":
        return { config: { address: EmailConfig.parse(config).address }, secrets: {} };
      case "webpush": {
        const c = WebPushConfig.parse(config);
        await this.checkDestination(c.subscription.endpoint, "config.subscription.endpoint");
        return { config: { subscription: { endpoint: c.subscription.endpoint } }, secrets: { p256dh: c.subscription.keys.p256dh, auth: c.subscription.keys.auth } };
      }
    }
  }

  /** 422 for a URL the outbound rule refuses, judged as a delivery would judge it (after DNS resolution). */
  private async checkDestination(raw: string, path: string): Promise<void> {
    const refuse = (message: string) => validationFailed([{ path, message }], `the destination is refused: ${message}`);
    let u: URL;
    try {
      u = checkUrlShape(raw);
    } catch (e) {
      throw refuse((e as Error).message);
    }
    const rule = this.outboundRule();
    if (rule.mode === "any") return;
    const host = u.hostname.replace(/^\[|\]$/g, "");
    let addresses: string[];
    if (isIP(host)) addresses = [host];
    else {
      try {
        addresses = (await lookup(host, { all: true })).map((a) => a.address);
      } catch {
        throw refuse(`${host} does not resolve`);
      }
    }
    const reasons = addresses.map((a) => refusal(rule, host, a)).filter((r): r is string => r !== null);
    if (reasons.length === addresses.length) throw refuse(reasons[0] ?? `${host} is refused`);
  }

  async create(user: AuthUser, body: ChannelCreate): Promise<{ channel: Channel; secret?: string }> {
    const parts = await this.split(body.type, body.config as Record<string, unknown>, {});
    const row = writeTx(this.core.db, (tx) => {
      if (countChannels(tx, user.id) >= CHANNELS_PER_USER) throw validationFailed([{ path: "type", message: `at most ${CHANNELS_PER_USER} channels per user` }]);
      const now = this.core.clock.now().toISOString();
      const r: ChannelRow = { id: newId(), user_id: user.id, type: body.type, name: body.name, enabled: body.enabled === false ? 0 : 1, config: JSON.stringify(parts.config), secrets: JSON.stringify(parts.secrets), created_at: now, updated_at: now };
      insertChannel(tx, r);
      return r;
    });
    const channel = this.present(row, undefined);
    return body.type === "webhook" ? { channel, secret: String(parts.secrets.secret) } : { channel };
  }

  async update(user: AuthUser, id: string, patch: ChannelPatch): Promise<Channel> {
    const cur = findChannel(this.core.db, user.id, id);
    if (!cur) throw notFound("channel");
    let parts: { config: Record<string, unknown>; secrets: Record<string, unknown> } | null = null;
    if (patch.config !== undefined) {
      const schema = { webhook: WebhookConfig, ntfy: NtfyConfig, email: EmailConfig, webpush: WebPushConfig }[cur.type];
      const parsed = schema.safeParse(patch.config);
      if (!parsed.success) throw validationFailed(parsed.error.issues.map((i): FieldProblem => ({ path: ["config", ...i.path.map(String)].join("."), message: i.message })));
      parts = await this.split(cur.type, parsed.data as Record<string, unknown>, JSON.parse(cur.secrets) as Record<string, unknown>);
    }
    const row = writeTx(this.core.db, (tx) => {
      if (!findChannel(tx, user.id, id)) throw notFound("channel");
      updateChannel(tx, id, {
        ...(patch.name !== undefined ? { name: patch.name } : {}),
        ...(patch.enabled !== undefined ? { enabled: patch.enabled ? 1 : 0 } : {}),
        ...(parts ? { config: JSON.stringify(parts.config), secrets: JSON.stringify(parts.secrets) } : {}),
        updated_at: this.core.clock.now().toISOString(),
      });
      return findChannel(tx, user.id, id)!;
    });
    return this.present(row, lastDeliveries(this.core.db, [id]).get(id));
  }

  remove(user: AuthUser, id: string): void {
    writeTx(this.core.db, (tx) => {
      if (!findChannel(tx, user.id, id)) throw notFound("channel");
      deleteChannel(tx, id);
    });
  }

  /** Sends a test message now (not recorded as a delivery): 502 delivery_failed with the receiver's status when it fails. */
  async test(user: AuthUser, id: string): Promise<{ status: "delivered" }> {
    const ch = findChannel(this.core.db, user.id, id);
    if (!ch) throw notFound("channel");
    const now = this.core.clock.now();
    const m: ReminderMessage = {
      event: "test",
      id: `test-${newId()}`,
      reminder_id: null,
      fire_at: now.toISOString(),
      late: false,
      target: { type: "task", id: "", title: "Test notification" },
      actions: null,
    };
    const out = await sendToChannel(this.sendContext(), ch, m);
    if (!out.ok) throw deliveryFailed(out.error ?? "the delivery failed", out.status);
    return { status: "delivered" };
  }

  /**
   * Tells every active administrator, on each of their enabled channels, that something is wrong with
   * the server (a failed backup). Best effort and off the request path: no ledger, no retry (the next
   * failure alerts again); an outcome that is not delivered is logged. Answers how many sends worked.
   */
  async alertAdmins(title: string): Promise<number> {
    const admins = listUsers(this.core.db).filter((u) => u.isAdmin && u.disabledAt === null);
    const now = this.core.clock.now();
    const m: ReminderMessage = {
      event: "alert",
      id: `alert-${newId()}`,
      reminder_id: null,
      fire_at: now.toISOString(),
      late: false,
      target: { type: "instance", id: "", title: title.slice(0, 500) },
      actions: null,
    };
    let delivered = 0;
    for (const admin of admins) {
      for (const id of enabledChannelIds(this.core.db, admin.id)) {
        const ch = findChannelById(this.core.db, id);
        if (!ch) continue;
        const out = await sendToChannel(this.sendContext(), ch, m).catch((e: unknown): SendOutcome => ({ ok: false, status: null, error: String(e) }));
        if (out.ok) delivered++;
        else this.core.logger.error("alert not delivered", { channel_id: id, status: out.status, error: out.error });
      }
    }
    return delivered;
  }

  // ---- deliveries -----------------------------------------------------------------------------

  deliveries(user: AuthUser, limit: number, cursor: string | undefined): Page<Delivery> {
    const after = cursor === undefined ? null : String(this.core.cursors.decode("deliveries", user.id, cursor)[0]);
    const rows = pageDeliveries(this.core.db, user.id, after, limit + 1);
    return toPage(rows, limit, presentDelivery, (r) => [r.id], (k) => this.core.cursors.encode("deliveries", user.id, k));
  }

  /**
   * One attempt of a claimed delivery (status sending; `d.attempts` counts this one): the send.
   * Its outcome is recorded by record(), which the scheduler runs for several outcomes in one
   * transaction. A crash between the two leaves it `sending`; after a restart it is sent again with
   * the same id (X-Delivery-Id), which is how a receiver tells a repeat from a new reminder.
   */
  async send(d: DeliveryRow): Promise<AttemptResult> {
    const ch = findChannelById(this.core.db, d.channel_id);
    let out: SendOutcome;
    if (!ch) out = { ok: false, status: null, error: "the channel was deleted" };
    else if (ch.enabled !== 1) out = { ok: false, status: null, error: "the channel is disabled" };
    else {
      const payload = JSON.parse(d.payload) as DeliveryPayload;
      const m: ReminderMessage = {
        event: "reminder",
        id: d.id,
        reminder_id: d.reminder_id,
        fire_at: d.fire_at,
        late: d.late === 1,
        target: payload.target,
        actions: actionUrls(this.core.secret, this.publicUrl, d.id, this.core.clock.now()),
      };
      out = await sendToChannel(this.sendContext(), ch, m);
    }
    // A push service's 404/410: the subscription is gone for good (RFC 8030); the channel is disabled.
    const expired = ch?.type === "webpush" && (out.status === 404 || out.status === 410);
    if (expired) out = { ...out, error: `the push subscription has expired (${out.status}); the channel was disabled` };
    return { d, out, final: !ch || ch.enabled !== 1 || expired, expired };
  }

  /** Records one attempt's outcome inside the caller's transaction: delivered, retrying with backoff, or failed. */
  record(tx: Conn, r: AttemptResult, graceMs: number): void {
    const { d, out } = r;
    const now = this.core.clock.now();
    const retryAt = new Date(now.getTime() + backoffMs(d.attempts));
    const giveUp = r.final || retryAt.getTime() > new Date(d.fire_at).getTime() + graceMs;
    if (r.expired) updateChannel(tx, d.channel_id, { enabled: 0, updated_at: now.toISOString() });
    this.attempts.inc({ result: out.ok ? "delivered" : giveUp ? "failed" : "retrying" });
    finishDelivery(tx, d.id, out.ok
      ? { status: "delivered", next_attempt_at: null, last_error: null, delivered_at: now.toISOString() }
      : { status: giveUp ? "failed" : "retrying", next_attempt_at: giveUp ? null : retryAt.toISOString(), last_error: out.error, delivered_at: null });
  }

  // ---- action links -----------------------------------------------------------------------------

  /**
   * POST of a done/snooze link: no session; the signed token is the whole credential, and it
   * names one delivery. done completes the task (a repeating one moves to its next occurrence),
   * logs the habit's goal for that day, or acknowledges a countdown; snooze fires the reminder
   * again 10 minutes from now. Refused: a forged or expired token (404, as an unknown URL), a
   * used one (409 token_consumed).
   */
  act(token: string): { status: "done" | "snoozed"; snoozed_until: string | null } {
    const now = this.core.clock.now();
    const claim = readActionToken(this.core.secret, token, now);
    if (!claim) throw notFound("action");
    const d = findDelivery(this.core.db, claim.deliveryId);
    if (!d) throw notFound("action");
    const user = findUserById(this.core.db, d.user_id);
    if (!user) throw notFound("action");
    const auth: AuthUser = { id: user.id, username: user.username, timezone: user.timezone, isAdmin: user.isAdmin, displayName: user.displayName, createdAt: user.createdAt };
    const payload = JSON.parse(d.payload) as DeliveryPayload;
    // A viewer of a shared list has their own reminders on its tasks, but may not complete them:
    // refused before the link is used, so the tap changes nothing and the link is not spent.
    if (claim.action === "done" && payload.target.type === "task") {
      const t = findTaskWithList(this.core.db, d.user_id, payload.target.id);
      if (t && t.role === "viewer") throw forbidden("a viewer of this list cannot complete its tasks");
    }
    // Used first, in a transaction of its own: a crash after it loses one tap, never applies it
    // twice (a repeating task would advance twice). The action's own use case runs next (the
    // request is synchronous from here on: nothing can run in between).
    const fresh = writeTx(this.core.db, (tx) => {
      pruneActionUses(tx, now.toISOString());
      return useActionToken(tx, claim.tokenHash, d.user_id, now.toISOString(), claim.expiresAt.toISOString());
    });
    if (!fresh) throw new AppError("token_consumed", "this link has already been used");
    if (claim.action === "snooze") {
      const ok = writeTx(this.core.db, (tx) => this.reminders.snooze(tx, d.reminder_id, 10));
      if (!ok) throw notFound("reminder");
      return { status: "snoozed", snoozed_until: new Date(now.getTime() + 600_000).toISOString() };
    }
    if (payload.target.type === "task") {
      const t = findTaskWithList(this.core.db, d.user_id, payload.target.id);
      if (t && t.completed === 0 && t.deleted_at === null) this.tasks.update(auth, t.id, { version: t.version, completed: true });
    } else if (payload.target.type === "habit") {
      const h = findHabit(this.core.db, d.user_id, payload.target.id);
      const day = d.occurrence.slice(0, 10);
      if (h && h.archivedAt === null && /^\d{4}-\d{2}-\d{2}$/.test(day)) this.habits.putLog(auth, h.id, day, { value: h.goal });
    }
    return { status: "done", snoozed_until: null };
  }
}

/** One attempt's outcome, waiting to be recorded. */
export interface AttemptResult {
  d: DeliveryRow;
  out: SendOutcome;
  /** No retry can help (the channel is gone, disabled, or its push subscription expired). */
  final: boolean;
  expired: boolean;
}

/** The API's four statuses: a delivery waiting for its first attempt or in one counts as retrying. */
function apiStatus(s: DeliveryRow["status"]): Delivery["status"] {
  return s === "pending" || s === "sending" ? "retrying" : s;
}

export function presentDelivery(d: DeliveryRow): Delivery {
  return {
    id: d.id,
    reminder_id: d.reminder_id,
    channel_id: d.channel_id,
    occurrence: d.occurrence,
    fire_at: d.fire_at,
    status: apiStatus(d.status),
    late: d.late === 1,
    attempts: d.attempts,
    last_error: d.last_error,
    delivered_at: d.delivered_at,
  };
}

export { OutboundRefused };
