import { z } from "zod";
import { maxChars } from "../../core/text";
import { isCalendarDate, parseInstant } from "../../core/time";
import { UrlId } from "../../core/ids";
import { UNDO_TOKEN_MAX } from "../../core/undo-token";
import { pageQueryShape } from "../../core/pagination";
import { Tag } from "../tags/tags.schemas";
import { MAX_TERMS, searchTerms } from "./tasks.search";
import { isRank, RANK_MAX } from "./tasks.rank";
import { ListSort } from "../lists/lists.schemas";

/** A stored manual-order key (backup restores check it; the API makes them itself). */
export const Rank = z.string().max(RANK_MAX).refine(isRank, `a fractional-indexing key of at most ${RANK_MAX} characters`);

const Id = maxChars(z.string(), 64);

export const TITLE_MAX = 500;
export const DESCRIPTION_MAX = 20_000;
export const Title = maxChars(
  z.string().refine((s) => s.trim().length > 0, "title must not be blank"),
  TITLE_MAX,
  `at most ${TITLE_MAX} characters`,
);
export const Description = maxChars(z.string(), DESCRIPTION_MAX, `at most ${DESCRIPTION_MAX} characters`);
export const Priority = z.number().int().min(0).max(3).describe("0 none … 3 high");

/**
 * `YYYY-MM-DD` (due that local day) or an RFC 3339 instant with Z or an offset, returned as UTC
 * with milliseconds. The string's form is the flag.
 */
export const DueAt = maxChars(z.string(), 40)
  .transform((s, ctx) => {
    if (isCalendarDate(s)) return s;
    const d = parseInstant(s);
    const iso = d?.toISOString();
    if (!iso || iso.length !== 24) {
      ctx.addIssue({ code: "custom", message: "a date YYYY-MM-DD or an RFC 3339 date-time with Z or an offset" });
      return z.NEVER;
    }
    return iso;
  })
  .nullable()
  .describe("YYYY-MM-DD or RFC 3339 date-time; null clears");

export const TAG_IDS_MAX = 100;
const TagIds = z.array(Id).max(TAG_IDS_MAX, `at most ${TAG_IDS_MAX} tags`);

/**
 * Versions are bounded so that a task stays editable: a PATCH names the version and stores it
 * plus one, which must still be an exact integer. 2^31 − 1 is 68 years of one change a second;
 * a restore refuses a larger one (it could never be PATCHed again).
 */
export const VERSION_MAX = 2 ** 31 - 1;
export const Version = z
  .number({ error: "version is required" })
  .int()
  .min(1)
  .max(VERSION_MAX, `at most ${VERSION_MAX}`);

export const TaskCreate = z.strictObject({
    title: Title,
    description: Description.optional(),
    list_id: Id.optional().describe("omitted: the inbox, or the parent's list"),
    parent_id: Id.nullable().optional(),
    completed: z.boolean().optional(),
    due_at: DueAt.optional(),
    priority: Priority.optional(),
    tag_ids: TagIds.optional(),
  });
export type TaskCreate = z.infer<typeof TaskCreate>;

export const TaskPatch = z.strictObject({
    version: Version,
    title: Title.optional(),
    description: Description.optional(),
    list_id: Id.optional(),
    parent_id: Id.nullable().optional(),
    completed: z.boolean().optional(),
    due_at: DueAt.optional(),
    priority: Priority.optional(),
    tag_ids: TagIds.optional(),
  });
export type TaskPatch = z.infer<typeof TaskPatch>;

export const TaskBatch = z.strictObject({
    task_ids: z.array(Id).min(1, "at least one task id").max(500, "at most 500 task ids"),
    completed: z.boolean().optional(),
    list_id: Id.optional(),
    due_at: DueAt.optional(),
    tag_ids: TagIds.optional().describe("replaces the user's tags on every named task (other members' tags on a shared task stay)"),
    add_tag_ids: TagIds.min(1, "at least one tag id")
      .optional()
      .describe(`adds these tags to every named task, keeping the tags each already has; a task may carry at most ${TAG_IDS_MAX} of the user's tags`),
    remove_tag_ids: TagIds.min(1, "at least one tag id").optional().describe("removes these tags from every named task that has them, keeping its other tags"),
    priority: Priority.optional(),
    soft_delete: z.literal(true).optional(),
  })
  .superRefine((b, ctx) => {
    const ops = [b.completed, b.list_id, b.due_at, b.tag_ids, b.add_tag_ids, b.remove_tag_ids, b.priority].filter((v) => v !== undefined).length;
    if (b.soft_delete) {
      if (ops > 0) ctx.addIssue({ code: "custom", path: ["soft_delete"], message: "soft_delete must be alone" });
    } else if (ops === 0) {
      ctx.addIssue({ code: "custom", path: [], message: "one or more of completed, list_id, due_at, tag_ids, add_tag_ids, remove_tag_ids, priority, or soft_delete" });
    }
    // Replacing the set and editing it in the same batch would contradict each other.
    if (b.tag_ids !== undefined) {
      for (const k of ["add_tag_ids", "remove_tag_ids"] as const) {
        if (b[k] !== undefined) ctx.addIssue({ code: "custom", path: [k], message: `${k} cannot be given with tag_ids (which replaces the whole set)` });
      }
    }
    if (b.add_tag_ids && b.remove_tag_ids) {
      const added = new Set(b.add_tag_ids);
      b.remove_tag_ids.forEach((id, i) => {
        if (added.has(id)) ctx.addIssue({ code: "custom", path: ["remove_tag_ids", i], message: `tag ${id} is both added and removed` });
      });
    }
  });
