import { z } from "zod";
import { maxChars } from "../core/text";
import { Calendar, CountdownDate, CountdownIcon, CountdownName, CountdownType, Repeat } from "../features/countdowns/countdowns.schemas";
import { FolderName } from "../features/folders/folders.schemas";
import { DateString, Frequency, Goal, HabitColor, HabitIcon, HabitName, HabitUnit } from "../features/habits/habits.schemas";
import { ListName } from "../features/lists/lists.schemas";
import { MemoContent } from "../features/memos/memos.schemas";
import { MAX_RRULE_LENGTH } from "../features/recurrence/recurrence.rules";
import { Interval, TimeZone, Unit } from "../features/recurrence/recurrence.schemas";
import { Color } from "../features/tags/tags.schemas";
import { Description, DueAt, Priority, Title } from "../features/tasks/tasks.schemas";

/**
 * The record fields the two transfer formats (app-backup v2, legacy v1) share: the API's field
 * names, each checked by the owning feature's own schema. A format passes its own identifier,
 * instant and position schemas (they differ: a backup's ids are the app's, its instants kept as
 * the API writes them; legacy ids are any short string) and places these runs among its own
 * fields. Key order is the record's field order (a backup's content digest depends on it), so a
 * run is spread where its fields stand. Strictness, refinements and the fields one format alone
 * has stay with the format (backup.records.ts, legacy.records.ts).
 */
export function recordFields<Id extends z.ZodType<string, string>, Instant extends z.ZodType<string, string>, Position extends z.ZodType<number, number>>(
  { Id, Instant, Position }: { Id: Id; Instant: Instant; Position: Position },
) {
  const stamps = { created_at: Instant, updated_at: Instant };
  return {
    /** created_at, updated_at. */
    stamps,
    /** A folder's, up to its stamps. */
    folder: { id: Id, name: FolderName, position: Position, ...stamps },
    list: {
      id: Id,
      name: ListName,
      folder_id: Id.nullable(),
      is_inbox: z.boolean(),
      color: Color.nullable(),
      position: Position,
      ...stamps,
      deleted_at: Instant.nullable(),
    },
    /** A task's, before the format's own (version, position, tags). */
    taskHead: {
      id: Id,
      list_id: Id,
      parent_id: Id.nullable(),
      title: Title,
      description: Description,
      completed: z.boolean(),
      completed_at: Instant.nullable(),
      // The API's own: a date, or an instant normalised to UTC with milliseconds.
      due_at: DueAt,
      priority: Priority,
    },
    /** A task's and a memo's last. */
    stampsDeleted: { ...stamps, deleted_at: Instant.nullable() },
    /** A recurrence's, before its first occurrence (dtstart), which each format checks its way. */
    recurrenceHead: {
      id: Id,
      task_id: Id,
      kind: z.enum(["rrule", "after_completion"]),
      rrule: maxChars(z.string(), MAX_RRULE_LENGTH).nullable(),
      interval: Interval.nullable(),
      unit: Unit.nullable(),
      timezone: TimeZone,
    },
    /** A habit's, up to its `archived` flag. */
    habitHead: {
      id: Id,
      name: HabitName,
      icon: HabitIcon,
      color: HabitColor,
      frequency: Frequency,
      goal: Goal,
      unit: HabitUnit,
      start_date: DateString,
      position: Position,
      archived: z.boolean(),
    },
    /** A countdown's, before its `lunar` field. */
    countdownHead: {
      id: Id,
      name: CountdownName,
      date: CountdownDate,
      type: CountdownType,
      repeat: Repeat,
      icon: CountdownIcon,
      calendar: Calendar,
    },
    /** A countdown's after `lunar`. */
    countdownFlags: { pinned: z.boolean(), archived: z.boolean() },
    /** A memo's, before the format's own (version). */
    memoHead: { id: Id, content: MemoContent, pinned: z.boolean() },
  };
}
