import { Elysia } from "elysia";
import { doc } from "../../core/openapi";
import { principalOf } from "../../core/http";
import type { TaskViews } from "./tasks.views";
import { ViewCounts, ViewPage, ViewParams, ViewQuery } from "./tasks.views.schemas";

export function taskViewsRoutes(views: TaskViews) {
  return new Elysia({ name: "task-views", prefix: "/api/v1" })
    .get("/views/counts", ({ request }) => views.counts(principalOf(request).user), {
      detail: doc({
        summary: "How many tasks each smart view holds (for a sidebar), in one request",
        description:
          "Each count stops at `cap` (100): a client shows `99+` there. Counted as the views answer them (the user's own tasks and those of the lists shared with them): open top-level tasks of active lists for overdue, today, tomorrow, next_7_days and upcoming (today onwards), open undated ones for no_date, completed ones for completed. Reading it after each change keeps a sidebar right.",
        tags: ["views"],
        ok: { status: 200, schema: ViewCounts },
        errors: [],
      }),
    })
    .get("/views/:view", ({ params, query, request }) => views.page(principalOf(request).user, params.view, query.limit, query.cursor), {
      params: ViewParams,
      query: ViewQuery,
      detail: doc({
        summary: "A smart view across all lists: today, overdue, tomorrow, next_7_days, upcoming, no_date, completed (cursor pages, grouped by day)",
        description:
          "The tasks GET /tasks shows (top-level, not in the trash, in active lists, the lists shared with the user included; subtasks inside their parent), across every list. Days are the user's (their `timezone`; `today` in the answer): a date-only `due_at` falls on its date, a timed one on its date in the user's zone, exactly as the `due_before`/`due_after` filters draw days. `today`, `tomorrow`, `next_7_days` (today and the six days after), `upcoming` (today onwards, everything dated) and `overdue` (before today; a client shows it apart from Today) hold open tasks, by day, then date-only before timed, then by due time, then id. `no_date`: open undated tasks, newest first (one group, `day` null). `completed`: completed tasks, most recently completed first, grouped by the local day of `completed_at`. A cursor belongs to its view and user (`422 invalid_cursor` otherwise).",
        tags: ["views"],
        ok: { status: 200, schema: ViewPage },
        errors: ["validation_failed", "invalid_cursor"],
      }),
    });
}
