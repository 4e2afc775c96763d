import { Elysia } from "elysia";
import { doc } from "../../core/openapi";
import { principalOf, requestMeta } from "../../core/http";
import type { ImportService } from "./import.service";
import { ImportBody, ImportResult, PreviewQuery, PreviewResult } from "./import.schemas";

/** `service` loads the import code on its first call (and shares it afterwards): see app.ts. */
export function importRoutes(service: () => Promise<ImportService>) {
  return new Elysia({ name: "import", prefix: "/api/v1" })
    .post("/import/preview", async ({ query, request }) => (await service()).preview(principalOf(request).user, query.format, request, requestMeta(request)), {
      query: PreviewQuery,
      detail: doc({
        summary: "Preview a file from another app (multipart/form-data, field `file`)",
        description:
          "`format=ticktick`: TickTick's backup CSV (Settings → Backup; the preamble and the 7.1 or 7.2 columns, read by name). `format=todoist`: a Todoist project CSV (TYPE, CONTENT, DESCRIPTION, PRIORITY, INDENT, …) or Todoist's backup ZIP of such CSVs. `format=ics`: an iCalendar file with VTODOs (Nextcloud Tasks, Thunderbird, Apple Reminders, tasks.org exports). " +
          "The file is read whole and nothing is written: `counts` says what the import will create, `skipped` every row or part that will not come along and why, `changed` every row that comes along differently (a won't-do task becomes completed, nesting deeper than one level is flattened, a repeat rule this app cannot express is dropped, a floating time is read in your time zone, …), each with the physical line its row or component starts on. Long lists are cut at 500 entries, a last entry counting the rest. " +
          "Mapping: folders and lists by name (a list name you already use gets \" (imported)\"; the source's inbox is your inbox); tags by name (created grey where you have none); priorities onto 0..3; all-day dates in the row's own time zone (TickTick's `Timezone`, Todoist's `TIMEZONE`, an .ics `TZID`), never the server's; repeats onto this app's recurrences when the rule is one this app runs; TickTick notes become memos; reminders (TickTick's `Reminder` triggers, .ics VALARMs) become reminders: on a timed task `before_due` (a trigger after the due time is skipped), on an all-day task `at` the trigger's instant in the row's zone, or, when it repeats, `before_due` from your reminder time (a trigger later than it fires at it, and is listed in `changed`); an absolute trigger is `at`; a task without a due date keeps none, and a task keeps at most 10 (the rest listed in `skipped`). They are armed by the reminder scheduler's next pass, as after a backup restore. " +
          "A file that cannot be read as the format is `422 import_invalid`, its `errors` naming each problem's line (`line 12`), at most 100. On success a single-use token bound to you, the file's SHA-256 and the format, valid 15 minutes (at most 5 previews may wait per user: `429 quota_exceeded`). Upload limit 64 MiB (`413`). Read by the server's job worker (other requests are served meanwhile).",
        tags: ["import"],
        bodyContentType: "multipart/form-data",
        ok: { status: 200, schema: PreviewResult },
        errors: ["validation_failed", "import_invalid", "payload_too_large", "quota_exceeded", "malformed_request", "csrf_failed", "storage_full"],
      }),
    })
    .post("/import", async ({ body, request }) => (await service()).run(principalOf(request).user, body.import_token, requestMeta(request)), {
      body: ImportBody,
      detail: doc({
        summary: "Import a previewed file",
        description:
          "Creates what the preview said, in one transaction (nothing is written on any error). `counts` is what was created. A file you imported before (same format and SHA-256) creates nothing and answers the counts of its first import with `already_imported: true`. A used token is `409 token_consumed`; an unknown, expired or another user's token is `422 token_invalid`. Audited (`imported`). Written by the server's job worker: other users keep reading meanwhile, and their writes get `503 busy` with `Retry-After` until the import's transaction commits.",
        tags: ["import"],
        ok: { status: 200, schema: ImportResult },
        errors: ["validation_failed", "token_invalid", "token_consumed", "malformed_request", "csrf_failed", "storage_full"],
      }),
    });
}
