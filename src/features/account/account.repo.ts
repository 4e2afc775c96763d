import { asc, eq, sql } from "drizzle-orm";
import { sqliteOf, type Tx } from "../../core/db";
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

interface UserSqlRow {
  id: string;
  username: string;
  username_key: string;
  display_name: string;
  timezone: string;
  is_admin: number;
  password_hash: string;
  created_at: string;
  updated_at: string;
}

/** Hot path (every GET /me): a cached prepared statement rather than the query builder. */
export function findUserById(tx: Tx, id: string): UserRow | undefined {
  const r = sqliteOf(tx).query<UserSqlRow, [string]>("SELECT * FROM users WHERE id = ?").get(id);
  return r
    ? {
        id: r.id,
        username: r.username,
        usernameKey: r.username_key,
        displayName: r.display_name,
        timezone: r.timezone,
        isAdmin: r.is_admin === 1,
        passwordHash: r.password_hash,
        createdAt: r.created_at,
        updatedAt: r.updated_at,
      }
    : undefined;
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

// ---- Export and restore (used by src/transfer/) ----

import type { Conn } from "../../core/db";

export function usernameOf(c: Conn, userId: string): string {
  return c.sqlite.query<{ username: string }, [string]>("SELECT username FROM users WHERE id = ?").get(userId)!.username;
}
