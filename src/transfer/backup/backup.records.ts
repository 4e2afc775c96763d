import { z } from "zod";
import { maxChars } from "../../core/text";
import { parseInstant } from "../../core/time";
import { cleanFilename } from "../../features/attachments/attachments.rules";
import { LunarMonthDay } from "../../features/countdowns/countdowns.schemas";
import { pinnedWhileArchived } from "../../features/countdowns/countdowns.rules";
import { DateString, LogBody } from "../../features/habits/habits.schemas";
import { MemoVersion } from "../../features/memos/memos.schemas";
import { isDateOnly } from "../../core/time";
import { parseRRule } from "../../features/recurrence/recurrence.rules";
import { CalendarDate, kindFields } from "../../features/recurrence/recurrence.schemas";
import { Color, TagName } from "../../features/tags/tags.schemas";
import { DueAt, Rank, TAG_IDS_MAX, Version } from "../../features/tasks/tasks.schemas";
import { ListSort } from "../../features/lists/lists.schemas";
import { recordFields } from "../record-fields";
import { ReminderKind, LocalTime } from "../../features/reminders/reminders.schemas";
import { reminderShapeProblems } from "../../features/reminders/reminders.rules";

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
 *
 * Every field a client can write goes through the API's own schema for it (imported from the
 * owning feature, never copied), so a record the API would refuse is refused here by the same
 * code, and a value the API normalises (a `due_at` with an offset → UTC with milliseconds, a
 * trimmed name, an upper-case habit colour, sorted weekdays, an RRULE's canonical text) is
 * normalised the same way before it is stored. Rules that span records or need the attachment
 * bytes or the lunar calendar are in backup.validate.ts, calling the features' rule functions.
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
  // Issue 15: after every kind a reminder may point at. Archives made before them lack both files.
  "notification_channels",
  "reminders",
] as const;

/** Kinds an older archive (made before they existed) does not hold: a missing file means none. */
export const OPTIONAL_ENTITIES: readonly Entity[] = ["tags", "notification_channels", "reminders"];
/** Kinds added after app-backup v2 first shipped: an older manifest does not count them. */
const NEWER_KINDS: readonly Entity[] = ["notification_channels", "reminders"];
export type Entity = (typeof ENTITIES)[number];

const Id = z.string().regex(/^[0-9a-z][0-9a-z-]{0,63}$/, "an identifier (lowercase letters, digits, hyphens; at most 64)");
/**
 * An RFC 3339 instant, stored as the API writes every instant: UTC with milliseconds
 * (`2026-11-25T22:08:03.123Z`). One whose UTC form leaves years 0000..9999 is refused.
 */
const Instant = maxChars(z.string(), 40)
  .transform((s, ctx) => {
    const d = parseInstant(s);
    // Already the API's form (every instant an export writes): kept as it is.
    if (d && s.length === 24 && s[10] === "T" && s.endsWith("Z")) return s;
    const iso = d?.toISOString();
    if (!iso || iso.length !== 24) {
      ctx.addIssue({ code: "custom", message: "an RFC 3339 instant" });
      return z.NEVER;
    }
    return iso;
  });
/** A real date YYYY-MM-DD (the API's, for a recurrence exception; any real date for derived fields). */
const DateOnly = CalendarDate;
const Position = z.number().int().min(-(2 ** 53)).max(2 ** 53);

const F = recordFields({ Id, Instant, Position });

export const FolderRecord = z.strictObject({ ...F.folder, deleted_at: Instant.nullable() });
// `sort` is absent in archives made before issue 14 (then `created`).
/**
 * A shared list's members by username (sharing.md: informational). A restore never grants access
 * from it: it invites those who exist on the server, as pending invitations. Optional: archives
 * from before sharing have none.
 */
const ListMembers = z
  .array(z.strictObject({ username: maxChars(z.string().min(1), 200), role: z.enum(["editor", "viewer"]) }))
  .max(1000, "at most 1000 members");
export const ListRecord = z.strictObject({ ...F.list, sort: ListSort.optional(), members: ListMembers.optional() });
export const TagRecord = z.strictObject({ id: Id, name: TagName, color: Color, ...F.stamps });
export const TaskRecord = z.strictObject({
    ...F.taskHead,
    version: Version,
    position: Position,
    // Absent in archives made before manual order (issue 14): the restore puts such tasks last.
    rank: Rank.optional(),
    tag_ids: z.array(Id).max(TAG_IDS_MAX, `at most ${TAG_IDS_MAX} tags`),
    ...F.stampsDeleted,
  });
