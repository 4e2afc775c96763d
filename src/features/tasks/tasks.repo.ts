import type { Conn } from "../../core/db";
import { newId } from "../../core/ids";
import { taskSearchText } from "./tasks.search";
import type { SqlRow } from "../../core/db";
import { deleteInBatches } from "../../core/db";
import { tasks } from "../../core/schema";
import { isOwnRow, iterateRows, ownerOfRow, ownersOfRows } from "../../core/table-rows";
import { rankAfter, ranksAfter, type Ranked } from "./tasks.rank";
import { roleOnList, type ListRole, type TaskScope } from "../lists/lists.access";

// Raw prepared statements on the bun:sqlite handle: task pages are the hot path, and
// `c.sqlite.query()` compiles each distinct SQL string once and caches it. Called inside a
// writeTx/readTx callback they run in that transaction (same connection).
//
// Statements naming tasks (or tags) by id write the ownership check as `+user_id = ?`: the unary
// plus keeps SQLite from answering `id IN (...) AND user_id = ?` by walking every row of the user
// through an index starting with user_id (as it did while tasks_user_list_idx existed,
// migrations 0002-0007) instead of looking each id up by primary key. test/tasks-plans.test.ts
// holds these plans, with such an index present.

/** A task row as pages and the presenter read it (snake_case, straight from SQLite). */
export interface TaskRow {
  id: string;
  list_id: string;
  parent_id: string | null;
  title: string;
  description: string;
  completed: number;
  completed_at: string | null;
  due_at: string | null;
  priority: number;
  version: number;
  rank: string;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
  created_by: string | null;
  completed_by: string | null;
}

/** A task row with its owner. */
export interface TaskRecord extends TaskRow {
  user_id: string;
}

/** A task with the state of its list and the asking user's role on it, for the visibility rules. */
export interface TaskWithList extends TaskRecord {
  list_deleted_at: string | null;
  role: ListRole;
}

export interface TagRecord {
  task_id: string;
  id: string;
  name: string;
  color: string;
}

const COLS =
  "t.id, t.user_id, t.list_id, t.parent_id, t.title, t.description, t.completed, t.completed_at, t.due_at, t.priority, t.version, t.rank, t.created_at, t.updated_at, t.deleted_at, t.created_by, t.completed_by";
/** What a page and the presenter read (no user_id: the page's scope says whose rows they are). */
export const ROW_COLS =
  "t.id, t.list_id, t.parent_id, t.title, t.description, t.completed, t.completed_at, t.due_at, t.priority, t.version, t.rank, t.created_at, t.updated_at, t.deleted_at, t.created_by, t.completed_by";

type TaskWithListRow = Omit<TaskWithList, "role">;

/** Adds the user's role (lists.access, the one rule) to each row; rows the user may not see are dropped. */
function withRole(c: Conn, userId: string, rows: TaskWithListRow[]): TaskWithList[] {
  const roles = new Map<string, ListRole | null>();
  const out: TaskWithList[] = [];
  for (const r of rows) {
    let role = roles.get(r.list_id);
    if (role === undefined) {
      role = roleOnList(c, userId, { id: r.list_id, ownerId: r.user_id, deletedAt: r.list_deleted_at });
      roles.set(r.list_id, role);
    }
    if (role) out.push({ ...r, role });
  }
  return out;
}

/**
 * The task if the user may see its list (lists.access: its owner, or a member of the active
 * shared list), with their role; another user's task answers null like a missing one. The task's
 * `user_id` is its list's owner: writes key by it once this check has passed.
 */
export function findTaskWithList(c: Conn, userId: string, id: string): TaskWithList | null {
  const row = c.sqlite
    .query<TaskWithListRow, [string]>(`SELECT ${COLS}, l.deleted_at AS list_deleted_at FROM tasks t JOIN lists l ON l.id = t.list_id WHERE t.id = ?`)
    .get(id);
  return row ? (withRole(c, userId, [row])[0] ?? null) : null;
}

/** The tasks among `ids` the user may see (findTaskWithList), with their lists' state (others are simply absent). */
export function findTasksWithList(c: Conn, userId: string, ids: string[]): TaskWithList[] {
  const rows = c.sqlite
    .query<TaskWithListRow, [string]>(
      `SELECT ${COLS}, l.deleted_at AS list_deleted_at FROM tasks t JOIN lists l ON l.id = t.list_id
       WHERE t.id IN (SELECT value FROM json_each(?))`,
    )
    .all(JSON.stringify(ids));
  return withRole(c, userId, rows);
}

/**
 * The task-visibility rule, written once: a task is visible to a user when it exists, its list is
 * theirs or shared with them (findTaskWithList), it is not in the trash and its list is not
 * archived. Everything else answers like a missing task.
 */
export function isVisibleTask(t: TaskWithList | null | undefined): t is TaskWithList {
  return !!t && t.deleted_at === null && t.list_deleted_at === null;
}

/** The user's task if it is visible (isVisibleTask), else null: every feature asking about a task asks this. */
export function findVisibleTask(c: Conn, userId: string, id: string): TaskWithList | null {
  const t = findTaskWithList(c, userId, id);
  return isVisibleTask(t) ? t : null;
}

/** Direct subtasks of the given parents, in manual order; `withDeleted` includes soft-deleted ones. */
export function findSubtasks(c: Conn, parentIds: string[], withDeleted: boolean): TaskRecord[] {
  if (parentIds.length === 0) return [];
  const sql = `SELECT ${COLS} FROM tasks t WHERE t.parent_id IN (SELECT value FROM json_each(?))${
    withDeleted ? "" : " AND t.deleted_at IS NULL"
  } ORDER BY t.rank, t.id`;
  return c.sqlite.query<TaskRecord, [string]>(sql).all(JSON.stringify(parentIds));
}

/**
 * The presenter's subtask read: direct subtasks of distinct parents, in manual order. Each parent is
 * looked up in tasks_parent_idx in the order given (CROSS JOIN), without first building an
 * ephemeral index of the list as `parent_id IN (SELECT value FROM json_each(?))` does (4 µs
 * instead of 10 µs for 50 parents without subtasks). `parentIds` must be distinct.
 */
