import { z } from "zod";
import { maxChars } from "../../core/text";
import { UNDO_TOKEN_MAX } from "../../core/undo-token";
import { isCalendarDate, isTimeZone } from "../../core/time";
import { Task } from "../tasks/tasks.schemas";
import { MAX_INTERVAL, MAX_RRULE_LENGTH, parseRRule, UNITS } from "./recurrence.engine";

const Id = maxChars(z.string(), 64);
const Kind = z.enum(["rrule", "after_completion"]);
export const Unit = z.enum(UNITS as [string, ...string[]]).describe("day | week | month | year");
export const Interval = z.number().int("interval must be a positive integer").min(1, "interval must be a positive integer").max(MAX_INTERVAL, `at most ${MAX_INTERVAL}`);
/** Syntax is checked here; rules that depend on the task (a time of day, UNTIL vs DTSTART) in the service. */
const RRuleText = maxChars(z.string(), MAX_RRULE_LENGTH, `at most ${MAX_RRULE_LENGTH} characters`)
  .superRefine((s, ctx) => {
    const p = parseRRule(s, false);
    if (!p.ok) ctx.addIssue({ code: "custom", message: p.message });
  })
  .describe("RFC 5545 RRULE body, e.g. FREQ=WEEKLY;BYDAY=MO,WE (DAILY, WEEKLY, MONTHLY, YEARLY)");
export const TimeZone = maxChars(z.string(), 64).refine(isTimeZone, "not a known IANA time zone");
export const CalendarDate = maxChars(z.string(), 10).refine(isCalendarDate, "a real date YYYY-MM-DD");

/** Fields of the other kind may be omitted or null; anything else is a mistake worth a 422. */
export function kindFields(
  b: { kind?: "rrule" | "after_completion"; rrule?: string | null; interval?: number | null; unit?: string | null },
  ctx: z.RefinementCtx,
  required: boolean,
): void {
  if (b.kind === "rrule") {
    if (required && (b.rrule === undefined || b.rrule === null)) ctx.addIssue({ code: "custom", path: ["rrule"], message: "required for kind rrule" });
    for (const f of ["interval", "unit"] as const) {
      if (b[f] !== undefined && b[f] !== null) ctx.addIssue({ code: "custom", path: [f], message: "only for kind after_completion" });
    }
  } else if (b.kind === "after_completion") {
    for (const f of ["interval", "unit"] as const) {
      if (required && (b[f] === undefined || b[f] === null)) ctx.addIssue({ code: "custom", path: [f], message: "required for kind after_completion" });
    }
    if (b.rrule !== undefined && b.rrule !== null) ctx.addIssue({ code: "custom", path: ["rrule"], message: "only for kind rrule" });
  }
}

export const RecurrenceCreate = z.strictObject({
    task_id: Id,
    kind: Kind,
    rrule: RRuleText.nullable().optional(),
    interval: Interval.nullable().optional(),
    unit: Unit.nullable().optional(),
    timezone: TimeZone.optional().describe("IANA zone; defaults to the user's"),
  })
  .superRefine((b, ctx) => kindFields(b, ctx, true));
export type RecurrenceCreate = z.infer<typeof RecurrenceCreate>;

export const RecurrencePatch = z.strictObject({
    kind: Kind.optional(),
    rrule: RRuleText.nullable().optional(),
    interval: Interval.nullable().optional(),
    unit: Unit.nullable().optional(),
    timezone: TimeZone.optional(),
  })
  .superRefine((b, ctx) => kindFields(b, ctx, false));
export type RecurrencePatch = z.infer<typeof RecurrencePatch>;

export const ExceptionBody = z.strictObject({ date: CalendarDate.describe("the local date (in the recurrence's zone) of the occurrence to skip") });
export type ExceptionBody = z.infer<typeof ExceptionBody>;

export const RecurrenceParams = z.object({ id: Id });
export const ExceptionParams = z.object({ id: Id, date: CalendarDate });
export const TaskRecurrenceParams = z.object({ task_id: Id });

export const Recurrence = z.object({
    id: z.string(),
    task_id: z.string(),
    kind: Kind,
    rrule: z.string().nullable().describe("kind rrule: the RRULE body; null otherwise"),
    interval: z.number().int().min(1).max(MAX_INTERVAL).nullable().describe("kind after_completion: the interval; null otherwise"),
    unit: Unit.nullable().describe("kind after_completion: the unit; null otherwise"),
    timezone: z.string().describe("IANA zone an rrule schedule is computed in (after_completion uses the user's zone at completion)"),
    dtstart: z
      .string()
      .nullable()
      .describe("kind rrule: the series' first occurrence (DTSTART), a date or an RFC 3339 instant like due_at; COUNT counts from it. null otherwise"),
    exceptions: z.array(z.string()).describe("skipped occurrence dates, ascending"),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: "Recurrence" });
export type Recurrence = z.infer<typeof Recurrence>;

export const CompleteResult = z.object({
    completed: Task.describe("the completed occurrence: a new completed copy, or the task itself when the series ended"),
    next: Task.nullable().describe("the recurring task at its next occurrence; null when COUNT/UNTIL are exhausted"),
    undo_token: z.string().optional().describe("only with ?undo=true: send to POST /recurrences/completions/undo (within 10 minutes) to take this completion back exactly"),
  })
  .meta({ id: "RecurrenceCompletion" });
export type CompleteResult = z.infer<typeof CompleteResult>;

export const CompletionUndo = z.strictObject({ undo_token: maxChars(z.string(), UNDO_TOKEN_MAX).describe("the undo_token the completion answered with") });
export const CompletionUndoResult = z.object({ restored: z.number().int().describe("the task and the subtasks put back") });
