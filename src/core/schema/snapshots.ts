import { sqliteTable, text, integer } from "drizzle-orm/sqlite-core";

// Whole-instance snapshots (src/transfer/snapshot). One row (id 1): what the administrator
// changed of the schedule, retention and destinations, as JSON over the config's defaults
// (APP_BACKUP_*); a key absent from it follows the config.
export const snapshotSettings = sqliteTable("snapshot_settings", {
  id: integer("id").primaryKey(),
  overrides: text("overrides").notNull(),
  updatedAt: text("updated_at").notNull(),
});

// The last outcome per destination ("local", "s3"): what the Settings page, /health/ready's details
// and /metrics report. last_error is a sentence for the administrator, never a credential.
export const snapshotStatus = sqliteTable("snapshot_status", {
  destination: text("destination").primaryKey(),
  lastAttemptAt: text("last_attempt_at"),
  lastSuccessAt: text("last_success_at"),
  lastFailureAt: text("last_failure_at"),
  lastError: text("last_error"),
  lastName: text("last_name"),
  lastBytes: integer("last_bytes"),
  lastSha256: text("last_sha256"),
});
