import { and, asc, eq, gte, isNotNull, isNull, lte, max } from "drizzle-orm";
import type { Db, Tx } from "../../core/db";
import { changes } from "../../core/db";
import { habitLogs, habitPauses, habits } from "../../core/schema";

export type HabitRow = typeof habits.$inferSelect;
export type HabitLogRow = typeof habitLogs.$inferSelect;
export type HabitPauseRow = typeof habitPauses.$inferSelect;

export function insertHabit(tx: Tx, row: HabitRow): void {
  tx.insert(habits).values(row).run();
}

/** The user's habit in any state; undefined when missing or another user's. */
export function findHabit(tx: Tx, userId: string, id: string): HabitRow | undefined {
  return tx.select().from(habits).where(and(eq(habits.id, id), eq(habits.userId, userId))).get();
}

export function listHabits(tx: Tx, userId: string, archived: boolean): HabitRow[] {
  return tx
    .select()
    .from(habits)
    .where(and(eq(habits.userId, userId), archived ? isNotNull(habits.archivedAt) : isNull(habits.archivedAt)))
    .orderBy(asc(habits.position), asc(habits.id))
    .all();
}

/** Next position after every habit of the user (archived ones keep theirs). */
export function nextPosition(tx: Tx, userId: string): number {
  const r = tx.select({ m: max(habits.position) }).from(habits).where(eq(habits.userId, userId)).get();
  return r?.m === null || r?.m === undefined ? 0 : r.m + 1;
}

export function updateHabit(tx: Tx, userId: string, id: string, set: Partial<HabitRow>): void {
  tx.update(habits).set(set).where(and(eq(habits.id, id), eq(habits.userId, userId))).run();
}

/** Removes the habit; its logs and pauses go with it (ON DELETE CASCADE). */
export function deleteHabit(tx: Tx, userId: string, id: string): void {
  tx.delete(habits).where(and(eq(habits.id, id), eq(habits.userId, userId))).run();
}

export function upsertLog(tx: Tx, row: HabitLogRow): void {
  tx.insert(habitLogs)
    .values(row)
    .onConflictDoUpdate({
      target: [habitLogs.habitId, habitLogs.date],
      set: { value: row.value, note: row.note, updatedAt: row.updatedAt },
    })
    .run();
}

export function findLog(tx: Tx, habitId: string, date: string): HabitLogRow | undefined {
  return tx.select().from(habitLogs).where(and(eq(habitLogs.habitId, habitId), eq(habitLogs.date, date))).get();
}

export function deleteLog(tx: Tx, habitId: string, date: string): boolean {
  return changes(tx.delete(habitLogs).where(and(eq(habitLogs.habitId, habitId), eq(habitLogs.date, date))).run()) === 1;
}

/** The date of the habit's earliest log, or null; one step down the (habit_id, date) primary key. */
export function earliestLogDate(tx: Tx, habitId: string): string | null {
  return tx.select({ date: habitLogs.date }).from(habitLogs).where(eq(habitLogs.habitId, habitId)).orderBy(asc(habitLogs.date)).limit(1).get()?.date ?? null;
}

/** Logs in [from, to] (inclusive, either open), by date; walks the (habit_id, date) primary key. */
export function listLogs(tx: Tx, habitId: string, from: string | undefined, to: string | undefined): HabitLogRow[] {
  const conds = [eq(habitLogs.habitId, habitId)];
  if (from) conds.push(gte(habitLogs.date, from));
  if (to) conds.push(lte(habitLogs.date, to));
  return tx.select().from(habitLogs).where(and(...conds)).orderBy(asc(habitLogs.date)).all();
}

export function listPauses(tx: Tx, habitId: string): HabitPauseRow[] {
  return tx.select().from(habitPauses).where(eq(habitPauses.habitId, habitId)).orderBy(asc(habitPauses.startDate), asc(habitPauses.id)).all();
}

export function findPause(tx: Tx, habitId: string, pauseId: string): HabitPauseRow | undefined {
  return tx.select().from(habitPauses).where(and(eq(habitPauses.id, pauseId), eq(habitPauses.habitId, habitId))).get();
}

export function insertPause(tx: Tx, row: HabitPauseRow): void {
  tx.insert(habitPauses).values(row).run();
}

export function updatePause(tx: Tx, pauseId: string, set: Partial<HabitPauseRow>): void {
  tx.update(habitPauses).set(set).where(eq(habitPauses.id, pauseId)).run();
}

export function deletePause(tx: Tx, pauseId: string): void {
  tx.delete(habitPauses).where(eq(habitPauses.id, pauseId)).run();
}

export function setPositions(tx: Tx, userId: string, ids: string[], now: string): void {
  ids.forEach((id, i) => tx.update(habits).set({ position: i, updatedAt: now }).where(and(eq(habits.id, id), eq(habits.userId, userId))).run());
}


/**
 * Hot-path reads for the weekly grid and the statistics, as prepared statements compiled once:
 * (date, value) pairs through the (habit_id, date) primary key.
 */
export class HabitReads {
  private readonly weekLogs;
  private readonly weekPauses;
  private readonly habitValues;
  private readonly habitPauseSpans;

  constructor(db: Db) {
    this.weekLogs = db.sqlite.query<{ habit_id: string; date: string; value: number }, { user: string; from: string; to: string }>(
      `SELECT l.habit_id, l.date, l.value FROM habits h JOIN habit_logs l ON l.habit_id = h.id AND l.date BETWEEN $from AND $to
       WHERE h.user_id = $user AND h.archived_at IS NULL`,
    );
    this.weekPauses = db.sqlite.query<{ habit_id: string; start_date: string; end_date: string | null }, { user: string }>(
      `SELECT p.habit_id, p.start_date, p.end_date FROM habits h JOIN habit_pauses p ON p.habit_id = h.id
       WHERE h.user_id = $user AND h.archived_at IS NULL`,
    );
    this.habitValues = db.sqlite.query<{ date: string; value: number }, { habit: string; to: string }>(
      "SELECT date, value FROM habit_logs WHERE habit_id = $habit AND date <= $to",
    );
    this.habitPauseSpans = db.sqlite.query<{ start_date: string; end_date: string | null }, { habit: string }>(
      "SELECT start_date, end_date FROM habit_pauses WHERE habit_id = $habit",
    );
  }

  /** Logs of every active habit of the user in [from, to]. */
  logsOfActive(userId: string, from: string, to: string) {
    return this.weekLogs.all({ user: userId, from, to });
  }

  pausesOfActive(userId: string) {
    return this.weekPauses.all({ user: userId });
  }

  valuesUpTo(habitId: string, to: string) {
    return this.habitValues.all({ habit: habitId, to });
  }

  pauses(habitId: string) {
    return this.habitPauseSpans.all({ habit: habitId });
  }
}
