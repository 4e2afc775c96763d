import { sqliteTable, text, integer, index, uniqueIndex, primaryKey } from "drizzle-orm/sqlite-core";
import { sql } from "drizzle-orm";
import { ownerColumn, users } from "./accounts";
import { timestamps } from "./columns";

export const folders = sqliteTable(
  "folders",
  {
    id: text("id").primaryKey(),
    userId: ownerColumn(),
    name: text("name").notNull(),
    position: integer("position").notNull().default(0),
    ...timestamps(),
    deletedAt: text("deleted_at"),
  },
  (t) => [index("folders_user_idx").on(t.userId, t.position)],
);

export const lists = sqliteTable(
  "lists",
  {
    id: text("id").primaryKey(),
    userId: ownerColumn(),
    name: text("name").notNull(),
    // A list in a soft-deleted folder is presented at root; SET NULL covers a purged folder.
    folderId: text("folder_id").references(() => folders.id, { onDelete: "set null" }),
    isInbox: integer("is_inbox", { mode: "boolean" }).notNull().default(false),
    color: text("color"),
    position: integer("position").notNull().default(0),
    // How the list's tasks are shown (remembered per list so every client agrees; issue 14).
    sort: text("sort", { enum: ["manual", "due_date", "priority", "title", "created"] }).notNull().default("created"),
    ...timestamps(),
    deletedAt: text("deleted_at"),
  },
  (t) => [
    index("lists_user_idx").on(t.userId, t.position),
    // Exactly one inbox per user.
    uniqueIndex("lists_one_inbox_uq").on(t.userId).where(sql`is_inbox = 1`),
  ],
);

export const tags = sqliteTable(
  "tags",
  {
    id: text("id").primaryKey(),
    userId: ownerColumn(),
    name: text("name").notNull(),
    // NFKC + Unicode lower-case of name: uniqueness is case-insensitive for every script.
    nameKey: text("name_key").notNull(),
    color: text("color").notNull(),
    ...timestamps(),
  },
  (t) => [uniqueIndex("tags_user_name_uq").on(t.userId, t.nameKey)],
);

export const tasks = sqliteTable(
  "tasks",
  {
    id: text("id").primaryKey(),
    userId: ownerColumn(),
    listId: text("list_id")
      .notNull()
      .references(() => lists.id, { onDelete: "cascade" }),
    parentId: text("parent_id").references((): ReturnType<typeof text> => tasks.id as never, { onDelete: "cascade" }),
    title: text("title").notNull(),
    description: text("description").notNull().default(""),
    completed: integer("completed", { mode: "boolean" }).notNull().default(false),
    completedAt: text("completed_at"),
    // Either YYYY-MM-DD (date-only) or an RFC 3339 UTC instant; the form is the flag.
    dueAt: text("due_at"),
    priority: integer("priority").notNull().default(0),
    version: integer("version").notNull().default(1),
    position: integer("position").notNull().default(0),
    // Manual order among the task's siblings (a list's top-level tasks, or a parent's subtasks):
    // a fractional-indexing key (tasks.rank.ts), compared as bytes; ties broken by id.
    rank: text("rank").notNull().default(""),
    ...timestamps(),
    deletedAt: text("deleted_at"),
    // Title and description, NFKC, lower-cased, without diacritics (see tasks.search.ts): what
    // the trigram index (tasks_fts, an external-content FTS5 table kept in step by triggers)
    // and the short-term fallback search. Normalised in JS so both paths fold the same way.
    searchText: text("search_text").notNull().default(""),
    // Who created / completed the task (a shared list's tasks are written by several members);
    // null for tasks from before sharing, restored ones, and when that user is gone.
    createdBy: text("created_by").references(() => users.id, { onDelete: "set null" }),
    completedBy: text("completed_by").references(() => users.id, { onDelete: "set null" }),
  },
  (t) => [
    // Hot page: top-level, live tasks of a user, newest first. A partial index keeps SQLite
    // from sorting every row (a plain parent_id index made it do so).
    index("tasks_live_top_idx")
      .on(t.userId, t.createdAt, t.id)
      .where(sql`parent_id IS NULL AND deleted_at IS NULL`),
    // Trash page: deleted top-level tasks, most recently deleted first.
    index("tasks_trash_idx")
      .on(t.userId, t.deletedAt, t.id)
      .where(sql`parent_id IS NULL AND deleted_at IS NOT NULL`),
    index("tasks_parent_idx").on(t.parentId).where(sql`parent_id IS NOT NULL`),
    index("tasks_list_idx").on(t.listId),
    // A list's page (GET /tasks?list_id=): its live top-level tasks, newest first, without
    // walking every task of the user.
    index("tasks_live_list_idx")
      .on(t.listId, t.createdAt, t.id)
      .where(sql`parent_id IS NULL AND deleted_at IS NULL`),
    // A list's top-level tasks in manual order, and the largest rank (a new task goes after it;
    // the trash counts, so a restored task never ties with a new one).
    index("tasks_top_rank_idx")
      .on(t.listId, t.rank, t.id)
      .where(sql`parent_id IS NULL`),
    // Smart views (tasks.views.ts): open dated top-level tasks by due date, one index per form of
    // due_at, so each form is walked in its own order (a date sorts before that day's instants as
    // text, but an instant's local date depends on the user's zone).
    index("tasks_open_day_idx")
      .on(t.userId, t.dueAt, t.id)
      .where(sql`parent_id IS NULL AND deleted_at IS NULL AND completed = 0 AND length(due_at) = 10`),
    index("tasks_open_timed_idx")
      .on(t.userId, t.dueAt, t.id)
      .where(sql`parent_id IS NULL AND deleted_at IS NULL AND completed = 0 AND length(due_at) > 10`),
    // The calendar: dated top-level tasks, open or completed, by due_at (both forms; a range of
    // local days is read as the text range covering its dates and instants, tested per row).
    index("tasks_live_due_idx")
      .on(t.userId, t.dueAt, t.id)
      .where(sql`parent_id IS NULL AND deleted_at IS NULL AND due_at IS NOT NULL`),
    // The No date view: open undated top-level tasks, newest first.
    index("tasks_open_undated_idx")
      .on(t.userId, t.createdAt, t.id)
      .where(sql`parent_id IS NULL AND deleted_at IS NULL AND completed = 0 AND due_at IS NULL`),
    // The Completed view: by completion, most recent first.
    index("tasks_done_idx")
      .on(t.userId, t.completedAt, t.id)
      .where(sql`parent_id IS NULL AND deleted_at IS NULL AND completed = 1`),
    // The same five keyed by list (issue 19): a member's views and calendar walk each list shared
    // with them in the view's order too, instead of reading and sorting every task of the list
    // (the user-keyed ones above hold a shared list's tasks under its owner's id, among all the
    // owner's other tasks).
    index("tasks_list_open_day_idx")
      .on(t.listId, t.dueAt, t.id)
      .where(sql`parent_id IS NULL AND deleted_at IS NULL AND completed = 0 AND length(due_at) = 10`),
    index("tasks_list_open_timed_idx")
      .on(t.listId, t.dueAt, t.id)
      .where(sql`parent_id IS NULL AND deleted_at IS NULL AND completed = 0 AND length(due_at) > 10`),
    index("tasks_list_live_due_idx")
      .on(t.listId, t.dueAt, t.id)
      .where(sql`parent_id IS NULL AND deleted_at IS NULL AND due_at IS NOT NULL`),
    index("tasks_list_open_undated_idx")
      .on(t.listId, t.createdAt, t.id)
      .where(sql`parent_id IS NULL AND deleted_at IS NULL AND completed = 0 AND due_at IS NULL`),
    index("tasks_list_done_idx")
      .on(t.listId, t.completedAt, t.id)
      .where(sql`parent_id IS NULL AND deleted_at IS NULL AND completed = 1`),
  ],
);

