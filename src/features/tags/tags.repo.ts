import { and, asc, eq, ne, sql } from "drizzle-orm";
import { tags } from "../../core/schema";
import type { Conn } from "../../core/db";
import type { SqlRow } from "../../core/db";
import { deleteInBatches } from "../../core/db";
import { isOwnRow, ownerOfRow, ownersOfRows, rowById, userRows } from "../../core/table-rows";

export type TagRow = typeof tags.$inferSelect;

/** Uniqueness key of a tag name: NFKC, Unicode lower case (so "Ｗork", "WORK" and "work" collide). */
export function tagNameKey(name: string): string {
  return name.normalize("NFKC").toLowerCase().normalize("NFKC");
}

export function findTag(c: Conn, userId: string, id: string): TagRow | undefined {
  return c
    .select()
    .from(tags)
    .where(and(eq(tags.id, id), eq(tags.userId, userId)))
    .get();
}

/** Another tag of the user with this name key (excluding `exceptId`). */
export function findTagByKey(c: Conn, userId: string, key: string, exceptId?: string): TagRow | undefined {
  const cond = exceptId ? and(eq(tags.userId, userId), eq(tags.nameKey, key), ne(tags.id, exceptId)) : and(eq(tags.userId, userId), eq(tags.nameKey, key));
  return c.select().from(tags).where(cond).get();
}

export function listTags(c: Conn, userId: string): TagRow[] {
  return c.select().from(tags).where(eq(tags.userId, userId)).orderBy(asc(tags.nameKey), asc(tags.id)).all();
}

export function insertTag(c: Conn, row: typeof tags.$inferInsert): void {
  c.insert(tags).values(row).run();
}

export function updateTag(c: Conn, userId: string, id: string, set: Partial<typeof tags.$inferInsert>): void {
  c.update(tags)
    .set(set)
    .where(and(eq(tags.id, id), eq(tags.userId, userId)))
    .run();
}

export function deleteTag(c: Conn, userId: string, id: string): void {
  c.delete(tags)
    .where(and(eq(tags.id, id), eq(tags.userId, userId)))
    .run();
}

// ---- Export and restore (used by src/transfer/) ----
// Prepared statements: an account may hold many rows, and a restore inserts them one by one.


/** A tag as backup reads and writes it (name_key is derived from the name). */
export type TagExportRow = Omit<SqlRow<typeof tags>, "user_id" | "name_key">;
const TAG_COLUMNS = "id, name, color, created_at, updated_at";

/** The user's tags in id order. */
export function exportTagRows(c: Conn, userId: string): Generator<TagExportRow> {
  return userRows(c, tags, TAG_COLUMNS, userId, "id");
}

export function exportTagRow(c: Conn, id: string): TagExportRow | null {
  return rowById<TagExportRow>(c, tags, TAG_COLUMNS, id);
}

export function insertRestoredTag(c: Conn, userId: string, r: TagExportRow): void {
  c.sqlite
    .query("INSERT INTO tags (id, user_id, name, name_key, color, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)")
    .run(r.id, userId, r.name, tagNameKey(r.name), r.color, r.created_at, r.updated_at);
}

/** The id of the user's tag with this name (case-folded, as uniqueness is), or null. */
export function tagIdByName(c: Conn, userId: string, name: string): string | null {
  return c.sqlite.query<{ id: string }, [string, string]>("SELECT id FROM tags WHERE user_id = ? AND name_key = ?").get(userId, tagNameKey(name))?.id ?? null;
}

/** The user's tags by case-folded name (name_key → id). */
export function tagIdsByKey(c: Conn, userId: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const r of c.sqlite.query<{ id: string; name_key: string }, [string]>("SELECT id, name_key FROM tags WHERE user_id = ?").all(userId)) out.set(r.name_key, r.id);
  return out;
}

export const tagOwner = (c: Conn, id: string) => ownerOfRow(c, tags, id);
export const tagOwners = (c: Conn, ids: string[]) => ownersOfRows(c, tags, ids);
export const isOwnTag = (c: Conn, id: string, userId: string) => isOwnRow(c, tags, id, userId);

/** Removes every tag of the user (their task links go by cascade). */
export function deleteTagsOfUser(c: Conn, userId: string): void {
  deleteInBatches(c, "tags", "user_id = ?", userId);
}
