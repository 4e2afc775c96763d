import type { Conn, SqlRow } from "../../core/db";
import { deleteInBatches } from "../../core/db";
import { deliveries, notificationChannels } from "../../core/schema";
import { ownerOfRow, userRows } from "../../core/table-rows";

// Channels, the delivery ledger, used action tokens and the instance's notification settings.

export type ChannelType = "webhook" | "ntfy" | "email" | "webpush";

export interface ChannelRow {
  id: string;
  user_id: string;
  type: ChannelType;
  name: string;
  enabled: number;
  config: string;
  secrets: string;
  created_at: string;
  updated_at: string;
}

const CH_COLS = "id, user_id, type, name, enabled, config, secrets, created_at, updated_at";

export function insertChannel(c: Conn, r: ChannelRow): void {
  c.sqlite
    .query(`INSERT INTO notification_channels (${CH_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`)
    .run(r.id, r.user_id, r.type, r.name, r.enabled, r.config, r.secrets, r.created_at, r.updated_at);
}

export function findChannel(c: Conn, userId: string, id: string): ChannelRow | null {
  return c.sqlite.query<ChannelRow, [string, string]>(`SELECT ${CH_COLS} FROM notification_channels WHERE id = ? AND user_id = ?`).get(id, userId);
}

export function findChannelById(c: Conn, id: string): ChannelRow | null {
  return c.sqlite.query<ChannelRow, [string]>(`SELECT ${CH_COLS} FROM notification_channels WHERE id = ?`).get(id);
}

export function channelsOfUser(c: Conn, userId: string): ChannelRow[] {
  return c.sqlite.query<ChannelRow, [string]>(`SELECT ${CH_COLS} FROM notification_channels WHERE user_id = ? ORDER BY created_at, id`).all(userId);
}

export function enabledChannelIds(c: Conn, userId: string): string[] {
  return c.sqlite
    .query<{ id: string }, [string]>("SELECT id FROM notification_channels WHERE user_id = ? AND enabled = 1 ORDER BY id")
    .all(userId)
    .map((r) => r.id);
}

export function countChannels(c: Conn, userId: string): number {
  return c.sqlite.query<{ n: number }, [string]>("SELECT count(*) AS n FROM notification_channels WHERE user_id = ?").get(userId)!.n;
}

export function updateChannel(c: Conn, id: string, ch: { name?: string; enabled?: number; config?: string; secrets?: string; updated_at: string }): void {
  const keys = Object.keys(ch) as (keyof typeof ch)[];
  c.sqlite.query(`UPDATE notification_channels SET ${keys.map((k) => `${k} = ?`).join(", ")} WHERE id = ?`).run(...keys.map((k) => ch[k] ?? null), id);
}

export function deleteChannel(c: Conn, id: string): void {
  c.sqlite.query("DELETE FROM notification_channels WHERE id = ?").run(id);
}

/** The latest delivery of each of these channels (for `last_delivery`). */
export function lastDeliveries(c: Conn, channelIds: string[]): Map<string, { status: string; at: string }> {
  const out = new Map<string, { status: string; at: string }>();
  const stmt = c.sqlite.query<{ status: string; at: string }, [string]>(
    "SELECT status, coalesce(delivered_at, created_at) AS at FROM deliveries WHERE channel_id = ? ORDER BY id DESC LIMIT 1",
  );
  for (const id of channelIds) {
    const r = stmt.get(id);
    if (r) out.set(id, r);
  }
  return out;
}

// ---- the delivery ledger -----------------------------------------------------------------------

export type DeliveryStatus = "pending" | "sending" | "retrying" | "delivered" | "failed" | "missed";

export interface DeliveryRow {
  id: string;
  user_id: string;
  reminder_id: string;
  channel_id: string;
  occurrence: string;
  fire_at: string;
  status: DeliveryStatus;
  late: number;
  attempts: number;
  next_attempt_at: string | null;
  last_error: string | null;
  delivered_at: string | null;
  payload: string;
  created_at: string;
}

const D_COLS = "id, user_id, reminder_id, channel_id, occurrence, fire_at, status, late, attempts, next_attempt_at, last_error, delivered_at, payload, created_at";

