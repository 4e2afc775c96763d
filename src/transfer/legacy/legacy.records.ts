import { z } from "zod";
import { maxChars } from "../../core/text";
import { parseInstant } from "../../core/time";
import { TagName } from "../../features/tags/tags.schemas";
import { LunarMonthDay } from "../../features/countdowns/countdowns.schemas";
import { pinnedWhileArchived } from "../../features/countdowns/countdowns.rules";
import { parseRRule } from "../../features/recurrence/recurrence.rules";
import { kindFields } from "../../features/recurrence/recurrence.schemas";
import { recordFields } from "../record-fields";
import { Rank } from "../../features/tasks/tasks.schemas";
import { ListSort } from "../../features/lists/lists.schemas";
import { ReminderCreate } from "../../features/reminders/reminders.schemas";
import { REMINDERS_PER_TARGET, reminderShapeProblems, type TargetKind } from "../../features/reminders/reminders.rules";
import type { Kind } from "./legacy.schemas";

// Legacy v1 records: the API's shapes, flat (subtasks carry parent_id), tasks with their tag
// names, without computed fields (countdown next_date…) or lock counters (version). Restoring
// checks every field with the API's own schema for it (imported from the owning feature, never
// copied) and normalises as the API does (trimmed names, UTC instants, an RRULE's canonical
// text). Loaded with the service on first use (the routes document LegacyExport through a lazy
// schema); the routes' own shapes are in legacy.schemas.ts.

const Id = maxChars(z.string().min(1, "id is required"), 64, "at most 64 characters");
const Instant = maxChars(z.string(), 40)
  .transform((s, ctx) => {
    const d = parseInstant(s);
    if (!d) {
      ctx.addIssue({ code: "custom", message: "an RFC 3339 date-time" });
      return z.NEVER;
    }
    return d.toISOString();
  });
const Position = z.number().int().min(-1_000_000_000).max(1_000_000_000);

const F = recordFields({ Id, Instant, Position });

/**
 * The user's own reminders on a task, habit or countdown, as the API creates them (`kind` and its
 * fields; the schedule is computed again on restore). Absent or null in files made before them.
 */
const reminders = (type: TargetKind) =>
  z
    .array(ReminderCreate)
    .max(REMINDERS_PER_TARGET, `at most ${REMINDERS_PER_TARGET} reminders`)
    .superRefine((rs, ctx) =>
      rs.forEach((r, i) => {
        for (const p of reminderShapeProblems(type, r.kind, r)) ctx.addIssue({ code: "custom", path: [i, p.path], message: p.message });
      }),
    )
    .nullable()
    .optional()
    .describe(`your reminders on the ${type}, as POST /${type}s/{id}/reminders takes them ({kind, …its fields}); restored unarmed, then scheduled from the restore on`);

export const LegacyFolder = z.strictObject(F.folder);
export type LegacyFolder = z.infer<typeof LegacyFolder>;

// `sort` and a task's `rank` (issue 14) may be absent or null: files written before them restore
// with the default sort and each task last among its siblings, in the file's order.
export const LegacyList = z.strictObject({ ...F.list, sort: ListSort.nullable().optional() });
export type LegacyList = z.infer<typeof LegacyList>;

export const LegacyTask = z.strictObject({
    ...F.taskHead,
    rank: Rank.nullable().optional(),
    tags: z.array(TagName).max(100, "at most 100 tags").describe("tag names; missing tags are created"),
    reminders: reminders("task"),
    ...F.stampsDeleted,
  });
export type LegacyTask = z.infer<typeof LegacyTask>;

export const LegacyRecurrence = z.strictObject({
    ...F.recurrenceHead,
    dtstart: maxChars(z.string(), 40).nullable().describe("kind rrule: the series' first occurrence (defaults to the task's due_at)"),
    ...F.stamps,
  })
  // The API's own check of which fields each kind takes.
  .superRefine((r, ctx) => kindFields(r, ctx, true))
  // Stored in the canonical text the API stores (the schedule itself is checked with the task's due_at).
  .transform((r) => {
    const p = r.rrule === null ? null : parseRRule(r.rrule, false);
    return p?.ok ? { ...r, rrule: p.rule.text } : r;
  });
export type LegacyRecurrence = z.infer<typeof LegacyRecurrence>;

export const LegacyHabit = z.strictObject({ ...F.habitHead, reminders: reminders("habit"), ...F.stamps });
export type LegacyHabit = z.infer<typeof LegacyHabit>;

export const LegacyCountdown = z.strictObject({
    ...F.countdownHead,
    lunar: LunarMonthDay.nullable().optional().describe("informative; recomputed from `date` on restore"),
    ...F.countdownFlags,
    reminders: reminders("countdown"),
    ...F.stamps,
  })
  .superRefine((c, ctx) => {
    const p = pinnedWhileArchived(c.pinned, c.archived);
    if (p) ctx.addIssue({ code: "custom", path: ["pinned"], message: p });
  });
export type LegacyCountdown = z.infer<typeof LegacyCountdown>;

export const LegacyMemo = z.strictObject({ ...F.memoHead, ...F.stampsDeleted });
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

/**
 * Records of one kind in a file, documented: the 64 MiB body limit already allows fewer, every
 * record taking over 100 bytes (its id, two instants and its other required fields).
 */
export const LEGACY_RECORDS_MAX = 1_000_000;
const records = <T extends z.ZodType>(record: T) => z.array(record).max(LEGACY_RECORDS_MAX);

/** The JSON export (documentation and tests; restore validates record by record). */
export const LegacyExport = z.object({
    format: z.literal("app-legacy"),
    version: z.literal(1),
    exported_at: maxChars(z.string(), 40).describe("RFC 3339 instant of the export; informative (a restore does not read it)"),
    folders: records(LegacyFolder),
    lists: records(LegacyList),
    tasks: records(LegacyTask),
    recurrences: records(LegacyRecurrence),
    habits: records(LegacyHabit),
    countdowns: records(LegacyCountdown),
    memos: records(LegacyMemo),
  })
  .meta({ id: "LegacyExport" });

