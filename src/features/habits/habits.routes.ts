import { Elysia } from "elysia";
import { doc } from "../../core/openapi";
import { principalOf } from "../../core/http";
import { HabitsService } from "./habits.service";
import {
  Habit,
  HabitCreate,
  HabitList,
  HabitListQuery,
  HabitLog,
  HabitLogList,
  HabitParams,
  HabitPatch,
  HabitPause,
  HabitPauseList,
  HabitStatsSchema,
  HabitWeek,
  LogBody,
  LogParams,
  LogRangeQuery,
  PauseCreate,
  PauseParams,
  PausePatch,
  ReorderBody,
  WeekQuery,
} from "./habits.schemas";
import { presentHabit, presentLog, presentPause } from "./habits.present";

const WRITE = ["validation_failed", "csrf_failed", "malformed_request", "payload_too_large"] as const;
const TAGS = ["habits"];
const location = { Location: { description: "URL of the new resource" } };

const STATS_DESCRIPTION = `As of the user's today (in the user's time zone).

- A day is eligible when it is on or after \`start_date\` and in no pause. Paused days neither count nor break a streak.
- \`daily\` and \`weekdays\`: an eligible day is scheduled when the frequency names its ISO weekday (every day for daily; unscheduled weekdays are skipped). A scheduled day is done when its log value is at least \`goal\`. \`current_streak\` and \`longest_streak\` count consecutive done scheduled days. Today, while not done, is left out: it does not break the current streak (which then counts up to yesterday) and is in no rate's denominator. \`total_done\` counts done scheduled days. A rate is done scheduled days / scheduled days in the window.
- \`times_per_week\`: the unit is the ISO week, Monday to Sunday. A week is met when it has at least min(count, its eligible days) done days; a week with no eligible day is skipped (a week that is partly paused or partly before \`start_date\` needs fewer days). The current week's days after today count as eligible (they can still be done); the current week, while not yet met, is still open and skipped. Streaks count consecutive met weeks (so they are in weeks). \`total_done\` counts done eligible days. A rate is met weeks / judged weeks among the weeks overlapping the window.
- Windows end today: 7d and 30d begin 6 and 29 days earlier (never before \`start_date\`); \`all\` begins at \`start_date\`. Rates are fractions from 0 to 1, \`null\` while the window holds nothing to judge.`;

const WEEK_DESCRIPTION = `Seven days beginning at \`start\` (any date; default: the Monday of the user's current week) for every active habit, in position order. The status of a day is the first of these that applies:
1. \`future\`: after the user's today.
2. \`not_scheduled\`: a day the habit does not schedule: before its \`start_date\`, or a weekday a \`weekdays\` habit skips. This holds inside a pause too: a pause suspends scheduled days only.
3. \`paused\`: inside a pause.
4. \`done\` (value ≥ goal), \`partial\` (0 < value < goal), or \`missed\` (no value; today too until something is logged, though today never breaks a streak).
For \`times_per_week\` habits (no weekday is skipped), step 4 differs for a day without a log: it is \`missed\` only once its ISO week is over without meeting the count, and \`not_scheduled\` otherwise (so never \`missed\` in the current week). The current week's days after today count as eligible days (they can still be done): its requirement is min(count, eligible days of the whole week), and the week stays open until it is met or over. \`value\` is 0 without a log.`;

