import { sqliteOf, type Tx } from "../../core/db";
import { taskSearchText } from "../../features/tasks/tasks.search";

// Whole-account reads and writes for the legacy export/restore. Raw prepared statements: an
// account may hold 100,000 tasks, and the query builder's per-call cost would dominate. Rows are
// ordered by (created_at, rowid) (after position where there is one): a restore inserts in file
// order, so exporting again gives the same order even where timestamps tie.

export interface FolderOut {
  id: string;
  name: string;
  position: number;
  created_at: string;
  updated_at: string;
}
export interface ListOut {
  id: string;
  name: string;
  folder_id: string | null;
  is_inbox: number;
  color: string | null;
  position: number;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}
export interface TaskOut {
  id: string;
  list_id: string;
  parent_id: string | null;
  title: string;
  description: string;
  completed: number;
  completed_at: string | null;
  due_at: string | null;
  priority: number;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
  /** JSON array of tag names (sorted by their case-folded key). */
  tags: string;
}
export interface RecurrenceOut {
  id: string;
  task_id: string;
  kind: "rrule" | "after_completion";
  rrule: string | null;
  interval: number | null;
  unit: string | null;
  timezone: string;
  dtstart: string | null;
  created_at: string;
  updated_at: string;
}
export interface HabitOut {
  id: string;
  name: string;
  icon: string | null;
  color: string | null;
  frequency: string;
  goal: number;
  unit: string | null;
  start_date: string;
  position: number;
  archived_at: string | null;
  created_at: string;
  updated_at: string;
}
export interface CountdownOut {
  id: string;
  name: string;
  date: string;
  type: string;
  repeat: string;
  icon: string | null;
  calendar: string;
  lunar_month: number | null;
  lunar_day: number | null;
  lunar_leap: number | null;
  pinned: number;
  archived_at: string | null;
  created_at: string;
  updated_at: string;
}
export interface MemoOut {
  id: string;
  content: string;
  pinned: number;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

/** Live folders (a soft-deleted folder is not part of the export; its lists are at root). */
export function exportFolders(tx: Tx, userId: string): IterableIterator<FolderOut> {
  return sqliteOf(tx)
    .query<FolderOut, [string]>(
      "SELECT id, name, position, created_at, updated_at FROM folders WHERE user_id = ? AND deleted_at IS NULL ORDER BY position, created_at, rowid",
    )
    .iterate(userId);
}

export function exportLists(tx: Tx, userId: string): IterableIterator<ListOut> {
  return sqliteOf(tx)
    .query<ListOut, [string]>(
      `SELECT l.id, l.name,
              CASE WHEN EXISTS (SELECT 1 FROM folders f WHERE f.id = l.folder_id AND f.deleted_at IS NULL) THEN l.folder_id ELSE NULL END AS folder_id,
              l.is_inbox, l.color, l.position, l.created_at, l.updated_at, l.deleted_at
         FROM lists l WHERE l.user_id = ? ORDER BY l.is_inbox DESC, l.position, l.created_at, l.rowid`,
    )
    .iterate(userId);
}

export function exportTasks(tx: Tx, userId: string): IterableIterator<TaskOut> {
  return sqliteOf(tx)
    .query<TaskOut, [string]>(
      `SELECT t.id, t.list_id, t.parent_id, t.title, t.description, t.completed, t.completed_at, t.due_at, t.priority,
              t.created_at, t.updated_at, t.deleted_at,
              coalesce((SELECT json_group_array(name) FROM (SELECT g.name FROM task_tags x JOIN tags g ON g.id = x.tag_id
                                                              WHERE x.task_id = t.id ORDER BY g.name_key, g.id)), '[]') AS tags
         FROM tasks t WHERE t.user_id = ? ORDER BY t.created_at, t.rowid`,
    )
    .iterate(userId);
}

export function exportRecurrences(tx: Tx, userId: string): IterableIterator<RecurrenceOut> {
  return sqliteOf(tx)
    .query<RecurrenceOut, [string]>(
      "SELECT id, task_id, kind, rrule, interval, unit, timezone, dtstart, created_at, updated_at FROM recurrences WHERE user_id = ? ORDER BY created_at, rowid",
    )
    .iterate(userId);
}

export function exportHabits(tx: Tx, userId: string): IterableIterator<HabitOut> {
  return sqliteOf(tx)
    .query<HabitOut, [string]>(
      `SELECT id, name, icon, color, frequency, goal, unit, start_date, position, archived_at, created_at, updated_at
         FROM habits WHERE user_id = ? ORDER BY position, created_at, rowid`,
    )
    .iterate(userId);
}

export function exportCountdowns(tx: Tx, userId: string): IterableIterator<CountdownOut> {
  return sqliteOf(tx)
    .query<CountdownOut, [string]>(
      `SELECT id, name, date, type, repeat, icon, calendar, lunar_month, lunar_day, lunar_leap, pinned, archived_at, created_at, updated_at
         FROM countdowns WHERE user_id = ? ORDER BY created_at, rowid`,
    )
    .iterate(userId);
}

export function exportMemos(tx: Tx, userId: string): IterableIterator<MemoOut> {
  return sqliteOf(tx)
    .query<MemoOut, [string]>("SELECT id, content, pinned, created_at, updated_at, deleted_at FROM memos WHERE user_id = ? ORDER BY created_at, rowid")
    .iterate(userId);
}

// ---- restore --------------------------------------------------------------------------------

const TABLE = {
  folders: "folders",
  lists: "lists",
  tasks: "tasks",
  recurrences: "recurrences",
  habits: "habits",
  countdowns: "countdowns",
  memos: "memos",
} as const;
export type Table = keyof typeof TABLE;

/** Of `ids`, which exist in the table, and whose they are. */
export function owners(tx: Tx, table: Table, ids: string[]): Map<string, string> {
  const out = new Map<string, string>();
  if (ids.length === 0) return out;
  const stmt = sqliteOf(tx).query<{ id: string; user_id: string }, [string]>(
    `SELECT id, user_id FROM ${TABLE[table]} WHERE id IN (SELECT value FROM json_each(?))`,
  );
  // json_each over a huge array is fine, but keep each statement's argument moderate.
  for (let i = 0; i < ids.length; i += 10_000) {
    for (const r of stmt.all(JSON.stringify(ids.slice(i, i + 10_000)))) out.set(r.id, r.user_id);
    // The chunk's JSON and rows are garbage now (a minor collection, not forced).
    Bun.gc(false);
  }
  return out;
}

export interface ExistingTask {
  id: string;
  list_id: string;
  parent_id: string | null;
  due_at: string | null;
  has_recurrence: number;
}

/** The user's existing tasks among `ids` (merge: references to records the user already has). */
export function existingTasks(tx: Tx, userId: string, ids: string[]): Map<string, ExistingTask> {
  const out = new Map<string, ExistingTask>();
  if (ids.length === 0) return out;
  const stmt = sqliteOf(tx).query<ExistingTask, [string, string]>(
    `SELECT t.id, t.list_id, t.parent_id, t.due_at, EXISTS (SELECT 1 FROM recurrences r WHERE r.task_id = t.id) AS has_recurrence
       FROM tasks t WHERE t.user_id = ? AND t.id IN (SELECT value FROM json_each(?))`,
  );
  for (let i = 0; i < ids.length; i += 10_000) for (const r of stmt.all(userId, JSON.stringify(ids.slice(i, i + 10_000)))) out.set(r.id, r);
  return out;
}

export function inboxId(tx: Tx, userId: string): string {
  return sqliteOf(tx).query<{ id: string }, [string]>("SELECT id FROM lists WHERE user_id = ? AND is_inbox = 1").get(userId)!.id;
}

export function hasPinnedCountdown(tx: Tx, userId: string): boolean {
  return sqliteOf(tx).query<{ n: number }, [string]>("SELECT count(*) AS n FROM countdowns WHERE user_id = ? AND pinned = 1").get(userId)!.n > 0;
}

export function allTaskIds(tx: Tx, userId: string): string[] {
  return sqliteOf(tx)
    .query<{ id: string }, [string]>("SELECT id FROM tasks WHERE user_id = ?")
    .all(userId)
    .map((r) => r.id);
}

export function updateInbox(tx: Tx, id: string, color: string | null, position: number, updatedAt: string): void {
  sqliteOf(tx).query("UPDATE lists SET color = ?, position = ?, updated_at = ? WHERE id = ?").run(color, position, updatedAt, id);
}

/** The user's tags by case-folded name. */
export function tagsByKey(tx: Tx, userId: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const r of sqliteOf(tx).query<{ id: string; name_key: string }, [string]>("SELECT id, name_key FROM tags WHERE user_id = ?").all(userId)) {
    out.set(r.name_key, r.id);
  }
  return out;
}