export const RecurrenceRecord = z.strictObject({
    ...F.recurrenceHead,
    // An rrule series' first occurrence, a task's due_at when the API stored it (same form).
    dtstart: DueAt,
    exceptions: z.array(DateOnly),
    ...F.stamps,
  })
  .superRefine((r, ctx) => {
    // The API's own check of which fields each kind takes.
    kindFields(r, ctx, true);
    if (r.kind === "rrule" && r.dtstart === null) ctx.addIssue({ code: "custom", path: ["dtstart"], message: "an rrule recurrence needs its first occurrence (the task's due_at when it was made)" });
    if (r.kind === "after_completion" && r.dtstart !== null) ctx.addIssue({ code: "custom", path: ["dtstart"], message: "only for kind rrule" });
    if (r.kind === "after_completion" && r.exceptions.length > 0) ctx.addIssue({ code: "custom", path: ["exceptions"], message: "only an rrule recurrence has occurrences to skip" });
    if (!r.exceptions.every((d, i) => i === 0 || r.exceptions[i - 1]! < d)) ctx.addIssue({ code: "custom", path: ["exceptions"], message: "exceptions must be distinct and ascending" });
    if (r.rrule !== null && r.dtstart !== null) {
      // The syntax for the first occurrence's form, as the API parses it; the series itself is
      // checked at preflight (checkSchedule), once.
      const check = parseRRule(r.rrule, isDateOnly(r.dtstart));
      if (!check.ok) ctx.addIssue({ code: "custom", path: ["rrule"], message: check.message });
    }
  })
  // Stored in the canonical text the API stores (upper case, no `RRULE:` prefix).
  .transform((r) => {
    if (r.rrule === null || r.dtstart === null) return r;
    const check = parseRRule(r.rrule, isDateOnly(r.dtstart));
    return check.ok ? { ...r, rrule: check.rule.text } : r;
  });
export const RecurrenceExceptionRecord = z.strictObject({ recurrence_id: Id, date: DateOnly, created_at: Instant });
/** The API's `archived` flag and the stored `archived_at` say the same thing. */
const archivedAgrees = (r: { archived: boolean; archived_at: string | null }) => r.archived === (r.archived_at !== null);
const ARCHIVED_MESSAGE = { message: "`archived` must be true exactly when `archived_at` is set", path: ["archived"] };

export const HabitRecord = z.strictObject({ ...F.habitHead, archived_at: Instant.nullable(), ...F.stamps })
  .refine(archivedAgrees, ARCHIVED_MESSAGE);
export const HabitLogRecord = z.strictObject({
  habit_id: Id,
  date: DateString,
  value: LogBody.shape.value,
  note: LogBody.shape.note.unwrap(),
  ...F.stamps,
});
export const HabitPauseRecord = z.strictObject({ id: Id, habit_id: Id, start_date: DateString, end_date: DateString.nullable(), ...F.stamps })
  .refine((p) => p.end_date === null || p.end_date >= p.start_date, { message: "end_date must not be before start_date", path: ["end_date"] });
export const CountdownRecord = z.strictObject({
    ...F.countdownHead,
    // Checked against `date` at preflight (lunarFieldsProblem: the lunar calendar loads on first need).
    lunar: z.strictObject(LunarMonthDay.shape).nullable(),
    ...F.countdownFlags,
    archived_at: Instant.nullable(),
    // Derived, as computed at export time in the exporting user's zone; not imported.
    next_date: DateOnly.nullable(),
    days_until: z.number().int().min(-4_000_000).max(4_000_000),
    count: z.number().int().min(0).max(10_000).nullable(),
    ...F.stamps,
  })
  .refine((c) => (c.calendar === "lunar") === (c.lunar !== null), { message: "`lunar` is set exactly for calendar lunar", path: ["lunar"] })
  .refine(archivedAgrees, ARCHIVED_MESSAGE)
  .superRefine((c, ctx) => {
    const p = pinnedWhileArchived(c.pinned, c.archived_at !== null);
    if (p) ctx.addIssue({ code: "custom", path: ["pinned"], message: p });
  });
export const MemoRecord = z.strictObject({ ...F.memoHead, version: MemoVersion, ...F.stampsDeleted });
export const AttachmentRecord = z.strictObject({
    // Becomes the stored file's name: exactly a UUID, never anything path-like.
    id: z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, "a UUID"),
    task_id: Id,
    // Exactly as the upload stores names: no path, controls or bidirectional marks.
    filename: maxChars(z.string().min(1), 1024)
      .refine((f) => cleanFilename(f) === f, "not a clean file name (path, control or bidirectional characters)"),
    // Checked against the bytes at preflight: the type the upload's allow-list decides for them.
    content_type: maxChars(z.string().min(1), 255),
    // An upload is never empty (422); its limit (APP_ATTACHMENT_MAX_BYTES) is checked at preflight.
    size: z.number().int().min(1),
    sha256: z.string().regex(/^[0-9a-f]{64}$/, "lowercase hex SHA-256"),
    created_at: Instant,
  });