export function subtasksOfParents(c: Conn, parentIds: string[], withDeleted: boolean): TaskRow[] {
  if (parentIds.length === 0) return [];
  const sql = `SELECT ${ROW_COLS} FROM json_each(?) j CROSS JOIN tasks t ON t.parent_id = j.value${
    withDeleted ? "" : " WHERE t.deleted_at IS NULL"
  } ORDER BY t.rank, t.id`;
  return c.sqlite.query<TaskRow, [string]>(sql).all(JSON.stringify(parentIds));
}

/** Ids of every subtask (deleted or not) of the given parents. */
export function subtaskIds(c: Conn, parentIds: string[]): string[] {
  if (parentIds.length === 0) return [];
  return c.sqlite
    .query<{ id: string }, [string]>("SELECT id FROM tasks WHERE parent_id IN (SELECT value FROM json_each(?))")
    .all(JSON.stringify(parentIds))
    .map((r) => r.id);
}

export function countSubtasks(c: Conn, parentId: string): number {
  return c.sqlite.query<{ n: number }, [string]>("SELECT count(*) AS n FROM tasks WHERE parent_id = ?").get(parentId)!.n;
}

/** Tags of the given tasks, by name. */
export function findTagsOfTasks(c: Conn, taskIds: string[]): TagRecord[] {
  if (taskIds.length === 0) return [];
  return c.sqlite
    .query<TagRecord, [string]>(
      // CROSS JOIN keeps the links outside: with a small tags table SQLite would scan every tag.
      `SELECT x.task_id, g.id, g.name, g.color FROM task_tags x CROSS JOIN tags g ON g.id = x.tag_id
       WHERE x.task_id IN (SELECT value FROM json_each(?)) ORDER BY g.name_key, g.id`,
    )
    .all(JSON.stringify(taskIds));
}

/** A tag as the presenter reads it, with the position of its task in the list asked for. */
export interface TagAt {
  at: number;
  id: string;
  name: string;
  color: string;
}

/**
 * Tags of the given tasks by name, each row naming its task by position in `taskIds` (an integer
 * from json_each, not the 36-character id again): one statement for a whole page. Each task's
 * links are read in the task_tags primary key, each tag by its key.
 */
export function tagsAt(c: Conn, taskIds: string[], viewerId: string): TagAt[] {
  if (taskIds.length === 0) return [];
  return c.sqlite
    .query<TagAt, [string, string]>(
      // Tags are personal: on a shared task each user sees only their own (+g.user_id: tested on the row read by key).
      `SELECT j.key AS at, g.id, g.name, g.color FROM json_each(?) j CROSS JOIN task_tags x ON x.task_id = j.value CROSS JOIN tags g ON g.id = x.tag_id
       WHERE +g.user_id = ? ORDER BY g.name_key, g.id`,
    )
    .all(JSON.stringify(taskIds), viewerId);
}

/** Who created / completed tasks: id → username (one statement for a page). */
export function usernamesOf(c: Conn, ids: string[]): Map<string, string> {
  if (ids.length === 0) return new Map();
  const rows = c.sqlite
    .query<{ id: string; username: string }, [string]>("SELECT u.id, u.username FROM json_each(?) j CROSS JOIN users u ON u.id = j.value")
    .all(JSON.stringify(ids));
  return new Map(rows.map((r) => [r.id, r.username]));
}

export interface NewTask {
  userId: string;
  listId: string;
  parentId: string | null;
  title: string;
  description: string;
  completed: boolean;
  completedAt: string | null;
  dueAt: string | null;
  priority: number;
  now: string;
  /** The acting user (null for restored rows). */
  createdBy?: string | null;
  /** Defaults to a new UUIDv7. */
  id?: string;
  version?: number;
  /** Defaults to the end of its siblings (rankAtEnd). */
  rank?: string;
}

/** Inserts one task (search text included); returns its id. Every task insert goes through here. */
export function insertTask(c: Conn, t: NewTask): string {
  const id = t.id ?? newId();
  const rank = t.rank ?? rankAfter(lastRank(c, t.listId, t.parentId));
  c.sqlite
    .query(
      `INSERT INTO tasks (id, user_id, list_id, parent_id, title, description, completed, completed_at, due_at, priority, version, position, rank, created_at, updated_at, deleted_at, search_text, created_by, completed_by)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, NULL, ?, ?, ?)`,
    )
    .run(
      id,
      t.userId,
      t.listId,
      t.parentId,
      t.title,
      t.description,
      t.completed ? 1 : 0,
      t.completedAt,
      t.dueAt,
      t.priority,
      t.version ?? 1,
      rank,
      t.now,
      t.now,
      taskSearchText(t.title, t.description),
      t.createdBy ?? null,
      t.completed ? (t.createdBy ?? null) : null,
    );
  return id;
}

/** Replaces the actor's tags on the given tasks (tags are personal: other members' links stay). */
export function replaceTags(c: Conn, taskIds: string[], tagIds: string[], actorId: string): void {
  const ids = JSON.stringify(taskIds);
  c.sqlite
    // Each link's tag read by key (+user_id: never a walk of the actor's tags).
    .query("DELETE FROM task_tags WHERE task_id IN (SELECT value FROM json_each(?)) AND EXISTS (SELECT 1 FROM tags g WHERE g.id = task_tags.tag_id AND +g.user_id = ?)")
    .run(ids, actorId);
  if (tagIds.length === 0) return;
  c.sqlite
    .query("INSERT OR IGNORE INTO task_tags (task_id, tag_id) SELECT a.value, b.value FROM json_each(?) a, json_each(?) b")
    .run(ids, JSON.stringify(tagIds));
}

/** Links every task to every tag (the links a task already has stay). */
export function addTags(c: Conn, taskIds: string[], tagIds: string[]): void {
  if (taskIds.length === 0 || tagIds.length === 0) return;
  c.sqlite
    .query("INSERT OR IGNORE INTO task_tags (task_id, tag_id) SELECT a.value, b.value FROM json_each(?) a, json_each(?) b")
    .run(JSON.stringify(taskIds), JSON.stringify(tagIds));
}

