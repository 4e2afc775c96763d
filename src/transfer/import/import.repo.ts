import type { Conn } from "../../core/db";
import type { ImportFormat } from "./import.schemas";

// The import feature's own tables (import_tokens, import_ledger): the only file naming them.

export interface ImportTokenRow {
  id: string;
  user_id: string;
  format: ImportFormat;
  file_sha256: string;
  file_name: string;
  size: number;
  created_at: string;
  expires_at: string;
  consumed_at: string | null;
}

export function insertImportToken(c: Conn, r: ImportTokenRow & { token_hash: string }): void {
  c.sqlite
    .query(
      "INSERT INTO import_tokens (id, user_id, token_hash, format, file_sha256, file_name, size, created_at, expires_at, consumed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)",
    )
    .run(r.id, r.user_id, r.token_hash, r.format, r.file_sha256, r.file_name, r.size, r.created_at, r.expires_at);
}

export function findImportToken(c: Conn, tokenHash: string): ImportTokenRow | null {
  return c.sqlite
    .query<ImportTokenRow, [string]>(
      "SELECT id, user_id, format, file_sha256, file_name, size, created_at, expires_at, consumed_at FROM import_tokens WHERE token_hash = ?",
    )
    .get(tokenHash);
}

/** Marks the token used; false when another request used it first. */
export function consumeImportToken(c: Conn, id: string, now: string): boolean {
  return c.sqlite.query("UPDATE import_tokens SET consumed_at = ? WHERE id = ? AND consumed_at IS NULL").run(now, id).changes === 1;
}

/** Expired tokens (used or not) are forgotten; their staged files are removed by the caller. */
export function expiredImportTokenIds(c: Conn, now: string): string[] {
  return c.sqlite.query<{ id: string }, [string]>("SELECT id FROM import_tokens WHERE expires_at <= ?").all(now).map((r) => r.id);
}

export function deleteImportTokens(c: Conn, ids: string[]): void {
  const stmt = c.sqlite.query("DELETE FROM import_tokens WHERE id = ?");
  for (const id of ids) stmt.run(id);
}

/** Pending (unused, unexpired) previews of a user, and the bytes they stage. */
export function pendingImportsOf(c: Conn, userId: string, now: string): { n: number; bytes: number } {
  const r = c.sqlite
    .query<{ n: number; bytes: number | null }, [string, string]>(
      "SELECT count(*) AS n, sum(size) AS bytes FROM import_tokens WHERE user_id = ? AND consumed_at IS NULL AND expires_at > ?",
    )
    .get(userId, now)!;
  return { n: r.n, bytes: r.bytes ?? 0 };
}

/** The ids of every token row (start-up sweep of staged files that no row names). */
export function allImportTokenIds(c: Conn): Set<string> {
  return new Set(c.sqlite.query<{ id: string }, []>("SELECT id FROM import_tokens").all().map((r) => r.id));
}

// ---- the ledger ----

/** What an earlier import of this very file created, or null. */
export function ledgerCountsOf(c: Conn, userId: string, format: ImportFormat, sha256: string): string | null {
  return (
    c.sqlite
      .query<{ counts: string }, [string, string, string]>("SELECT counts FROM import_ledger WHERE user_id = ? AND format = ? AND file_sha256 = ?")
      .get(userId, format, sha256)?.counts ?? null
  );
}

export function recordImport(c: Conn, userId: string, format: ImportFormat, sha256: string, counts: string, now: string): void {
  c.sqlite.query("INSERT INTO import_ledger (user_id, format, file_sha256, counts, imported_at) VALUES (?, ?, ?, ?, ?)").run(userId, format, sha256, counts, now);
}

/** A replace restore removes the account's content: what was imported before is gone, so is the record of it. */
export function deleteImportLedgerOf(c: Conn, userId: string): void {
  c.sqlite.query("DELETE FROM import_ledger WHERE user_id = ?").run(userId);
}
