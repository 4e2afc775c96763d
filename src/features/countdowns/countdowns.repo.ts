import { and, eq } from "drizzle-orm";
import { perConnection, type Conn } from "../../core/db";
import { countdowns } from "../../core/schema";
import type { SqlRow } from "../../core/db";
import { deleteInBatches } from "../../core/db";
import { ownerOfRow, ownersOfRows, rowById, userRows } from "../../core/table-rows";

export type CountdownRow = typeof countdowns.$inferSelect;

export function insertCountdown(c: Conn, row: CountdownRow): void {
  c.insert(countdowns).values(row).run();
}

/** The user's countdown in any state; undefined when missing or another user's. */
export function findCountdown(c: Conn, userId: string, id: string): CountdownRow | undefined {
  return c.select().from(countdowns).where(and(eq(countdowns.id, id), eq(countdowns.userId, userId))).get();
}

export function updateCountdown(c: Conn, userId: string, id: string, set: Partial<CountdownRow>): void {
  c.update(countdowns).set(set).where(and(eq(countdowns.id, id), eq(countdowns.userId, userId))).run();
}

/** Clears the user's pin (at most one row, by the partial unique index). */
export function unpinAll(c: Conn, userId: string, now: string): void {
  c.update(countdowns).set({ pinned: false, updatedAt: now }).where(and(eq(countdowns.userId, userId), eq(countdowns.pinned, true))).run();
}

export function deleteCountdown(c: Conn, userId: string, id: string): void {
  c.delete(countdowns).where(and(eq(countdowns.id, id), eq(countdowns.userId, userId))).run();
}

type RawRow = Omit<CountdownRow, "pinned" | "lunarLeap"> & { pinned: number; lunarLeap: number | null };

/** The list page's one query, prepared once per connection: every countdown of the user in one state. */
const byState = perConnection((s) => {
  const cols = `id, user_id AS userId, name, date, type, repeat, icon, calendar, lunar_month AS lunarMonth, lunar_day AS lunarDay,
      lunar_leap AS lunarLeap, pinned, archived_at AS archivedAt, created_at AS createdAt, updated_at AS updatedAt`;
  return {
    active: s.query<RawRow, { user: string }>(`SELECT ${cols} FROM countdowns WHERE user_id = $user AND archived_at IS NULL`),
    archived: s.query<RawRow, { user: string }>(`SELECT ${cols} FROM countdowns WHERE user_id = $user AND archived_at IS NOT NULL`),
  };
});

export function listCountdowns(c: Conn, userId: string, archived: boolean): CountdownRow[] {
  return byState(c)
    [archived ? "archived" : "active"].all({ user: userId })
    .map((r) => ({ ...r, pinned: r.pinned === 1, lunarLeap: r.lunarLeap === null ? null : r.lunarLeap === 1 }));
}

// ---- Export and restore (used by src/transfer/) ----
// Prepared statements: an account may hold many rows, and a restore inserts them one by one.


/** A countdown as backup and legacy read and write it: every stored column but the owner. */
export type CountdownExportRow = Omit<SqlRow<typeof countdowns>, "user_id">;
const COUNTDOWN_COLUMNS = "id, name, date, type, repeat, icon, calendar, lunar_month, lunar_day, lunar_leap, pinned, archived_at, created_at, updated_at";

/** The user's countdowns in id order. */
export function exportCountdownRows(c: Conn, userId: string): Generator<CountdownExportRow> {
  return userRows(c, countdowns, COUNTDOWN_COLUMNS, userId, "id");
}

/** The user's countdowns in creation order. */
export function countdownRowsInOrder(c: Conn, userId: string): Generator<CountdownExportRow> {
  return userRows(c, countdowns, COUNTDOWN_COLUMNS, userId, "created_at, rowid");
}

export function exportCountdownRow(c: Conn, id: string): CountdownExportRow | null {
  return rowById<CountdownExportRow>(c, countdowns, COUNTDOWN_COLUMNS, id);
}

/** Whether the user has a pinned countdown (one at most: a restore's pin yields to it). */
export function hasPinnedCountdown(c: Conn, userId: string): boolean {
  return c.sqlite.query("SELECT 1 FROM countdowns WHERE user_id = ? AND pinned = 1").get(userId) !== null;
}

/**
 * Inserts a restored countdown. One pinned countdown per user: with `keepOwnPin` (a merge), an
 * incoming pin yields to one the user has. Returns whether the row went in pinned.
 */
export function insertRestoredCountdown(c: Conn, userId: string, r: CountdownExportRow, keepOwnPin: boolean): boolean {
  const pinned = r.pinned === 1 && !(keepOwnPin && hasPinnedCountdown(c, userId)) ? 1 : 0;
  c.sqlite
    .query(
      `INSERT INTO countdowns (id, user_id, name, date, type, repeat, icon, calendar, lunar_month, lunar_day, lunar_leap, pinned, archived_at, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .run(r.id, userId, r.name, r.date, r.type, r.repeat, r.icon, r.calendar, r.lunar_month, r.lunar_day, r.lunar_leap, pinned, r.archived_at, r.created_at, r.updated_at);
  return pinned === 1;
}

export const countdownOwner = (c: Conn, id: string) => ownerOfRow(c, countdowns, id);
export const countdownOwners = (c: Conn, ids: string[]) => ownersOfRows(c, countdowns, ids);

export function deleteCountdownsOfUser(c: Conn, userId: string): void {
  deleteInBatches(c, "countdowns", "user_id = ?", userId);
}
