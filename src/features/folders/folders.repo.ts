import { and, asc, eq, isNull, max } from "drizzle-orm";
import { folders } from "../../core/schema";
import type { Conn } from "../../core/db";
import type { SqlRow } from "../../core/db";
import { deleteInBatches } from "../../core/db";
import { isOwnRow, iterateRows, ownerOfRow, ownersOfRows, rowById, userRows } from "../../core/table-rows";

export type FolderRow = typeof folders.$inferSelect;

/** The user's folder, if it exists and is not soft-deleted. */
export function findActiveFolder(c: Conn, userId: string, id: string): FolderRow | undefined {
  return c
    .select()
    .from(folders)
    .where(and(eq(folders.id, id), eq(folders.userId, userId), isNull(folders.deletedAt)))
    .get();
}

export function listActiveFolders(c: Conn, userId: string): FolderRow[] {
  return c
    .select()
    .from(folders)
    .where(and(eq(folders.userId, userId), isNull(folders.deletedAt)))
    .orderBy(asc(folders.position), asc(folders.createdAt), asc(folders.id))
    .all();
}

export function nextFolderPosition(c: Conn, userId: string): number {
  const r = c.select({ m: max(folders.position) }).from(folders).where(eq(folders.userId, userId)).get();
  return (r?.m ?? 0) + 1;
}

export function insertFolder(c: Conn, row: typeof folders.$inferInsert): void {
  c.insert(folders).values(row).run();
}

export function updateFolder(c: Conn, userId: string, id: string, set: Partial<typeof folders.$inferInsert>): void {
  c.update(folders)
    .set(set)
    .where(and(eq(folders.id, id), eq(folders.userId, userId)))
    .run();
}

// ---- Export and restore (used by src/transfer/) ----
// Prepared statements: an account may hold many rows, and a restore inserts them one by one.


/** A folder as backup and legacy read and write it: every stored column but the owner. */
export type FolderExportRow = Omit<SqlRow<typeof folders>, "user_id">;
const FOLDER_COLUMNS = "id, name, position, created_at, updated_at, deleted_at";

/** The user's folders in id order (soft-deleted ones too). */
export function exportFolderRows(c: Conn, userId: string): Generator<FolderExportRow> {
  return userRows(c, folders, FOLDER_COLUMNS, userId, "id");
}

/** The user's live folders in the order the app lists them (a soft-deleted folder's lists show at root). */
export function liveFolderRowsInOrder(c: Conn, userId: string): Generator<FolderExportRow> {
  return iterateRows(c, `SELECT ${FOLDER_COLUMNS} FROM folders WHERE user_id = ? AND deleted_at IS NULL ORDER BY position, created_at, rowid`, userId);
}

export function exportFolderRow(c: Conn, id: string): FolderExportRow | null {
  return rowById<FolderExportRow>(c, folders, FOLDER_COLUMNS, id);
}

export function insertRestoredFolder(c: Conn, userId: string, r: FolderExportRow): void {
  c.sqlite
    .query("INSERT INTO folders (id, user_id, name, position, created_at, updated_at, deleted_at) VALUES (?, ?, ?, ?, ?, ?, ?)")
    .run(r.id, userId, r.name, r.position, r.created_at, r.updated_at, r.deleted_at);
}

export const folderOwner = (c: Conn, id: string) => ownerOfRow(c, folders, id);
export const folderOwners = (c: Conn, ids: string[]) => ownersOfRows(c, folders, ids);
export const isOwnFolder = (c: Conn, id: string, userId: string) => isOwnRow(c, folders, id, userId);

/** Removes every folder of the user (replace restore); their lists stay, at root. */
export function deleteFoldersOfUser(c: Conn, userId: string): void {
  deleteInBatches(c, "folders", "user_id = ?", userId);
}
