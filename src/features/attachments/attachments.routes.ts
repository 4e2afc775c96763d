import { Elysia } from "elysia";
import { doc, headersWithSchemas, type HeaderDoc } from "../../core/openapi";
import { principalOf } from "../../core/http";
import type { AttachmentsService } from "./attachments.service";
import { Attachment, AttachmentBytes, AttachmentList, AttachmentParams, TaskAttachmentsParams } from "./attachments.schemas";
import { presentAttachment, presentDownload } from "./attachments.present";
import { multipartOf } from "../../core/streams/multipart";

const downloadHeaders: Record<string, HeaderDoc> = {
  ETag: { description: 'strong entity tag: `"<sha256 hex>"`', schema: { type: "string", pattern: '^"[0-9a-f]{64}"$' } },
  "Content-Disposition": { description: "`attachment; filename*=UTF-8''…` (percent-encoded UTF-8 file name)" },
  "Content-Length": { description: "bytes in this answer", schema: { type: "integer", format: "int64", minimum: 0 } },
  "X-Content-Type-Options": { description: "nosniff" },
  "Cross-Origin-Resource-Policy": { description: "same-origin" },
  "Accept-Ranges": { description: "bytes" },
};

/** The download's extra answers (206, 304), which the one-success `doc()` cannot express. */
function withDownloadAnswers(d: Record<string, unknown>): Record<string, unknown> {
  const responses = d.responses as Record<string, unknown>;
  return {
    ...d,
    responses: {
      ...responses,
      "206": {
        description: "One byte range (`Range: bytes=…`; also `Content-Range`)",
        headers: headersWithSchemas({ ...downloadHeaders, "Content-Range": { description: "`bytes first-last/size`" } }),
        content: { "application/octet-stream": { schema: { type: "string", format: "binary" } } },
      },
      "304": { description: "Not modified (`If-None-Match` names the ETag)", headers: headersWithSchemas({ ETag: downloadHeaders.ETag! }) },
    },
  };
}

/** The multipart body, documented (the route reads the stream itself, so no validating schema). */
function withUploadBody(d: Record<string, unknown>): Record<string, unknown> {
  const schema = { type: "object", properties: { file: { type: "string", format: "binary", description: "the file" } }, required: ["file"] };
  return { ...d, requestBody: { required: true, content: { "multipart/form-data": { schema } } } };
}

export function attachmentsRoutes(service: AttachmentsService) {
  return new Elysia({ name: "attachments", prefix: "/api/v1" })
    .get("/tasks/:task_id/attachments", ({ params, request }) => ({ items: service.list(principalOf(request).user.id, params.task_id).map(presentAttachment) }), {
      params: TaskAttachmentsParams,
      detail: doc({
        summary: "A task's attachments, oldest first",
        description:
          "Metadata only (`filename`, `content_type`, `size`, `sha256`); the bytes are at `GET /attachments/{attachment_id}`. A task in the trash, in an archived list, or not the user's is `404`.",
        tags: ["attachments"],
        ok: { status: 200, schema: AttachmentList },
        errors: ["not_found"],
      }),
    })
    .post(
      "/tasks/:task_id/attachments",
      async ({ params, request, set }) => {
        const body = multipartOf(request, service.maxBytes);
        const a = presentAttachment(await service.upload(principalOf(request).user.id, params.task_id, body));
        set.status = 201;
        set.headers["location"] = `/api/v1/attachments/${a.id}`;
        return a;
      },
      {
        params: TaskAttachmentsParams,
        detail: withUploadBody(doc({
          summary: "Upload a file to a task (multipart/form-data, field `file`)",
          description:
            "The body is streamed to disk and hashed on the way, never held in memory. Limit: 25 MiB by default (`APP_ATTACHMENT_MAX_BYTES`), `413` as soon as it is passed. The type is decided from the content: images (png, jpeg, gif, webp), pdf, UTF-8 text (plain, markdown, csv), zip, office documents; anything else, and text that looks like HTML, SVG or XML whatever its declared type, is `415`. An empty file is `422`. With a per-user quota (`APP_ATTACHMENT_QUOTA_BYTES`; none by default; `GET /me` shows `attachment_bytes` and `attachment_quota_bytes`), a file that would take the user's attachments past it is `413 storage_quota_exceeded`, refused as soon as the bytes read pass what is left (the file is never written whole) and nothing is stored. `507 storage_full` when the server's disk is full (nothing is stored).",
          tags: ["attachments"],
          bodyContentType: "multipart/form-data",
          ok: { status: 201, schema: Attachment, headers: { Location: { description: "URL of the file" } } },
          errors: ["not_found", "malformed_request", "payload_too_large", "storage_quota_exceeded", "unsupported_media_type", "validation_failed", "csrf_failed", "storage_full"],
        })),
      },
    )
    .get("/attachments/:attachment_id", ({ params, request }) => presentDownload(service.get(principalOf(request).user.id, params.attachment_id), request.headers), {
      params: AttachmentParams,
      detail: withDownloadAnswers(
        doc({
          summary: "Download an attachment's bytes",
          description:
            "Answers with the stored Content-Type and the headers below. `If-None-Match` with the ETag answers `304`; `Range: bytes=first-last` (one range; `If-Range` honoured) answers `206`, a range starting past the end `416`.",
          tags: ["attachments"],
          ok: { status: 200, schema: AttachmentBytes, contentType: "application/octet-stream", headers: downloadHeaders },
          errors: ["not_found", "range_not_satisfiable"],
        }),
      ),
    })
    .delete(
      "/attachments/:attachment_id",
      ({ params, request, set }) => {
        service.remove(principalOf(request).user.id, params.attachment_id);
        set.status = 204;
      },
      {
        params: AttachmentParams,
        detail: doc({ summary: "Delete an attachment (and its file)", description: "The record goes in a transaction and the file right after; should removing the file fail, the start-up sweep removes it. An attachment that is not the user's, or whose task is not visible, is `404`.", tags: ["attachments"], ok: { status: 204 }, errors: ["not_found", "csrf_failed"] }),
      },
    );
}
