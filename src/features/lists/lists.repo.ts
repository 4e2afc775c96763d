import { and, asc, eq, isNotNull, isNull, max, ne, sql } from "drizzle-orm";
import { folders, lists } from "../../core/schema";
import type { Conn } from "../../core/db";
import { newId } from "../../core/ids";
import type { SqlRow } from "../../core/db";
import { deleteInBatches } from "../../core/db";
import { isOwnRow, iterateRows, ownerOfRow, ownersOfRows, rowById, userRows } from "../../core/table-rows";

export type ListRow = typeof lists.$inferSelect;
/** A list as presented: `folderId` is null when the folder is soft-deleted. */
export type ListView = ListRow;

/** Every user owns exactly one system inbox, created with the user. */
export function createInbox(c: Conn, userId: string, now: Date): string {
  const id = newId();
  c.insert(lists)
    .values({ id, userId, name: "Inbox", isInbox: true, position: 0, createdAt: now.toISOString(), updatedAt: now.toISOString() })
    .run();
  return id;
}

// A list in a soft-deleted folder is shown at root.
const visibleFolderId = sql<string | null>`CASE WHEN EXISTS (SELECT 1 FROM ${folders} f WHERE f.id = ${lists.folderId} AND f.deleted_at IS NULL) THEN ${lists.folderId} ELSE NULL END`;

const viewColumns = {
  id: lists.id,
  userId: lists.userId,
  name: lists.name,
  folderId: visibleFolderId,
  isInbox: lists.isInbox,
  color: lists.color,
  position: lists.position,
  sort: lists.sort,
  createdAt: lists.createdAt,
  updatedAt: lists.updatedAt,
  deletedAt: lists.deletedAt,
};

export function findList(c: Conn, userId: string, id: string): ListView | undefined {
  return c
    .select(viewColumns)
    .from(lists)
    .where(and(eq(lists.id, id), eq(lists.userId, userId)))
    .get();
}

export function findInbox(c: Conn, userId: string): ListView | undefined {
  return c
    .select(viewColumns)
    .from(lists)
    .where(and(eq(lists.userId, userId), eq(lists.isInbox, true)))
    .get();
}

/** Active lists (inbox first, then by position) or archived ones (most recently archived first). */
export function listLists(c: Conn, userId: string, archived: boolean): ListView[] {
  const q = c.select(viewColumns).from(lists);
  return archived
    ? q
        .where(and(eq(lists.userId, userId), isNotNull(lists.deletedAt)))
        .orderBy(sql`${lists.deletedAt} DESC`, asc(lists.id))
        .all()
    : q
        .where(and(eq(lists.userId, userId), isNull(lists.deletedAt)))
        .orderBy(sql`${lists.isInbox} DESC`, asc(lists.position), asc(lists.createdAt), asc(lists.id))
        .all();
}

export function nextListPosition(c: Conn, userId: string): number {
  const r = c.select({ m: max(lists.position) }).from(lists).where(eq(lists.userId, userId)).get();
  return (r?.m ?? 0) + 1;
}

export function insertList(c: Conn, row: typeof lists.$inferInsert): void {
  c.insert(lists).values(row).run();
}

export function updateList(c: Conn, userId: string, id: string, set: Partial<typeof lists.$inferInsert>): void {
  c.update(lists)
    .set(set)
    .where(and(eq(lists.id, id), eq(lists.userId, userId)))
    .run();
}

export function deleteList(c: Conn, userId: string, id: string): void {
  c.delete(lists)
    .where(and(eq(lists.id, id), eq(lists.userId, userId)))
    .run();
}

/** Active non-inbox lists' ids, for reorder. */
export function activeReorderableListIds(c: Conn, userId: string): string[] {
  return c
    .select({ id: lists.id })
    .from(lists)
    .where(and(eq(lists.userId, userId), isNull(lists.deletedAt), ne(lists.isInbox, true)))
    .all()
    .map((r) => r.id);
}

/** Lists of a folder go to root (the folder is being deleted). */
export function detachListsFromFolder(c: Conn, userId: string, folderId: string, now: string): void {
  c.update(lists)
    .set({ folderId: null, updatedAt: now })
    .where(and(eq(lists.userId, userId), eq(lists.folderId, folderId)))
    .run();
}

// ---- Export and restore (used by src/transfer/) ----
// Prepared statements: an account may hold many rows, and a restore inserts them one by one.


/** A list as backup and legacy read and write it: every stored column but the owner. */
export type ListExportRow = Omit<SqlRow<typeof lists>, "user_id">;
const LIST_COLUMNS = "id, name, folder_id, is_inbox, color, position, created_at, updated_at, deleted_at, sort";

/** The user's lists in id order (archived ones and the inbox too). */
export function exportListRows(c: Conn, userId: string): Generator<ListExportRow> {
  return userRows(c, lists, LIST_COLUMNS, userId, "id");
}

/**
 * The user's lists in the order the app shows them, the inbox first; a list in a soft-deleted
 * folder is at root (folder_id null), as the API presents it.
 */
export function listRowsInOrder(c: Conn, userId: string): Generator<ListExportRow> {
  return iterateRows(
    c,
    `SELECT l.id, l.name,
            CASE WHEN EXISTS (SELECT 1 FROM folders f WHERE f.id = l.folder_id AND f.deleted_at IS NULL) THEN l.folder_id ELSE NULL END AS folder_id,
            l.is_inbox, l.color, l.position, l.created_at, l.updated_at, l.deleted_at, l.sort
       FROM lists l WHERE l.user_id = ? ORDER BY l.is_inbox DESC, l.position, l.created_at, l.rowid`,
    userId,
  );
}

export function exportListRow(c: Conn, id: string): ListExportRow | null {
  return rowById<ListExportRow>(c, lists, LIST_COLUMNS, id);
}

/** Inserts a restored list; never an inbox (the user has one: the file's inbox maps onto it). */
export function insertRestoredList(c: Conn, userId: string, r: Omit<ListExportRow, "is_inbox" | "sort"> & { sort?: ListExportRow["sort"] | null }): void {
  c.sqlite
    .query("INSERT INTO lists (id, user_id, name, folder_id, is_inbox, color, position, created_at, updated_at, deleted_at, sort) VALUES (?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?)")
    .run(r.id, userId, r.name, r.folder_id, r.color, r.position, r.created_at, r.updated_at, r.deleted_at, r.sort ?? "created");
}

/** The id of the user's inbox (every user has exactly one). */
export function inboxIdOf(c: Conn, userId: string): string {
  return findInbox(c, userId)!.id;
}

/** A replace restore gives the user's inbox the file's colour and place. */
export function placeInbox(c: Conn, id: string, color: string | null, position: number, updatedAt: string): void {
  c.sqlite.query("UPDATE lists SET color = ?, position = ?, updated_at = ? WHERE id = ?").run(color, position, updatedAt, id);
}

export const listOwner = (c: Conn, id: string) => ownerOfRow(c, lists, id);
export const listOwners = (c: Conn, ids: string[]) => ownersOfRows(c, lists, ids);
export const isOwnList = (c: Conn, id: string, userId: string) => isOwnRow(c, lists, id, userId);

/** Removes every list of the user but the inbox (replace restore; their tasks must be gone first). */
export function deleteListsOfUser(c: Conn, userId: string): void {
  deleteInBatches(c, "lists", "user_id = ? AND is_inbox = 0", userId);
}
