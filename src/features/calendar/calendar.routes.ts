import { Elysia } from "elysia";
import { doc } from "../../core/openapi";
import { principalOf } from "../../core/http";
import { Task } from "../tasks/tasks.schemas";
import type { CalendarService } from "./calendar.service";
import { CalendarQuery, CalendarRange, MAX_CALENDAR_TASKS, MAX_OCCURRENCES, MAX_RANGE_DAYS, RescheduleBody, RescheduleParams } from "./calendar.schemas";

export function calendarRoutes(service: CalendarService) {
  return new Elysia({ name: "calendar", prefix: "/api/v1" })
    .get("/calendar", ({ query, request }) => service.range(principalOf(request).user, query), {
      query: CalendarQuery,
      detail: doc({
        summary: "What falls on each day of a range (a month or week view): dated tasks, repeating tasks' later occurrences, countdowns, habit check-ins",
        description: `\`from\` (inclusive) to \`to\` (exclusive), 1 to ${MAX_RANGE_DAYS} days (a month view's six weeks fit), as the user's local days. Each day lists the dated top-level tasks (open and completed, as GET /tasks shows them: the lists shared with the user included) that fall on it — a date-only \`due_at\` on its date, a timed one on its date in the user's zone, as the \`due_before\`/\`due_after\` filters draw days; the later occurrences of each open repeating (rrule) task, computed by the recurrence engine and never stored (the task's own \`due_at\` is the task itself; skipped dates are left out); each countdown on the days it occurs (with its \`count\` there); each habit check-in on its date. At most ${MAX_CALENDAR_TASKS} tasks and ${MAX_OCCURRENCES} occurrences are answered (\`truncated\` is then true).`,
        tags: ["calendar"],
        ok: { status: 200, schema: CalendarRange },
        errors: ["validation_failed"],
      }),
    })
    .post("/tasks/:task_id/reschedule", ({ params, body, request }) => service.reschedule(principalOf(request).user, params.task_id, body), {
      params: RescheduleParams,
      body: RescheduleBody,
      detail: doc({
        summary: "Move a task to another day, keeping its time of day (a calendar drag)",
        description:
          "A date-only `due_at` becomes `date`; a timed one keeps its wall-clock time in the user's zone on `date` (so 09:00 stays 09:00 across a daylight-saving change). The same PATCH as `due_at` with `version` (`409 version_conflict` when stale; a repeating task's series is not changed). A task without `due_at` is `422 validation_failed`. On a shared list the owner and editors reschedule (a viewer gets `403 forbidden`, a non-member `404`).",
        tags: ["calendar"],
        ok: { status: 200, schema: Task },
        errors: ["validation_failed", "csrf_failed", "malformed_request", "not_found", "version_conflict"],
      }),
    });
}
