import { asc, eq, sql } from "drizzle-orm";
import { perConnection, type Conn } from "../../core/db";
import type { SessionLookupRow } from "../../core/auth/session-store";
import { users } from "../../core/schema";

export type UserRow = typeof users.$inferSelect;

/**
 * Case-insensitive key of a username (Unicode-aware). Upper then lower case approximates full case
 * folding: "Straße" and "STRASSE", or a final and a medial sigma, give the same key.
 */
export function usernameKey(username: string): string {
  // No username holds a NUL (account.schemas.ts): a name typed at sign-in that does is kept distinct
  // but without it, so it can never be a key the throttle reserves for token uses (core/auth/guard.ts).
  return username.normalize("NFKC").toUpperCase().toLowerCase().replaceAll("\u0000", "\uFFFD");
}

export function countUsers(c: Conn): number {
  return c.select({ n: sql<number>`count(*)` }).from(users).get()?.n ?? 0;
}

export function findUserByKey(c: Conn, key: string): UserRow | undefined {
  return c.select().from(users).where(eq(users.usernameKey, key)).get();
}

interface UserSqlRow {
  id: string;
  username: string;
  username_key: string;
  display_name: string;
  timezone: string;
  is_admin: number;
  reminder_time: string;
  quiet_start: string | null;
  quiet_end: string | null;
  password_hash: string;
  disabled_at: string | null;
  created_at: string;
  updated_at: string;
}

/** Hot path (every GET /me): a cached prepared statement rather than the query builder. */
export function findUserById(c: Conn, id: string): UserRow | undefined {
  const r = c.sqlite.query<UserSqlRow, [string]>("SELECT * FROM users WHERE id = ?").get(id);
  return r
    ? {
        id: r.id,
        username: r.username,
        usernameKey: r.username_key,
        displayName: r.display_name,
        timezone: r.timezone,
        isAdmin: r.is_admin === 1,
        reminderTime: r.reminder_time,
        quietStart: r.quiet_start,
        quietEnd: r.quiet_end,
        passwordHash: r.password_hash,
        disabledAt: r.disabled_at,
        createdAt: r.created_at,
        updatedAt: r.updated_at,
      }
    : undefined;
}

/**
 * The session of a token hash (not revoked) with its user and the bytes of the user's attachments
 * (GET /me reports them): every authenticated request runs it, before any handler. One row through
 * the unique index on token_hash, prepared once per connection. Handed to core's SessionStore at
 * app construction (core/auth/session-store.ts FindSession).
 */
export function findSessionWithUser(c: Conn, tokenHash: string): SessionLookupRow | null {
  return sessionLookup(c).get(tokenHash);
}

/** The user's columns of a credential lookup (core/auth/principal.ts AuthUserColumns), `u` being users. */
export const AUTH_USER_COLUMNS =
  "u.id AS user_id, u.username, u.timezone, u.is_admin, u.display_name, u.created_at, u.reminder_time, u.quiet_start, u.quiet_end, coalesce((SELECT bytes FROM attachment_usage WHERE user_id = u.id), 0) AS attachment_bytes";

const sessionLookup = perConnection((s) =>
  s.query<SessionLookupRow, [string]>(
    `SELECT s.id AS session_id, s.last_seen_at, s.expires_at, ${AUTH_USER_COLUMNS}
       FROM sessions s JOIN users u ON u.id = s.user_id
      WHERE s.token_hash = ? AND s.revoked_at IS NULL AND u.disabled_at IS NULL`,
  ),
);

export function insertUser(c: Conn, row: typeof users.$inferInsert): void {
  c.insert(users).values(row).run();
}

export function updateUser(c: Conn, id: string, set: Partial<typeof users.$inferInsert>): void {
  c.update(users).set(set).where(eq(users.id, id)).run();
}

export function listUsers(c: Conn): UserRow[] {
  return c.select().from(users).orderBy(asc(users.createdAt), asc(users.id)).all();
}

// ---- Export and restore (used by src/transfer/) ----


export function usernameOf(c: Conn, userId: string): string {
  return c.sqlite.query<{ username: string }, [string]>("SELECT username FROM users WHERE id = ?").get(userId)!.username;
}
