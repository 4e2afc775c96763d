import { z } from "zod";
import { isTimeZone, parseInstant } from "../../core/time";
import { FolderName } from "../folders/folders.schemas";
import { ListName } from "../lists/lists.schemas";
import { Color, TagName } from "../tags/tags.schemas";
import { Description, DueAt, Priority, Title } from "../tasks/tasks.schemas";
import { DateString, Frequency } from "../habits/habits.schemas";
import { Calendar, CountdownDate, CountdownType, LunarMonthDay, Repeat } from "../countdowns/countdowns.schemas";
import { MEMO_CONTENT_MAX } from "../memos/memos.schemas";
import { MAX_INTERVAL, MAX_RRULE_LENGTH, UNITS } from "../recurrence/recurrence.engine";
import type { Kind } from "./legacy.schemas";

// Legacy v1 records: the API's shapes, flat (subtasks carry parent_id), tasks with their tag
// names, without computed fields (countdown next_date…) or lock counters (version). Restoring
// checks every field as the API would on create. Loaded with the service on first use (the
// routes document LegacyExport through a lazy schema); the routes' own shapes are in legacy.schemas.ts.

const noControl = (s: string) => !/[\u0000-\u001f\u007f]/.test(s);
const Id = z.string().min(1, "id is required").max(64, "at most 64 characters");
const Instant = z
  .string()
  .max(40)
  .transform((s, ctx) => {
    const d = parseInstant(s);
    if (!d) {
      ctx.addIssue({ code: "custom", message: "an RFC 3339 date-time" });
      return z.NEVER;
    }
    return d.toISOString();
  });
const Position = z.number().int().min(-1_000_000_000).max(1_000_000_000);

export const LegacyFolder = z.strictObject({ id: Id, name: FolderName, position: Position, created_at: Instant, updated_at: Instant });
export type LegacyFolder = z.infer<typeof LegacyFolder>;

export const LegacyList = z.strictObject({
    id: Id,
    name: ListName,
    folder_id: Id.nullable(),
    is_inbox: z.boolean(),
    color: Color.nullable(),
    position: Position,
    created_at: Instant,
    updated_at: Instant,
    deleted_at: Instant.nullable(),
  });
export type LegacyList = z.infer<typeof LegacyList>;

export const LegacyTask = z.strictObject({
    id: Id,
    list_id: Id,
    parent_id: Id.nullable(),
    title: Title,
    description: Description,
    completed: z.boolean(),
    completed_at: Instant.nullable(),
    due_at: DueAt,
    priority: Priority,
    tags: z.array(TagName).max(100, "at most 100 tags").describe("tag names; missing tags are created"),
    created_at: Instant,
    updated_at: Instant,
    deleted_at: Instant.nullable(),
  });
export type LegacyTask = z.infer<typeof LegacyTask>;

export const LegacyRecurrence = z.strictObject({
    id: Id,
    task_id: Id,
    kind: z.enum(["rrule", "after_completion"]),
    rrule: z.string().max(MAX_RRULE_LENGTH).nullable(),
    interval: z.number().int().min(1).max(MAX_INTERVAL).nullable(),
    unit: z.enum(UNITS as [string, ...string[]]).nullable(),
    timezone: z.string().max(64).refine(isTimeZone, "not a known IANA time zone"),
    dtstart: z.string().max(40).nullable().describe("kind rrule: the series' first occurrence (defaults to the task's due_at)"),
    created_at: Instant,
    updated_at: Instant,
  })
  .superRefine((r, ctx) => {
    if (r.kind === "rrule") {
      if (r.rrule === null) ctx.addIssue({ code: "custom", path: ["rrule"], message: "required for kind rrule" });
      if (r.interval !== null) ctx.addIssue({ code: "custom", path: ["interval"], message: "only for kind after_completion" });
      if (r.unit !== null) ctx.addIssue({ code: "custom", path: ["unit"], message: "only for kind after_completion" });
    } else {
      if (r.interval === null) ctx.addIssue({ code: "custom", path: ["interval"], message: "required for kind after_completion" });
      if (r.unit === null) ctx.addIssue({ code: "custom", path: ["unit"], message: "required for kind after_completion" });
      if (r.rrule !== null) ctx.addIssue({ code: "custom", path: ["rrule"], message: "only for kind rrule" });
    }
  });
export type LegacyRecurrence = z.infer<typeof LegacyRecurrence>;

const HabitName = z.string().trim().min(1, "name is required").max(200, "at most 200 characters").refine(noControl, "no control characters");
const Icon = z.string().min(1).max(64, "at most 64 characters").nullable();

export const LegacyHabit = z.strictObject({
    id: Id,
    name: HabitName,
    icon: Icon,
    color: z
      .string()
      .regex(/^#[0-9A-Fa-f]{6}$/, "must be #RRGGBB")
      .transform((s) => s.toUpperCase())
      .nullable(),
    frequency: Frequency,
    goal: z.number().gt(0, "goal must be greater than 0").max(1_000_000_000),
    unit: z.string().trim().min(1).max(32, "at most 32 characters").refine(noControl, "no control characters").nullable(),
    start_date: DateString,
    position: Position,
    archived: z.boolean(),
    created_at: Instant,
    updated_at: Instant,
  });
export type LegacyHabit = z.infer<typeof LegacyHabit>;

export const LegacyCountdown = z.strictObject({
    id: Id,
    name: HabitName,
    date: CountdownDate,
    type: CountdownType,
    repeat: Repeat,
    icon: Icon,
    calendar: Calendar,
    lunar: LunarMonthDay.nullable().optional().describe("informative; recomputed from `date` on restore"),
    pinned: z.boolean(),
    archived: z.boolean(),
    created_at: Instant,
    updated_at: Instant,
  });
export type LegacyCountdown = z.infer<typeof LegacyCountdown>;

export const LegacyMemo = z.strictObject({
    id: Id,
    content: z.string().min(1, "content must not be empty").max(MEMO_CONTENT_MAX, `at most ${MEMO_CONTENT_MAX} characters`),
    pinned: z.boolean(),
    created_at: Instant,
    updated_at: Instant,
    deleted_at: Instant.nullable(),
  });
export type LegacyMemo = z.infer<typeof LegacyMemo>;

export const RECORD_SCHEMAS = {
  folders: LegacyFolder,
  lists: LegacyList,
  tasks: LegacyTask,
  recurrences: LegacyRecurrence,
  habits: LegacyHabit,
  countdowns: LegacyCountdown,
  memos: LegacyMemo,
} as const satisfies Record<Kind, z.ZodType>;

export interface LegacyRecords {
  folders: LegacyFolder[];
  lists: LegacyList[];
  tasks: LegacyTask[];
  recurrences: LegacyRecurrence[];
  habits: LegacyHabit[];
  countdowns: LegacyCountdown[];
  memos: LegacyMemo[];
}

/** The JSON export (documentation and tests; restore validates record by record). */
export const LegacyExport = z.object({
    format: z.literal("app-legacy"),
    version: z.literal(1),
    exported_at: z.string(),
    folders: z.array(LegacyFolder),
    lists: z.array(LegacyList),
    tasks: z.array(LegacyTask),
    recurrences: z.array(LegacyRecurrence),
    habits: z.array(LegacyHabit),
    countdowns: z.array(LegacyCountdown),
    memos: z.array(LegacyMemo),
  })
  .meta({ id: "LegacyExport" });

