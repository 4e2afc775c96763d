import { z } from "zod";
import { isCalendarDate, isTimeZone, parseInstant } from "../../core/time";
import { isDateOnly, MAX_INTERVAL, parseRRule } from "../recurrence/recurrence.engine";
import { cleanFilename } from "../attachments/attachments.names";

/**
 * The app-backup v2 records (contract §9): the API's field names and value shapes, every field
 * present (null where empty), no user id; tasks carry `tag_ids` instead of `tags` and no
 * `subtasks`. Kinds that are not API resources of their own carry the API's fields of the
 * parent's sub-resource plus the parent's id: habit_logs (`habit_id` + the HabitLog fields),
 * habit_pauses (`habit_id` + the HabitPause fields), recurrence_exceptions (`recurrence_id` +
 * `date`). Fields kept beyond the API shape because a faithful restore needs them
 * (RECORD_EXTRAS): `deleted_at` of folders, `created_at`/`updated_at` of tags, habit logs and
 * pauses, `created_at` of recurrence exceptions, `position` of tasks, `archived_at` of habits and
 * countdowns (the API's `archived` flag alone loses the time). API fields that the import does
 * not read (API_ONLY_FIELDS): a countdown's derived `next_date`, `days_until` and `count` (as
 * computed at export time, in the exporting user's zone), the `archived` flags (checked against
 * `archived_at`) and a recurrence's `exceptions` (checked against data/recurrence_exceptions.json).
 * Loaded with the backup service on its first use; the API's own shapes are in backup.schemas.ts.
 */

export const ENTITIES = [
  "folders",
  "lists",
  "tags",
  "tasks",
  "recurrences",
  "recurrence_exceptions",
  "habits",
  "habit_logs",
  "habit_pauses",
  "countdowns",
  "memos",
  "attachments",
] as const;
export type Entity = (typeof ENTITIES)[number];

const Id = z.string().regex(/^[0-9a-z][0-9a-z-]{0,63}$/, "an identifier (lowercase letters, digits, hyphens; at most 64)");
const Instant = z.string().max(40).refine((s) => parseInstant(s) !== null, "an RFC 3339 instant");
const DateOnly = z.string().max(10).refine(isCalendarDate, "a real date YYYY-MM-DD");
const DueAt = z.string().max(40).refine((s) => isCalendarDate(s) || parseInstant(s) !== null, "a date or an RFC 3339 instant");
const Color = z.string().regex(/^#[0-9A-Fa-f]{6}$/, "#RRGGBB");
/** At most `max` characters (code points, as the API counts them; UTF-16 length is the fast path). */
const Text = (min: number, max: number) =>
  z
    .string()
    .min(min)
    .refine((s) => s.length <= max || [...s].length <= max, `at most ${max} characters`);
const noControl = (s: string) => !/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(s);
const Name = Text(1, 200).refine(noControl, "no control characters");
const Position = z.number().int().min(-(2 ** 53)).max(2 ** 53);

export const FolderRecord = z.strictObject({ id: Id, name: Name, position: Position, created_at: Instant, updated_at: Instant, deleted_at: Instant.nullable() });
export const ListRecord = z.strictObject({
    id: Id,
    name: Name,
    folder_id: Id.nullable(),
    is_inbox: z.boolean(),
    color: Color.nullable(),
    position: Position,
    created_at: Instant,
    updated_at: Instant,
    deleted_at: Instant.nullable(),
  });
export const TagRecord = z.strictObject({ id: Id, name: Text(1, 64).refine(noControl, "no control characters"), color: Color, created_at: Instant, updated_at: Instant });
export const TaskRecord = z.strictObject({
    id: Id,
    list_id: Id,
    parent_id: Id.nullable(),
    title: Text(1, 500),
    description: Text(0, 20_000),
    completed: z.boolean(),
    completed_at: Instant.nullable(),
    due_at: DueAt.nullable(),
    priority: z.number().int().min(0).max(3),
    version: z.number().int().min(1),
    position: Position,
    tag_ids: z.array(Id).max(1000),
    created_at: Instant,
    updated_at: Instant,
    deleted_at: Instant.nullable(),
  });
export const RecurrenceRecord = z.strictObject({
    id: Id,
    task_id: Id,
    kind: z.enum(["rrule", "after_completion"]),
    rrule: Text(1, 1000).nullable(),
    interval: z.number().int().min(1).max(MAX_INTERVAL).nullable(),
    unit: z.enum(["day", "week", "month", "year"]).nullable(),
    timezone: z.string().max(64).refine(isTimeZone, "an IANA time zone"),
    dtstart: DueAt.nullable(),
    exceptions: z.array(DateOnly),
    created_at: Instant,
    updated_at: Instant,
  })
  .refine((r) => r.exceptions.every((d, i) => i === 0 || r.exceptions[i - 1]! < d), {
    message: "exceptions must be distinct and ascending",
    path: ["exceptions"],
  })
  .refine((r) => (r.kind === "rrule" ? r.rrule !== null : r.interval !== null && r.unit !== null), {
    message: "rrule needs `rrule`; after_completion needs `interval` and `unit`",
  })
  // The same RRULE check as the API's: a rule the engine cannot run is never imported.
  .superRefine((r, ctx) => {
    if (r.rrule === null) return;
    const check = parseRRule(r.rrule, r.dtstart === null || isDateOnly(r.dtstart));
    if (!check.ok) ctx.addIssue({ code: "custom", path: ["rrule"], message: check.message });
  });
export const RecurrenceExceptionRecord = z.strictObject({ recurrence_id: Id, date: DateOnly, created_at: Instant });
const Frequency = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("daily") }),
  z.strictObject({ type: z.literal("weekdays"), days: z.array(z.number().int().min(1).max(7)).min(1).max(7) }),
  z.strictObject({ type: z.literal("times_per_week"), count: z.number().int().min(1).max(7) }),
]);
/** The API's `archived` flag and the stored `archived_at` say the same thing. */
const archivedAgrees = (r: { archived: boolean; archived_at: string | null }) => r.archived === (r.archived_at !== null);
const ARCHIVED_MESSAGE = { message: "`archived` must be true exactly when `archived_at` is set", path: ["archived"] };

