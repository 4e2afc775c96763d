import { and, asc, eq, gte, isNotNull, isNull, lte, max } from "drizzle-orm";
import { changes, perConnection, type Conn } from "../../core/db";
import { habitLogs, habitPauses, habits } from "../../core/schema";
import type { SqlRow } from "../../core/db";
import { deleteInBatches } from "../../core/db";
import { isOwnRow, ownerOfRow, ownersOfRows, rowById, userRows } from "../../core/table-rows";

export type HabitRow = typeof habits.$inferSelect;
export type HabitLogRow = typeof habitLogs.$inferSelect;
export type HabitPauseRow = typeof habitPauses.$inferSelect;

export function insertHabit(c: Conn, row: HabitRow): void {
  c.insert(habits).values(row).run();
}

/** The user's habit in any state; undefined when missing or another user's. */
export function findHabit(c: Conn, userId: string, id: string): HabitRow | undefined {
  return c.select().from(habits).where(and(eq(habits.id, id), eq(habits.userId, userId))).get();
}

export function listHabits(c: Conn, userId: string, archived: boolean): HabitRow[] {
  return c
    .select()
    .from(habits)
    .where(and(eq(habits.userId, userId), archived ? isNotNull(habits.archivedAt) : isNull(habits.archivedAt)))
    .orderBy(asc(habits.position), asc(habits.id))
    .all();
}

/** Next position after every habit of the user (archived ones keep theirs). */
export function nextPosition(c: Conn, userId: string): number {
  const r = c.select({ m: max(habits.position) }).from(habits).where(eq(habits.userId, userId)).get();
  return r?.m === null || r?.m === undefined ? 0 : r.m + 1;
}

export function updateHabit(c: Conn, userId: string, id: string, set: Partial<HabitRow>): void {
  c.update(habits).set(set).where(and(eq(habits.id, id), eq(habits.userId, userId))).run();
}

/** Removes the habit; its logs and pauses go with it (ON DELETE CASCADE). */
export function deleteHabit(c: Conn, userId: string, id: string): void {
  c.delete(habits).where(and(eq(habits.id, id), eq(habits.userId, userId))).run();
}

export function upsertLog(c: Conn, row: HabitLogRow): void {
  c.insert(habitLogs)
    .values(row)
    .onConflictDoUpdate({
      target: [habitLogs.habitId, habitLogs.date],
      set: { value: row.value, note: row.note, updatedAt: row.updatedAt },
    })
    .run();
}

export function findLog(c: Conn, habitId: string, date: string): HabitLogRow | undefined {
  return c.select().from(habitLogs).where(and(eq(habitLogs.habitId, habitId), eq(habitLogs.date, date))).get();
}

export function deleteLog(c: Conn, habitId: string, date: string): boolean {
  return changes(c.delete(habitLogs).where(and(eq(habitLogs.habitId, habitId), eq(habitLogs.date, date))).run()) === 1;
}

/** The date of the habit's earliest log, or null; one step down the (habit_id, date) primary key. */
export function earliestLogDate(c: Conn, habitId: string): string | null {
  return c.select({ date: habitLogs.date }).from(habitLogs).where(eq(habitLogs.habitId, habitId)).orderBy(asc(habitLogs.date)).limit(1).get()?.date ?? null;
}

/** Logs in [from, to] (inclusive, either open), by date; walks the (habit_id, date) primary key. */
export function listLogs(c: Conn, habitId: string, from: string | undefined, to: string | undefined): HabitLogRow[] {
  const conds = [eq(habitLogs.habitId, habitId)];
  if (from) conds.push(gte(habitLogs.date, from));
  if (to) conds.push(lte(habitLogs.date, to));
  return c.select().from(habitLogs).where(and(...conds)).orderBy(asc(habitLogs.date)).all();
}

export function listPauses(c: Conn, habitId: string): HabitPauseRow[] {
  return c.select().from(habitPauses).where(eq(habitPauses.habitId, habitId)).orderBy(asc(habitPauses.startDate), asc(habitPauses.id)).all();
}