/** Prepared inserts for one restore (each statement compiled once). */
export class LegacyInserts {
  private readonly db;
  constructor(tx: Tx) {
    this.db = sqliteOf(tx);
  }

  folder(id: string, userId: string, f: { name: string; position: number; created_at: string; updated_at: string }): void {
    this.db
      .query("INSERT INTO folders (id, user_id, name, position, created_at, updated_at, deleted_at) VALUES (?, ?, ?, ?, ?, ?, NULL)")
      .run(id, userId, f.name, f.position, f.created_at, f.updated_at);
  }

  list(
    id: string,
    userId: string,
    folderId: string | null,
    l: { name: string; color: string | null; position: number; created_at: string; updated_at: string; deleted_at: string | null },
  ): void {
    this.db
      .query(
        "INSERT INTO lists (id, user_id, name, folder_id, is_inbox, color, position, created_at, updated_at, deleted_at) VALUES (?, ?, ?, ?, 0, ?, ?, ?, ?, ?)",
      )
      .run(id, userId, l.name, folderId, l.color, l.position, l.created_at, l.updated_at, l.deleted_at);
  }

  task(
    id: string,
    userId: string,
    listId: string,
    parentId: string | null,
    t: {
      title: string;
      description: string;
      completed: boolean;
      completed_at: string | null;
      due_at: string | null;
      priority: number;
      created_at: string;
      updated_at: string;
      deleted_at: string | null;
    },
  ): void {
    this.db
      .query(
        `INSERT INTO tasks (id, user_id, list_id, parent_id, title, description, completed, completed_at, due_at, priority, version, position, created_at, updated_at, deleted_at, search_text)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, 0, ?, ?, ?, ?)`,
      )
      .run(
        id,
        userId,
        listId,
        parentId,
        t.title,
        t.description,
        t.completed ? 1 : 0,
        t.completed_at,
        t.due_at,
        t.priority,
        t.created_at,
        t.updated_at,
        t.deleted_at,
        taskSearchText(t.title, t.description),
      );
  }

