import { Elysia } from "elysia";
import { LEGACY_BODY_LIMIT, RawBody, STREAMED_BODY } from "../../core/body";
import { malformed } from "../../core/errors";
import { deferredJsonSchema, doc, lazySchema, type DeferredSchema } from "../../core/openapi";
import { principalOf, requestMeta } from "../../core/http";
import { multipartOf, type MultipartReader } from "../../core/streams/multipart";
import type { LegacyService } from "./legacy.service";
import { LegacyCsv, RestoreQuery, RestoreResult } from "./legacy.schemas";

const RESTORE_ERRORS = ["validation_failed", "invalid_reference", "invalid_parent", "malformed_request", "payload_too_large", "csrf_failed", "storage_full"] as const;

/** The CSV of a restore.csv request: the text body's bytes, or a stream over the multipart body (field `file`). */
function csvSource(body: unknown, request: Request): RawBody | MultipartReader {
  if (body instanceof RawBody) return body;
  if (body === STREAMED_BODY) return multipartOf(request, LEGACY_BODY_LIMIT);
  throw malformed("send the CSV as text/csv, or as the field `file` of multipart/form-data");
}

/** Documents a request body the route reads itself (no validating schema in the route options). */
function withBody(d: Record<string, unknown>, contentType: string, schema: Record<string, unknown> | DeferredSchema): Record<string, unknown> {
  return { ...d, requestBody: { required: true, content: { [contentType]: { schema } } } };
}

const today = (d: Date) => d.toISOString().slice(0, 10);

/** The file's schema, for the documentation only: its module is loaded with the service, or when the document is built. */
const LegacyExport = lazySchema(async () => (await import("./legacy.records")).LegacyExport);

/** An export as a download: the text, its type, and a file name with the export's date. */
function exportFile(bytes: ReadableStream<Uint8Array>, format: "json" | "csv", exportedOn: string): Response {
  return new Response(bytes, {
    status: 200,
    headers: {
      "content-type": format === "json" ? "application/json; charset=utf-8" : "text/csv; charset=utf-8",
      "content-disposition": `attachment; filename="app-legacy-${exportedOn}.${format}"`,
    },
  });
}

/** `legacy` loads the service on its first call (and shares it afterwards): see app.ts. */
export function legacyRoutes(legacy: () => Promise<LegacyService>, clock: { now(): Date }) {
  return new Elysia({ name: "legacy", prefix: "/api/v1" })
    .get("/export", async ({ request }) => exportFile(await (await legacy()).exportJson(principalOf(request).user.id, requestMeta(request)), "json", today(clock.now())), {
      detail: doc({
        summary: "Legacy JSON v1 export (lightweight; not a full backup)",
        description:
          "Folders (live), lists, tasks (flat: subtasks carry `parent_id`; `tags` holds tag names), recurrences (without exceptions), habits (without logs and pauses), countdowns and memos; tasks, habits and countdowns carry your own `reminders` (as POST …/reminders takes them). No attachments, notification channels or delivery history. Audited (`legacy_exported`). Made by the server's job worker (other requests are served meanwhile).",
        tags: ["legacy"],
        ok: { status: 200, schema: LegacyExport, headers: { "Content-Disposition": { description: "attachment; filename=app-legacy-YYYY-MM-DD.json" } } },
      }),
    })
    .get("/export.csv", async ({ request }) => exportFile(await (await legacy()).exportCsv(principalOf(request).user.id, requestMeta(request)), "csv", today(clock.now())), {
      detail: doc({
        summary: "Legacy CSV v1 export",
        description:
          "UTF-8 with a BOM, RFC 4180 quoting, one header row and one row per record; the `kind` column is folder, list, task, recurrence, habit, countdown or memo (a recurrence's own kind is in `recurrence_kind`). Booleans are true/false, empty cells are null, tags/frequency/lunar/reminders are JSON. A cell starting with `=`, `+`, `-`, `@`, tab, CR or `'` is written with a leading `'` (spreadsheets never run it); restore removes it.",
        tags: ["legacy"],
        ok: { status: 200, schema: LegacyCsv, contentType: "text/csv", headers: { "Content-Disposition": { description: "attachment; filename=app-legacy-YYYY-MM-DD.csv" } } },
      }),
    })
    .post("/restore", async ({ body, query, request }) => (await legacy()).restoreJson(principalOf(request).user.id, body, query.mode, requestMeta(request)), {
      query: RestoreQuery,
      detail: withBody(
        doc({
          summary: "Restore a legacy JSON v1 export",
          description:
            "The whole file is validated before anything is written (one transaction): a problem names its path (`tasks.3.due_at`) and nothing changes. A record keeps its id where it is free and gets a new one otherwise (references follow); the file's inbox is the user's inbox. `merge` skips records whose id this user already has; `replace` first removes the account's folders, lists, tasks (and their attachment files), tags, habits, countdowns and memos. Body limit 64 MiB. Disk full while writing is `507 storage_full` (nothing changed). Audited (`legacy_restored`). Checked and written by the server's job worker: other users keep reading meanwhile, and their writes get `503 busy` with `Retry-After` until the restore's transaction commits.",
          tags: ["legacy"],
          ok: { status: 200, schema: RestoreResult },
          errors: [...RESTORE_ERRORS],
        }),
        "application/json",
        deferredJsonSchema(LegacyExport, "input"),
      ),
    })
    .post(
      "/restore.csv",
      async ({ body, query, request }) => (await legacy()).restoreCsv(principalOf(request).user.id, csvSource(body, request), query.mode, requestMeta(request)),
      {
        query: RestoreQuery,
        detail: withBody(
          doc({
            summary: "Restore a legacy CSV v1 export",
            description:
              "The CSV as the body (`text/csv`), or as the field `file` of `multipart/form-data`. Validated whole before any write; a problem names its line and column (`line 7, column 16 (due_at)`). Same rules as the JSON restore. A body that is not UTF-8 is `400`. Body limit 64 MiB.",
            tags: ["legacy"],
            ok: { status: 200, schema: RestoreResult },
            errors: [...RESTORE_ERRORS],
            bodyContentType: "text/csv",
          }),
          "text/csv",
          // Characters are never more than bytes, so the body limit bounds the text's length.
          { type: "string", maxLength: LEGACY_BODY_LIMIT, description: "the CSV text; at most 64 MiB (bytes) as a body or as the `file` part" },
        ),
      },
    );
}
