import { z } from "zod";
import { maxChars } from "../../core/text";

/**
 * The backup API's own shapes (query, bodies, answers): what the routes validate and document at
 * start-up. The archive's record schemas are in backup.records.ts, loaded with the service on first use.
 */

export const Mode = z.enum(["merge", "replace"]);
export type Mode = z.infer<typeof Mode>;
export const PreflightQuery = z.strictObject({ mode: Mode });
export const Counts = z.record(z.string(), z.number().int()).describe("records per entity kind").meta({ id: "BackupCounts" });
export const PreflightResult = z.object({
    valid: z.literal(true),
    preflight_token: z.string().describe("single use; bound to this user, the file's SHA-256 and the mode"),
    backup_id: z.string(),
    expires_at: z.string(),
    summary: z.object({ format: z.string(), version: z.number().int(), created_at: z.string(), app_version: z.string() }),
    counts: Counts,
  })
  .meta({ id: "BackupPreflight" });
export type PreflightResult = z.infer<typeof PreflightResult>;
export const RestoreBody = z.strictObject({ preflight_token: maxChars(z.string().min(1), 200), mode: Mode });
export type RestoreBody = z.infer<typeof RestoreBody>;
export const RestoreResult = z.object({
    backup_id: z.string(),
    mode: Mode,
    counts: Counts,
    cleanup: z.literal("completed").optional().describe("only on the repeated call that finished a failed cleanup; nothing was imported again"),
  })
  .meta({ id: "BackupRestore" });
export type RestoreResult = z.infer<typeof RestoreResult>;
