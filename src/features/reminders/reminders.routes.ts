import { Elysia } from "elysia";
import { doc } from "../../core/openapi";
import { principalOf } from "../../core/http";
import type { RemindersService } from "./reminders.service";
import { CountdownParams, HabitParams, Reminder, ReminderCreate, ReminderList, ReminderParams, ReminderPatch, TaskParams } from "./reminders.schemas";
import { presentReminder } from "./reminders.present";
import type { TargetType } from "./reminders.targets";

const WRITE = ["validation_failed", "csrf_failed", "malformed_request", "payload_too_large"] as const;
const TAGS = ["reminders"];

const RULES = `Kinds: \`before_due\` (tasks) fires \`minutes_before\` minutes before the task's \`due_at\`; for a date-only task, before the user's \`reminder_time\` (PATCH /me, default 09:00) on that date, in the user's zone; a repeating task's reminder is armed again for each occurrence. \`at\` (tasks) fires once at the instant \`at\`. \`daily\` (habits) fires at the local \`time\` on each scheduled day (its weekdays; for times_per_week, each day of a week not yet met), skipped while the habit is paused, archived or that day is already done. \`days_before\` (countdowns) fires \`days_before\` days before each occurrence (lunar ones included) at the local \`time\`.
Fields a kind does not use are null and refused on input (422). \`next_fire_at\` is the next instant it fires, null when nothing is armed (a completed, trashed or undated task, a past instant, an archived habit or countdown). Reminders are personal: each is its owner's alone. At most 10 per target. They map onto iCalendar VALARM (TRIGGER relative to DUE, or absolute).`;

function targetRoutes(service: RemindersService, type: TargetType, path: string, param: "task_id" | "habit_id" | "countdown_id", params: typeof TaskParams | typeof HabitParams | typeof CountdownParams) {
  const idOf = (p: Record<string, string>) => p[param]!;
  return new Elysia({ name: `reminders-${type}` })
    .get(`${path}/reminders`, async ({ params, request }) => ({ items: (await service.list(principalOf(request).user, type, idOf(params))).map(presentReminder) }), {
      params,
      detail: doc({ summary: `The ${type}'s reminders (the caller's), oldest first`, description: RULES, tags: TAGS, ok: { status: 200, schema: ReminderList }, errors: ["not_found", "validation_failed"] }),
    })
    .post(
      `${path}/reminders`,
      async ({ params, body, request, set }) => {
        const r = presentReminder(await service.create(principalOf(request).user, type, idOf(params), body));
        set.status = 201;
        set.headers["location"] = `/api/v1/reminders/${r.id}`;
        return r;
      },
      {
        params,
        body: ReminderCreate,
        detail: doc({
          summary: `Add a reminder to a ${type}`,
          description: `${type === "task" ? "`kind` `before_due` (with `minutes_before`) or `at` (with `at`)" : type === "habit" ? "`kind` `daily` with `time`" : "`kind` `days_before` with `days_before` and `time`"}; a wrong kind, a missing or an unused field is 422, as is an 11th reminder.\n\n${RULES}`,
          tags: TAGS,
          ok: { status: 201, schema: Reminder, headers: { Location: { description: "URL of the new reminder" } } },
          errors: ["not_found", ...WRITE],
        }),
      },
    );
}

export function remindersRoutes(service: RemindersService) {
  return new Elysia({ name: "reminders", prefix: "/api/v1" })
    .use(targetRoutes(service, "task", "/tasks/:task_id", "task_id", TaskParams))
    .use(targetRoutes(service, "habit", "/habits/:habit_id", "habit_id", HabitParams))
    .use(targetRoutes(service, "countdown", "/countdowns/:countdown_id", "countdown_id", CountdownParams))
    .patch("/reminders/:reminder_id", async ({ params, body, request }) => presentReminder(await service.update(principalOf(request).user, params.reminder_id, body)), {
      params: ReminderParams,
      body: ReminderPatch,
      detail: doc({
        summary: "Edit a reminder (its kind's fields only)",
        description: `The kind and target stay; a field the kind does not use is 422. The reminder is armed again at once.\n\n${RULES}`,
        tags: TAGS,
        ok: { status: 200, schema: Reminder },
        errors: ["not_found", ...WRITE],
      }),
    })
    .delete(
      "/reminders/:reminder_id",
      ({ params, request, set }) => {
        service.remove(principalOf(request).user, params.reminder_id);
        set.status = 204;
      },
      {
        params: ReminderParams,
        detail: doc({ summary: "Remove a reminder", description: "Deliveries already recorded stay in `GET /deliveries`.", tags: TAGS, ok: { status: 204 }, errors: ["not_found", "validation_failed", "csrf_failed"] }),
      },
    );
}
