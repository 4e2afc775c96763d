import type { Statement } from "bun:sqlite";
import { getTableName } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Conn } from "./db";
import { collectGarbage } from "./streams/memory-pacing";

/**
 * Lookups every user-owned table answers the same way (`id` primary key, `user_id` owner), for
 * the owning repo to offer to backup and legacy (src/transfer/). A repo passes its own drizzle
 * table object, which only the owner imports (test/platform/table-ownership.test.ts).
 */

/** The user a row with this id belongs to, or null when there is no such row. */
export function ownerOfRow(c: Conn, table: SQLiteTable, id: string): string | null {
  return c.sqlite.query<{ user_id: string }, [string]>(`SELECT user_id FROM ${getTableName(table)} WHERE id = ?`).get(id)?.user_id ?? null;
}

/** Whether the row with this id is `userId`'s. */
export function isOwnRow(c: Conn, table: SQLiteTable, id: string, userId: string): boolean {
  return c.sqlite.query(`SELECT 1 FROM ${getTableName(table)} WHERE id = ? AND user_id = ?`).get(id, userId) !== null;
}

/** Of `ids`, which exist in the table, and whose they are. */
export function ownersOfRows(c: Conn, table: SQLiteTable, ids: string[]): Map<string, string> {
  const out = new Map<string, string>();
  if (ids.length === 0) return out;
  const stmt = c.sqlite.query<{ id: string; user_id: string }, [string]>(
    `SELECT id, user_id FROM ${getTableName(table)} WHERE id IN (SELECT value FROM json_each(?))`,
  );
  // json_each over a huge array is fine, but keep each statement's argument moderate.
  for (let i = 0; i < ids.length; i += 10_000) {
    for (const r of stmt.all(JSON.stringify(ids.slice(i, i + 10_000)))) out.set(r.id, r.user_id);
    // The chunk's JSON and rows are garbage now (a minor collection, not forced).
    collectGarbage(false);
  }
  return out;
}

/**
 * A query's rows one at a time, on a statement of their own (finalized when the walk ends or is
 * abandoned): a whole-account export reads 100,000 rows without holding them, and a second walk
 * of the same SQL meanwhile does not disturb it.
 */
export function* iterateRows<R>(c: Conn, sql: string, ...params: string[]): Generator<R> {
  const stmt = c.sqlite.prepare(sql) as Statement<R, string[]>;
  try {
    yield* stmt.iterate(...params);
  } finally {
    stmt.finalize();
  }
}

/**
 * A user's rows of the table, the repo's export columns (`columns`), in the repo's order
 * (`orderBy`, SQL): what each feature's export and restore read. Walked as iterateRows walks.
 */
export function userRows<R>(c: Conn, table: SQLiteTable, columns: string, userId: string, orderBy: string): Generator<R> {
  return iterateRows<R>(c, `SELECT ${columns} FROM ${getTableName(table)} WHERE user_id = ? ORDER BY ${orderBy}`, userId);
}

/** The row with this id (the repo's export columns), or null. */
export function rowById<R>(c: Conn, table: SQLiteTable, columns: string, id: string): R | null {
  return c.sqlite.query<R, [string]>(`SELECT ${columns} FROM ${getTableName(table)} WHERE id = ?`).get(id);
}
