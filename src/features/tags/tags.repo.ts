import { and, asc, eq, ne, sql } from "drizzle-orm";
import { tags } from "../../core/schema";
import type { Conn } from "../../core/db";

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

/** The tasks carrying a tag change when it goes: their versions grow by one. */
export function bumpTasksTagged(c: Conn, tagId: string, now: string): void {
  c.run(sql`UPDATE tasks SET version = version + 1, updated_at = ${now} WHERE id IN (SELECT task_id FROM task_tags WHERE tag_id = ${tagId})`);
}
