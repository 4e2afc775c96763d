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

// ---- Export and restore (used by src/transfer/) ----
// Prepared statements: an account may hold many rows, and a restore inserts them one by one.

import type { Conn, SqlRow } from "../../core/db";
import { deleteInBatches } from "../../core/db";
import { iterateRows, ownerOfRow, ownersOfRows } from "../../core/table-rows";

/** A memo as backup and legacy read and write it: every stored column but the owner. */
export type MemoExportRow = Omit<SqlRow<typeof memos>, "user_id">;
const MEMO_COLUMNS = "id, content, pinned, version, created_at, updated_at, deleted_at";

/** The user's memos in id order (the trash too). */
export function exportMemoRows(c: Conn, userId: string): Generator<MemoExportRow> {
  return iterateRows(c, `SELECT ${MEMO_COLUMNS} FROM memos WHERE user_id = ? ORDER BY id`, userId);
}

/** The user's memos in creation order. */
export function memoRowsInOrder(c: Conn, userId: string): Generator<MemoExportRow> {
  return iterateRows(c, `SELECT ${MEMO_COLUMNS} FROM memos WHERE user_id = ? ORDER BY created_at, rowid`, userId);
}

export function exportMemoRow(c: Conn, id: string): MemoExportRow | null {
  return c.sqlite.query<MemoExportRow, [string]>(`SELECT ${MEMO_COLUMNS} FROM memos WHERE id = ?`).get(id);
}

export function insertRestoredMemo(c: Conn, userId: string, r: MemoExportRow): void {
  c.sqlite
    .query("INSERT INTO memos (id, user_id, content, pinned, version, created_at, updated_at, deleted_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
    .run(r.id, userId, r.content, r.pinned, r.version, r.created_at, r.updated_at, r.deleted_at);
}

export const memoOwner = (c: Conn, id: string) => ownerOfRow(c, memos, id);
export const memoOwners = (c: Conn, ids: string[]) => ownersOfRows(c, memos, ids);

export function deleteMemosOfUser(c: Conn, userId: string): void {
  deleteInBatches(c, "memos", "user_id = ?", userId);
}
