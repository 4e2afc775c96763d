import { z } from "zod";
import { maxChars } from "../../core/text";
import { isCalendarDate } from "../../core/time";

const noControl = (s: string) => !/[\u0000-\u001f\u007f]/.test(s);

/** A calendar date in years 1900..2999: wide enough for any habit, small enough that a day-by-day walk stays cheap. */
export const DateString = z
  .string()
  .refine(isCalendarDate, "must be a calendar date YYYY-MM-DD")
  .refine((s) => s >= "1900-01-01" && s <= "2999-12-31", "must be between 1900-01-01 and 2999-12-31")
  // A calendar date is exactly 10 characters (the refinement checks it).
  .meta({ format: "date", maxLength: 10 });

export const HabitName = maxChars(z.string().trim().min(1, "name is required"), 200, "at most 200 characters").refine(noControl, "no control characters");
export const HabitIcon = maxChars(z.string().min(1), 64, "at most 64 characters").nullable();
export const HabitColor = z
  .string()
  .regex(/^#[0-9A-Fa-f]{6}$/, "must be #RRGGBB")
  .meta({ maxLength: 7 })
  .transform((s) => s.toUpperCase())
  .nullable();
export const HabitUnit = maxChars(z.string().trim().min(1), 32, "at most 32 characters").refine(noControl, "no control characters").nullable();
export const Goal = z
  .number({ error: "goal must be a number" })
  .gt(0, "goal must be greater than 0")
  .max(1_000_000_000)
  .describe("the amount per day that counts as done");

export const Frequency = z
  .discriminatedUnion("type", [
    z.strictObject({ type: z.literal("daily") }),
    z.strictObject({
        type: z.literal("weekdays"),
        days: z
          .array(z.number().int().min(1, "ISO weekdays are 1 (Monday) to 7 (Sunday)").max(7, "ISO weekdays are 1 (Monday) to 7 (Sunday)"))
          .min(1, "at least one weekday")
          .max(7)
          .refine((a) => new Set(a).size === a.length, "weekdays must not repeat")
          .transform((a) => [...a].sort((x, y) => x - y)),
      }),
    z.strictObject({ type: z.literal("times_per_week"), count: z.number().int().min(1).max(7) }),
  ])
  .meta({ id: "HabitFrequency" })
  .describe("daily; on the given ISO weekdays (1 = Monday … 7 = Sunday); or a number of days per ISO week (Monday to Sunday)");
export type Frequency = z.infer<typeof Frequency>;

export const HabitCreate = z.strictObject({
    name: HabitName,
    icon: HabitIcon.optional(),
    color: HabitColor.optional(),
    frequency: Frequency.default({ type: "daily" }),
    goal: Goal.default(1),
    unit: HabitUnit.optional(),
    start_date: DateString.optional().describe("first day the habit counts; defaults to the user's today"),
  });
export type HabitCreate = z.infer<typeof HabitCreate>;

export const HabitPatch = z.strictObject({
    name: HabitName.optional(),
    icon: HabitIcon.optional(),
    color: HabitColor.optional(),
    frequency: Frequency.optional(),
    goal: Goal.optional(),
    unit: HabitUnit.optional(),
    start_date: DateString.optional(),
  });
export type HabitPatch = z.infer<typeof HabitPatch>;

export const Habit = z.object({
    id: z.string(),
    name: z.string(),
    icon: z.string().nullable(),
    color: z.string().nullable(),
    frequency: Frequency,
    goal: z.number(),
    unit: z.string().nullable(),
    start_date: z.string(),
    position: z.number().int(),
    archived: z.boolean(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: "Habit" });
export type Habit = z.infer<typeof Habit>;

export const HabitList = z.object({ items: z.array(Habit) });

export const HabitListQuery = z.strictObject({
    archived: z
      .enum(["true", "false"], { error: "archived must be true or false" })
      .default("false")
      .transform((v) => v === "true"),
  });

export const ReorderBody = z.strictObject({ ids: z.array(maxChars(z.string(), 64)).max(10_000).describe("exactly the ids of the active habits, in the new order") });
export type ReorderBody = z.infer<typeof ReorderBody>;

export const HabitParams = z.object({ habit_id: maxChars(z.string(), 64) });
export const LogParams = z.object({ habit_id: maxChars(z.string(), 64), date: DateString });
export const PauseParams = z.object({ habit_id: maxChars(z.string(), 64), pause_id: maxChars(z.string(), 64) });

export const LogBody = z.strictObject({
    value: z.number({ error: "value must be a number" }).min(0, "value must be 0 or more").max(1_000_000_000),
    note: maxChars(z.string(), 2000, "at most 2000 characters").nullable().optional(),
  });
export type LogBody = z.infer<typeof LogBody>;

export const HabitLog = z.object({ date: z.string(), value: z.number(), note: z.string().nullable() })
  .meta({ id: "HabitLog" });
export type HabitLog = z.infer<typeof HabitLog>;
export const HabitLogList = z.object({ items: z.array(HabitLog) });

export const LogRangeQuery = z.strictObject({
    from: DateString.optional().describe("first date, inclusive"),
    to: DateString.optional().describe("last date, inclusive"),
  })
  .refine((q) => !q.from || !q.to || q.from <= q.to, { message: "from must not be after to", path: ["from"] });

export const PauseCreate = z.strictObject({
    start_date: DateString,
    end_date: DateString.nullable().default(null).describe("last paused day, inclusive; null = open-ended"),
  })
  .refine((p) => p.end_date === null || p.start_date <= p.end_date, { message: "end_date must not be before start_date", path: ["end_date"] });
export type PauseCreate = z.infer<typeof PauseCreate>;

export const PausePatch = z.strictObject({ start_date: DateString.optional(), end_date: DateString.nullable().optional() });
export type PausePatch = z.infer<typeof PausePatch>;

export const HabitPause = z.object({ id: z.string(), start_date: z.string(), end_date: z.string().nullable() })
  .meta({ id: "HabitPause" });
export type HabitPause = z.infer<typeof HabitPause>;
export const HabitPauseList = z.object({ items: z.array(HabitPause) });

export const WeekQuery = z.strictObject({ start: DateString.optional().describe("first of the 7 days; defaults to the Monday of the user's current week") });

export const DayStatus = z.enum(["done", "partial", "missed", "paused", "not_scheduled", "future"]);
export const HabitWeek = z.object({
  start: z.string(),
  items: z.array(
    z.object({
      habit: Habit,
      days: z.array(z.object({ date: z.string(), status: DayStatus, value: z.number().describe("0 without a log") })),
    }),
  ),
});
export type HabitWeek = z.infer<typeof HabitWeek>;

const Rate = z.number().min(0).max(1).nullable();
export const HabitStatsSchema = z.object({
  current_streak: z.number().int(),
  longest_streak: z.number().int(),
  total_done: z.number().int(),
  completion_rate_7d: Rate,
  completion_rate_30d: Rate,
  completion_rate_all: Rate,
});