/** Records a delivery unless (reminder, occurrence, channel) already has one: the ledger's exactly-once. Returns whether it was new. */
export function insertDeliveryOnce(c: Conn, r: DeliveryRow): boolean {
  return (
    c.sqlite
      .query(`INSERT INTO deliveries (${D_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (reminder_id, occurrence, channel_id) DO NOTHING`)
      .run(r.id, r.user_id, r.reminder_id, r.channel_id, r.occurrence, r.fire_at, r.status, r.late, r.attempts, r.next_attempt_at, r.last_error, r.delivered_at, r.payload, r.created_at).changes === 1
  );
}

export function findDelivery(c: Conn, id: string): DeliveryRow | null {
  return c.sqlite.query<DeliveryRow, [string]>(`SELECT ${D_COLS} FROM deliveries WHERE id = ?`).get(id);
}

/** Deliveries whose next attempt is due, earliest first (deliveries_due_idx). */
export function dueDeliveries(c: Conn, now: string, limit: number): DeliveryRow[] {
  return c.sqlite
    .query<DeliveryRow, [string, number]>(
      `SELECT ${D_COLS} FROM deliveries WHERE status IN ('pending', 'sending', 'retrying') AND next_attempt_at <= ? ORDER BY next_attempt_at LIMIT ?`,
    )
    .all(now, limit);
}

export function earliestAttempt(c: Conn): string | null {
  return (
    c.sqlite.query<{ t: string | null }, []>("SELECT min(next_attempt_at) AS t FROM deliveries WHERE status IN ('pending', 'sending', 'retrying')").get()?.t ?? null
  );
}

/** Claims a delivery for one attempt (status sending, attempts + 1); false when another claim or an end got there first. */
export function claimDelivery(c: Conn, id: string, now: string, leaseUntil: string): boolean {
  return (
    c.sqlite
      .query("UPDATE deliveries SET status = 'sending', attempts = attempts + 1, next_attempt_at = ? WHERE id = ? AND status IN ('pending', 'sending', 'retrying') AND next_attempt_at <= ?")
      .run(leaseUntil, id, now).changes === 1
  );
}

export function finishDelivery(c: Conn, id: string, set: { status: DeliveryStatus; next_attempt_at: string | null; last_error: string | null; delivered_at: string | null }): void {
  c.sqlite
    .query("UPDATE deliveries SET status = ?, next_attempt_at = ?, last_error = ?, delivered_at = ? WHERE id = ? AND status = 'sending'")
    .run(set.status, set.next_attempt_at, set.last_error, set.delivered_at, id);
}

/** Deliveries interrupted by a crash (status sending): attempted again at once, with the same id. */
export function releaseInterrupted(c: Conn, now: string): number {
  return c.sqlite.query("UPDATE deliveries SET next_attempt_at = ? WHERE status = 'sending'").run(now).changes;
}

/** The user's deliveries, newest first (UUIDv7 ids), after `beforeId`. */
export function pageDeliveries(c: Conn, userId: string, beforeId: string | null, limit: number): DeliveryRow[] {
  return beforeId === null
    ? c.sqlite.query<DeliveryRow, [string, number]>(`SELECT ${D_COLS} FROM deliveries WHERE user_id = ? ORDER BY id DESC LIMIT ?`).all(userId, limit)
    : c.sqlite.query<DeliveryRow, [string, string, number]>(`SELECT ${D_COLS} FROM deliveries WHERE user_id = ? AND id < ? ORDER BY id DESC LIMIT ?`).all(userId, beforeId, limit);
}

// ---- retention (deliveries.retention.ts decides what may go) ---------------------------------------

/** A delivery as the retention rule judges it. */
export interface DeliveryAge {
  id: string;
  occurrence: string;
  fire_at: string;
  created_at: string;
}

/**
 * Ended deliveries (delivered, failed, missed) with `after < id < before`, in id order (the
 * primary key; UUIDv7, so id order is creation order), optionally of one user (deliveries_user_idx).
 */