export function findPause(c: Conn, habitId: string, pauseId: string): HabitPauseRow | undefined {
  return c.select().from(habitPauses).where(and(eq(habitPauses.id, pauseId), eq(habitPauses.habitId, habitId))).get();
}

export function insertPause(c: Conn, row: HabitPauseRow): void {
  c.insert(habitPauses).values(row).run();
}

export function updatePause(c: Conn, pauseId: string, set: Partial<HabitPauseRow>): void {
  c.update(habitPauses).set(set).where(eq(habitPauses.id, pauseId)).run();
}

export function deletePause(c: Conn, pauseId: string): void {
  c.delete(habitPauses).where(eq(habitPauses.id, pauseId)).run();
}

export function setPositions(c: Conn, userId: string, ids: string[], now: string): void {
  ids.forEach((id, i) => c.update(habits).set({ position: i, updatedAt: now }).where(and(eq(habits.id, id), eq(habits.userId, userId))).run());
}


/**
 * Hot-path reads for the weekly grid and the statistics, as prepared statements compiled once per
 * connection: (date, value) pairs through the (habit_id, date) primary key.
 */
const reads = perConnection((s) => ({
  weekLogs: s.query<{ habit_id: string; date: string; value: number }, { user: string; from: string; to: string }>(
    `SELECT l.habit_id, l.date, l.value FROM habits h JOIN habit_logs l ON l.habit_id = h.id AND l.date BETWEEN $from AND $to
       WHERE h.user_id = $user AND h.archived_at IS NULL`,
  ),
  weekPauses: s.query<{ habit_id: string; start_date: string; end_date: string | null }, { user: string }>(
    `SELECT p.habit_id, p.start_date, p.end_date FROM habits h JOIN habit_pauses p ON p.habit_id = h.id
       WHERE h.user_id = $user AND h.archived_at IS NULL`,
  ),
  habitValues: s.query<{ date: string; value: number }, { habit: string; to: string }>("SELECT date, value FROM habit_logs WHERE habit_id = $habit AND date <= $to"),
  habitPauseSpans: s.query<{ start_date: string; end_date: string | null }, { habit: string }>("SELECT start_date, end_date FROM habit_pauses WHERE habit_id = $habit"),
}));

/** Logs of every active habit of the user in [from, to]. */
export function logsOfActiveHabits(c: Conn, userId: string, from: string, to: string) {
  return reads(c).weekLogs.all({ user: userId, from, to });
}

/** Pauses of every active habit of the user. */
export function pausesOfActiveHabits(c: Conn, userId: string) {
  return reads(c).weekPauses.all({ user: userId });
}

/** A habit's (date, value) logs up to `to`. */
export function logValuesUpTo(c: Conn, habitId: string, to: string) {
  return reads(c).habitValues.all({ habit: habitId, to });
}

/** A habit's pause spans. */
export function pauseSpans(c: Conn, habitId: string) {
  return reads(c).habitPauseSpans.all({ habit: habitId });
}

// ---- Export and restore (used by src/transfer/) ----
// Prepared statements: an account may hold many rows, and a restore inserts them one by one.


/** A habit as backup and legacy read and write it: every stored column but the owner (frequency is JSON text). */
export type HabitExportRow = Omit<SqlRow<typeof habits>, "user_id">;
const HABIT_COLUMNS = "id, name, icon, color, frequency, goal, unit, start_date, position, archived_at, created_at, updated_at";

/** The user's habits in id order. */
export function exportHabitRows(c: Conn, userId: string): Generator<HabitExportRow> {
  return userRows(c, habits, HABIT_COLUMNS, userId, "id");
}

/** The user's habits in the order the app lists them. */
export function habitRowsInOrder(c: Conn, userId: string): Generator<HabitExportRow> {
  return userRows(c, habits, HABIT_COLUMNS, userId, "position, created_at, rowid");
}

export function exportHabitRow(c: Conn, id: string): HabitExportRow | null {
  return rowById<HabitExportRow>(c, habits, HABIT_COLUMNS, id);
}