export function habitsRoutes(service: HabitsService) {
  return new Elysia({ name: "habits", prefix: "/api/v1" })
    .get("/habits", ({ query, request }) => ({ items: service.list(principalOf(request).user, query.archived).map(presentHabit) }), {
      query: HabitListQuery,
      detail: doc({
        summary: "List habits by position (archived=true lists the archived ones)",
        description:
          "Active habits by default (`archived=false`), ordered by `position` (the order `POST /habits/reorder` sets; a new or restored habit goes last). `archived=true` lists the archived ones instead. Each habit as `GET /habits/{habit_id}` answers it.",
        tags: TAGS,
        ok: { status: 200, schema: HabitList },
        errors: ["validation_failed"],
      }),
    })
    .post(
      "/habits",
      ({ body, request, set }) => {
        const h = presentHabit(service.create(principalOf(request).user, body));
        set.status = 201;
        set.headers["location"] = `/api/v1/habits/${h.id}`;
        return h;
      },
      {
        body: HabitCreate,
        detail: doc({
          summary: "Create a habit",
          description: "`frequency` defaults to daily, `goal` to 1 (must be > 0), `start_date` to the user's today. The new habit goes last.",
          tags: TAGS,
          ok: { status: 201, schema: Habit, headers: location },
          errors: [...WRITE],
        }),
      },
    )
    .get("/habits/week", ({ query, request }) => service.week(principalOf(request).user, query.start), {
      query: WeekQuery,
      detail: doc({ summary: "Weekly grid of the active habits", description: WEEK_DESCRIPTION, tags: TAGS, ok: { status: 200, schema: HabitWeek }, errors: ["validation_failed"] }),
    })
    .post("/habits/reorder", ({ body, request }) => ({ items: service.reorder(principalOf(request).user, body.ids).map(presentHabit) }), {
      body: ReorderBody,
      detail: doc({
        summary: "Reorder the active habits",
        description: "`ids` must be exactly the ids of the active (not archived) habits, each once; otherwise `422 validation_failed` and nothing changes.",
        tags: TAGS,
        ok: { status: 200, schema: HabitList },
        errors: [...WRITE],
      }),
    })
    .get("/habits/:habit_id", ({ params, request }) => presentHabit(service.get(principalOf(request).user, params.habit_id)), {
      params: HabitParams,
      detail: doc({ summary: "One habit (an archived habit is answered too)", description: "An archived habit is answered with `archived: true` (it is read-only until restored). An id that is not one of the user's habits is `404`.", tags: TAGS, ok: { status: 200, schema: Habit }, errors: ["not_found", "validation_failed"] }),
    })
    .patch("/habits/:habit_id", ({ params, body, request }) => presentHabit(service.update(principalOf(request).user, params.habit_id, body)), {
      params: HabitParams,
      body: HabitPatch,
      detail: doc({
        summary: "Partial update of an active habit",
        description:
          "An archived habit is read-only (`404` until restored). `start_date` may move back freely; moving it past the habit's earliest log is `422 validation_failed` on `start_date` (no log lies before `start_date`: delete the earlier logs first).",
        tags: TAGS,
        ok: { status: 200, schema: Habit },
        errors: ["not_found", ...WRITE],
      }),
    })
    .delete(
      "/habits/:habit_id",
      ({ params, request, set }) => {
        service.archive(principalOf(request).user, params.habit_id);
        set.status = 204;
      },
      {
        params: HabitParams,
        detail: doc({ summary: "Archive a habit (idempotent)", description: "The habit leaves the active list, the weekly grid and reordering, keeping its logs and pauses; it is read-only (writes are `404`) until `POST /habits/{habit_id}/restore`. Archiving an archived habit changes nothing and answers `204`.", tags: TAGS, ok: { status: 204 }, errors: ["not_found", "validation_failed", "csrf_failed"] }),
      },
    )
    .post("/habits/:habit_id/restore", ({ params, request }) => presentHabit(service.restore(principalOf(request).user, params.habit_id)), {
      params: HabitParams,
      detail: doc({
        summary: "Restore an archived habit (it goes last)",
        description: "Only an archived habit can be restored: an active habit is `409 state_conflict` (the rule for every restore: tasks, lists, memos, habits, countdowns).",
        tags: TAGS,
        ok: { status: 200, schema: Habit },
        errors: ["not_found", "state_conflict", "validation_failed", "csrf_failed"],
      }),
    })
    .delete(
      "/habits/:habit_id/purge",
      ({ params, request, set }) => {
        service.purge(principalOf(request).user, params.habit_id);
        set.status = 204;
      },
      {
        params: HabitParams,
        detail: doc({
          summary: "Permanently delete an archived habit with its logs and pauses",
          description:
            "Only an archived habit can be purged (`409 not_archived` otherwise: archive it first). The habit, its logs and its pauses are gone for good.",
          tags: TAGS,
          ok: { status: 204 },
          errors: ["not_found", "not_archived", "validation_failed", "csrf_failed"],
        }),
      },
    )
    .get(
      "/habits/:habit_id/logs",
      ({ params, query, request }) => ({ items: service.listLogs(principalOf(request).user, params.habit_id, query.from, query.to).map(presentLog) }),
      {
        params: HabitParams,
        query: LogRangeQuery,
        detail: doc({
          summary: "A habit's logs by date; from and to are inclusive and optional",
          description:
            "Oldest first. Without `from` or `to` the range is open on that side; `from` after `to` is `422`. An archived habit's logs are answered too. Dates are calendar dates from 1900-01-01 to 2999-12-31.",
          tags: TAGS,
          ok: { status: 200, schema: HabitLogList },
          errors: ["not_found", "validation_failed"],
        }),
      },
    )
    .get("/habits/:habit_id/logs/:date", ({ params, request }) => presentLog(service.getLog(principalOf(request).user, params.habit_id, params.date)), {
      params: LogParams,
      detail: doc({ summary: "The log of one day (404 when that day has none)", description: "`{date, value, note}` of the habit on that calendar date; `404` when the habit is not the user's or has no log that day. An archived habit's logs are answered too.", tags: TAGS, ok: { status: 200, schema: HabitLog }, errors: ["not_found", "validation_failed"] }),
    })
    .put(
      "/habits/:habit_id/logs/:date",
      ({ params, body, request }) => presentLog(service.putLog(principalOf(request).user, params.habit_id, params.date, body)),
      {
        params: LogParams,
        body: LogBody,
        detail: doc({
          summary: "Create or replace the log of one day",
          description:
            "`value` ≥ 0; `note` omitted means none. One log per habit and day. A date after the user's today is `422 validation_failed` on `date`; a date before the habit's `start_date` is `422 validation_failed` on `start_date` (move the start date back with `PATCH /habits/{habit_id}` first), so no log ever lies before `start_date`.",
          tags: TAGS,
          ok: { status: 200, schema: HabitLog },
          errors: ["not_found", ...WRITE],
        }),
      },
    )
    .delete(
      "/habits/:habit_id/logs/:date",
      ({ params, request, set }) => {
        service.deleteLog(principalOf(request).user, params.habit_id, params.date);
        set.status = 204;
      },
      {
        params: LogParams,
        detail: doc({
          summary: "Remove the log of one day (404 when that day has none)",
          description:
            "The day then has no log (value 0) in the grid and the statistics. An archived habit is read-only (`404`).",
          tags: TAGS,
          ok: { status: 204 },
          errors: ["not_found", "validation_failed", "csrf_failed"],
        }),
      },
    )
    .get("/habits/:habit_id/pauses", ({ params, request }) => ({ items: service.listPauses(principalOf(request).user, params.habit_id).map(presentPause) }), {
      params: HabitParams,
      detail: doc({ summary: "A habit's pauses by start date", description: "Every pause of the habit, earliest `start_date` first; `end_date` null is an open-ended pause. An archived habit's pauses are answered too.", tags: TAGS, ok: { status: 200, schema: HabitPauseList }, errors: ["not_found", "validation_failed"] }),
    })
    .post(
      "/habits/:habit_id/pauses",
      ({ params, body, request, set }) => {
        const p = presentPause(service.createPause(principalOf(request).user, params.habit_id, body));
        set.status = 201;
        set.headers["location"] = `/api/v1/habits/${params.habit_id}/pauses/${p.id}`;
        return p;
      },
      {
        params: HabitParams,
        body: PauseCreate,
        detail: doc({
          summary: "Start a pause",
          description:
            "`end_date` (inclusive) null or omitted = open-ended. Dates may lie in the future. A pause that overlaps another pause of the habit is `409 state_conflict`.",
          tags: TAGS,
          ok: { status: 201, schema: HabitPause, headers: location },
          errors: ["not_found", "state_conflict", ...WRITE],
        }),
      },
    )
    .get(
      "/habits/:habit_id/pauses/:pause_id",
      ({ params, request }) => presentPause(service.getPause(principalOf(request).user, params.habit_id, params.pause_id)),
      {
        params: PauseParams,
        detail: doc({ summary: "One pause", description: "`404` when the habit is not the user's or has no pause with that id.", tags: TAGS, ok: { status: 200, schema: HabitPause }, errors: ["not_found", "validation_failed"] }),
      },
    )
    .patch(
      "/habits/:habit_id/pauses/:pause_id",
      ({ params, body, request }) => presentPause(service.updatePause(principalOf(request).user, params.habit_id, params.pause_id, body)),
      {
        params: PauseParams,
        body: PausePatch,
        detail: doc({
          summary: "End or edit a pause",
          description: "Set `end_date` to end an open pause. The result must not end before it starts (`422`) nor overlap another pause (`409 state_conflict`).",
          tags: TAGS,
          ok: { status: 200, schema: HabitPause },
          errors: ["not_found", "state_conflict", ...WRITE],
        }),
      },
    )
    .delete(
      "/habits/:habit_id/pauses/:pause_id",
      ({ params, request, set }) => {
        service.deletePause(principalOf(request).user, params.habit_id, params.pause_id);
        set.status = 204;
      },
      {
        params: PauseParams,
        detail: doc({ summary: "Remove a pause", description: "The paused days count again as the schedule says (in the grid and the statistics). An archived habit is read-only (`404`).", tags: TAGS, ok: { status: 204 }, errors: ["not_found", "validation_failed", "csrf_failed"] }),
      },
    )
    .get("/habits/:habit_id/stats", ({ params, request }) => service.stats(principalOf(request).user, params.habit_id), {
      params: HabitParams,
      detail: doc({ summary: "Streaks, total and completion rates", description: STATS_DESCRIPTION, tags: TAGS, ok: { status: 200, schema: HabitStatsSchema }, errors: ["not_found", "validation_failed"] }),
    });
}
