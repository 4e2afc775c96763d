import { and, eq } from "drizzle-orm";
import { perConnection, type Conn } from "../../core/db";
import { countdowns } from "../../core/schema";

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
