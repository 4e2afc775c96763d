import { and, eq, isNull, sql } from "drizzle-orm";
import { changes, perConnection, type Conn } from "../../core/db";
import { memos } from "../../core/schema";
import type { SqlRow } from "../../core/db";
import { deleteInBatches } from "../../core/db";
import { ownerOfRow, ownersOfRows, rowById, userRows } from "../../core/table-rows";

export type MemoRow = typeof memos.$inferSelect;

const sqlVersionBump = sql`${memos.version} + 1`;
const isActive = isNull(memos.deletedAt);

export function insertMemo(c: Conn, row: typeof memos.$inferInsert): void {
  c.insert(memos).values(row).run();
}

/** The user's memo, in any state; undefined when missing or another user's. */
export function findMemo(c: Conn, userId: string, id: string): MemoRow | undefined {
  return c.select().from(memos).where(and(eq(memos.id, id), eq(memos.userId, userId))).get();
}

/**
 * Compare-and-set in one statement: changes only an active memo whose version is `expected`,
 * and bumps the version. Returns false when no row matched.
 */
export function updateMemoIfVersion(
  c: Conn,
  userId: string,
  id: string,
  expected: number,
  set: { content?: string; pinned?: boolean; updatedAt: string },
): boolean {
  const res = c
    .update(memos)
    .set({ ...set, version: sqlVersionBump })
    .where(and(eq(memos.id, id), eq(memos.userId, userId), eq(memos.version, expected), isActive))
    .run();
  return changes(res) === 1;
}

/** Sets or clears deleted_at (bumping the version); returns false when nothing matched. */
export function setMemoDeleted(c: Conn, userId: string, id: string, deletedAt: string | null, now: string): boolean {
  const res = c
    .update(memos)
    .set({ deletedAt, updatedAt: now, version: sqlVersionBump })
    .where(and(eq(memos.id, id), eq(memos.userId, userId)))
    .run();
  return changes(res) === 1;
}

export function deleteMemo(c: Conn, userId: string, id: string): void {
  c.delete(memos).where(and(eq(memos.id, id), eq(memos.userId, userId))).run();
}


/** Prepared newest-first keyset page queries (one per state), compiled once per connection. */
const pages = perConnection((s) => {
  const cols = "id, user_id AS userId, content, pinned, version, created_at AS createdAt, updated_at AS updatedAt, deleted_at AS deletedAt";
  const where = { active: "deleted_at IS NULL", deleted: "deleted_at IS NOT NULL" } as const;
  const mk = (state: "active" | "deleted", keyset: boolean) =>
    s.query(
      `SELECT ${cols} FROM memos WHERE user_id = $user AND ${where[state]}` +
        (keyset ? " AND (created_at < $at OR (created_at = $at AND id < $id))" : "") +
        " ORDER BY created_at DESC, id DESC LIMIT $limit",
    );
  return { first: { active: mk("active", false), deleted: mk("deleted", false) }, after: { active: mk("active", true), deleted: mk("deleted", true) } };
});

/** limit + 1 memos of the user in one state, newest first, after the key (createdAt, id), or from the start. */
export function pageMemos(c: Conn, userId: string, deleted: boolean, limit: number, after: { at: string; id: string } | null): MemoRow[] {
  const state = deleted ? "deleted" : "active";
  const p = pages(c);
  const rows = after ? p.after[state].all({ user: userId, at: after.at, id: after.id, limit: limit + 1 }) : p.first[state].all({ user: userId, limit: limit + 1 });
  return (rows as (Omit<MemoRow, "pinned"> & { pinned: number })[]).map((r) => ({ ...r, pinned: r.pinned === 1 }));
}

// ---- Export and restore (used by src/transfer/) ----
// Prepared statements: an account may hold many rows, and a restore inserts them one by one.


/** A memo as backup and legacy read and write it: every stored column but the owner. */
export type MemoExportRow = Omit<SqlRow<typeof memos>, "user_id">;
const MEMO_COLUMNS = "id, content, pinned, version, created_at, updated_at, deleted_at";

/** The user's memos in id order (the trash too). */
export function exportMemoRows(c: Conn, userId: string): Generator<MemoExportRow> {
  return userRows(c, memos, MEMO_COLUMNS, userId, "id");
}

/** The user's memos in creation order. */
export function memoRowsInOrder(c: Conn, userId: string): Generator<MemoExportRow> {
  return userRows(c, memos, MEMO_COLUMNS, userId, "created_at, rowid");
}

export function exportMemoRow(c: Conn, id: string): MemoExportRow | null {
  return rowById<MemoExportRow>(c, memos, MEMO_COLUMNS, id);
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