export function endedDeliveriesBetween(c: Conn, userId: string | null, after: string, before: string, limit: number): DeliveryAge[] {
  return userId === null
    ? c.sqlite
        .query<DeliveryAge, [string, string, number]>(
          "SELECT id, occurrence, fire_at, created_at FROM deliveries WHERE id > ? AND id < ? AND status IN ('delivered', 'failed', 'missed') ORDER BY id LIMIT ?",
        )
        .all(after, before, limit)
    : c.sqlite
        .query<DeliveryAge, [string, string, string, number]>(
          "SELECT id, occurrence, fire_at, created_at FROM deliveries WHERE user_id = ? AND id > ? AND id < ? AND status IN ('delivered', 'failed', 'missed') ORDER BY id LIMIT ?",
        )
        .all(userId, after, before, limit);
}

/** The id of the user's `keep`-th newest delivery (older ones are past the per-user cap), or null when they have no more than that. */
export function nthNewestDeliveryId(c: Conn, userId: string, keep: number): string | null {
  return c.sqlite.query<{ id: string }, [string, number]>("SELECT id FROM deliveries WHERE user_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?").get(userId, keep - 1)?.id ?? null;
}

/** Deletes these deliveries, if they have still ended (a row taken up again meanwhile stays). */
export function deleteEndedDeliveries(c: Conn, ids: string[]): number {
  if (ids.length === 0) return 0;
  return c.sqlite
    .query("DELETE FROM deliveries WHERE id IN (SELECT value FROM json_each(?)) AND status IN ('delivered', 'failed', 'missed')")
    .run(JSON.stringify(ids)).changes;
}

export function countDeliveries(c: Conn, userId: string): number {
  return c.sqlite.query<{ n: number }, [string]>("SELECT count(*) AS n FROM deliveries WHERE user_id = ?").get(userId)!.n;
}

// ---- action tokens ---------------------------------------------------------------------------

/** Marks an action token used; false when it already was (single use). */
export function useActionToken(c: Conn, tokenHash: string, userId: string, now: string, expiresAt: string): boolean {
  return c.sqlite.query("INSERT INTO reminder_action_uses (token_hash, user_id, used_at, expires_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING").run(tokenHash, userId, now, expiresAt).changes === 1;
}

/** Used tokens past their expiry are refused by their signature's date anyway: their rows can go. */
export function pruneActionUses(c: Conn, now: string): void {
  c.sqlite.query("DELETE FROM reminder_action_uses WHERE expires_at < ?").run(now);
}

// ---- instance settings ---------------------------------------------------------------------------

export function readSetting(c: Conn, key: string): string | null {
  return c.sqlite.query<{ value: string }, [string]>("SELECT value FROM notification_settings WHERE key = ?").get(key)?.value ?? null;
}

export function writeSetting(c: Conn, key: string, value: string, now: string): void {
  c.sqlite
    .query("INSERT INTO notification_settings (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at")
    .run(key, value, now);
}

// ---- backup ---------------------------------------------------------------------------------------

export type ChannelExportRow = Omit<SqlRow<typeof notificationChannels>, "user_id">;
const CH_EXPORT = "id, type, name, enabled, config, secrets, created_at, updated_at";
export function exportChannelRows(c: Conn, userId: string): Generator<ChannelExportRow> {
  return userRows(c, notificationChannels, CH_EXPORT, userId, "id");
}
export function exportChannelRow(c: Conn, id: string): ChannelExportRow | null {
  return c.sqlite.query<ChannelExportRow, [string]>(`SELECT ${CH_EXPORT} FROM notification_channels WHERE id = ?`).get(id);
}
export const channelOwner = (c: Conn, id: string) => ownerOfRow(c, notificationChannels, id);
export function insertRestoredChannel(c: Conn, userId: string, r: ChannelExportRow): void {
  insertChannel(c, { ...r, enabled: r.enabled ? 1 : 0, user_id: userId } as ChannelRow);
}

export type DeliveryExportRow = Omit<SqlRow<typeof deliveries>, "user_id">;
export function exportDeliveryRows(c: Conn, userId: string): Generator<DeliveryExportRow> {
  return userRows(c, deliveries, D_COLS.replace("user_id, ", ""), userId, "id");
}

export function deleteChannelsOfUser(c: Conn, userId: string): void {
  deleteInBatches(c, "deliveries", "user_id = ?", userId);
  deleteInBatches(c, "notification_channels", "user_id = ?", userId);
}
