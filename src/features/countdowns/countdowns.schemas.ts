import { z } from "zod";
import { maxChars } from "../../core/text";
import { isCalendarDate } from "../../core/time";

const noControl = (s: string) => !/[\u0000-\u001f\u007f]/.test(s);

export const CountdownDate = z
  .string()
  .refine(isCalendarDate, "must be a calendar date YYYY-MM-DD")
  .refine((s) => s >= "1000-01-01", "must be 1000-01-01 or later")
  // A calendar date is exactly 10 characters (the refinement checks it).
  .meta({ format: "date", maxLength: 10 })
  .describe("Gregorian date of the original event");
export const CountdownName = maxChars(z.string().trim().min(1, "name is required"), 200, "at most 200 characters").refine(noControl, "no control characters");
export const CountdownIcon = maxChars(z.string().min(1), 64, "at most 64 characters").nullable();
export const CountdownType = z.enum(["countdown", "anniversary", "birthday"]);
export const Repeat = z.enum(["none", "weekly", "monthly", "yearly"]);
export const Calendar = z.enum(["gregorian", "lunar"]);

export const CountdownCreate = z.strictObject({
    name: CountdownName,
    date: CountdownDate,
    type: CountdownType.default("countdown"),
    repeat: Repeat.default("none"),
    icon: CountdownIcon.optional(),
    calendar: Calendar.default("gregorian"),
  });
export type CountdownCreate = z.infer<typeof CountdownCreate>;

export const CountdownPatch = z.strictObject({
    name: CountdownName.optional(),
    date: CountdownDate.optional(),
    type: CountdownType.optional(),
    repeat: Repeat.optional(),
    icon: CountdownIcon.optional(),
    calendar: Calendar.optional(),
  });
export type CountdownPatch = z.infer<typeof CountdownPatch>;

export const CountdownListQuery = z.strictObject({
    archived: z
      .enum(["true", "false"], { error: "archived must be true or false" })
      .default("false")
      .transform((v) => v === "true"),
  });

export const CountdownParams = z.object({ countdown_id: maxChars(z.string(), 64) });

export const LunarMonthDay = z.object({
    month: z.number().int().min(1).max(12),
    day: z.number().int().min(1).max(30),
    leap: z.boolean().describe("true when the date falls in a leap month"),
  })
  .meta({ id: "LunarMonthDay" });

export const Countdown = z.object({
    id: z.string(),
    name: z.string(),
    date: z.string(),
    type: CountdownType,
    repeat: Repeat,
    icon: z.string().nullable(),
    calendar: Calendar,
    lunar: LunarMonthDay.nullable().describe("the lunar month and day of `date` (null for the Gregorian calendar)"),
    pinned: z.boolean(),
    archived: z.boolean(),
    next_date: z.string().nullable().describe("next occurrence on or after the user's today; null for a past one-off"),
    days_until: z.number().int().describe("days from the user's today to next_date (0 = today); negative for a past one-off"),
    count: z.number().int().nullable().describe("anniversary or birthday: years at next_date (a birthday's age); else null"),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: "Countdown" });
export type Countdown = z.infer<typeof Countdown>;

export const CountdownList = z.object({ items: z.array(Countdown) });
