import { and, asc, eq, isNull, max } from "drizzle-orm";
import { folders } from "../../core/schema";
import type { Tx } from "../../core/db";

export type FolderRow = typeof folders.$inferSelect;

/** The user's folder, if it exists and is not soft-deleted. */
export function findActiveFolder(tx: Tx, userId: string, id: string): FolderRow | undefined {
  return tx
    .select()
    .from(folders)
    .where(and(eq(folders.id, id), eq(folders.userId, userId), isNull(folders.deletedAt)))
    .get();
}

export function listActiveFolders(tx: Tx, userId: string): FolderRow[] {
  return tx
    .select()
    .from(folders)
    .where(and(eq(folders.userId, userId), isNull(folders.deletedAt)))
    .orderBy(asc(folders.position), asc(folders.createdAt), asc(folders.id))
    .all();
}

export function nextFolderPosition(tx: Tx, userId: string): number {
  const r = tx.select({ m: max(folders.position) }).from(folders).where(eq(folders.userId, userId)).get();
  return (r?.m ?? 0) + 1;
}

export function insertFolder(tx: Tx, row: typeof folders.$inferInsert): void {
  tx.insert(folders).values(row).run();
}

export function updateFolder(tx: Tx, userId: string, id: string, set: Partial<typeof folders.$inferInsert>): void {
  tx.update(folders)
    .set(set)
    .where(and(eq(folders.id, id), eq(folders.userId, userId)))
    .run();
}
