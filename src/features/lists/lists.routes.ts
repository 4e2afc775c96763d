import { Elysia } from "elysia";
import { doc } from "../../core/openapi";
import { principalOf, requestMeta } from "../../core/http";
import { ReorderBody } from "../folders/folders.schemas";
import type { ListsService } from "./lists.service";
import { presentList } from "./lists.present";
import { List, ListCreate, ListList, ListMove, ListParams, ListPatch, ListsQuery } from "./lists.schemas";

const WRITE_ERRORS = ["validation_failed", "csrf_failed", "malformed_request", "payload_too_large"] as const;

export function listsRoutes(service: ListsService) {
  return new Elysia({ name: "lists", prefix: "/api/v1" })
    .get("/lists", ({ query, request }) => ({ items: service.list(principalOf(request).user.id, query.archived).map(presentList) }), {
      query: ListsQuery,
      detail: doc({
        summary: "Active lists, the inbox first then by position; `archived=true`: the archived lists",
        description:
          "The archived lists come most recently archived first. Each list with `is_inbox`, `color` and `folder_id` (null at root, also when its folder was deleted). Not paginated.",
        tags: ["lists"],
        ok: { status: 200, schema: ListList },
        errors: ["validation_failed"],
      }),
    })
    .post(
      "/lists",
      ({ body, request, set }) => {
        const l = presentList(service.create(principalOf(request).user.id, body));
        set.status = 201;
        set.headers["location"] = `/api/v1/lists/${l.id}`;
        return l;
      },
      {
        body: ListCreate,
        detail: doc({
          summary: "Create a list, optionally in a folder",
          description:
            "`name` is 1 to 200 characters after trimming, without control characters; `color` is `#RRGGBB` or null; `folder_id` must name one of the user's folders (`422 invalid_reference` otherwise). The list goes last.",
          tags: ["lists"],
          ok: { status: 201, schema: List, headers: { Location: { description: "the list's URL" } } },
          errors: [...WRITE_ERRORS, "invalid_reference"],
        }),
      },
    )
    .post("/lists/reorder", ({ body, request }) => ({ items: service.reorder(principalOf(request).user.id, body.ids).map(presentList) }), {
      body: ReorderBody,
      detail: doc({
        summary: "Reorder lists: `ids` names every active list except the inbox exactly once",
        description:
          "Positions become the order of `ids`; the inbox always stays first. An unknown, archived or repeated id, the inbox, or a list left out is `422 validation_failed` (each listed in `errors`), and nothing changes. Answers the active lists in the new order.",
        tags: ["lists"],
        ok: { status: 200, schema: ListList },
        errors: [...WRITE_ERRORS],
      }),
    })
    .get("/lists/:list_id", ({ params, request }) => presentList(service.get(principalOf(request).user.id, params.list_id)), {
      params: ListParams,
      detail: doc({ summary: "One list (archived lists too)", description: "An archived list is answered with its `deleted_at`. An id that is not one of the user's lists is `404`.", tags: ["lists"], ok: { status: 200, schema: List }, errors: ["not_found", "validation_failed"] }),
    })
    .patch("/lists/:list_id", ({ params, body, request }) => presentList(service.update(principalOf(request).user.id, params.list_id, body)), {
      params: ListParams,
      body: ListPatch,
      detail: doc({
        summary: "Rename or recolour a list, or set how its tasks are sorted (the inbox cannot be renamed)",
        description:
          "`name` follows the rules of `POST /lists`; `color` is `#RRGGBB`, or null to remove it; `sort` (`manual`, `due_date`, `priority`, `title`, `created`; a new list has `created`) is remembered for every client, which passes it to `GET /tasks?list_id=…&sort=…`. Renaming the inbox is `409 inbox_immutable` (its colour can change). An archived list is `404` until restored.",
        tags: ["lists"],
        ok: { status: 200, schema: List },
        errors: [...WRITE_ERRORS, "not_found", "inbox_immutable"],
      }),
    })
    .delete(
      "/lists/:list_id",
      ({ params, request, set }) => {
        service.archive(principalOf(request).user.id, params.list_id);
        set.status = 204;
      },
      {
        params: ListParams,
        detail: doc({
          summary: "Archive a list; its tasks stay with it, hidden until it is restored",
          description:
            "The list and its tasks disappear from every task view, search and filter; tasks cannot be created in or moved into it (`422 invalid_reference`). `POST /lists/{list_id}/restore` brings both back; `DELETE /lists/{list_id}/purge` removes them for good. The inbox cannot be archived (`409 inbox_immutable`); archiving an archived list is `404`.",
          tags: ["lists"],
          ok: { status: 204 },
          errors: ["not_found", "inbox_immutable", "csrf_failed", "validation_failed"],
        }),
      },
    )
    .post("/lists/:list_id/restore", ({ params, request }) => presentList(service.restore(principalOf(request).user.id, params.list_id)), {
      params: ListParams,
      detail: doc({
        summary: "Restore an archived list; its tasks are visible again",
        description: "Only an archived list can be restored: an active one is `409 state_conflict` (the rule for every restore: tasks, lists, memos, habits, countdowns).",
        tags: ["lists"],
        ok: { status: 200, schema: List },
        errors: ["not_found", "state_conflict", "csrf_failed", "validation_failed"],
      }),
    })
    .delete(
      "/lists/:list_id/purge",
      ({ params, request, set }) => {
        service.purge(principalOf(request).user.id, params.list_id, requestMeta(request));
        set.status = 204;
      },
      {
        params: ListParams,
        detail: doc({
          summary: "Delete an archived list for good, with its tasks, their recurrences and attachments",
          description:
            "Only an archived list can be purged (`409 not_archived`: archive it first; the inbox never). Its tasks with their subtasks, tag links, recurrences and attachments are deleted in one transaction, attachment files once it has committed. Audited (`list_purged`, with the list's name and the number of tasks).",
          tags: ["lists"],
          ok: { status: 204 },
          errors: ["not_found", "not_archived", "inbox_immutable", "csrf_failed", "validation_failed"],
        }),
      },
    )
    .post(
      "/lists/:list_id/move",
      ({ params, body, request }) => presentList(service.move(principalOf(request).user.id, params.list_id, body.folder_id)),
      {
        params: ListParams,
        body: ListMove,
        detail: doc({
          summary: "Move a list into a folder, or to root with null",
          description:
            "`folder_id` must name one of the user's folders (`422 invalid_reference` otherwise), or be null for the root level. The inbox cannot be moved (`409 inbox_immutable`); an archived list is `404`.",
          tags: ["lists"],
          ok: { status: 200, schema: List },
          errors: [...WRITE_ERRORS, "not_found", "inbox_immutable", "invalid_reference"],
        }),
      },
    );
}