/** Unlinks these tags from these tasks (other links stay). */
export function removeTags(c: Conn, taskIds: string[], tagIds: string[]): void {
  if (taskIds.length === 0 || tagIds.length === 0) return;
  c.sqlite
    .query("DELETE FROM task_tags WHERE task_id IN (SELECT value FROM json_each(?)) AND tag_id IN (SELECT value FROM json_each(?))")
    .run(JSON.stringify(taskIds), JSON.stringify(tagIds));
}

/**
 * The tasks that would carry more than `max` of the user's own tags once `add` is linked and
 * `remove` unlinked (add and remove disjoint), with that count; in the order of `taskIds`.
 */
export function tasksOverOwnTagLimit(c: Conn, userId: string, taskIds: string[], add: string[], remove: string[], max: number): { id: string; n: number }[] {
  if (taskIds.length === 0 || add.length === 0) return [];
  const changed = JSON.stringify([...add, ...remove]);
  return c.sqlite
    .query<{ id: string; n: number }, [number, string, string, string, number]>(
      // Per task: its own tags other than those named, by the task_tags key (+user_id: the tag read by key).
      `SELECT j.value AS id, ? + (SELECT count(*) FROM task_tags x CROSS JOIN tags g ON g.id = x.tag_id
         WHERE x.task_id = j.value AND +g.user_id = ? AND x.tag_id NOT IN (SELECT value FROM json_each(?))) AS n
       FROM json_each(?) j WHERE n > ? ORDER BY j.key`,
    )
    .all(add.length, userId, changed, JSON.stringify(taskIds), max);
}

export interface TaskChanges {
  rank?: string;
  title?: string;
  description?: string;
  listId?: string;
  parentId?: string | null;
  completed?: boolean;
  completedAt?: string | null;
  dueAt?: string | null;
  priority?: number;
  /** Recomputed by the caller when title or description change. */
  searchText?: string;
  /** Who completed it (set with `completed`). */
  completedBy?: string | null;
  /** The owner of the list the task moves into (a move into another owner's list). */
  ownerId?: string;
}

const COLUMN: Record<keyof TaskChanges, string> = {
  rank: "rank",
  title: "title",
  description: "description",
  listId: "list_id",
  parentId: "parent_id",
  completed: "completed",
  completedAt: "completed_at",
  dueAt: "due_at",
  priority: "priority",
  searchText: "search_text",
  completedBy: "completed_by",
  ownerId: "user_id",
};

function setClause(c: TaskChanges): { sql: string; values: (string | number | null)[] } {
  const parts: string[] = [];
  const values: (string | number | null)[] = [];
  for (const [k, v] of Object.entries(c) as [keyof TaskChanges, TaskChanges[keyof TaskChanges]][]) {
    if (v === undefined) continue;
    parts.push(`${COLUMN[k]} = ?`);
    values.push(typeof v === "boolean" ? (v ? 1 : 0) : v);
  }
  return { sql: parts.map((p) => `${p}, `).join(""), values };
}

/**
 * The compare-and-set of PATCH: one UPDATE that applies only while the stored version is the
 * expected one. Returns false when nothing matched (stale version, or the task went away).
 */
export function updateTaskIfVersion(c: Conn, userId: string, id: string, expectedVersion: number, ch: TaskChanges, now: string): boolean {
  const { sql, values } = setClause(ch);
  const res = c.sqlite
    .query(`UPDATE tasks SET ${sql}version = version + 1, updated_at = ? WHERE id = ? AND +user_id = ? AND version = ? AND deleted_at IS NULL`)
    .run(...values, now, id, userId, expectedVersion);
  return res.changes === 1;
}

/** The same change on many tasks of one user; each version grows by one. Returns rows changed. */
export function updateTasks(c: Conn, userId: string, ids: string[], ch: TaskChanges, now: string): number {
  if (ids.length === 0) return 0;
  const { sql, values } = setClause(ch);
  return c.sqlite
    .query(`UPDATE tasks SET ${sql}version = version + 1, updated_at = ? WHERE id IN (SELECT value FROM json_each(?)) AND +user_id = ?`)
    .run(...values, now, JSON.stringify(ids), userId).changes;
}

/** Soft-deletes (deletedAt set) or restores (null) the given tasks; versions grow by one. */
export function setDeleted(c: Conn, userId: string, ids: string[], deletedAt: string | null, now: string): number {
  if (ids.length === 0) return 0;
  return c.sqlite
    .query(
      "UPDATE tasks SET deleted_at = ?, version = version + 1, updated_at = ? WHERE id IN (SELECT value FROM json_each(?)) AND +user_id = ?",
    )
    .run(deletedAt, now, JSON.stringify(ids), userId).changes;
}

/** Removes tasks for good; subtasks, tag links and recurrences go by FK cascade, the index by trigger. */
export function deleteTasks(c: Conn, userId: string, ids: string[]): number {
  if (ids.length === 0) return 0;
  return c.sqlite.query("DELETE FROM tasks WHERE id IN (SELECT value FROM json_each(?)) AND +user_id = ?").run(JSON.stringify(ids), userId)
    .changes;
}

/** Ids of every task of a list (for purge hooks). */
export function taskIdsOfList(c: Conn, listId: string): string[] {
  return c.sqlite
    .query<{ id: string }, [string]>("SELECT id FROM tasks WHERE list_id = ?")
    .all(listId)
    .map((r) => r.id);
}

/** Tag ids of the user among `ids`. */
export function ownedTagIds(c: Conn, userId: string, ids: string[]): Set<string> {
  if (ids.length === 0) return new Set();
  return new Set(
    c.sqlite
      // Each named id looked up by key (CROSS JOIN fixes the order), never a scan of the tags.
      .query<{ id: string }, [string, string]>("SELECT g.id FROM json_each(?) j CROSS JOIN tags g ON g.id = j.value WHERE +g.user_id = ?")
      .all(JSON.stringify(ids), userId)
      .map((r) => r.id),
  );
}

// ---- pages -------------------------------------------------------------------------------

