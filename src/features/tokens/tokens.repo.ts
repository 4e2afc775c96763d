import { and, desc, eq, isNull, lt, sql } from "drizzle-orm";
import { changes, perConnection, type Conn } from "../../core/db";
import { apiTokens } from "../../core/schema";
import type { AuthUserColumns } from "../../core/auth/principal";
import { AUTH_USER_COLUMNS } from "../account/account.repo";

export type TokenRow = typeof apiTokens.$inferSelect;

export function insertToken(c: Conn, row: TokenRow): void {
  c.insert(apiTokens).values(row).run();
}

/** The user's tokens that are not revoked, newest first. */
export function listTokens(c: Conn, userId: string): TokenRow[] {
  return c
    .select()
    .from(apiTokens)
    .where(and(eq(apiTokens.userId, userId), isNull(apiTokens.revokedAt)))
    .orderBy(desc(apiTokens.createdAt), desc(apiTokens.id))
    .all();
}

/** One of the user's tokens that is not revoked. */
export function findToken(c: Conn, userId: string, id: string): TokenRow | undefined {
  return c
    .select()
    .from(apiTokens)
    .where(and(eq(apiTokens.id, id), eq(apiTokens.userId, userId), isNull(apiTokens.revokedAt)))
    .get();
}

export function countTokens(c: Conn, userId: string): number {
  return (
    c
      .select({ n: sql<number>`count(*)` })
      .from(apiTokens)
      .where(and(eq(apiTokens.userId, userId), isNull(apiTokens.revokedAt)))
      .get()?.n ?? 0
  );
}

/** Revokes one of the user's tokens; false when it is not one of theirs or already revoked. */
export function revokeToken(c: Conn, userId: string, id: string, at: string): boolean {
  return changes(c.update(apiTokens).set({ revokedAt: at }).where(and(eq(apiTokens.id, id), eq(apiTokens.userId, userId), isNull(apiTokens.revokedAt))).run()) > 0;
}

/** Deletes the user's tokens revoked before `cutoff` (ISO instant); how many. */
export function deleteRevokedTokens(c: Conn, userId: string, cutoff: string): number {
  return changes(c.delete(apiTokens).where(and(eq(apiTokens.userId, userId), lt(apiTokens.revokedAt, cutoff))).run());
}

/** Revokes every token of the user not yet revoked (an account disabled by the operator); how many. */
export function revokeAllTokensOf(c: Conn, userId: string, at: string): number {
  return changes(c.update(apiTokens).set({ revokedAt: at }).where(and(eq(apiTokens.userId, userId), isNull(apiTokens.revokedAt))).run());
}

/** A token's row as the guard reads it, joined with its user (one statement through the unique index). */
export interface TokenLookupRow extends AuthUserColumns {
  token_id: string;
  scopes: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
  username_key: string;
  disabled_at: string | null;
}

/** Every request with a token runs it, before any handler: prepared once per connection. */
export function findTokenBySecretHash(c: Conn, secretHash: string): TokenLookupRow | null {
  return tokenLookup(c).get(secretHash);
}

const tokenLookup = perConnection((s) =>
  s.query<TokenLookupRow, [string]>(
    `SELECT t.id AS token_id, t.scopes, t.expires_at, t.revoked_at, t.last_used_at, u.username_key, u.disabled_at, ${AUTH_USER_COLUMNS}
       FROM api_tokens t JOIN users u ON u.id = t.user_id
      WHERE t.secret_hash = ?`,
  ),
);

const touchStatement = perConnection((s) => s.query<unknown, [string, string | null, string]>(`UPDATE api_tokens SET last_used_at = ?, last_used_ip = ? WHERE id = ?`));

export function markTokenUsed(c: Conn, id: string, at: string, ip: string | null): void {
  touchStatement(c).run(at, ip === null ? null : ip.slice(0, 64), id);
}
