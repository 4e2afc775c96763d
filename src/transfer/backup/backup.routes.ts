import { Elysia } from "elysia";
import { z } from "zod";
import { doc } from "../../core/openapi";
import { principalOf, requestMeta } from "../../core/http";
import type { BackupService } from "./backup.service";
import { PreflightQuery, PreflightResult, RestoreBody, RestoreResult } from "./backup.schemas";

const ZipBytes = z.string().meta({ format: "binary" }).describe("the app-backup v2 ZIP archive");

/** `backup` loads the service on its first call (and shares it afterwards): see app.ts. */
export function backupRoutes(backup: () => Promise<BackupService>) {
  return new Elysia({ name: "backup", prefix: "/api/v1" })
    .get(
      "/backup/export.zip",
      async ({ request }) => {
        const service = await backup();
        const { stream, filename } = await service.export(principalOf(request).user, requestMeta(request));
        return new Response(stream, {
          headers: { "content-type": "application/zip", "content-disposition": `attachment; filename="${filename}"` },
        });
      },
      {
        detail: doc({
          summary: "Export everything as an app-backup v2 ZIP archive (streamed)",
          description:
            "One consistent snapshot of the account (folders, lists, tags, tasks, recurrences and their exceptions, habits with logs and pauses, countdowns, memos, attachments with their bytes, notification channels and reminders), streamed as it is written: memory does not grow with the archive. Layout: `manifest.json` (format, version, counts, SHA-256 and size of every other entry), `data/<entity>.json` (one JSON array per kind), `attachments/<id>`. Records use the API's field names and value shapes, every field present (`null` where empty), no user id: tasks carry `tag_ids` instead of `tags` and no `subtasks`; habit logs and pauses are the API's HabitLog and HabitPause with `habit_id`, recurrence exceptions `{ recurrence_id, date }`. Fields kept beyond the API representation for a faithful restore: `deleted_at` of folders, `position` of tasks, `archived_at` of habits and countdowns, `created_at` and `updated_at` of tags, habit logs and pauses, `created_at` of recurrence exceptions, a notification channel's `secrets` (webhook secret, ntfy token, push keys: the archive is as sensitive as the channels). Lists carry `members`: for a list you share, its members as `{ username, role }` (informational, `[]` otherwise); the archive holds only lists you own (a shared list whole, tasks other members created included), never one shared with you, and the API's sharing fields (`role`, `owner`, `member_count`, `created_by`, `completed_by`) are left out. A restore never grants access from `members`: it sends pending invitations, from you, to those usernames that exist on this server (restored tasks record you as their creator). Your reminders on tasks of lists shared with you are not in it (their tasks are the owner's). A reminder leaves out its derived `next_fire_at` (the restore computes its schedule again: occurrences before the restore never fire) and a channel its `last_delivery`; the delivery history is not part of a backup, and archives made before reminders existed (without `data/reminders.json` and `data/notification_channels.json`) restore as having none. A countdown's `next_date`, `days_until` and `count` are as computed at export time in your time zone; the restore ignores them (and checks `archived` against `archived_at`, and a recurrence's `exceptions` against the exception records). An account whose attachments pass 4 GiB cannot be exported (`409 state_conflict`: ZIP64 is not written). An export that cannot start answers `500 internal_error` titled `Export failed`, its `detail` saying whether an attachment's file is missing (removed from the data directory behind the server's back) or the export could not be prepared (the cause is logged); `507 storage_full` when the disk is full. The archive is made by the server's job worker (other requests are served meanwhile), at most 2 MiB ahead of the download.",
          tags: ["backup"],
          ok: { status: 200, schema: ZipBytes, contentType: "application/zip" },
          errors: ["state_conflict", "storage_full"],
        }),
      },
    )
    .post(
      "/backup/preflight",
      async ({ query, request }) => (await backup()).preflight(principalOf(request).user.id, query.mode, request, requestMeta(request)),
      {
        query: PreflightQuery,
        detail: doc({
          summary: "Upload and validate an archive before restoring it (multipart/form-data, field `file`)",
          description:
            "The upload is streamed to a staging file (limit 2 GiB by default, `413` while reading) and checked whole: ZIP structure read from the central directory (paths, duplicates, symlinks, directory entries — only the empty `data/` and `attachments/` that 7-Zip and macOS's Compress write are accepted —, encryption, methods, local headers, overlaps, entry count, compression ratio, sizes, CRC-32), the manifest (format, version, counts, SHA-256 of every entry; at most 64 KiB plus 256 bytes per entry), every record by the API's own checks for its fields and rules (what the API would refuse is refused: dates in the API's ranges, `version` up to 2^31 − 1, RRULEs that run from their first occurrence, non-overlapping habit pauses, no habit log before its habit's `start_date`, recurrences on top-level tasks only, a countdown's lunar month and day being those of its date, an archived countdown never pinned; a `due_at` with an offset is stored in UTC with milliseconds as the API stores it), the relations (one-level task tree, same-list subtasks, references inside the archive or, for `merge`, to your own data, unique tag names) and the attachment bytes against their metadata, the upload's allow-list (the type the bytes are must be the `content_type` given), its size limit (`APP_ATTACHMENT_MAX_BYTES`) and the per-user quota (`APP_ATTACHMENT_QUOTA_BYTES`: what the restore would bring, the archive's attachments in place of yours for `replace`, the ones you do not have yet beside yours for `merge`, must fit; the problem on `data/attachments.json` names the total). A record is at most 1 Mi characters and nested at most 64 levels. Problems are listed in `errors` of `422 backup_invalid`, at most 100 (reading stops there, or after 8 Mi characters of invalid records), each message at most 200 characters. On success a single-use token bound to you, the file's SHA-256 and the mode, valid 15 minutes. At most 3 pending preflights and 2 GiB staged per user (`429 quota_exceeded`). The validation runs in the server's job worker (other requests are served meanwhile; jobs run one at a time).",
          tags: ["backup"],
          bodyContentType: "multipart/form-data",
          ok: { status: 200, schema: PreflightResult },
          errors: ["validation_failed", "backup_invalid", "payload_too_large", "quota_exceeded", "malformed_request", "csrf_failed", "storage_full"],
        }),
      },
    )
    .post("/backup/restore", async ({ body, request }) => (await backup()).restore(principalOf(request).user.id, body, requestMeta(request)), {
      body: RestoreBody,
      detail: doc({
        summary: "Restore a preflighted archive (merge or replace)",
        description:
          "`replace` replaces all your data in one transaction (attachment files through staging and a quarantine on the same file system: a failure leaves the old state or the new, never a mix). `merge` adds what you do not have; a record whose identifier you have with different content, or that belongs to another user, is a conflict, and so is a new record the API would refuse beside what you have (a recurrence for a task that already recurs or has become a subtask, a habit pause overlapping one of the habit's, a habit log before the habit's present `start_date`): `409 merge_conflict` lists each (`path` = `<entity>/<id>`, or `<entity>/<parent id>:<date>` for habit logs and recurrence exceptions) and nothing changes. Disk full while writing is `507 storage_full` (nothing changes). The attachment quota (`APP_ATTACHMENT_QUOTA_BYTES`) is checked again in the import's transaction, counting files uploaded since the preflight: `413 storage_quota_exceeded` as for an upload, nothing changes and the token stays usable. A merge records what it imported, so repeating it adds nothing. The archive's inbox is your inbox. The token is consumed by the import; if the import committed but no success was answered (the cleanup of old files failed with a `500`, or the server stopped before answering and finished the cleanup at its next start), the same token finishes what is left of the cleanup and answers `200` with `cleanup: \"completed\"`, importing nothing; once a success has been answered it is `409 token_consumed`. The import runs in the server's job worker: other users keep reading meanwhile, and their writes get `503 busy` with `Retry-After` until the import's transaction commits.",
        tags: ["backup"],
        ok: { status: 200, schema: RestoreResult },
        errors: ["validation_failed", "token_invalid", "token_consumed", "merge_conflict", "state_conflict", "malformed_request", "payload_too_large", "storage_quota_exceeded", "csrf_failed", "storage_full"],
      }),
    });
}
