import type { Conn } from "../../core/db";
import type { SqlRow } from "../../core/db";
import { recurrenceExceptions, recurrences } from "../../core/schema";
import { iterateRows, ownerOfRow, ownersOfRows, rowById, userRows } from "../../core/table-rows";

// Prepared statements on the bun:sqlite handle (compiled once, cached by SQL text). Called inside
// a writeTx/readTx callback they run in that transaction.

export interface RecurrenceRecord {
  id: string;
  user_id: string;
  task_id: string;
  kind: "rrule" | "after_completion";
  rrule: string | null;
  interval: number | null;
  unit: "day" | "week" | "month" | "year" | null;
  timezone: string;
  dtstart: string | null;
  created_at: string;
  updated_at: string;
}

const COLS = "r.id, r.user_id, r.task_id, r.kind, r.rrule, r.interval, r.unit, r.timezone, r.dtstart, r.created_at, r.updated_at";

/**
 * The user's recurrence, whatever the state of its task: the service asks the tasks feature
 * whether that task is visible (findVisibleTask), and answers an invisible one like a missing one.
 */
/** A recurrence by id, whoever's: the caller decides visibility through its task (findVisibleTask). */
export function findRecurrenceById(c: Conn, id: string): RecurrenceRecord | null {
  return c.sqlite.query<RecurrenceRecord, [string]>(`SELECT ${COLS} FROM recurrences r WHERE r.id = ?`).get(id);
}

/** Tasks moved into another owner's list (or a transferred list): their recurrences follow the task's owner. */
export function reassignRecurrences(c: Conn, taskIds: string[], ownerId: string): void {
  if (taskIds.length === 0) return;
  c.sqlite.query("UPDATE recurrences SET user_id = ? WHERE task_id IN (SELECT value FROM json_each(?))").run(ownerId, JSON.stringify(taskIds));
}

export function findUserRecurrence(c: Conn, userId: string, id: string): RecurrenceRecord | null {
  return c.sqlite.query<RecurrenceRecord, [string, string]>(`SELECT ${COLS} FROM recurrences r WHERE r.id = ? AND r.user_id = ?`).get(id, userId);
}

/** Of these task ids, those of the user that have a recurrence (through the unique task index). */
export function recurringTaskIds(c: Conn, userId: string, taskIds: string[]): string[] {
  return c.sqlite
    .query<{ task_id: string }, [string, string]>("SELECT task_id FROM recurrences WHERE task_id IN (SELECT value FROM json_each(?)) AND +user_id = ?")
    .all(JSON.stringify(taskIds), userId)
    .map((r) => r.task_id);
}

export function findRecurrenceOfTask(c: Conn, taskId: string): RecurrenceRecord | null {
  return c.sqlite.query<RecurrenceRecord, [string]>(`SELECT ${COLS} FROM recurrences r WHERE r.task_id = ?`).get(taskId);
}

