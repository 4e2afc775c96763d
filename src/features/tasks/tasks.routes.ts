import { Elysia } from "elysia";
import { doc } from "../../core/openapi";
import { principalOf } from "../../core/http";
import type { TasksService } from "./tasks.service";
import { BatchResult, Task, TaskBatch, TaskCreate, TaskPage, TaskParams, TaskPatch, TaskQuery } from "./tasks.schemas";

const WRITE_ERRORS = ["validation_failed", "csrf_failed", "malformed_request", "payload_too_large"] as const;

export function tasksRoutes(service: TasksService) {
  return new Elysia({ name: "tasks", prefix: "/api/v1" })
    .get("/tasks", ({ query, request }) => service.page(principalOf(request).user, query), {
      query: TaskQuery,
      detail: doc({
        summary: "Top-level tasks in active lists, newest first (cursor page), with tags and subtasks",
        description:
          "`q`: every whitespace-separated term must occur (case- and accent-insensitive) in the title, the description, a tag name or the list name. Filters `list_id`, `tag_id`, `completed`, `due_before`, `due_after` (inclusive dates; a timed due_at falls on its date in the user's time zone).",
        tags: ["tasks"],
        ok: { status: 200, schema: TaskPage },
        errors: ["validation_failed", "invalid_cursor"],
      }),
    })
    .post(
      "/tasks",
      ({ body, request, set }) => {
        const task = service.create(principalOf(request).user, body);
        set.status = 201;
        set.headers["location"] = `/api/v1/tasks/${task.id}`;
        return task;
      },
      {
        body: TaskCreate,
        detail: doc({
          summary: "Create a task (list_id omitted: the inbox, or the parent's list)",
          tags: ["tasks"],
          ok: { status: 201, schema: Task, headers: { Location: { description: "the task's URL" } } },
          errors: [...WRITE_ERRORS, "invalid_reference", "invalid_parent"],
        }),
      },
    )
    .post("/tasks/batch", ({ body, request }) => service.batch(principalOf(request).user, body), {
      body: TaskBatch,
      detail: doc({
        summary: "Complete, move, set due date, replace tags or soft-delete up to 500 tasks, all or nothing",
        tags: ["tasks"],
        ok: { status: 200, schema: BatchResult },
        errors: [...WRITE_ERRORS, "invalid_reference", "invalid_parent"],
      }),
    })
    .get("/tasks/:task_id", ({ params, request }) => service.getTaskForUser(principalOf(request).user.id, params.task_id), {
      params: TaskParams,
      detail: doc({ summary: "One task with its tags and subtasks", tags: ["tasks"], ok: { status: 200, schema: Task }, errors: ["not_found"] }),
    })
    .patch("/tasks/:task_id", ({ params, body, request }) => service.update(principalOf(request).user, params.task_id, body), {
      params: TaskParams,
      body: TaskPatch,
      detail: doc({
        summary: "Partial update with optimistic locking (`version` required)",
        tags: ["tasks"],
        ok: { status: 200, schema: Task },
        errors: [...WRITE_ERRORS, "not_found", "version_conflict", "invalid_reference", "invalid_parent"],
      }),
    })
    .delete(
      "/tasks/:task_id",
      ({ params, request, set }) => {
        service.softDelete(principalOf(request).user, params.task_id);
        set.status = 204;
      },
      {
        params: TaskParams,
        detail: doc({
          summary: "Move a task and its subtasks to the trash",
          tags: ["tasks"],
          ok: { status: 204 },
          errors: ["not_found", "csrf_failed", "validation_failed"],
        }),
      },
    )
    .post("/tasks/:task_id/restore", ({ params, request }) => service.restore(principalOf(request).user, params.task_id), {
      params: TaskParams,
      detail: doc({
        summary: "Restore a task (and its subtasks) from the trash",
        tags: ["tasks"],
        ok: { status: 200, schema: Task },
        errors: ["not_found", "state_conflict", "csrf_failed", "validation_failed"],
      }),
    });
}