export interface TaskFilter {
  listId?: string;
  tagId?: string;
  completed?: boolean;
  /** Inclusive bounds, already turned into [date-only bound, instant bound] pairs. */
  dueBefore?: { date: string; instantBefore: string };
  dueAfter?: { date: string; instantFrom: string };
  /** Per term: the FTS phrase (or the raw term for a short one), and the ids of lists/tags whose name contains it. */
  terms?: { term: string; fts: string | null; listIds: string[]; tagIds: string[] }[];
  /**
   * The trigram index holds only this user's tasks (isSoleUser): terms may be looked up in it.
   * Otherwise every term is a substring test on the rows walked, and driveBy must not be set.
   */
  ownIndex?: boolean;
  /**
   * An FTS phrase with few matches (see countFtsMatches; only with ownIndex): the query starts
   * from its matches and sorts them, instead of walking every task of the user newest first and
   * testing each.
   */
  driveBy?: string;
  /** The tag filter names a tag on few tasks: start from its links (see countTagLinks). */
  driveByTag?: boolean;
}

/**
 * "The task's list is active", tested on each row a page walk reaches. Not `JOIN lists l ... AND
 * l.deleted_at IS NULL`: once `PRAGMA optimize` has gathered statistics, SQLite answers that join
 * with a Bloom filter built by reading every active list of every user before the walk starts
 * (2.3 ms per page with 50,000 lists on the server, whatever the page). The LIMIT keeps the
 * subquery from being turned back into that join; EXISTS keeps the join's meaning.
 */
const ACTIVE_LIST = "EXISTS (SELECT 1 FROM lists l WHERE l.id = t.list_id AND l.deleted_at IS NULL LIMIT 1)";

/** Tasks carrying a tag, counted up to `cap`. */
export function countTagLinks(c: Conn, tagId: string, cap: number): number {
  return c.sqlite
    .query<{ n: number }, [string, number]>("SELECT count(*) AS n FROM (SELECT 1 FROM task_tags WHERE tag_id = ? LIMIT ?)")
    .get(tagId, cap)!.n;
}

/**
 * Whether every task on the server is this user's: no other account exists (tasks.user_id
 * references users). Only then may a search read the trigram index, which holds every user's
 * tasks: what reading it costs grows with every match in it, so on a shared server it would tell
 * a user how often other users wrote a word (issue 11).
 */
export function isSoleUser(c: Conn, userId: string): boolean {
  return c.sqlite.query<{ x: number }, [string]>("SELECT 1 AS x FROM users WHERE id <> ? LIMIT 1").get(userId) === null;
}

/** Rows of the trigram index matching a phrase, counted up to `cap` (all users': see isSoleUser). */
export function countFtsMatches(c: Conn, phrase: string, cap: number): number {
  return c.sqlite
    .query<{ n: number }, [string, number]>("SELECT count(*) AS n FROM (SELECT rowid FROM tasks_fts WHERE tasks_fts MATCH ? LIMIT ?)")
    .get(phrase, cap)!.n;
}

/** Whether the list is the user's (a filter naming another user's list matches nothing). */
export function ownsList(c: Conn, userId: string, listId: string): boolean {
  return c.sqlite.query<{ x: number }, [string, string]>("SELECT 1 AS x FROM lists WHERE id = ? AND user_id = ?").get(listId, userId) !== null;
}

/**
 * One page of live top-level tasks in active lists, newest first (keyset on created_at, id).
 * Walks tasks_live_top_idx backwards; every filter is a check on the row being walked, so the
 * walk stops after `limit` matches.
 */
export function pageLiveTasks(c: Conn, scope: string | TaskScope, f: TaskFilter, after: [string, string] | null, limit: number): TaskRow[] {
  const sc: TaskScope = typeof scope === "string" ? { kind: "own", userId: scope } : scope;
  // A shared list's scope is that list (its rows carry its owner's user_id); the own scope is the user's rows.
  const where: string[] = [sc.kind === "own" ? "t.user_id = ?" : "t.list_id = ?", "t.parent_id IS NULL", "t.deleted_at IS NULL"];
  const args: (string | number)[] = [sc.kind === "own" ? sc.userId : sc.listId];
  if (f.listId !== undefined && sc.kind === "own") {
    where.push("t.list_id = ?");
    args.push(f.listId);
  }
  filterConditions(f, where, args);
  const driveByTag = !f.driveBy && f.driveByTag === true && f.tagId !== undefined;
  const walkList = !f.driveBy && !driveByTag && (f.listId !== undefined || sc.kind === "list");
  // The list must be active. Walking one list's index, that list is read once, ahead of the walk;
  // otherwise each row's list is looked up by key as the walk reaches it (see ACTIVE_LIST).
  where.push(walkList ? "l.deleted_at IS NULL" : ACTIVE_LIST);
  if (after) {
    where.push("(t.created_at, t.id) < (?, ?)");
    args.push(after[0], after[1]);
  }
  args.push(limit + 1);
  // Where the walk starts. CROSS JOIN fixes the join order in SQLite: a small set of candidates
  // first (the matches of a rare term, the links of a rare tag), then each task by key, then a
  // sort of at most that many rows. Otherwise an index is walked newest first: the list's own
  // when filtering by list, else all the user's live top-level tasks.
  let from: string;
  if (f.driveBy) {
    from = "(SELECT rowid AS rid FROM tasks_fts WHERE tasks_fts MATCH ?) m CROSS JOIN tasks t ON t.rowid = m.rid";
    args.unshift(f.driveBy);
  } else if (driveByTag) {
    from = "task_tags d CROSS JOIN tasks t ON t.id = d.task_id";
    where.push("d.tag_id = ?");
    args.splice(args.length - 1, 0, f.tagId!);
  } else if (walkList) {
    from = "tasks t INDEXED BY tasks_live_list_idx JOIN lists l ON l.id = t.list_id";
  } else {
    from = "tasks t INDEXED BY tasks_live_top_idx";
  }
  const sql = `SELECT ${ROW_COLS} FROM ${from}
    WHERE ${where.join(" AND ")} ORDER BY t.created_at DESC, t.id DESC LIMIT ?`;
  return c.sqlite.query<TaskRow, (string | number)[]>(sql).all(...args);
}

