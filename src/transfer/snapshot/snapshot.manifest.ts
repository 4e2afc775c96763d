import { z } from "zod";

/**
 * The manifest of a whole-instance snapshot (`manifest.json`, the archive's last entry): what the
 * archive holds and the SHA-256 of every other entry, so a copy can be checked anywhere without
 * the server. `schema_version` is the database's migration count (PRAGMA user_version): a restore
 * refuses a snapshot newer than the build doing it.
 */
export const SNAPSHOT_FORMAT = "app-instance-snapshot";
export const SNAPSHOT_FORMAT_VERSION = 1;

export const ManifestFile = z.object({
  path: z.string().min(1),
  size: z.number().int().min(0),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});
export type ManifestFile = z.infer<typeof ManifestFile>;

export const Manifest = z.object({
  format: z.literal(SNAPSHOT_FORMAT),
  format_version: z.literal(SNAPSHOT_FORMAT_VERSION),
  created_at: z.string(),
  app_version: z.string(),
  schema_version: z.number().int().min(0),
  attachments: z.number().int().min(0),
  files: z.array(ManifestFile),
});
export type Manifest = z.infer<typeof Manifest>;

/** The entries of a snapshot besides attachments/<id>: the database and the server secret. */
export const DB_ENTRY = "app.db";
export const SECRET_ENTRY = "secret.key";
export const MANIFEST_ENTRY = "manifest.json";
export const ATTACHMENT_PREFIX = "attachments/";
/** Optional: each user's app-backup v2 archive (`users/<user id>.zip`), what their own export would give; a whole-instance restore ignores them. */
export const USER_ARCHIVE_PREFIX = "users/";
/** Written in the data directory while a whole-instance restore swaps the files (snapshot.restore.ts); the server refuses to start beside it. */
export const RESTORE_JOURNAL = "restore-journal.json";

/** A snapshot's file name: `app-snapshot-20261126T033000Z.zip` (UTC, sorts by time). */
export function snapshotName(at: Date): string {
  return `app-snapshot-${at.toISOString().replace(/\.\d{3}Z$/, "Z").replace(/[-:]/g, "")}.zip`;
}

/** The instant in a snapshot's name, or null for any other name (temporary files, foreign files). */
export function instantOfName(name: string): Date | null {
  const m = /^app-snapshot-(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z\.zip$/.exec(name);
  if (!m) return null;
  const d = new Date(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}Z`);
  return Number.isNaN(d.getTime()) ? null : d;
}