/**
 * A reminder: the API's Reminder without the derived `next_fire_at` (the schedule is computed
 * again from the restored target; occurrences before the restore never fire).
 */
export const ReminderRecord = z
  .strictObject({
    id: Id,
    target: z.strictObject({ type: z.enum(["task", "habit", "countdown"]), id: Id }),
    kind: ReminderKind,
    minutes_before: z.number().int().min(0).max(10 * 366 * 24 * 60).nullable(),
    at: Instant.nullable(),
    time: LocalTime.nullable(),
    days_before: z.number().int().min(0).max(366).nullable(),
    ...F.stamps,
  })
  .superRefine((r, ctx) => {
    for (const p of reminderShapeProblems(r.target.type, r.kind, r)) ctx.addIssue({ code: "custom", path: [p.path], message: p.message });
  });

const ChannelConfigs = {
  webhook: z.strictObject({ url: maxChars(z.string().url(), 2000) }),
  ntfy: z.strictObject({ server: maxChars(z.string().url(), 2000), topic: maxChars(z.string().regex(/^[-_A-Za-z0-9]+$/), 64) }),
  email: z.strictObject({ address: z.email().max(254) }),
  webpush: z.strictObject({ subscription: z.strictObject({ endpoint: maxChars(z.string().url(), 2000) }) }),
} as const;
const ChannelSecrets = {
  webhook: z.strictObject({ secret: z.string().regex(/^[0-9a-f]{64}$/) }),
  ntfy: z.strictObject({ token: maxChars(z.string().min(1), 512).nullable() }),
  email: z.strictObject({}),
  webpush: z.strictObject({ p256dh: maxChars(z.string().min(1), 200), auth: maxChars(z.string().min(1), 200) }),
} as const;
/**
 * A notification channel: the API's fields (without the derived `last_delivery`) plus its
 * `secrets` (webhook secret, ntfy token, push keys), which a faithful restore needs and the API
 * never answers. The archive is the user's own: keep it as safe as the channels themselves.
 */
export const ChannelRecord = z
  .strictObject({
    id: Id,
    type: z.enum(["webhook", "ntfy", "email", "webpush"]),
    name: maxChars(z.string().trim().min(1), 100),
    enabled: z.boolean(),
    config: z.record(z.string(), z.unknown()),
    secrets: z.record(z.string(), z.unknown()),
    ...F.stamps,
  })
  .superRefine((r, ctx) => {
    const c = ChannelConfigs[r.type].safeParse(r.config);
    if (!c.success) ctx.addIssue({ code: "custom", path: ["config"], message: `not a ${r.type} channel's config: ${c.error.issues[0]?.message ?? "invalid"}` });
    const s = ChannelSecrets[r.type].safeParse(r.secrets);
    if (!s.success) ctx.addIssue({ code: "custom", path: ["secrets"], message: `not a ${r.type} channel's secrets: ${s.error.issues[0]?.message ?? "invalid"}` });
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
  notification_channels: ChannelRecord,
  reminders: ReminderRecord,
};

/** Fields each record carries beyond the API representation (documented in the export route). */
export const RECORD_EXTRAS: Record<Entity, readonly string[]> = {
  folders: ["deleted_at"],
  lists: ["members"],
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
  notification_channels: ["secrets", "updated_at"],
  reminders: [],
};

/**
 * API fields the import checks and then drops: derived values and mirrors of stored fields. What
 * remains is what the import stores and what a merge compares (the content digest).
 */
export const API_ONLY_FIELDS: Partial<Record<Entity, readonly string[]>> = {
  // Read by the import to invite (never stored as memberships, never part of the digest).
  lists: ["members"],
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
export const ManifestEntry = z.strictObject({ size: z.number().int().min(0), sha256: Sha });
export type ManifestEntry = z.infer<typeof ManifestEntry>;
export const Manifest = z.strictObject({
    format: z.literal("app-backup"),
    version: z.literal(2),
    backup_id: Id,
    created_at: Instant,
    app_version: maxChars(z.string(), 64),
    source_user: z.strictObject({ id: Id, username: maxChars(z.string(), 200) }),
    // Every kind's count; an archive made before reminders existed has none for their two kinds.
    counts: z.strictObject(
      Object.fromEntries(ENTITIES.map((e) => [e, NEWER_KINDS.includes(e) ? z.number().int().min(0).optional() : z.number().int().min(0)])) as unknown as Record<Entity, z.ZodType<number | undefined>>,
    ),
    // Read as own keys by backup.validate.ts (a `__proto__` key is an entry name like any other).
    entries: z.record(maxChars(z.string(), 300), ManifestEntry),
  });
export type Manifest = z.infer<typeof Manifest>;
