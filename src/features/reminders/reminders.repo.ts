import type { Conn, SqlRow } from "../../core/db";
import { deleteInBatches } from "../../core/db";
import { reminders } from "../../core/schema";
import { ownerOfRow, userRows } from "../../core/table-rows";

// Raw prepared statements (c.sqlite.query caches each SQL string): the scheduler runs these
// often, and the armed-schedule query must stay on reminders_next_fire_idx.

export interface ReminderRow {
  id: string;
  user_id: string;
  target_type: "task" | "habit" | "countdown";
  target_id: string;
  kind: "before_due" | "at" | "daily" | "days_before";
  minutes_before: number | null;
  at: string | null;
  time: string | null;
  days_before: number | null;
  next_fire_at: string | null;
  next_occurrence: string | null;
  fired_occurrence: string | null;
  snoozed_until: string | null;
  created_at: string;
  updated_at: string;
}

const COLS =
  "id, user_id, target_type, target_id, kind, minutes_before, at, time, days_before, next_fire_at, next_occurrence, fired_occurrence, snoozed_until, created_at, updated_at";

export function insertReminder(c: Conn, r: ReminderRow): void {
  c.sqlite
    .query(`INSERT INTO reminders (${COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
    .run(r.id, r.user_id, r.target_type, r.target_id, r.kind, r.minutes_before, r.at, r.time, r.days_before, r.next_fire_at, r.next_occurrence, r.fired_occurrence, r.snoozed_until, r.created_at, r.updated_at);
}

export function findReminder(c: Conn, userId: string, id: string): ReminderRow | null {
  return c.sqlite.query<ReminderRow, [string, string]>(`SELECT ${COLS} FROM reminders WHERE id = ? AND user_id = ?`).get(id, userId);
}

export function findReminderById(c: Conn, id: string): ReminderRow | null {
  return c.sqlite.query<ReminderRow, [string]>(`SELECT ${COLS} FROM reminders WHERE id = ?`).get(id);
}

/** The user's reminders of one target, oldest first. */
export function remindersOfTarget(c: Conn, userId: string, type: string, targetId: string): ReminderRow[] {
  return c.sqlite
    .query<ReminderRow, [string, string, string]>(`SELECT ${COLS} FROM reminders WHERE target_type = ? AND target_id = ? AND user_id = ? ORDER BY created_at, id`)
    .all(type, targetId, userId);
}

/** Every user's reminders of these targets (hooks re-arm them). */
export function remindersOfTargets(c: Conn, type: string, targetIds: string[]): ReminderRow[] {
  return c.sqlite
    .query<ReminderRow, [string, string]>(`SELECT ${COLS} FROM reminders WHERE target_type = ? AND target_id IN (SELECT value FROM json_each(?))`)
    .all(type, JSON.stringify(targetIds));
}

export function remindersOfUser(c: Conn, userId: string): ReminderRow[] {
  return c.sqlite.query<ReminderRow, [string]>(`SELECT ${COLS} FROM reminders WHERE user_id = ?`).all(userId);
}

export function countRemindersOfTarget(c: Conn, userId: string, type: string, targetId: string): number {
  return c.sqlite
    .query<{ n: number }, [string, string, string]>("SELECT count(*) AS n FROM reminders WHERE target_type = ? AND target_id = ? AND user_id = ?")
    .get(type, targetId, userId)!.n;
}

export interface ReminderChanges {
  minutes_before?: number | null;
  at?: string | null;
  time?: string | null;
  days_before?: number | null;
  next_fire_at?: string | null;
  next_occurrence?: string | null;
  fired_occurrence?: string | null;
  snoozed_until?: string | null;
  updated_at?: string;
}

export function updateReminder(c: Conn, id: string, ch: ReminderChanges): void {
  const keys = Object.keys(ch) as (keyof ReminderChanges)[];
  if (keys.length === 0) return;
  c.sqlite.query(`UPDATE reminders SET ${keys.map((k) => `${k} = ?`).join(", ")} WHERE id = ?`).run(...keys.map((k) => ch[k] ?? null), id);
}

export function deleteReminder(c: Conn, id: string): void {
  c.sqlite.query("DELETE FROM reminders WHERE id = ?").run(id);
}

export function deleteRemindersOfTargets(c: Conn, type: string, targetIds: string[]): void {
  c.sqlite.query("DELETE FROM reminders WHERE target_type = ? AND target_id IN (SELECT value FROM json_each(?))").run(type, JSON.stringify(targetIds));
}

/** The user's own reminders on these targets (a member leaving a shared list: their reminders on its tasks). */
export function deleteUserRemindersOfTargets(c: Conn, userId: string, type: string, targetIds: string[]): void {
  if (targetIds.length === 0) return;
  c.sqlite
    .query("DELETE FROM reminders WHERE user_id = ? AND target_type = ? AND target_id IN (SELECT value FROM json_each(?))")
    .run(userId, type, JSON.stringify(targetIds));
}

/** Armed reminders due by `now`, earliest first (reminders_next_fire_idx). */
export function dueReminders(c: Conn, now: string, limit: number): ReminderRow[] {
  return c.sqlite
    .query<ReminderRow, [string, number]>(`SELECT ${COLS} FROM reminders WHERE next_fire_at IS NOT NULL AND next_fire_at <= ? ORDER BY next_fire_at LIMIT ?`)
    .all(now, limit);
}

/** The earliest armed fire time, or null (one step down reminders_next_fire_idx). */
export function earliestFire(c: Conn): string | null {
  return c.sqlite.query<{ t: string | null }, []>("SELECT min(next_fire_at) AS t FROM reminders WHERE next_fire_at IS NOT NULL").get()?.t ?? null;
}

// ---- backup / legacy ---------------------------------------------------------------------------

/** A reminder as the backup reads and writes it: its definition (the schedule is computed again after a restore). */
export type ReminderExportRow = Pick<SqlRow<typeof reminders>, "id" | "target_type" | "target_id" | "kind" | "minutes_before" | "at" | "time" | "days_before" | "created_at" | "updated_at">;
const EXPORT_COLS = "id, target_type, target_id, kind, minutes_before, at, time, days_before, created_at, updated_at";

export function exportReminderRows(c: Conn, userId: string): Generator<ReminderExportRow> {
  return userRows(c, reminders, EXPORT_COLS, userId, "id");
}

export function exportReminderRow(c: Conn, id: string): ReminderExportRow | null {
  return c.sqlite.query<ReminderExportRow, [string]>(`SELECT ${EXPORT_COLS} FROM reminders WHERE id = ?`).get(id);
}

export const reminderOwner = (c: Conn, id: string) => ownerOfRow(c, reminders, id);

/**
 * A restored reminder is stored unarmed but due (next_fire_at at the epoch, no occurrence): the
 * scheduler's next pass (within a minute) computes its schedule from the restored target, as it
 * does for any reminder whose occurrence is unknown; occurrences before the restore never fire.
 */
export function insertRestoredReminder(c: Conn, userId: string, r: ReminderExportRow): void {
  insertReminder(c, { ...r, user_id: userId, next_fire_at: "1970-01-01T00:00:00.000Z", next_occurrence: null, fired_occurrence: null, snoozed_until: null });
}

export function deleteRemindersOfUser(c: Conn, userId: string): void {
  deleteInBatches(c, "reminders", "user_id = ?", userId);
}