export const taskTags = sqliteTable(
  "task_tags",
  {
    taskId: text("task_id")
      .notNull()
      .references(() => tasks.id, { onDelete: "cascade" }),
    tagId: text("tag_id")
      .notNull()
      .references(() => tags.id, { onDelete: "cascade" }),
  },
  (t) => [primaryKey({ columns: [t.taskId, t.tagId] }), index("task_tags_tag_idx").on(t.tagId)],
);

export const recurrences = sqliteTable(
  "recurrences",
  {
    id: text("id").primaryKey(),
    userId: ownerColumn(),
    taskId: text("task_id")
      .notNull()
      .references(() => tasks.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: ["rrule", "after_completion"] }).notNull(),
    rrule: text("rrule"),
    interval: integer("interval"),
    unit: text("unit", { enum: ["day", "week", "month", "year"] }),
    timezone: text("timezone").notNull(),
    // kind rrule: the series' first occurrence (DTSTART), a date or an instant like due_at. COUNT and
    // INTERVAL phase count from it, not from the task's current due_at. Null for after_completion.
    dtstart: text("dtstart"),
    ...timestamps(),
  },
  (t) => [uniqueIndex("recurrences_task_uq").on(t.taskId), index("recurrences_user_idx").on(t.userId)],
);

export const recurrenceExceptions = sqliteTable(
  "recurrence_exceptions",
  {
    recurrenceId: text("recurrence_id")
      .notNull()
      .references(() => recurrences.id, { onDelete: "cascade" }),
    date: text("date").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.recurrenceId, t.date] })],
);

// ---- Sharing (docs/sharing-design.md): owned by the lists feature (lists.members.repo.ts) ----

/** A non-owner member of a list, with their own placement of it (folder, position). */
export const listMembers = sqliteTable(
  "list_members",
  {
    listId: text("list_id")
      .notNull()
      .references(() => lists.id, { onDelete: "cascade" }),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    role: text("role", { enum: ["editor", "viewer"] }).notNull(),
    folderId: text("folder_id").references(() => folders.id, { onDelete: "set null" }),
    position: integer("position").notNull().default(0),
    since: text("since").notNull(),
  },
  (t) => [primaryKey({ columns: [t.listId, t.userId] }), index("list_members_user_idx").on(t.userId)],
);

/** A pending invitation (accepting, declining or withdrawing deletes it; it lapses at expires_at). */
export const listInvitations = sqliteTable(
  "list_invitations",
  {
    id: text("id").primaryKey(),
    listId: text("list_id")
      .notNull()
      .references(() => lists.id, { onDelete: "cascade" }),
    inviterId: text("inviter_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    inviteeId: text("invitee_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    role: text("role", { enum: ["editor", "viewer"] }).notNull(),
    createdAt: text("created_at").notNull(),
    expiresAt: text("expires_at").notNull(),
  },
  (t) => [uniqueIndex("list_invitations_pair_uq").on(t.listId, t.inviteeId), index("list_invitations_invitee_idx").on(t.inviteeId)],
);