export const HabitRecord = z.strictObject({
    id: Id,
    name: Name,
    icon: Text(1, 64).nullable(),
    color: Color.nullable(),
    frequency: Frequency,
    goal: z.number().positive().max(1_000_000_000),
    unit: Text(1, 32).nullable(),
    start_date: DateOnly,
    position: Position,
    archived: z.boolean(),
    archived_at: Instant.nullable(),
    created_at: Instant,
    updated_at: Instant,
  })
  .refine(archivedAgrees, ARCHIVED_MESSAGE);
export const HabitLogRecord = z.strictObject({ habit_id: Id, date: DateOnly, value: z.number().min(0).max(1_000_000_000), note: Text(0, 2000).nullable(), created_at: Instant, updated_at: Instant });
export const HabitPauseRecord = z.strictObject({ id: Id, habit_id: Id, start_date: DateOnly, end_date: DateOnly.nullable(), created_at: Instant, updated_at: Instant })
  .refine((p) => p.end_date === null || p.end_date >= p.start_date, { message: "end_date is before start_date" });
export const CountdownRecord = z.strictObject({
    id: Id,
    name: Name,
    date: DateOnly,
    type: z.enum(["countdown", "anniversary", "birthday"]),
    repeat: z.enum(["none", "weekly", "monthly", "yearly"]),
    icon: Text(1, 64).nullable(),
    calendar: z.enum(["gregorian", "lunar"]),
    lunar: z.strictObject({ month: z.number().int().min(1).max(12), day: z.number().int().min(1).max(30), leap: z.boolean() }).nullable(),
    pinned: z.boolean(),
    archived: z.boolean(),
    archived_at: Instant.nullable(),
    // Derived, as computed at export time in the exporting user's zone; not imported.
    next_date: DateOnly.nullable(),
    days_until: z.number().int().min(-4_000_000).max(4_000_000),
    count: z.number().int().min(0).max(10_000).nullable(),
    created_at: Instant,
    updated_at: Instant,
  })
  .strict()
  .refine((c) => (c.calendar === "lunar") === (c.lunar !== null), { message: "`lunar` is set exactly for calendar lunar" })
  .refine(archivedAgrees, ARCHIVED_MESSAGE);
