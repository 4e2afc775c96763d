import { z } from "zod";
import { UrlId } from "../../core/ids";
import { isLocalTime, parseInstant } from "../../core/time";

export const LocalTime = z.string().refine(isLocalTime, "a time written HH:MM (00:00 to 23:59)").meta({ maxLength: 5 });
const Instant = z
  .string()
  .max(64)
  .refine((s) => parseInstant(s) !== null, "an RFC 3339 instant with an offset, e.g. 2026-12-01T09:00:00Z")
  .transform((s) => parseInstant(s)!.toISOString());

/** At most 10 years before (minutes), the longest lead a reminder may have. */
export const MINUTES_MAX = 10 * 366 * 24 * 60;

export const ReminderKind = z.enum(["before_due", "at", "daily", "days_before"]);

export const ReminderCreate = z.strictObject({
  kind: ReminderKind,
  minutes_before: z.number().int().min(0).max(MINUTES_MAX).optional().describe("before_due: minutes before due_at (0 = at due time)"),
  at: Instant.optional().describe("at: the instant (RFC 3339), stored in UTC"),
  time: LocalTime.optional().describe("daily, days_before: local time HH:MM"),
  days_before: z.number().int().min(0).max(366).optional().describe("days_before: days before each occurrence"),
});
export type ReminderCreate = z.infer<typeof ReminderCreate>;

export const ReminderPatch = z.strictObject({
  minutes_before: z.number().int().min(0).max(MINUTES_MAX).optional(),
  at: Instant.optional(),
  time: LocalTime.optional(),
  days_before: z.number().int().min(0).max(366).optional(),
});
export type ReminderPatch = z.infer<typeof ReminderPatch>;

export const Reminder = z
  .object({
    id: z.string(),
    target: z.object({ type: z.enum(["task", "habit", "countdown"]), id: z.string() }),
    kind: ReminderKind,
    minutes_before: z.number().int().nullable(),
    at: z.string().nullable(),
    time: z.string().nullable(),
    days_before: z.number().int().nullable(),
    next_fire_at: z.string().nullable().describe("the next instant it fires; null when none is armed"),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: "Reminder" });
export type Reminder = z.infer<typeof Reminder>;
export const ReminderList = z.object({ items: z.array(Reminder) });

export const TaskParams = z.object({ task_id: UrlId });
export const HabitParams = z.object({ habit_id: UrlId });
export const CountdownParams = z.object({ countdown_id: UrlId });
export const ReminderParams = z.object({ reminder_id: UrlId });
