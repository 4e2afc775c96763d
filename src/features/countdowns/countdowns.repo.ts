import { and, eq } from "drizzle-orm";
import type { Db, Tx } from "../../core/db";
import { countdowns } from "../../core/schema";

export type CountdownRow = typeof countdowns.$inferSelect;

export function insertCountdown(tx: Tx, row: CountdownRow): void {
  tx.insert(countdowns).values(row).run();
}

/** The user's countdown in any state; undefined when missing or another user's. */
export function findCountdown(tx: Tx, userId: string, id: string): CountdownRow | undefined {
  return tx.select().from(countdowns).where(and(eq(countdowns.id, id), eq(countdowns.userId, userId))).get();
}

export function updateCountdown(tx: Tx, userId: string, id: string, set: Partial<CountdownRow>): void {
  tx.update(countdowns).set(set).where(and(eq(countdowns.id, id), eq(countdowns.userId, userId))).run();
}

/** Clears the user's pin (at most one row, by the partial unique index). */
export function unpinAll(tx: Tx, userId: string, now: string): void {
  tx.update(countdowns).set({ pinned: false, updatedAt: now }).where(and(eq(countdowns.userId, userId), eq(countdowns.pinned, true))).run();
}

export function deleteCountdown(tx: Tx, userId: string, id: string): void {
  tx.delete(countdowns).where(and(eq(countdowns.id, id), eq(countdowns.userId, userId))).run();
}

type RawRow = Omit<CountdownRow, "pinned" | "lunarLeap"> & { pinned: number; lunarLeap: number | null };

/** The list page's one query, prepared once: every countdown of the user in one state. */
export class CountdownReads {
  private readonly byState;

  constructor(db: Db) {
    const cols = `id, user_id AS userId, name, date, type, repeat, icon, calendar, lunar_month AS lunarMonth, lunar_day AS lunarDay,
      lunar_leap AS lunarLeap, pinned, archived_at AS archivedAt, created_at AS createdAt, updated_at AS updatedAt`;
    this.byState = {
      active: db.sqlite.query<RawRow, { user: string }>(`SELECT ${cols} FROM countdowns WHERE user_id = $user AND archived_at IS NULL`),
      archived: db.sqlite.query<RawRow, { user: string }>(`SELECT ${cols} FROM countdowns WHERE user_id = $user AND archived_at IS NOT NULL`),
    };
  }

  list(userId: string, archived: boolean): CountdownRow[] {
    return this.byState[archived ? "archived" : "active"]
      .all({ user: userId })
      .map((r) => ({ ...r, pinned: r.pinned === 1, lunarLeap: r.lunarLeap === null ? null : r.lunarLeap === 1 }));
  }
}
