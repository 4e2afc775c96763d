import { z } from "zod";
import { isCalendarDate } from "../../core/time";

/** The longest range one request answers: a month view's six weeks, and a margin. */
export const MAX_RANGE_DAYS = 62;
/** Dated tasks, and computed occurrences, one request answers at most (`truncated` says so). */
export const MAX_CALENDAR_TASKS = 2000;
export const MAX_OCCURRENCES = 2000;

const DateParam = z.string().refine(isCalendarDate, "a date YYYY-MM-DD").meta({ format: "date", maxLength: 10 });

export const CalendarQuery = z.strictObject({
  from: DateParam.describe("first day (inclusive)"),
  to: DateParam.describe(`day after the last (exclusive); at most ${MAX_RANGE_DAYS} days after from`),
});
export type CalendarQuery = z.infer<typeof CalendarQuery>;

/** A dated task as a calendar cell shows it (GET /tasks/{id} has the rest). */
export const CalendarTask = z
  .object({
    id: z.string(),
    list_id: z.string(),
    title: z.string(),
    due_at: z.string(),
    completed: z.boolean(),
    priority: z.number().int(),
    version: z.number().int().describe("for POST /tasks/{id}/reschedule"),
    recurring: z.boolean().describe("the task repeats on a schedule (rrule): its later occurrences are in `occurrences`"),
  })
  .meta({ id: "CalendarTask" });

export const CalendarOccurrence = z
  .object({
    task_id: z.string(),
    recurrence_id: z.string(),
    title: z.string(),
    list_id: z.string(),
    priority: z.number().int(),
    due_at: z.string().describe("the occurrence's deadline, in the form of the task's due_at"),
  })
  .meta({ id: "CalendarOccurrence" });

export const CalendarCountdown = z
  .object({
    id: z.string(),
    name: z.string(),
    icon: z.string().nullable(),
    type: z.enum(["countdown", "anniversary", "birthday"]),
    count: z.number().int().nullable().describe("years at this occurrence (anniversaries, birthdays), as GET /countdowns counts them"),
  })
  .meta({ id: "CalendarCountdown" });

export const CalendarCheckIn = z
  .object({ habit_id: z.string(), name: z.string(), icon: z.string().nullable(), color: z.string().nullable(), value: z.number(), goal: z.number() })
  .meta({ id: "CalendarCheckIn" });

export const CalendarDay = z
  .object({
    date: z.string(),
    tasks: z.array(CalendarTask).describe("dated top-level tasks falling on the day (open and completed), by due_at"),
    occurrences: z.array(CalendarOccurrence).describe("later occurrences of repeating tasks (computed, not stored)"),
    countdowns: z.array(CalendarCountdown),
    check_ins: z.array(CalendarCheckIn),
  })
  .meta({ id: "CalendarDay" });

export const CalendarRange = z
  .object({
    from: z.string(),
    to: z.string(),
    today: z.string(),
    days: z.array(CalendarDay).describe("every day of [from, to), in order"),
    truncated: z.boolean().describe(`true when more than ${MAX_CALENDAR_TASKS} tasks or ${MAX_OCCURRENCES} occurrences fell in the range: ask for a shorter one`),
  })
  .meta({ id: "CalendarRange" });
export type CalendarRange = z.infer<typeof CalendarRange>;

export const RescheduleParams = z.object({ task_id: z.string().max(64) });
export const RescheduleBody = z.strictObject({
  date: DateParam.describe("the new local day"),
  version: z.number().int().min(1),
});
export type RescheduleBody = z.infer<typeof RescheduleBody>;
