import { sqliteTable, text, integer, index, primaryKey, uniqueIndex } from "drizzle-orm/sqlite-core";
import { ownerColumn } from "./accounts";

// A validated upload waiting for POST /backup/restore. The token is random and only its SHA-256
// is stored; it is bound to the user, the staged file's SHA-256 and the restore mode. The staged
// file is <data>/backup/staging/<id>.zip. consumed_at is set in the transaction that imports.
export const backupPreflights = sqliteTable(
  "backup_preflights",
  {
    id: text("id").primaryKey(),
    userId: ownerColumn(),
    tokenHash: text("token_hash").notNull(),
    fileSha256: text("file_sha256").notNull(),
    mode: text("mode", { enum: ["merge", "replace"] }).notNull(),
    size: integer("size").notNull(),
    backupId: text("backup_id").notNull(),
    // JSON: the manifest summary and counts, answered again by restore.
    summary: text("summary").notNull(),
    counts: text("counts").notNull(),
    createdAt: text("created_at").notNull(),
    expiresAt: text("expires_at").notNull(),
    consumedAt: text("consumed_at"),
  },
  (t) => [uniqueIndex("backup_preflights_token_uq").on(t.tokenHash), index("backup_preflights_user_idx").on(t.userId, t.expiresAt)],
);

// One committed restore. Written in the importing transaction, so its presence is the proof that
// the import committed: start-up reconciliation of <data>/backup/restores/<id>/ reads it to roll
// the attachment files forward (row present) or back (row absent). cleanup_done_at stays null
// until the quarantined files are gone. answered_at is set when a request has answered the
// restore's success to its client (the restore's own 200, or the cleanup retry's): until then
// (the cleanup failed and answered 500, or the server died after the commit and finished the
// cleanup at start-up) the same token answers 200 `cleanup: "completed"` and imports nothing.
export const backupRestores = sqliteTable(
  "backup_restores",
  {
    id: text("id").primaryKey(),
    userId: ownerColumn(),
    preflightId: text("preflight_id").notNull(),
    mode: text("mode", { enum: ["merge", "replace"] }).notNull(),
    backupId: text("backup_id").notNull(),
    counts: text("counts").notNull(),
    committedAt: text("committed_at").notNull(),
    cleanupDoneAt: text("cleanup_done_at"),
    answeredAt: text("answered_at"),
  },
  (t) => [uniqueIndex("backup_restores_preflight_uq").on(t.preflightId)],
);

// The merge ledger: per user and source identifier (entity kind + id in the archive), the target
// identifier it became and the content digest, so a repeated merge adds nothing.
export const backupLedger = sqliteTable(
  "backup_ledger",
  {
    userId: ownerColumn(),
    entity: text("entity").notNull(),
    sourceId: text("source_id").notNull(),
    targetId: text("target_id").notNull(),
    digest: text("digest").notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.entity, t.sourceId] })],
);
