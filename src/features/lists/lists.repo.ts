import { and, asc, eq, isNotNull, isNull, max, ne, sql } from "drizzle-orm";
import { folders, lists } from "../../core/schema";
import type { Conn } from "../../core/db";
import { newId } from "../../core/ids";

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