/** The page filter's checks on the row being walked (every plan, every scope, applies the same ones). */
function filterConditions(f: TaskFilter, where: string[], args: (string | number)[]): void {
  if (f.completed !== undefined) {
    where.push("t.completed = ?");
    args.push(f.completed ? 1 : 0);
  }
  if (f.tagId !== undefined) {
    where.push("EXISTS (SELECT 1 FROM task_tags x WHERE x.task_id = t.id AND x.tag_id = ?)");
    args.push(f.tagId);
  }
  if (f.dueBefore) {
    where.push("t.due_at IS NOT NULL AND (CASE WHEN length(t.due_at) = 10 THEN t.due_at <= ? ELSE t.due_at < ? END)");
    args.push(f.dueBefore.date, f.dueBefore.instantBefore);
  }
  if (f.dueAfter) {
    where.push("t.due_at IS NOT NULL AND (CASE WHEN length(t.due_at) = 10 THEN t.due_at >= ? ELSE t.due_at >= ? END)");
    args.push(f.dueAfter.date, f.dueAfter.instantFrom);
  }
  for (const term of f.terms ?? []) {
    const alts: string[] = [];
    if (term.fts !== null && f.ownIndex) {
      alts.push("t.rowid IN (SELECT rowid FROM tasks_fts WHERE tasks_fts MATCH ?)");
      args.push(term.fts);
    } else {
      // A substring test on the row being walked: for a term under three characters (the trigram
      // index cannot help), and whenever the index also holds other users' tasks (see isSoleUser).
      alts.push("instr(t.search_text, ?) > 0");
      args.push(term.term);
    }
    if (term.listIds.length) {
      alts.push("t.list_id IN (SELECT value FROM json_each(?))");
      args.push(JSON.stringify(term.listIds));
    }
    if (term.tagIds.length) {
      alts.push("EXISTS (SELECT 1 FROM task_tags y WHERE y.task_id = t.id AND y.tag_id IN (SELECT value FROM json_each(?)))");
      args.push(JSON.stringify(term.tagIds));
    }
    where.push(`(${alts.join(" OR ")})`);
  }
}

/**
 * At most this many scopes in one compound statement (SQLite allows 500 terms in a compound
 * SELECT; each arm is one more co-routine): a user with more shared lists gets one statement per
 * group of scopes, their pages merged.
 */
export const SCOPES_PER_STATEMENT = 32;

/** One scope's walk newest first, as an arm of a compound SELECT: the scope's index, its key bound first. */
function scopeArm(sc: TaskScope, args: (string | number)[]): { from: string; where: string[] } {
  if (sc.kind === "own") {
    args.push(sc.userId);
    return { from: "tasks t INDEXED BY tasks_live_top_idx", where: ["t.user_id = ?", "t.parent_id IS NULL", "t.deleted_at IS NULL"] };
  }
  // A shared list's scope: lists.access.visibleScopes gave only active lists, read in this same
  // snapshot, so no per-row check that the list is active.
  args.push(sc.listId);
  return { from: "tasks t INDEXED BY tasks_live_list_idx", where: ["t.list_id = ?", "t.parent_id IS NULL", "t.deleted_at IS NULL"] };
}

/**
 * One page of the live top-level tasks of several scopes (the user's own rows and the lists shared
 * with them), newest first, in ONE statement: a compound SELECT whose arms each walk one scope's
 * index newest first, which SQLite merges lazily (EXPLAIN QUERY PLAN: MERGE (UNION ALL), no temp
 * B-tree), so the statement reads about `limit + 1` rows plus one per scope, whatever the scopes'
 * sizes. `lower` (inclusive) bounds every arm: an arm whose next match lies far below the page
 * (a rare term in one list) stops there instead of walking its whole scope (see
 * TasksService.pageVisible). Not for f.listId, f.driveBy or f.driveByTag (one-scope plans).
 */
export function pageLiveScopes(
  c: Conn,
  scopes: TaskScope[],
  f: TaskFilter,
  after: [string, string] | null,
  lower: [string, string] | null,
  limit: number,
): TaskRow[] {
  const args: (string | number)[] = [];
  const arms = scopes.map((sc) => {
    const arm = scopeArm(sc, args);
    filterConditions(f, arm.where, args);
    if (sc.kind === "own") arm.where.push(ACTIVE_LIST);
    keyBounds(arm.where, args, after, lower);
    return `SELECT ${ROW_COLS} FROM ${arm.from} WHERE ${arm.where.join(" AND ")}`;
  });
  args.push(limit + 1);
  const sql = `${arms.join(" UNION ALL ")} ORDER BY created_at DESC, id DESC LIMIT ?`;
  return c.sqlite.query<TaskRow, (string | number)[]>(sql).all(...args);
}

function keyBounds(where: string[], args: (string | number)[], after: [string, string] | null, lower: [string, string] | null): void {
  if (after) {
    where.push("(t.created_at, t.id) < (?, ?)");
    args.push(after[0], after[1]);
  }
  if (lower) {
    where.push("(t.created_at, t.id) >= (?, ?)");
    args.push(lower[0], lower[1]);
  }
}

/**
 * A window's lower bound for pageLiveScopes: of each scope's `n`-th (1-based) live top-level row
 * below `after`, the newest key; null when every scope has fewer rows left. So every scope has at
 * most `n` rows in [bound, after), and one has exactly `n`. One statement, an arm per scope, each
 * walking its own index `n` rows with OFFSET (about 4 VM steps a row: SQLite still reads each
 * row's parent_id and deleted_at, not counting a partial index's own condition as covered), no
 * merge and no filter.
 */
export function scopesWindowBound(c: Conn, scopes: TaskScope[], after: [string, string] | null, n: number): [string, string] | null {
  const args: (string | number)[] = [];
  const arms = scopes.map((sc) => {
    const arm = scopeArm(sc, args);
    keyBounds(arm.where, args, after, null);
    args.push(n - 1);
    return `SELECT * FROM (SELECT t.created_at, t.id FROM ${arm.from} WHERE ${arm.where.join(" AND ")} ORDER BY t.created_at DESC, t.id DESC LIMIT 1 OFFSET ?)`;
  });
  let best: [string, string] | null = null;
  for (const r of c.sqlite.query<{ created_at: string; id: string }, (string | number)[]>(arms.join(" UNION ALL ")).all(...args)) {
    if (!best || r.created_at > best[0] || (r.created_at === best[0] && r.id > best[1])) best = [r.created_at, r.id];
  }
  return best;
}

