import { Elysia } from "elysia";
import { doc } from "../../core/openapi";
import { principalOf } from "../../core/http";
import { MemosService } from "./memos.service";
import { Memo, MemoCreate, MemoListQuery, MemoPage, MemoParams, MemoPatch } from "./memos.schemas";
import { presentMemo } from "./memos.present";

const WRITE_ERRORS = ["validation_failed", "csrf_failed", "malformed_request", "payload_too_large"] as const;

export function memosRoutes(service: MemosService) {
  return new Elysia({ name: "memos", prefix: "/api/v1" })
    .get("/memos", ({ query, request }) => service.list(principalOf(request).user.id, query.deleted, query.limit, query.cursor), {
      query: MemoListQuery,
      detail: doc({
        summary: "List memos, newest first (cursor page)",
        description: "Active memos by default; `deleted=true` lists the soft-deleted ones instead. Ordered by creation time, newest first.",
        tags: ["memos"],
        ok: { status: 200, schema: MemoPage },
        errors: ["validation_failed", "invalid_cursor"],
      }),
    })
    .post(
      "/memos",
      ({ body, request, set }) => {
        const memo = presentMemo(service.create(principalOf(request).user.id, body));
        set.status = 201;
        set.headers["location"] = `/api/v1/memos/${memo.id}`;
        return memo;
      },
      {
        body: MemoCreate,
        detail: doc({
          summary: "Create a memo",
          description:
            "`content` is Markdown text of 1 to 100,000 characters; `pinned` defaults to false. The memo starts at `version` 1.",
          tags: ["memos"],
          ok: { status: 201, schema: Memo, headers: { Location: { description: "URL of the new memo" } } },
          errors: [...WRITE_ERRORS],
        }),
      },
    )
    .get("/memos/:memo_id", ({ params, request }) => presentMemo(service.get(principalOf(request).user.id, params.memo_id)), {
      params: MemoParams,
      detail: doc({
        summary: "One memo (a soft-deleted memo is answered too, with its deleted_at)",
        description:
          "An id that is not one of the user's memos is `404`.",
        tags: ["memos"],
        ok: { status: 200, schema: Memo },
        errors: ["not_found", "validation_failed"],
      }),
    })
    .patch(
      "/memos/:memo_id",
      ({ params, body, request }) => presentMemo(service.update(principalOf(request).user.id, params.memo_id, body)),
      {
        params: MemoParams,
        body: MemoPatch,
        detail: doc({
          summary: "Update a memo (optimistic lock)",
          description:
            "`version` is required and must equal the stored version (else `409 version_conflict`, nothing changes); the compare-and-update is one statement. A soft-deleted memo is `404` until restored.",
          tags: ["memos"],
          ok: { status: 200, schema: Memo },
          errors: ["not_found", "version_conflict", ...WRITE_ERRORS],
        }),
      },
    )
    .delete(
      "/memos/:memo_id",
      ({ params, request, set }) => {
        service.softDelete(principalOf(request).user.id, params.memo_id);
        set.status = 204;
      },
      {
        params: MemoParams,
        detail: doc({
          summary: "Soft-delete a memo (idempotent; the version grows)",
          description:
            "Sets `deleted_at`; the memo leaves `GET /memos` and appears in `GET /memos?deleted=true` until it is restored or purged. Deleting a deleted memo again changes nothing and answers `204`.",
          tags: ["memos"],
          ok: { status: 204 },
          errors: ["not_found", "validation_failed", "csrf_failed"],
        }),
      },
    )
    .post("/memos/:memo_id/restore", ({ params, request }) => presentMemo(service.restore(principalOf(request).user.id, params.memo_id)), {
      params: MemoParams,
      detail: doc({
        summary: "Restore a soft-deleted memo",
        description: "Only a soft-deleted memo can be restored: a memo that is not deleted is `409 state_conflict` (the rule for every restore: tasks, lists, memos, habits, countdowns).",
        tags: ["memos"],
        ok: { status: 200, schema: Memo },
        errors: ["not_found", "state_conflict", "validation_failed", "csrf_failed"],
      }),
    })
    .delete(
      "/memos/:memo_id/purge",
      ({ params, request, set }) => {
        service.purge(principalOf(request).user.id, params.memo_id);
        set.status = 204;
      },
      {
        params: MemoParams,
        detail: doc({
          summary: "Permanently delete a soft-deleted memo",
          description:
            "Only a soft-deleted memo can be purged (`409 not_archived` otherwise); it is then gone for good.",
          tags: ["memos"],
          ok: { status: 204 },
          errors: ["not_found", "not_archived", "validation_failed", "csrf_failed"],
        }),
      },
    );
}