  tag(id: string, userId: string, name: string, nameKey: string, color: string, now: string): void {
    this.db
      .query("INSERT INTO tags (id, user_id, name, name_key, color, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)")
      .run(id, userId, name, nameKey, color, now, now);
  }

  taskTag(taskId: string, tagId: string): void {
    this.db.query("INSERT OR IGNORE INTO task_tags (task_id, tag_id) VALUES (?, ?)").run(taskId, tagId);
  }

  recurrence(
    id: string,
    userId: string,
    taskId: string,
    r: { kind: string; rrule: string | null; interval: number | null; unit: string | null; timezone: string; dtstart: string | null; created_at: string; updated_at: string },
  ): void {
    this.db
      .query(
        "INSERT INTO recurrences (id, user_id, task_id, kind, rrule, interval, unit, timezone, dtstart, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      )
      .run(id, userId, taskId, r.kind, r.rrule, r.interval, r.unit, r.timezone, r.dtstart, r.created_at, r.updated_at);
  }

  habit(
    id: string,
    userId: string,
    h: { name: string; icon: string | null; color: string | null; frequency: string; goal: number; unit: string | null; start_date: string; position: number; archived_at: string | null; created_at: string; updated_at: string },
  ): void {
    this.db
      .query(
        "INSERT INTO habits (id, user_id, name, icon, color, frequency, goal, unit, start_date, position, archived_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      )
      .run(id, userId, h.name, h.icon, h.color, h.frequency, h.goal, h.unit, h.start_date, h.position, h.archived_at, h.created_at, h.updated_at);
  }

  countdown(
    id: string,
    userId: string,
    c: {
      name: string;
      date: string;
      type: string;
      repeat: string;
      icon: string | null;
      calendar: string;
      lunar_month: number | null;
      lunar_day: number | null;
      lunar_leap: boolean | null;
      pinned: boolean;
      archived_at: string | null;
      created_at: string;
      updated_at: string;
    },
  ): void {
    this.db
      .query(
        `INSERT INTO countdowns (id, user_id, name, date, type, repeat, icon, calendar, lunar_month, lunar_day, lunar_leap, pinned, archived_at, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        id,
        userId,
        c.name,
        c.date,
        c.type,
        c.repeat,
        c.icon,
        c.calendar,
        c.lunar_month,
        c.lunar_day,
        c.lunar_leap === null ? null : c.lunar_leap ? 1 : 0,
        c.pinned ? 1 : 0,
        c.archived_at,
        c.created_at,
        c.updated_at,
      );
  }

  memo(id: string, userId: string, m: { content: string; pinned: boolean; created_at: string; updated_at: string; deleted_at: string | null }): void {
    this.db
      .query("INSERT INTO memos (id, user_id, content, pinned, version, created_at, updated_at, deleted_at) VALUES (?, ?, ?, ?, 1, ?, ?, ?)")
      .run(id, userId, m.content, m.pinned ? 1 : 0, m.created_at, m.updated_at, m.deleted_at);
  }
}