export function insertRestoredHabit(c: Conn, userId: string, r: HabitExportRow): void {
  c.sqlite
    .query("INSERT INTO habits (id, user_id, name, icon, color, frequency, goal, unit, start_date, position, archived_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
    .run(r.id, userId, r.name, r.icon, r.color, r.frequency, r.goal, r.unit, r.start_date, r.position, r.archived_at, r.created_at, r.updated_at);
}

/** A habit's start_date, or null when there is no such habit. */
export function habitStartOf(c: Conn, habitId: string): string | null {
  return c.sqlite.query<{ start_date: string }, [string]>("SELECT start_date FROM habits WHERE id = ?").get(habitId)?.start_date ?? null;
}

/** The start_date of the user's habit with this id, or null. */
export function ownHabitStart(c: Conn, habitId: string, userId: string): string | null {
  return c.sqlite.query<{ start_date: string }, [string, string]>("SELECT start_date FROM habits WHERE id = ? AND user_id = ?").get(habitId, userId)?.start_date ?? null;
}

export const habitOwner = (c: Conn, id: string) => ownerOfRow(c, habits, id);
export const habitOwners = (c: Conn, ids: string[]) => ownersOfRows(c, habits, ids);
export const isOwnHabit = (c: Conn, id: string, userId: string) => isOwnRow(c, habits, id, userId);

/** A log as backup reads and writes it. */
export type HabitLogExportRow = Omit<SqlRow<typeof habitLogs>, "user_id">;
const LOG_COLUMNS = "habit_id, date, value, note, created_at, updated_at";

/** The user's habit logs, by habit then date. */
export function exportHabitLogRows(c: Conn, userId: string): Generator<HabitLogExportRow> {
  return userRows(c, habitLogs, LOG_COLUMNS, userId, "habit_id, date");
}

export function exportHabitLogRow(c: Conn, habitId: string, date: string): HabitLogExportRow | null {
  return c.sqlite.query<HabitLogExportRow, [string, string]>(`SELECT ${LOG_COLUMNS} FROM habit_logs WHERE habit_id = ? AND date = ?`).get(habitId, date);
}

export function insertRestoredHabitLog(c: Conn, userId: string, r: HabitLogExportRow): void {
  c.sqlite
    .query("INSERT INTO habit_logs (habit_id, user_id, date, value, note, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)")
    .run(r.habit_id, userId, r.date, r.value, r.note, r.created_at, r.updated_at);
}

/** A pause as backup reads and writes it. */
export type HabitPauseExportRow = Omit<SqlRow<typeof habitPauses>, "user_id">;
const PAUSE_COLUMNS = "id, habit_id, start_date, end_date, created_at, updated_at";

/** The user's habit pauses in id order. */
export function exportHabitPauseRows(c: Conn, userId: string): Generator<HabitPauseExportRow> {
  return userRows(c, habitPauses, PAUSE_COLUMNS, userId, "id");
}

export function exportHabitPauseRow(c: Conn, id: string): HabitPauseExportRow | null {
  return rowById<HabitPauseExportRow>(c, habitPauses, PAUSE_COLUMNS, id);
}

export function insertRestoredHabitPause(c: Conn, userId: string, r: HabitPauseExportRow): void {
  c.sqlite
    .query("INSERT INTO habit_pauses (id, habit_id, user_id, start_date, end_date, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)")
    .run(r.id, r.habit_id, userId, r.start_date, r.end_date, r.created_at, r.updated_at);
}

/** A habit's pauses, as the overlap rule reads them. */
export function pausePeriodsOf(c: Conn, habitId: string): { id: string; startDate: string; endDate: string | null }[] {
  return c.sqlite
    .query<{ id: string; startDate: string; endDate: string | null }, [string]>("SELECT id, start_date AS startDate, end_date AS endDate FROM habit_pauses WHERE habit_id = ?")
    .all(habitId);
}

export const habitPauseOwner = (c: Conn, id: string) => ownerOfRow(c, habitPauses, id);

/** Removes every habit of the user with their logs (pauses by cascade). */
export function deleteHabitsOfUser(c: Conn, userId: string): void {
  deleteInBatches(c, "habit_logs", "user_id = ?", userId);
  deleteInBatches(c, "habits", "user_id = ?", userId);
}
