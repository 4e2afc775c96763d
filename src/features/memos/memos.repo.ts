import { and, eq, isNull, sql } from "drizzle-orm";
import type { Db, Tx } from "../../core/db";
import { changes } from "../../core/db";
import { memos } from "../../core/schema";

export type MemoRow = typeof memos.$inferSelect;

const sqlVersionBump = sql`${memos.version} + 1`;
const isActive = isNull(memos.deletedAt);

export function insertMemo(tx: Tx, row: typeof memos.$inferInsert): void {
  tx.insert(memos).values(row).run();
}

/** The user's memo, in any state; undefined when missing or another user's. */
export function findMemo(tx: Tx, userId: string, id: string): MemoRow | undefined {
  return tx.select().from(memos).where(and(eq(memos.id, id), eq(memos.userId, userId))).get();
}

/**
 * Compare-and-set in one statement: changes only an active memo whose version is `expected`,
 * and bumps the version. Returns false when no row matched.
 */
export function updateMemoIfVersion(
  tx: Tx,
  userId: string,
  id: string,
  expected: number,
  set: { content?: string; pinned?: boolean; updatedAt: string },
): boolean {
  const res = tx
    .update(memos)
    .set({ ...set, version: sqlVersionBump })
    .where(and(eq(memos.id, id), eq(memos.userId, userId), eq(memos.version, expected), isActive))
    .run();
  return changes(res) === 1;
}

/** Sets or clears deleted_at (bumping the version); returns false when nothing matched. */
export function setMemoDeleted(tx: Tx, userId: string, id: string, deletedAt: string | null, now: string): boolean {
  const res = tx
    .update(memos)
    .set({ deletedAt, updatedAt: now, version: sqlVersionBump })
    .where(and(eq(memos.id, id), eq(memos.userId, userId)))
    .run();
  return changes(res) === 1;
}

export function deleteMemo(tx: Tx, userId: string, id: string): void {
  tx.delete(memos).where(and(eq(memos.id, id), eq(memos.userId, userId))).run();
}


/** Prepared newest-first keyset page queries (one per state), compiled once per database. */
export class MemoPages {
  private readonly first: Record<"active" | "deleted", ReturnType<Db["sqlite"]["query"]>>;
  private readonly after: Record<"active" | "deleted", ReturnType<Db["sqlite"]["query"]>>;

  constructor(db: Db) {
    const cols = "id, user_id AS userId, content, pinned, version, created_at AS createdAt, updated_at AS updatedAt, deleted_at AS deletedAt";
    const where = { active: "deleted_at IS NULL", deleted: "deleted_at IS NOT NULL" } as const;
    const mk = (state: "active" | "deleted", keyset: boolean) =>
      db.sqlite.query(
        `SELECT ${cols} FROM memos WHERE user_id = $user AND ${where[state]}` +
          (keyset ? " AND (created_at < $at OR (created_at = $at AND id < $id))" : "") +
          " ORDER BY created_at DESC, id DESC LIMIT $limit",
      );
    this.first = { active: mk("active", false), deleted: mk("deleted", false) };
    this.after = { active: mk("active", true), deleted: mk("deleted", true) };
  }

  /** limit + 1 rows after the key (createdAt, id), or from the start. */
  page(userId: string, deleted: boolean, limit: number, after: { at: string; id: string } | null): MemoRow[] {
    const state = deleted ? "deleted" : "active";
    const rows = after
      ? this.after[state].all({ user: userId, at: after.at, id: after.id, limit: limit + 1 })
      : this.first[state].all({ user: userId, limit: limit + 1 });
    return (rows as (Omit<MemoRow, "pinned"> & { pinned: number })[]).map((r) => ({ ...r, pinned: r.pinned === 1 }));
  }
}