/** A list's order other than newest first (GET /tasks?list_id=…&sort=…): its key columns, in order. */
const SORT_KEYS = {
  manual: ["t.rank", "t.id"],
  // Undated last; a date sorts before the instants of that day (UTC text order).
  due_date: ["(t.due_at IS NULL)", "coalesce(t.due_at, '')", "t.rank", "t.id"],
  priority: ["(3 - t.priority)", "t.rank", "t.id"],
  title: ["t.title COLLATE NOCASE", "t.id"],
} as const;
export type ListOrder = keyof typeof SORT_KEYS;
export const SORT_KEY_LENGTH: Record<ListOrder, number> = { manual: 2, due_date: 4, priority: 3, title: 2 };

/**
 * One page of a list's live top-level tasks in another order than newest first: walks the list's
 * manual-order index (manual) or sorts the list's live tasks (the others; a list's size, not the
 * user's). `after` is the last row's key (sortKeyOf).
 */
export function pageListSorted(
  c: Conn,
  listId: string,
  sort: ListOrder,
  completed: boolean | undefined,
  after: (string | number)[] | null,
  limit: number,
): (TaskRow & { k: string })[] {
  const cols = SORT_KEYS[sort];
  const where = ["t.list_id = ?", "t.parent_id IS NULL", "t.deleted_at IS NULL"];
  const args: (string | number)[] = [listId];
  if (completed !== undefined) {
    where.push("t.completed = ?");
    args.push(completed ? 1 : 0);
  }
  if (after) {
    where.push(`(${cols.join(", ")}) > (${cols.map(() => "?").join(", ")})`);
    args.push(...after);
  }
  args.push(limit + 1);
  const sql = `SELECT ${ROW_COLS}, json_array(${cols.map((k) => k.replace(" COLLATE NOCASE", "")).join(", ")}) AS k FROM tasks t INDEXED BY tasks_top_rank_idx
    WHERE ${where.join(" AND ")} ORDER BY ${cols.join(", ")} LIMIT ?`;
  return c.sqlite.query<TaskRow & { k: string }, (string | number)[]>(sql).all(...args);
}

/**
 * One page of the trash: deleted top-level tasks of active lists, most recently deleted first.
 * A shared list's scope reads that list's tasks (tasks_list_idx) and sorts its deleted ones.
 */
export function pageTrash(c: Conn, scope: string | TaskScope, after: [string, string] | null, limit: number): TaskRow[] {
  const sc: TaskScope = typeof scope === "string" ? { kind: "own", userId: scope } : scope;
  const from = sc.kind === "own" ? "tasks t INDEXED BY tasks_trash_idx WHERE t.user_id = ?" : "tasks t INDEXED BY tasks_list_idx WHERE t.list_id = ?";
  const sql = `SELECT ${ROW_COLS} FROM ${from} AND t.parent_id IS NULL AND t.deleted_at IS NOT NULL AND ${ACTIVE_LIST}${
      after ? " AND (t.deleted_at, t.id) < (?, ?)" : ""
    } ORDER BY t.deleted_at DESC, t.id DESC LIMIT ?`;
  const key = sc.kind === "own" ? sc.userId : sc.listId;
  const args: (string | number)[] = after ? [key, after[0], after[1], limit + 1] : [key, limit + 1];
  return c.sqlite.query<TaskRow, (string | number)[]>(sql).all(...args);
}

/** Ids of the user's lists / tags whose normalised name contains a term (small per-user sets). */
export function listNames(c: Conn, userId: string): { id: string; name: string }[] {
  return c.sqlite.query<{ id: string; name: string }, [string]>("SELECT id, name FROM lists WHERE user_id = ? AND deleted_at IS NULL").all(userId);
}
export function tagNames(c: Conn, userId: string): { id: string; name: string }[] {
  return c.sqlite.query<{ id: string; name: string }, [string]>("SELECT id, name FROM tags WHERE user_id = ?").all(userId);
}

/**
 * The batch's change on every named task in one UPDATE, so each version grows by exactly one
 * (tags, replaced separately, count as part of it). completed_at is kept on tasks already completed.
 */
export function batchUpdate(
  c: Conn,
  userId: string,
  ids: string[],
  ch: { listId?: string; ownerId?: string; dueAt?: string | null; completed?: boolean; completedBy?: string; priority?: number },
  now: string,
): number {
  const sets: string[] = [];
  const values: (string | number | null)[] = [];
  if (ch.priority !== undefined) {
    sets.push("priority = ?");
    values.push(ch.priority);
  }
  if (ch.listId !== undefined) {
    sets.push("list_id = ?");
    values.push(ch.listId);
  }
  if (ch.ownerId !== undefined) {
    sets.push("user_id = ?");
    values.push(ch.ownerId);
  }
  if (ch.completed !== undefined && ch.completedBy !== undefined) {
    // As completed_at: kept on tasks already completed, the actor on the others, cleared when uncompleting.
    sets.push("completed_by = CASE WHEN ? = 0 THEN NULL WHEN completed = 1 THEN completed_by ELSE ? END");
    values.push(ch.completed ? 1 : 0, ch.completedBy);
  }
  if (ch.dueAt !== undefined) {
    sets.push("due_at = ?");
    values.push(ch.dueAt);
  }
  if (ch.completed !== undefined) {
    sets.push("completed_at = CASE WHEN ? = 0 THEN NULL WHEN completed = 1 THEN completed_at ELSE ? END", "completed = ?");
    values.push(ch.completed ? 1 : 0, now, ch.completed ? 1 : 0);
  }
  sets.push("version = version + 1", "updated_at = ?");
  values.push(now);
  return c.sqlite
    .query(`UPDATE tasks SET ${sets.join(", ")} WHERE id IN (SELECT value FROM json_each(?)) AND +user_id = ?`)
    .run(...values, JSON.stringify(ids), userId).changes;
}

// ---- A repeating task's moves (the recurrence feature asks; only this file writes tasks) ----

/** Moves the recurring task to its next occurrence, not completed. */
export function moveTaskToOccurrence(c: Conn, taskId: string, dueAt: string, now: string, grow: 0 | 1 = 1): void {
  c.sqlite
    .query("UPDATE tasks SET due_at = ?, completed = 0, completed_at = NULL, version = version + ?, updated_at = ? WHERE id = ?")
    .run(dueAt, grow, now, taskId);
}

