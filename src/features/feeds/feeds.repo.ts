import { and, desc, eq, isNull } from "drizzle-orm";
import type { Conn } from "../../core/db";
import { feeds } from "../../core/schema";

export type FeedRow = typeof feeds.$inferSelect;

export function insertFeed(c: Conn, row: FeedRow): void {
  c.insert(feeds).values(row).run();
}

/** The user's feeds that are not revoked, newest first. */
export function activeFeedsOf(c: Conn, userId: string): FeedRow[] {
  return c.select().from(feeds).where(and(eq(feeds.userId, userId), isNull(feeds.revokedAt))).orderBy(desc(feeds.createdAt), desc(feeds.id)).all();
}

/** One of the user's feeds that is not revoked. */
export function findActiveFeed(c: Conn, userId: string, id: string): FeedRow | undefined {
  return c.select().from(feeds).where(and(eq(feeds.id, id), eq(feeds.userId, userId), isNull(feeds.revokedAt))).get();
}

/** A feed by id, revoked or not (the .ics endpoint: whose secret names it). */
export function findFeedById(c: Conn, id: string): FeedRow | undefined {
  return c.select().from(feeds).where(eq(feeds.id, id)).get();
}

export function revokeFeed(c: Conn, id: string, at: string): void {
  c.update(feeds).set({ revokedAt: at }).where(eq(feeds.id, id)).run();
}