export const MemoRecord = z.object({ id: Id, content: Text(1, 100_000), pinned: z.boolean(), version: z.number().int().min(1), created_at: Instant, updated_at: Instant, deleted_at: Instant.nullable() })
  .strict();
export const AttachmentRecord = z.object({
    // Becomes the stored file's name: exactly a UUID, never anything path-like.
    id: z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, "a UUID"),
    task_id: Id,
    // Exactly as the upload stores names: no path, controls or bidirectional marks.
    filename: Text(1, 255).refine((f) => cleanFilename(f) === f, "not a clean file name (path, control or bidirectional characters)"),
    content_type: z.string().min(1).max(255),
    size: z.number().int().min(0),
    sha256: z.string().regex(/^[0-9a-f]{64}$/, "lowercase hex SHA-256"),
    created_at: Instant,
  });

export const RECORD_SCHEMAS: Record<Entity, z.ZodType> = {
  folders: FolderRecord,
  lists: ListRecord,
  tags: TagRecord,
  tasks: TaskRecord,
  recurrences: RecurrenceRecord,
  recurrence_exceptions: RecurrenceExceptionRecord,
  habits: HabitRecord,
  habit_logs: HabitLogRecord,
  habit_pauses: HabitPauseRecord,
  countdowns: CountdownRecord,
  memos: MemoRecord,
  attachments: AttachmentRecord,
};

/** Fields each record carries beyond the API representation (documented in the export route). */
export const RECORD_EXTRAS: Record<Entity, readonly string[]> = {
  folders: ["deleted_at"],
  lists: [],
  tags: ["created_at", "updated_at"],
  tasks: ["position"],
  recurrences: [],
  recurrence_exceptions: ["created_at"],
  habits: ["archived_at"],
  habit_logs: ["created_at", "updated_at"],
  habit_pauses: ["created_at", "updated_at"],
  countdowns: ["archived_at"],
  memos: [],
  attachments: [],
};

/**
 * API fields the import checks and then drops: derived values and mirrors of stored fields. What
 * remains is what the import stores and what a merge compares (the content digest).
 */
export const API_ONLY_FIELDS: Partial<Record<Entity, readonly string[]>> = {
  recurrences: ["exceptions"],
  habits: ["archived"],
  countdowns: ["archived", "next_date", "days_until", "count"],
};

/** A checked record without its API-only fields (key order kept: the digest depends on it). */
export function storedFields(entity: Entity, r: Record<string, unknown>): Record<string, unknown> {
  const drop = API_ONLY_FIELDS[entity];
  if (!drop) return r;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(r)) if (!drop.includes(k)) out[k] = v;
  return out;
}

export type FolderRecord = z.infer<typeof FolderRecord>;
export type ListRecord = z.infer<typeof ListRecord>;
export type TagRecord = z.infer<typeof TagRecord>;
export type TaskRecord = z.infer<typeof TaskRecord>;
export type RecurrenceRecord = z.infer<typeof RecurrenceRecord>;
export type RecurrenceExceptionRecord = z.infer<typeof RecurrenceExceptionRecord>;
export type HabitRecord = z.infer<typeof HabitRecord>;
export type HabitLogRecord = z.infer<typeof HabitLogRecord>;
export type HabitPauseRecord = z.infer<typeof HabitPauseRecord>;
export type CountdownRecord = z.infer<typeof CountdownRecord>;
export type MemoRecord = z.infer<typeof MemoRecord>;
export type AttachmentRecord = z.infer<typeof AttachmentRecord>;

const Sha = z.string().regex(/^[0-9a-f]{64}$/);
export const Manifest = z.strictObject({
    format: z.literal("app-backup"),
    version: z.literal(2),
    backup_id: Id,
    created_at: Instant,
    app_version: z.string().max(64),
    source_user: z.strictObject({ id: Id, username: z.string().max(200) }),
    counts: z.record(z.enum(ENTITIES), z.number().int().min(0)),
    entries: z.record(z.string().max(300), z.strictObject({ size: z.number().int().min(0), sha256: Sha })),
  });
export type Manifest = z.infer<typeof Manifest>;