/** Changes only the due_at (a skip, or undoing one). */
export function setTaskDueAt(c: Conn, taskId: string, dueAt: string, now: string): void {
  c.sqlite.query("UPDATE tasks SET due_at = ?, version = version + 1, updated_at = ? WHERE id = ?").run(dueAt, now, taskId);
}

/** Completes the task itself (the series has ended); an earlier completed_at is kept. */
export function completeTaskItself(c: Conn, taskId: string, now: string, grow: 0 | 1 = 1): void {
  c.sqlite
    .query(
      "UPDATE tasks SET completed = 1, completed_at = CASE WHEN completed = 1 AND completed_at IS NOT NULL THEN completed_at ELSE ? END, version = version + ?, updated_at = ? WHERE id = ?",
    )
    .run(now, grow, now, taskId);
}

/** The live completed subtasks of a task back to not completed (only those change version). */
export function resetCompletedSubtasks(c: Conn, parentId: string, now: string): void {
  c.sqlite
    .query(
      "UPDATE tasks SET completed = 0, completed_at = NULL, version = version + 1, updated_at = ? WHERE parent_id = ? AND completed = 1 AND deleted_at IS NULL",
    )
    .run(now, parentId);
}

/** The tasks carrying a tag change when it goes or is renamed: their versions grow by one. */
export function bumpTasksTagged(c: Conn, tagId: string, now: string): void {
  c.sqlite
    .query("UPDATE tasks SET version = version + 1, updated_at = ? WHERE id IN (SELECT task_id FROM task_tags WHERE tag_id = ?)")
    .run(now, tagId);
}

// ---- Sharing (the sharing feature asks; only this file writes tasks and task_tags) ----

/** An ownership transfer: every task of the list (subtasks, trash) now belongs to the new owner. Returns their ids. */
export function setOwnerOfListTasks(c: Conn, listId: string, ownerId: string, now: string): string[] {
  const ids = taskIdsOfList(c, listId);
  c.sqlite.query("UPDATE tasks SET user_id = ?, version = version + 1, updated_at = ? WHERE list_id = ?").run(ownerId, now, listId);
  return ids;
}

/** A member leaves or is removed: their own tags on the list's tasks go (tags are personal). */
export function unlinkUserTagsOnList(c: Conn, userId: string, listId: string): void {
  c.sqlite
    .query("DELETE FROM task_tags WHERE task_id IN (SELECT id FROM tasks WHERE list_id = ?) AND tag_id IN (SELECT id FROM tags WHERE user_id = ?)")
    .run(listId, userId);
}

// ---- Export and restore (used by src/transfer/) ----


/** A task as backup reads and writes it: every stored column but the owner and the search text, and its tags' ids. */
export type TaskExportRow = Omit<SqlRow<typeof tasks>, "user_id" | "search_text" | "created_by" | "completed_by" | "createdBy" | "completedBy"> & {
  /** Comma-separated tag ids (null: none), in no particular order. */
  tag_ids: string | null;
};
const TASK_EXPORT_SELECT = `SELECT t.id, t.list_id, t.parent_id, t.title, t.description, t.completed, t.completed_at, t.due_at, t.priority, t.version, t.position, t.rank,
            (SELECT group_concat(x.tag_id, ',') FROM task_tags x JOIN tags g ON g.id = x.tag_id WHERE x.task_id = t.id AND g.user_id = t.user_id) AS tag_ids, t.created_at, t.updated_at, t.deleted_at
          FROM tasks t`;

/** The user's tasks in id order (the trash too). */
export function exportTaskRows(c: Conn, userId: string): Generator<TaskExportRow> {
  return iterateRows(c, `${TASK_EXPORT_SELECT} WHERE t.user_id = ? ORDER BY t.id`, userId);
}

export function exportTaskRow(c: Conn, id: string): TaskExportRow | null {
  return c.sqlite.query<TaskExportRow, [string]>(`${TASK_EXPORT_SELECT} WHERE t.id = ?`).get(id);
}

/** A task with its tags' names (a JSON array, sorted by their case-folded key): the legacy file names tags. */
export type TaskWithTagNamesRow = Omit<TaskExportRow, "tag_ids" | "version" | "position"> & { tags: string };

/** The user's tasks in creation order (then insertion: a restore keeps the file's order where times tie). */
export function taskRowsWithTagNames(c: Conn, userId: string): Generator<TaskWithTagNamesRow> {
  return iterateRows(
    c,
    `SELECT t.id, t.list_id, t.parent_id, t.title, t.description, t.completed, t.completed_at, t.due_at, t.priority, t.rank,
            t.created_at, t.updated_at, t.deleted_at,
            coalesce((SELECT json_group_array(name) FROM (SELECT g.name FROM task_tags x JOIN tags g ON g.id = x.tag_id
                                                            WHERE x.task_id = t.id AND g.user_id = t.user_id ORDER BY g.name_key, g.id)), '[]') AS tags
       FROM tasks t WHERE t.user_id = ? ORDER BY t.created_at, t.rowid`,
    userId,
  );
}

/**
 * Inserts a restored task (its tags separately: linkRestoredTags). A file without ranks (written
 * before manual order existed) places each task at the end of its siblings, in the file's order.
 * Backups carry no user ids: the restoring user is recorded as who created (and, if completed,
 * completed) it.
 */
