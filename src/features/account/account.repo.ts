import { asc, eq, sql } from "drizzle-orm";
import type { Tx } from "../../core/db";
import { users } from "../../core/schema";

export type UserRow = typeof users.$inferSelect;

/**
 * Case-insensitive key of a username (Unicode-aware). Upper then lower case approximates full case
 * folding: "Straße" and "STRASSE", or a final and a medial sigma, give the same key.
 */
export function usernameKey(username: string): string {
  return username.normalize("NFKC").toUpperCase().toLowerCase();
}

export function countUsers(tx: Tx): number {
  return tx.select({ n: sql<number>`count(*)` }).from(users).get()?.n ?? 0;
}

export function findUserByKey(tx: Tx, key: string): UserRow | undefined {
  return tx.select().from(users).where(eq(users.usernameKey, key)).get();
}

export function findUserById(tx: Tx, id: string): UserRow | undefined {
  return tx.select().from(users).where(eq(users.id, id)).get();
}

export function insertUser(tx: Tx, row: typeof users.$inferInsert): void {
  tx.insert(users).values(row).run();
}

export function updateUser(tx: Tx, id: string, set: Partial<typeof users.$inferInsert>): void {
  tx.update(users).set(set).where(eq(users.id, id)).run();
}

export function listUsers(tx: Tx): UserRow[] {
  return tx.select().from(users).orderBy(asc(users.createdAt), asc(users.id)).all();
}
