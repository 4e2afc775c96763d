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
          tags: ["trash"],
          ok: { status: 204 },
          errors: ["not_found", "not_archived", "csrf_failed", "validation_failed"],
        }),
      },
    );
}
