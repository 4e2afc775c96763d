import { and, asc, eq, gte, isNotNull, isNull, lte, max } from "drizzle-orm";
import { changes, perConnection, type Conn } from "../../core/db";
import { habitLogs, habitPauses, habits } from "../../core/schema";

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
