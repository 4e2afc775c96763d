import { Elysia } from "elysia";
import { doc } from "../../core/openapi";
import { principalOf } from "../../core/http";
import type { RecurrenceService } from "./recurrence.service";
import { presentRecurrence } from "./recurrence.present";
import { UndoQuery } from "../tasks/tasks.schemas";
import {
  CompleteResult,
  CompletionUndo,
  CompletionUndoResult,
  ExceptionBody,
  ExceptionParams,
  Recurrence,
  RecurrenceCreate,
  RecurrenceParams,
  RecurrencePatch,
  TaskRecurrenceParams,
} from "./recurrence.schemas";

const WRITE_ERRORS = ["validation_failed", "csrf_failed", "malformed_request", "payload_too_large"] as const;
const TAGS = ["recurrence"];

export function recurrenceRoutes(service: RecurrenceService) {
  return new Elysia({ name: "recurrence", prefix: "/api/v1" })
    .get(
      "/tasks/:task_id/recurrence",
      ({ params, request }) => {
        const v = service.getOfTask(principalOf(request).user, params.task_id);
        // JSON `null`, not an empty body: Elysia would answer a bare null with no content at all.
        if (!v) return new Response("null", { headers: { "content-type": "application/json" } });
        return presentRecurrence(v.rec, v.exceptions);
      },
      {
        params: TaskRecurrenceParams,
        detail: doc({
          summary: "The task's recurrence, or null when it does not repeat",
          description:
            "Answers `200` with the recurrence, or `200` with the JSON `null` when the task exists and does not repeat (so a client opening a task never meets an error for the ordinary case). `404 not_found` only when the task does not exist, is another user's, is in the trash or sits in an archived list.",
          tags: TAGS,
          ok: { status: 200, schema: Recurrence.nullable(), description: "the recurrence, or null" },
          errors: ["not_found"],
        }),
      },
    )
    .post(
      "/recurrences",
      ({ body, request, set }) => {
        const v = service.create(principalOf(request).user, body);
        set.status = 201;
        set.headers["location"] = `/api/v1/recurrences/${v.rec.id}`;
        return presentRecurrence(v.rec, v.exceptions);
      },
      {
        body: RecurrenceCreate,
        detail: doc({
          summary: "Make a task recur",
          description:
            "`kind: rrule` takes `rrule` (RFC 5545 RRULE body, DAILY/WEEKLY/MONTHLY/YEARLY); the task's `due_at` is the first occurrence (DTSTART, always an occurrence and counted by COUNT), so the task needs one. A value repeated in a BYxxx list (`BYDAY=1SA,1SA`) is accepted and stored once. In `FREQ=YEARLY` an ordinal BYDAY counts within the month when BYMONTH is given, else within the year: `53WE` is the 53rd Wednesday of a year that has one (a year without has no occurrence), `-53MO` likewise from the end; BYDAY and BYMONTHDAY limit BYYEARDAY (RFC 5545 §3.3.10). BYSETPOS is refused (422) in a YEARLY rule with an ordinal BYDAY and no BYMONTH that also has a ±53 ordinal, BYMONTHDAY or BYYEARDAY, and in one with BYYEARDAY and BYDAY or BYMONTHDAY. A date-only `due_at` recurs as dates; a timed one keeps its wall-clock time in `timezone` across DST (an occurrence whose local time does not exist is omitted, RFC 5545). `kind: after_completion` takes `interval` and `unit`: the next `due_at` is the completion date in the user's time zone at the moment of completion plus the interval (month/year steps clamp to the month's end; a timed deadline keeps its local time of day in that zone); the recurrence's `timezone` plays no part in it. `timezone` (used by `rrule` schedules) defaults to the user's. Only top-level tasks recur, one recurrence per task (409 `state_conflict`).",
          tags: TAGS,
          ok: { status: 201, schema: Recurrence, headers: { Location: { description: "the recurrence's URL" } } },
          errors: [...WRITE_ERRORS, "invalid_reference", "state_conflict"],
        }),
      },
    )
    .get(
      "/recurrences/:id",
      ({ params, request }) => {
        const v = service.get(principalOf(request).user, params.id);
        return presentRecurrence(v.rec, v.exceptions);
      },
      {
        params: RecurrenceParams,
        detail: doc({ summary: "One recurrence", description: "With its `exceptions` (skipped dates, ascending). A recurrence whose task is in the trash, in an archived list, or not the user's is `404`.", tags: TAGS, ok: { status: 200, schema: Recurrence }, errors: ["not_found"] }),
      },
    )
    .patch(
      "/recurrences/:id",
      ({ params, body, request }) => {
        const v = service.update(principalOf(request).user, params.id, body);
        return presentRecurrence(v.rec, v.exceptions);
      },
      {
        params: RecurrenceParams,
        body: RecurrencePatch,
        detail: doc({
          summary: "Change the schedule",
          description:
            "Partial. Switching `kind` clears the other kind's fields. A new `rrule` (or a switch to `rrule`) starts at the task's current `due_at` (the new DTSTART). Exceptions on dates where the new schedule has no occurrence are dropped.",
          tags: TAGS,
          ok: { status: 200, schema: Recurrence },
          errors: [...WRITE_ERRORS, "not_found", "state_conflict"],
        }),
      },
    )
    .delete(
      "/recurrences/:id",
      ({ params, request, set }) => {
        service.remove(principalOf(request).user, params.id);
        set.status = 204;
      },
      {
        params: RecurrenceParams,
        detail: doc({ summary: "Stop the task recurring (the task stays as it is)", description: "Deletes the recurrence and its exceptions; the task keeps its current `due_at` and everything else. `404` when the recurrence is not the user's or its task is not visible (trash, archived list).", tags: TAGS, ok: { status: 204 }, errors: ["not_found", "csrf_failed"] }),
      },
    )
    .post("/recurrences/completions/undo", ({ body, request }) => service.undoCompletion(principalOf(request).user, body.undo_token), {
      body: CompletionUndo,
      detail: doc({
        summary: "Undo a completion of a recurring task, exactly",
        description:
          "`undo_token` is what `POST /recurrences/{id}/complete?undo=true` answered (signed by the server, bound to the user, valid for 10 minutes). In one transaction: the completed copy (and its subtask copies) is removed for good, as if it never existed; the task goes back to the occurrence it was on (its `due_at`, `completed` and `completed_at`) and the subtasks the completion had reset are completed again with their own `completed_at`; when that completion had ended the series (COUNT/UNTIL), the recurrence comes back as it was, with the same id, rule, DTSTART, zone and skipped dates, so the series continues from the same position. Each restored task's `version` grows by one. All or nothing: a task or the copy changed since (versions moved on, the copy edited or trashed), a list no longer active, or a recurrence given to the task since is `409 state_conflict` and nothing changes; an expired token is `409` too; a token that is not the server's, another user's or of another kind is `422 validation_failed`. Undoing twice is a `409`.",
        tags: TAGS,
        ok: { status: 200, schema: CompletionUndoResult },
        errors: [...WRITE_ERRORS, "state_conflict"],
      }),
    })
    .post("/recurrences/:id/complete", ({ params, query, request }) => service.complete(principalOf(request).user, params.id, query.undo === "true"), {
      params: RecurrenceParams,
      query: UndoQuery,
      detail: doc({
        summary: "Complete the current occurrence",
        description:
          "Records a completed copy of the current occurrence (new id, no recurrence, tags and subtasks copied as they were) and moves the task to the next occurrence (`rrule`: the first after the current `due_at` that is not an exception; `after_completion`: the completion date in the user's current time zone plus the interval), its subtasks reset to not completed. With `?undo=true` the answer also carries an `undo_token` that takes the completion back exactly (`POST /recurrences/completions/undo`). When COUNT/UNTIL is exhausted, `completed` is the task itself, now completed, `next` is null, and the recurrence is deleted.",
        tags: TAGS,
        ok: { status: 200, schema: CompleteResult },
        errors: ["not_found", "state_conflict", "csrf_failed", "validation_failed"],
      }),
    })
    .post(
      "/recurrences/:id/exceptions",
      ({ params, body, request }) => {
        const v = service.addException(principalOf(request).user, params.id, body.date);
        return presentRecurrence(v.rec, v.exceptions);
      },
      {
        params: RecurrenceParams,
        body: ExceptionBody,
        detail: doc({
          summary: "Skip one occurrence",
          description:
            "`date` is the occurrence's local date in the recurrence's zone; it must be an occurrence on or after the current one (422 otherwise). Skipping the current occurrence moves the task to the next one (subtasks reset); the last remaining occurrence cannot be skipped (409). Only `rrule` recurrences have occurrences to skip (409). Adding an existing exception changes nothing.",
          tags: TAGS,
          ok: { status: 200, schema: Recurrence, description: "the recurrence" },
          errors: [...WRITE_ERRORS, "not_found", "state_conflict"],
        }),
      },
    )
    .delete(
      "/recurrences/:id/exceptions/:date",
      ({ params, request, set }) => {
        service.removeException(principalOf(request).user, params.id, params.date);
        set.status = 204;
      },
      {
        params: ExceptionParams,
        detail: doc({
          summary: "Undo a skip",
          description:
            "Answers 204 with no body (it is a delete; read the recurrence with GET /recurrences/{id}). When the task had been moved past that date only by skips, it moves back to that occurrence. 404 when the date is not an exception.",
          tags: TAGS,
          ok: { status: 204 },
          errors: ["validation_failed", "not_found", "csrf_failed"],
        }),
      },
    );
}