export function insertRecurrence(c: Conn, r: RecurrenceRecord): void {
  c.sqlite
    .query(
      `INSERT INTO recurrences (id, user_id, task_id, kind, rrule, interval, unit, timezone, dtstart, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .run(r.id, r.user_id, r.task_id, r.kind, r.rrule, r.interval, r.unit, r.timezone, r.dtstart, r.created_at, r.updated_at);
}

export function updateRecurrence(
  c: Conn,
  id: string,
  r: Pick<RecurrenceRecord, "kind" | "rrule" | "interval" | "unit" | "timezone" | "dtstart" | "updated_at">,
): void {
  c.sqlite
    .query("UPDATE recurrences SET kind = ?, rrule = ?, interval = ?, unit = ?, timezone = ?, dtstart = ?, updated_at = ? WHERE id = ?")
    .run(r.kind, r.rrule, r.interval, r.unit, r.timezone, r.dtstart, r.updated_at, id);
}

export function touchRecurrence(c: Conn, id: string, now: string): void {
  c.sqlite.query("UPDATE recurrences SET updated_at = ? WHERE id = ?").run(now, id);
}

/** Removes the recurrence; its exceptions go by FK cascade. */
export function deleteRecurrence(c: Conn, id: string): void {
  c.sqlite.query("DELETE FROM recurrences WHERE id = ?").run(id);
}

/** Skipped dates, ascending. */
export function listExceptions(c: Conn, recurrenceId: string): string[] {
  return c.sqlite
    .query<{ date: string }, [string]>("SELECT date FROM recurrence_exceptions WHERE recurrence_id = ? ORDER BY date")
    .all(recurrenceId)
    .map((r) => r.date);
}

export function insertException(c: Conn, recurrenceId: string, date: string, now: string): void {
  c.sqlite.query("INSERT OR IGNORE INTO recurrence_exceptions (recurrence_id, date, created_at) VALUES (?, ?, ?)").run(recurrenceId, date, now);
}

/** Returns whether a row was removed. */
export function deleteException(c: Conn, recurrenceId: string, date: string): boolean {
  return c.sqlite.query("DELETE FROM recurrence_exceptions WHERE recurrence_id = ? AND date = ?").run(recurrenceId, date).changes === 1;
}

export function deleteExceptionsExcept(c: Conn, recurrenceId: string, keep: string[]): void {
  c.sqlite
    .query("DELETE FROM recurrence_exceptions WHERE recurrence_id = ? AND date NOT IN (SELECT value FROM json_each(?))")
    .run(recurrenceId, JSON.stringify(keep));
}

// ---- writes to the recurring task ----------------------------------------------------------
// Addressed by primary key. (The tasks repo's many-id update, `id IN json_each(?) AND user_id = ?`,
// lets the planner walk the user's index: every task of the user, per completion.) Each change
// grows the task's version by one, like every task write; `grow` 0 when the caller's own write in
// the same change (a PATCH or batch completing the task) already grew it.

// ---- Export and restore (used by src/transfer/) ----


/** A recurrence as backup and legacy read and write it: every stored column but the owner. */
export type RecurrenceExportRow = Omit<SqlRow<typeof recurrences>, "user_id">;
const RECURRENCE_COLUMNS = "id, task_id, kind, rrule, interval, unit, timezone, dtstart, created_at, updated_at";

/** The user's recurrences in id order. */
export function exportRecurrenceRows(c: Conn, userId: string): Generator<RecurrenceExportRow> {
  return userRows(c, recurrences, RECURRENCE_COLUMNS, userId, "id");
}

/** The user's recurrences in creation order. */
export function recurrenceRowsInOrder(c: Conn, userId: string): Generator<RecurrenceExportRow> {
  return userRows(c, recurrences, RECURRENCE_COLUMNS, userId, "created_at, rowid");
}

export function exportRecurrenceRow(c: Conn, id: string): RecurrenceExportRow | null {
  return rowById<RecurrenceExportRow>(c, recurrences, RECURRENCE_COLUMNS, id);
}

export function insertRestoredRecurrence(c: Conn, userId: string, r: RecurrenceExportRow): void {
  c.sqlite
    .query("INSERT INTO recurrences (id, user_id, task_id, kind, rrule, interval, unit, timezone, dtstart, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
    .run(r.id, userId, r.task_id, r.kind, r.rrule, r.interval, r.unit, r.timezone, r.dtstart, r.created_at, r.updated_at);
}

/** The id of a task's recurrence, or null (one per task: a unique index). */
export function recurrenceIdOfTask(c: Conn, taskId: string): string | null {
  return c.sqlite.query<{ id: string }, [string]>("SELECT id FROM recurrences WHERE task_id = ?").get(taskId)?.id ?? null;
}

/** The kind of the user's recurrence with this id, or null. */
export function ownRecurrenceKind(c: Conn, id: string, userId: string): string | null {
  return c.sqlite.query<{ kind: string }, [string, string]>("SELECT kind FROM recurrences WHERE id = ? AND user_id = ?").get(id, userId)?.kind ?? null;
}

export const recurrenceOwner = (c: Conn, id: string) => ownerOfRow(c, recurrences, id);
export const recurrenceOwners = (c: Conn, ids: string[]) => ownersOfRows(c, recurrences, ids);

export type RecurrenceExceptionRow = SqlRow<typeof recurrenceExceptions>;

/** The exception dates of the user's recurrences, by recurrence then date. */
export function exportRecurrenceExceptionRows(c: Conn, userId: string): Generator<RecurrenceExceptionRow> {
  return iterateRows(
    c,
    `SELECT e.recurrence_id, e.date, e.created_at FROM recurrence_exceptions e JOIN recurrences r ON r.id = e.recurrence_id
      WHERE r.user_id = ? ORDER BY e.recurrence_id, e.date`,
    userId,
  );
}

export function exportRecurrenceExceptionRow(c: Conn, recurrenceId: string, date: string): RecurrenceExceptionRow | null {
  return c.sqlite
    .query<RecurrenceExceptionRow, [string, string]>("SELECT recurrence_id, date, created_at FROM recurrence_exceptions WHERE recurrence_id = ? AND date = ?")
    .get(recurrenceId, date);
}

/** A recurrence's exception dates, ascending, on a statement prepared once for a whole export. */
export function exceptionDatesReader(c: Conn): { of(recurrenceId: string): string[]; finalize(): void } {
  const stmt = c.sqlite.prepare<{ date: string }, [string]>("SELECT date FROM recurrence_exceptions WHERE recurrence_id = ? ORDER BY date");
  return { of: (id) => stmt.all(id).map((r) => r.date), finalize: () => stmt.finalize() };
}

export function insertRestoredRecurrenceException(c: Conn, r: RecurrenceExceptionRow): void {
  c.sqlite.query("INSERT INTO recurrence_exceptions (recurrence_id, date, created_at) VALUES (?, ?, ?)").run(r.recurrence_id, r.date, r.created_at);
}

/** The user's rrule recurrences (the calendar expands them; it asks tasks which are visible). */
export function rruleRecurrencesOfUser(c: Conn, userId: string): RecurrenceRecord[] {
  return c.sqlite.query<RecurrenceRecord, [string]>(`SELECT ${COLS} FROM recurrences r WHERE r.user_id = ? AND r.kind = 'rrule'`).all(userId);
}

/** The rrule recurrences of the tasks of the given lists (the lists shared with a user: their rows are the owner's). */
export function rruleRecurrencesInLists(c: Conn, listIds: string[]): RecurrenceRecord[] {
  if (listIds.length === 0) return [];
  return c.sqlite
    .query<RecurrenceRecord, [string]>(
      `SELECT ${COLS} FROM tasks t INDEXED BY tasks_list_idx JOIN recurrences r ON r.task_id = t.id
        WHERE t.list_id IN (SELECT value FROM json_each(?)) AND r.kind = 'rrule'`,
    )
    .all(JSON.stringify(listIds));
}
