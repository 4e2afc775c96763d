import { Elysia } from "elysia";
import { doc } from "../../core/openapi";
import { principalOf } from "../../core/http";
import type { TasksService } from "./tasks.service";
import { BatchResult, BatchUndo, Task, TaskBatch, TaskMove, UndoQuery, UndoResult, TaskCreate, TaskPage, TaskParams, TaskPatch, TaskQuery } from "./tasks.schemas";

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
          description:
            "`title` is 1 to 500 characters and not blank; `description` (Markdown) up to 20,000; `priority` 0 (none) to 3 (high); `due_at` a date `YYYY-MM-DD` (due that local day) or an RFC 3339 date-time with `Z` or an offset (stored in UTC with milliseconds). `list_id` must be an active list of the user, each of `tag_ids` one of the user's tags (`422 invalid_reference` naming them). With `parent_id` the task is a subtask: the parent must be a top-level task of the same list (`422 invalid_parent`), nesting is one level deep. The task starts at `version` 1.",
          tags: ["tasks"],
          ok: { status: 201, schema: Task, headers: { Location: { description: "the task's URL" } } },
          errors: [...WRITE_ERRORS, "invalid_reference", "invalid_parent"],
        }),
      },
    )
    .post("/tasks/batch", ({ body, query, request }) => service.batch(principalOf(request).user, body, query.undo === "true"), {
      body: TaskBatch,
      query: UndoQuery,
      detail: doc({
        summary: "Complete, move, set due date, priority, replace, add or remove tags, or soft-delete up to 500 tasks, all or nothing",
        description:
          "Every named task's `version` grows by one. Tags: `tag_ids` replaces the user's tags on every named task; `add_tag_ids` adds tags to each task and keeps the ones it has, `remove_tag_ids` removes tags from each task that has them and keeps the others (both may be given together, never naming the same tag; with `tag_ids` they are `422 validation_failed`). A tag id that is not the user's is `422 invalid_reference`, whichever of the three names it. A task may carry at most ${TAG_IDS_MAX} of the user's tags: an `add_tag_ids` that would take any named task over that is `422 validation_failed` naming the tasks, and nothing changes. Tags are the user's own, so tag changes alone need no edit right on a shared list. With `?undo=true` the answer also carries an `undo_token` that takes the whole batch back (`POST /tasks/batch/undo`). `completed: true` on a recurring task that is not completed does what `POST /recurrences/{id}/complete` does (a completed copy is recorded and the task moves to its next occurrence, its subtasks reset; when the series has ended the task itself is completed and its recurrence ends), after the batch's other changes (so a `due_at` given is the occurrence completed) and after the plain tasks named with it (a subtask named too is completed in the copy). One task that cannot be completed that way (an `rrule` task left without `due_at`) refuses the whole batch: `409 state_conflict`, nothing changes. The answer counts the named tasks, not the copies.",
        tags: ["tasks"],
        ok: { status: 200, schema: BatchResult },
        errors: [...WRITE_ERRORS, "invalid_reference", "invalid_parent", "state_conflict"],
      }),
    })
    .post("/tasks/batch/undo", ({ body, request }) => service.undoBatch(principalOf(request).user, body.undo_token), {
      body: BatchUndo,
      detail: doc({
        summary: "Undo a batch: every task back exactly as it was",
        description:
          "`undo_token` is what `POST /tasks/batch?undo=true` answered (signed by the server, bound to the user, valid for 10 minutes). In one transaction every task the batch changed (subtasks moved with their parent included) gets back its `list_id`, `due_at`, `completed`, `completed_at`, `priority` and, when the batch changed them (`tag_ids`, `add_tag_ids` or `remove_tag_ids`), exactly the tags it had; each `version` grows by one (a version never goes back, so an edit based on the batch's result cannot pass unnoticed). All or nothing: a task changed since the batch (its version moved on, or it went to the trash), a list no longer active or a tag deleted since is `409 state_conflict` and nothing changes; an expired token is `409 state_conflict` too; a token that is not the server's, another user's or of another kind is `422 validation_failed`. Undoing twice is a `409` (the versions moved on).",
        tags: ["tasks"],
        ok: { status: 200, schema: UndoResult },
        errors: [...WRITE_ERRORS, "state_conflict"],
      }),
    })
    .get("/tasks/:task_id", ({ params, request }) => service.getTaskForUser(principalOf(request).user.id, params.task_id), {
      params: TaskParams,
      detail: doc({ summary: "One task with its tags and subtasks", description: "A task in the trash, in an archived list, or not the user's is `404` (the same answer for each); an id of any length that names nothing is `404` too. Subtasks are the non-deleted ones, oldest first.", tags: ["tasks"], ok: { status: 200, schema: Task }, errors: ["not_found"] }),
    })
    .patch("/tasks/:task_id", ({ params, body, request }) => service.update(principalOf(request).user, params.task_id, body), {
      params: TaskParams,
      body: TaskPatch,
      detail: doc({
        summary: "Partial update with optimistic locking (`version` required)",
        description:
          "`version` must be the stored one (`409 version_conflict` otherwise, nothing changes); it grows by one. `completed: true` on a recurring task that is not completed does what `POST /recurrences/{id}/complete` does: a completed copy of the current occurrence is recorded (new id, tags and subtasks as they were) and the task moves to its next occurrence with its subtasks reset, or, when the series has ended (COUNT/UNTIL), the task itself is completed and its recurrence ends. The answer is the task after the move. Other fields in the same PATCH apply first, to the occurrence being completed, and so reach both the copy and the task going on (a `due_at` given is the occurrence completed; the next one follows it). An `rrule` task left without `due_at` cannot be completed that way (`409 state_conflict`). `completed: true` on a recurring task already completed, and `completed: false`, only set the flag. A task with a recurrence cannot become a subtask: `parent_id` naming a task is `422 validation_failed` on `parent_id` (delete the recurrence first).",
        tags: ["tasks"],
        ok: { status: 200, schema: Task },
        errors: [...WRITE_ERRORS, "not_found", "version_conflict", "invalid_reference", "invalid_parent", "state_conflict"],
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
          description:
            "Sets `deleted_at` on the task and its live subtasks (a subtask deleted alone goes by itself). The task leaves every list, search and filter and is `404` from then on; it is listed by `GET /trash` until `POST /tasks/{task_id}/restore` or `DELETE /trash/{task_id}`. Its recurrence and attachments stay with it. Deleting a task that is already in the trash is `404`.",
          tags: ["tasks"],
          ok: { status: 204 },
          errors: ["not_found", "csrf_failed", "validation_failed"],
        }),
      },
    )
    .post("/tasks/:task_id/move", ({ params, body, request }) => service.move(principalOf(request).user, params.task_id, body), {
      params: TaskParams,
      body: TaskMove,
      detail: doc({
        summary: "Manual order: place a task before or after a sibling, or first or last",
        description:
          "Siblings are the top-level tasks of one list, or the subtasks of one parent. On a shared list the owner and editors reorder (a viewer gets `403 forbidden`, a non-member `404`); the trash and completed tasks keep their places. Exactly one of `before_id`, `after_id` (a visible sibling: another list's or parent's task, the task itself or a missing one is `422 invalid_reference`) or `to` (`first`, `last`). The task gets a new `rank` between its new neighbours' and its `version` grows by one; no other task changes, except when the neighbours' ranks tie or leave no short key between them: then a few neighbours around the spot get new ranks too (their versions grow). A new task, and a task moved to another list or parent, goes last.",
        tags: ["tasks"],
        ok: { status: 200, schema: Task },
        errors: [...WRITE_ERRORS, "not_found", "invalid_reference"],
      }),
    })
    .post("/tasks/:task_id/restore", ({ params, request }) => service.restore(principalOf(request).user, params.task_id), {
      params: TaskParams,
      detail: doc({
        summary: "Restore a task (and its subtasks) from the trash",
        description: "Only a task in the trash can be restored: a task that is not deleted is `409 state_conflict` (the rule for every restore: tasks, lists, memos, habits, countdowns), and so is a subtask whose parent is still deleted.",
        tags: ["tasks"],
        ok: { status: 200, schema: Task },
        errors: ["not_found", "state_conflict", "csrf_failed", "validation_failed"],
      }),
    });
}