export function insertRestoredTask(c: Conn, userId: string, r: Omit<TaskExportRow, "tag_ids" | "rank"> & { rank?: string | null }): void {
  c.sqlite
    .query(
      `INSERT INTO tasks (id, user_id, list_id, parent_id, title, description, completed, completed_at, due_at, priority, version, position, rank, created_at, updated_at, deleted_at, search_text, created_by, completed_by)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .run(
      r.id,
      userId,
      r.list_id,
      r.parent_id,
      r.title,
      r.description,
      r.completed,
      r.completed_at,
      r.due_at,
      r.priority,
      r.version,
      r.position,
      r.rank ?? rankAfter(lastRank(c, r.list_id, r.parent_id)),
      r.created_at,
      r.updated_at,
      r.deleted_at,
      taskSearchText(r.title, r.description),
      userId,
      r.completed ? userId : null,
    );
}

/** Links a restored task to tags (a link it has already is kept). */
export function linkRestoredTags(c: Conn, taskId: string, tagIds: Iterable<string>): void {
  const stmt = c.sqlite.query("INSERT OR IGNORE INTO task_tags (task_id, tag_id) VALUES (?, ?)");
  for (const tagId of tagIds) stmt.run(taskId, tagId);
}

/** The parent of a task (null: top-level), or undefined when there is no such task. */
export function parentOfTask(c: Conn, taskId: string): string | null | undefined {
  return c.sqlite.query<{ parent_id: string | null }, [string]>("SELECT parent_id FROM tasks WHERE id = ?").get(taskId)?.parent_id;
}

/** The user's task with this id: its list and parent, or null. */
export function ownTaskPlace(c: Conn, id: string, userId: string): { listId: string; parentId: string | null } | null {
  const r = c.sqlite.query<{ list_id: string; parent_id: string | null }, [string, string]>("SELECT list_id, parent_id FROM tasks WHERE id = ? AND user_id = ?").get(id, userId);
  return r ? { listId: r.list_id, parentId: r.parent_id } : null;
}

export interface ExistingTask {
  id: string;
  list_id: string;
  parent_id: string | null;
  due_at: string | null;
}

/** The user's tasks among `ids` (a merge: references to tasks the user already has). */
export function existingTasksOf(c: Conn, userId: string, ids: string[]): Map<string, ExistingTask> {
  const out = new Map<string, ExistingTask>();
  if (ids.length === 0) return out;
  const stmt = c.sqlite.query<ExistingTask, [string, string]>(
    "SELECT id, list_id, parent_id, due_at FROM tasks WHERE user_id = ? AND id IN (SELECT value FROM json_each(?))",
  );
  for (let i = 0; i < ids.length; i += 10_000) for (const r of stmt.all(userId, JSON.stringify(ids.slice(i, i + 10_000)))) out.set(r.id, r);
  return out;
}

/** Every task id of the user (the trash too). */
export function taskIdsOfUser(c: Conn, userId: string): string[] {
  return c.sqlite
    .query<{ id: string }, [string]>("SELECT id FROM tasks WHERE user_id = ?")
    .all(userId)
    .map((r) => r.id);
}

export const taskOwner = (c: Conn, id: string) => ownerOfRow(c, tasks, id);
export const taskOwners = (c: Conn, ids: string[]) => ownersOfRows(c, tasks, ids);
export const isOwnTask = (c: Conn, id: string, userId: string) => isOwnRow(c, tasks, id, userId);

/**
 * Removes every task of the user (their tag links, recurrences and attachment rows go by cascade;
 * the files are the caller's, after the commit). Subtasks first, so the parent cascade does not
 * walk row by row.
 */
export function deleteTasksOfUser(c: Conn, userId: string): void {
  deleteInBatches(c, "tasks", "user_id = ? AND parent_id IS NOT NULL", userId);
  deleteInBatches(c, "tasks", "user_id = ?", userId);
}

// ---- Manual order (tasks.rank.ts) ----

/** Where a task's siblings are: a list's top-level tasks, or a parent's subtasks. */
export type RankScope = { listId: string; parentId: string | null };

const SCOPE = (s: RankScope) =>
  s.parentId === null ? { sql: "t.list_id = ? AND t.parent_id IS NULL", arg: s.listId } : { sql: "t.parent_id = ?", arg: s.parentId };

/**
 * The largest rank among a scope's tasks, the trash included (null: none). The column's default ''
 * (a row written by raw SQL, as the benchmark seeds do) is not a key and is passed over.
 */
export function lastRank(c: Conn, listId: string, parentId: string | null): string | null {
  const s = SCOPE({ listId, parentId });
  // The index walked backwards one step (ORDER BY … DESC LIMIT 1), whatever the range test does to max().
  return c.sqlite.query<{ r: string }, [string]>(`SELECT t.rank AS r FROM tasks t WHERE ${s.sql} AND t.rank > '' ORDER BY t.rank DESC LIMIT 1`).get(s.arg)?.r ?? null;
}

/**
 * Live siblings of a scope next to a key, `n` of them at most, nearest first: below (rank, id)
 * descending, or from it upwards (the key's own task included when `inclusive`). `except` (the
 * task being moved) is left out.
 */
export function siblingsNear(
  c: Conn,
  scope: RankScope,
  key: [string, string] | null,
  dir: "below" | "above",
  inclusive: boolean,
  except: string,
  n: number,
): Ranked[] {
  const s = SCOPE(scope);
  const cmp = key === null ? "" : dir === "below" ? " AND (t.rank, t.id) < (?, ?)" : ` AND (t.rank, t.id) ${inclusive ? ">=" : ">"} (?, ?)`;
  const order = dir === "below" ? "t.rank DESC, t.id DESC" : "t.rank, t.id";
  const args: (string | number)[] = [s.arg, except, ...(key ?? []), n];
  return c.sqlite
    .query<Ranked, (string | number)[]>(`SELECT t.id, t.rank FROM tasks t WHERE ${s.sql} AND t.deleted_at IS NULL AND t.id <> ?${cmp} ORDER BY ${order} LIMIT ?`)
    .all(...args);
}

/** New ranks (a move, or neighbours re-spread); each task's version grows by one. */
export function setRanks(c: Conn, userId: string, ranks: Ranked[], now: string): void {
  const stmt = c.sqlite.query("UPDATE tasks SET rank = ?, version = version + 1, updated_at = ? WHERE id = ? AND +user_id = ?");
  for (const r of ranks) stmt.run(r.rank, now, r.id, userId);
}

/** Ranks at the end of a scope for tasks joining it, in the order given (a move to another list or parent). */
export function ranksAtEnd(c: Conn, scope: RankScope, ids: string[]): Ranked[] {
  if (ids.length === 0) return [];
  const keys = ranksAfter(lastRank(c, scope.listId, scope.parentId), ids.length);
  return ids.map((id, i) => ({ id, rank: keys[i]! }));
}

/** Only the rank (the version already grew in the same use case). */
export function updateRankOnly(c: Conn, id: string, rank: string): void {
  c.sqlite.query("UPDATE tasks SET rank = ? WHERE id = ?").run(rank, id);
}
