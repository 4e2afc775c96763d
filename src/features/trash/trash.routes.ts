import { Elysia } from "elysia";
import { doc } from "../../core/openapi";
import { principalOf, requestMeta } from "../../core/http";
import type { TasksService } from "../tasks/tasks.service";
import { TaskPage, TaskParams, TrashQuery } from "../tasks/tasks.schemas";

/** The recycle bin: a view of the task service's deleted tasks. */
export function trashRoutes(service: TasksService) {
  return new Elysia({ name: "trash", prefix: "/api/v1" })
    .get("/trash", ({ query, request }) => service.trashPage(principalOf(request).user, query.limit, query.cursor), {
      query: TrashQuery,
      detail: doc({
        summary: "Deleted top-level tasks, most recently deleted first (cursor page), each with its subtasks",
        description:
          "Tasks of archived lists are not listed (they come back with their list). A deleted subtask whose parent is live is not listed here: restore it with `POST /tasks/{task_id}/restore`. Cursor page: `limit` 1..100 (default 50), `cursor` from the previous page's `next_cursor`.",
        tags: ["trash"],
        ok: { status: 200, schema: TaskPage },
        errors: ["validation_failed", "invalid_cursor"],
      }),
    })
    .delete(
      "/trash/:task_id",
      ({ params, request, set }) => {
        service.purge(principalOf(request).user, params.task_id, requestMeta(request));
        set.status = 204;
      },
      {
        params: TaskParams,
        detail: doc({
          summary: "Delete a task in the trash for good, with its subtasks, recurrence and attachments",
          description:
            "Only a task in the trash can be purged (`409 not_archived` otherwise: delete it first). The task, its subtasks, their tag links, its recurrence and its attachments go in one transaction, the attachment files once it has committed. Audited (`task_purged`, with the title and the number of subtasks).",
          tags: ["trash"],
          ok: { status: 204 },
          errors: ["not_found", "not_archived", "csrf_failed", "validation_failed"],
        }),
      },
    );
}
