import { and, asc, eq, isNull, max } from "drizzle-orm";
import { folders } from "../../core/schema";
import type { Conn } from "../../core/db";

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
