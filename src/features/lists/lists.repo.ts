import { and, asc, eq, isNotNull, isNull, max, ne, sql } from "drizzle-orm";
import { folders, lists } from "../../core/schema";
import type { Conn } from "../../core/db";
import { newId } from "../../core/ids";
import type { SqlRow } from "../../core/db";
import { deleteInBatches } from "../../core/db";
import { roleOnList, type ListRole } from "./lists.access";
import { findMember } from "./lists.members.repo";
import { isOwnRow, iterateRows, ownerOfRow, ownersOfRows, rowById, userRows } from "../../core/table-rows";

export type ListRow = typeof lists.$inferSelect;
/**
 * A list as one user sees it: `folderId` is null when the folder is soft-deleted; for a shared
 * list seen by a member, `folderId` and `position` are the member's own placement. `userId` is
 * the owner.
 */
export type ListView = ListRow & {
  role: ListRole;
  owner: { id: string; username: string; display_name: string };
  memberCount: number;
};

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

/** The user's own list (as its owner sees it, without the sharing fields). */
export function findList(c: Conn, userId: string, id: string): ListRow | undefined {
  return c
    .select(viewColumns)
    .from(lists)
    .where(and(eq(lists.id, id), eq(lists.userId, userId)))
    .get();
}

export function findInbox(c: Conn, userId: string): ListRow | undefined {
  return c
    .select(viewColumns)
    .from(lists)
    .where(and(eq(lists.userId, userId), eq(lists.isInbox, true)))
    .get();
}

interface PersonRow {
  id: string;
  username: string;
  display_name: string;
}

function people(c: Conn, ids: string[]): Map<string, PersonRow> {
  const rows = c.sqlite
    .query<PersonRow, [string]>("SELECT u.id, u.username, u.display_name FROM json_each(?) j CROSS JOIN users u ON u.id = j.value")
    .all(JSON.stringify([...new Set(ids)]));
  return new Map(rows.map((r) => [r.id, r]));
}

function memberCounts(c: Conn, ids: string[]): Map<string, number> {
  const rows = c.sqlite
    .query<{ list_id: string; n: number }, [string]>(
      "SELECT j.value AS list_id, (SELECT count(*) FROM list_members m WHERE m.list_id = j.value) AS n FROM json_each(?) j",
    )
    .all(JSON.stringify(ids));
  return new Map(rows.map((r) => [r.list_id, r.n]));
}

/** Adds role, owner and member count (the owner counts as a member) to lists seen by `viewerId`. */
function withSharing(c: Conn, rows: (ListRow & { role: ListRole })[]): ListView[] {
  if (rows.length === 0) return [];
  const owners = people(c, rows.map((r) => r.userId));
  const counts = memberCounts(c, rows.map((r) => r.id));
  return rows.map((r) => ({ ...r, owner: owners.get(r.userId)!, memberCount: 1 + (counts.get(r.id) ?? 0) }));
}

const folderIfLive = (c: Conn, folderId: string | null): string | null =>
  folderId !== null && c.sqlite.query<{ x: number }, [string]>("SELECT 1 AS x FROM folders WHERE id = ? AND deleted_at IS NULL").get(folderId) ? folderId : null;

/**
 * The list as `viewerId` sees it (lists.access: owner, or member of an active shared list, whose
 * own folder and position replace the owner's), else undefined (404).
 */
export function findListFor(c: Conn, viewerId: string, id: string): ListView | undefined {
  const l = c.select(viewColumns).from(lists).where(eq(lists.id, id)).get();
  if (!l) return undefined;
  const role = roleOnList(c, viewerId, { id: l.id, ownerId: l.userId, deletedAt: l.deletedAt });
  if (!role) return undefined;
  if (role === "owner") return withSharing(c, [{ ...l, role }])[0];
  const m = findMember(c, id, viewerId)!;
  return withSharing(c, [{ ...l, folderId: folderIfLive(c, m.folder_id), position: m.position, isInbox: false, role }])[0];
}

interface SharedListRow {
  id: string;
  user_id: string;
  name: string;
  folder_id: string | null;
  color: string | null;
  position: number;
  sort: ListRow["sort"];
  created_at: string;
  updated_at: string;
  role: "editor" | "viewer";
}

/**
 * Active lists (inbox first, then by position; the lists shared with the user placed by their
 * own position) or the user's archived ones (most recently archived first; an archived shared
 * list is gone from its members' views).
 */
export function listLists(c: Conn, userId: string, archived: boolean): ListView[] {
  const q = c.select(viewColumns).from(lists);
  if (archived) {
    return withSharing(
      c,
      q
        .where(and(eq(lists.userId, userId), isNotNull(lists.deletedAt)))
        .orderBy(sql`${lists.deletedAt} DESC`, asc(lists.id))
        .all()
        .map((l) => ({ ...l, role: "owner" as const })),
    );
  }
  const own = q
    .where(and(eq(lists.userId, userId), isNull(lists.deletedAt)))
    .orderBy(sql`${lists.isInbox} DESC`, asc(lists.position), asc(lists.createdAt), asc(lists.id))
    .all()
    .map((l) => ({ ...l, role: "owner" as ListRole }));
  const shared = c.sqlite
    .query<SharedListRow, [string]>(
      `SELECT l.id, l.user_id, l.name,
              CASE WHEN EXISTS (SELECT 1 FROM folders f WHERE f.id = m.folder_id AND f.deleted_at IS NULL) THEN m.folder_id ELSE NULL END AS folder_id,
              l.color, m.position, l.sort, l.created_at, l.updated_at, m.role
         FROM list_members m JOIN lists l ON l.id = m.list_id WHERE m.user_id = ? AND l.deleted_at IS NULL`,
    )
    .all(userId);
  if (shared.length === 0) return withSharing(c, own);
  const all = [
    ...own,
    ...shared.map((s) => ({
      id: s.id,
      userId: s.user_id,
      name: s.name,
      folderId: s.folder_id,
      isInbox: false,
      color: s.color,
      position: s.position,
      sort: s.sort,
      createdAt: s.created_at,
      updatedAt: s.updated_at,
      deletedAt: null,
      role: s.role as ListRole,
    })),
  ];
  all.sort((a, b) => Number(b.isInbox) - Number(a.isInbox) || a.position - b.position || (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return withSharing(c, all);
}

/** The owner of a list and its state (any list, for the access rule), or null. */
export function listHead(c: Conn, id: string): { id: string; ownerId: string; deletedAt: string | null; isInbox: boolean; name: string } | null {
  const r = c.sqlite
    .query<{ id: string; user_id: string; deleted_at: string | null; is_inbox: number; name: string }, [string]>(
      "SELECT id, user_id, deleted_at, is_inbox, name FROM lists WHERE id = ?",
    )
    .get(id);
  return r ? { id: r.id, ownerId: r.user_id, deletedAt: r.deleted_at, isInbox: r.is_inbox === 1, name: r.name } : null;
}

/** An ownership transfer: the list's owner, folder and position become the new owner's. */
export function setListOwner(c: Conn, id: string, ownerId: string, folderId: string | null, position: number, now: string): void {
  c.sqlite.query("UPDATE lists SET user_id = ?, folder_id = ?, position = ?, updated_at = ? WHERE id = ?").run(ownerId, folderId, position, now, id);
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