export type TaskBatch = z.infer<typeof TaskBatch>;

/** Manual order: exactly one of a sibling to stand before or after, or the first or last place. */
export const TaskMove = z.strictObject({
    before_id: Id.optional().describe("the sibling (same list and parent) the task goes just before"),
    after_id: Id.optional().describe("the sibling the task goes just after"),
    to: z.enum(["first", "last"]).optional().describe("the first or last place among its siblings"),
  })
  .superRefine((m, ctx) => {
    const n = [m.before_id, m.after_id, m.to].filter((v) => v !== undefined).length;
    if (n !== 1) ctx.addIssue({ code: "custom", path: [], message: "exactly one of before_id, after_id or to" });
  });
export type TaskMove = z.infer<typeof TaskMove>;

// The refinement allows exactly 10 characters; maxLength and format say so in the document.
const DateParam = z.string().refine(isCalendarDate, "a date YYYY-MM-DD").meta({ format: "date", maxLength: 10 });

export const TaskQuery = z.strictObject({
    ...pageQueryShape,
    q: maxChars(z.string(), 500)
      .refine((q) => searchTerms(q).length <= MAX_TERMS, `at most ${MAX_TERMS} distinct terms`)
      .optional()
      .describe("whitespace-separated terms, all of which must occur"),
    list_id: Id.optional(),
    tag_id: Id.optional(),
    completed: z.enum(["true", "false"], { error: "completed must be true or false" }).optional(),
    due_before: DateParam.optional().describe("inclusive"),
    due_after: DateParam.optional().describe("inclusive"),
    sort: ListSort.optional().describe("created (default: newest first), manual (rank), due_date (undated last), priority (high first, then manual), title"),
  });
export type TaskQuery = z.infer<typeof TaskQuery>;

const TaskFields = {
  id: z.string(),
  list_id: z.string(),
  parent_id: z.string().nullable(),
  title: z.string(),
  description: z.string(),
  completed: z.boolean(),
  completed_at: z.string().nullable(),
  due_at: z.string().nullable().describe("YYYY-MM-DD or RFC 3339 UTC instant"),
  priority: z.number().int().min(0).max(3).describe("0 none … 3 high"),
  version: z.number().int().min(1).max(VERSION_MAX),
  rank: z.string().describe("manual order among its siblings (the list's top-level tasks, or the parent's subtasks): sort by rank, then id, comparing bytes"),
  tags: z.array(Tag),
  created_at: z.string(),
  updated_at: z.string(),
  deleted_at: z.string().nullable(),
  created_by: z.object({ id: z.string(), username: z.string() }).nullable().describe("who created the task (null: before sharing, restored, or the user is gone)"),
  completed_by: z.object({ id: z.string(), username: z.string() }).nullable().describe("who completed it (null while not completed, or unknown)"),
};

export const Subtask = z.object({ ...TaskFields, subtasks: z.array(z.strictObject({})).max(0).describe("always empty: nesting is one level deep") })
  .meta({ id: "Subtask" });
export type Subtask = z.infer<typeof Subtask>;
export const Task = z.object({ ...TaskFields, subtasks: z.array(Subtask) }).meta({ id: "Task" });
export type Task = z.infer<typeof Task>;

export const TaskPage = z.object({ items: z.array(Task), next_cursor: z.string().nullable() }).meta({ id: "TaskPage" });
export const BatchResult = z.object({
  updated: z.number().int(),
  undo_token: z
    .string()
    .nullable()
    .optional()
    .describe("only with ?undo=true: send to POST /tasks/batch/undo (within 10 minutes) to put every task back as it was; null for soft_delete (restore each from the trash) and for a batch that completed a recurring task's occurrence"),
});
/** `?undo=true` asks a change for an undo token (the answer's shape is otherwise the contract's). */
export const UndoQuery = z.strictObject({
  undo: z.enum(["true", "false"], { error: "undo must be true or false" }).optional().describe("true: the answer carries an undo_token"),
});
export const BatchUndo = z.strictObject({ undo_token: maxChars(z.string(), UNDO_TOKEN_MAX).describe("the undo_token a change answered with") });
export type BatchUndo = z.infer<typeof BatchUndo>;
export const UndoResult = z.object({ restored: z.number().int().describe("tasks put back") });
// Any id in the URL that names nothing of the user is 404, whatever its length (core/ids.ts UrlId).
export const TaskParams = z.object({ task_id: UrlId });
export const TrashQuery = z.strictObject(pageQueryShape);
