import type { TaskRow } from "../tasks/tasks.repo";
import type { Conn } from "../../core/db";

/**
 * The CalDAV feature's tables (src/core/schema/dav.ts): the sync log the migration's triggers
 * write, the per-list token floors, and what a client chose for a task (resource name, UID,
 * properties kept verbatim). Reads of tasks and lists here only join on ids and list membership.
 */

/** How long a tombstone (a task that left a collection) is kept: a client that syncs less often than this resyncs in full. */
export const DAV_TOMBSTONE_DAYS = 90;

export interface DavObject {
  task_id: string;
  name: string;
  uid: string;
  extra: string;
}

/** The current value of the global change counter. */
export function currentSeq(c: Conn): number {
  return c.sqlite.query<{ value: number }, []>("SELECT value FROM dav_seq WHERE id = 1").get()?.value ?? 0;
}

/** The collection's tag: the last change of any member or of the collection itself (never below its floor). */
export function collectionSeq(c: Conn, listId: string): number {
  const r = c.sqlite
    .query<{ s: number | null; f: number | null }, [string, string]>(
      "SELECT (SELECT MAX(seq) FROM dav_changes WHERE list_id = ?1) AS s, (SELECT seq FROM dav_floors WHERE list_id = ?2) AS f",
    )
    .get(listId, listId);
  return Math.max(r?.s ?? 0, r?.f ?? 0);
}

/** The lowest token seq still answerable for the list (older tokens lost tombstones). */
export function floorOf(c: Conn, listId: string): number {
  return c.sqlite.query<{ seq: number }, [string]>("SELECT seq FROM dav_floors WHERE list_id = ?").get(listId)?.seq ?? 0;
}

/** Tasks of the list's log changed after `seq` (members and tombstones alike), oldest first. */
export function changedSince(c: Conn, listId: string, seq: number): { task_id: string; seq: number }[] {
  return c.sqlite
    .query<{ task_id: string; seq: number }, [string, number]>("SELECT task_id, seq FROM dav_changes WHERE list_id = ? AND seq > ? AND task_id <> '' ORDER BY seq, task_id")
    .all(listId, seq);
}

/** The seq of each task's last change as the list shows it (the ETag's base); 0 for a task unchanged since the log began. */
export function memberSeqs(c: Conn, listId: string, taskIds: string[]): Map<string, number> {
  if (taskIds.length === 0) return new Map();
  const rows = c.sqlite
    .query<{ task_id: string; seq: number }, [string, string]>(
      // CROSS JOIN: ids first, one probe of the (list, task) index each (the planner walked the list instead: O(n²)).
      "SELECT d.task_id, d.seq FROM json_each(?) j CROSS JOIN dav_changes d ON d.list_id = ? AND d.task_id = j.value",
    )
    .all(JSON.stringify(taskIds), listId);
  return new Map(rows.map((r) => [r.task_id, r.seq]));
}

export function objectsOf(c: Conn, taskIds: string[]): Map<string, DavObject> {
  if (taskIds.length === 0) return new Map();
  const rows = c.sqlite
    .query<DavObject, [string]>("SELECT o.task_id, o.name, o.uid, o.extra FROM json_each(?) j CROSS JOIN dav_objects o ON o.task_id = j.value")
    .all(JSON.stringify(taskIds));
  return new Map(rows.map((r) => [r.task_id, r]));
}

/** The live task of the list a client named `name` (its own name, or the default `<id>.ics` of a task it never named). */
export function taskIdByName(c: Conn, listId: string, name: string): string | null {
  const own = c.sqlite
    .query<{ task_id: string }, [string, string]>(
      "SELECT o.task_id FROM dav_objects o CROSS JOIN tasks t ON t.id = o.task_id WHERE o.name = ? AND t.list_id = ? AND t.deleted_at IS NULL LIMIT 1",
    )
    .get(name, listId);
  if (own) return own.task_id;
  if (!name.endsWith(".ics")) return null;
  const row = c.sqlite
    .query<{ id: string }, [string, string]>(
      "SELECT t.id FROM tasks t LEFT JOIN dav_objects o ON o.task_id = t.id WHERE t.id = ? AND t.list_id = ? AND t.deleted_at IS NULL AND o.task_id IS NULL",
    )
    .get(name.slice(0, -4), listId);
  return row?.id ?? null;
}

export function upsertObject(c: Conn, userId: string, o: DavObject, now: string): void {
  c.sqlite
    .query(
      `INSERT INTO dav_objects(task_id, user_id, name, uid, extra, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)
       ON CONFLICT(task_id) DO UPDATE SET name = excluded.name, uid = excluded.uid, extra = excluded.extra, updated_at = excluded.updated_at
       WHERE dav_objects.name IS NOT excluded.name OR dav_objects.uid IS NOT excluded.uid OR dav_objects.extra IS NOT excluded.extra`,
    )
    .run(o.task_id, userId, o.name, o.uid, o.extra, now);
}

/**
 * A resource renamed (MOVE under another name, RFC 4918 §9.9): the task takes the new name, and the
 * old one stays answerable as a tombstone where clients knew it: in the lists the task left before
 * (their tombstones keep their seq and the name their clients last saw) and, when it was renamed
 * inside the list it is in (`renamedHere`), there too (a new log entry, so its clients learn that
 * the old href is gone). Such a tombstone is the log row of an alias id, never a task's, whose
 * dav_objects row holds the old name; it is pruned as any tombstone is (pruneTombstones: no live
 * task has the id). `o` is the task's object under its new name, `listId` the list it is in.
 */
export function renameObject(c: Conn, userId: string, listId: string, o: DavObject, oldName: string, renamedHere: boolean, now: string): void {
  const alias = `renamed~${crypto.randomUUID()}`;
  c.sqlite.query("UPDATE dav_changes SET task_id = ? WHERE task_id = ? AND list_id <> ?").run(alias, o.task_id, listId);
  c.sqlite.query("INSERT INTO dav_objects(task_id, user_id, name, uid, extra, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, '', ?5, ?5)").run(alias, userId, oldName, o.uid, now);
  if (renamedHere) {
    c.sqlite.query("UPDATE dav_seq SET value = value + 1 WHERE id = 1").run();
    c.sqlite
      .query("INSERT INTO dav_changes(list_id, task_id, seq, at) VALUES (?, ?, (SELECT value FROM dav_seq WHERE id = 1), CAST(strftime('%s','now') AS INTEGER))")
      .run(listId, alias);
  }
  upsertObject(c, userId, o, now);
}

/**
 * Drops tombstones older than the cutoff (Unix seconds) and raises each list's floor to the
 * newest one dropped, so a token from before it answers valid-sync-token; rows of lists that no
 * longer exist, and client state of tasks that are gone, go with them.
 */
export function pruneTombstones(c: Conn, cutoff: number): number {
  const dead = `FROM dav_changes d WHERE d.task_id <> '' AND d.at < ?1
    AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.id = d.task_id AND t.list_id = d.list_id AND t.deleted_at IS NULL)`;
  c.sqlite
    .query(
      `INSERT INTO dav_floors(list_id, seq) SELECT d.list_id, MAX(d.seq) ${dead} GROUP BY d.list_id
       ON CONFLICT(list_id) DO UPDATE SET seq = MAX(dav_floors.seq, excluded.seq)`,
    )
    .run(cutoff);
  const n = c.sqlite.query(`DELETE FROM dav_changes WHERE rowid IN (SELECT d.rowid ${dead})`).run(cutoff).changes;
  c.sqlite.query("DELETE FROM dav_changes WHERE list_id NOT IN (SELECT id FROM lists)").run();
  c.sqlite.query("DELETE FROM dav_floors WHERE list_id NOT IN (SELECT id FROM lists)").run();
  c.sqlite.query("DELETE FROM dav_objects WHERE task_id NOT IN (SELECT id FROM tasks) AND task_id NOT IN (SELECT task_id FROM dav_changes)").run();
  return n;
}

/** A member task as a VTODO is built from it (tasks' own columns). */
export type MemberTask = Pick<TaskRow, "id" | "parent_id" | "title" | "description" | "completed" | "completed_at" | "due_at" | "priority" | "created_at" | "updated_at" | "rank">;

const MEMBER_COLS = "t.id, t.parent_id, t.title, t.description, t.completed, t.completed_at, t.due_at, t.priority, t.created_at, t.updated_at, t.rank";

/** The collection's members: every live task of the list, completed ones and subtasks included (clients see deletions only by absence). */
export function liveTasksOfList(c: Conn, listId: string): MemberTask[] {
  return c.sqlite.query<MemberTask, [string]>(`SELECT ${MEMBER_COLS} FROM tasks t WHERE t.list_id = ? AND t.deleted_at IS NULL ORDER BY t.id`).all(listId);
}

/** These tasks, where they are live members of the list. */
export function liveTasksIn(c: Conn, listId: string, ids: string[]): MemberTask[] {
  if (ids.length === 0) return [];
  return c.sqlite
    .query<MemberTask, [string, string]>(`SELECT ${MEMBER_COLS} FROM json_each(?) j CROSS JOIN tasks t ON t.id = j.value WHERE t.list_id = ? AND t.deleted_at IS NULL`)
    .all(JSON.stringify(ids), listId);
}

/** Live tasks of the list with this UID (a client's own, or a server-made task's id). */
export function liveTaskIdsByUid(c: Conn, listId: string | null, uid: string): { id: string; list_id: string }[] {
  return c.sqlite
    .query<{ id: string; list_id: string }, [string, string]>(
      `SELECT t.id, t.list_id FROM dav_objects o CROSS JOIN tasks t ON t.id = o.task_id WHERE o.uid = ?1 AND t.deleted_at IS NULL
       UNION SELECT t.id, t.list_id FROM tasks t LEFT JOIN dav_objects o ON o.task_id = t.id WHERE t.id = ?2 AND o.task_id IS NULL AND t.deleted_at IS NULL`,
    )
    .all(uid, uid)
    .filter((r) => listId === null || r.list_id === listId);
}

/** The path segments clients chose for lists they created (dav_collections); other lists go by their id. */
export function collectionNames(c: Conn, listIds: string[]): Map<string, string> {
  if (listIds.length === 0) return new Map();
  const rows = c.sqlite
    .query<{ list_id: string; name: string }, [string]>("SELECT d.list_id, d.name FROM json_each(?) j CROSS JOIN dav_collections d ON d.list_id = j.value")
    .all(JSON.stringify(listIds));
  return new Map(rows.map((r) => [r.list_id, r.name]));
}

export function listIdByCollectionName(c: Conn, name: string): string | null {
  return c.sqlite.query<{ list_id: string }, [string]>("SELECT list_id FROM dav_collections WHERE name = ?").get(name)?.list_id ?? null;
}

export function insertCollectionName(c: Conn, listId: string, userId: string, name: string): void {
  c.sqlite.query("INSERT INTO dav_collections(list_id, user_id, name) VALUES (?, ?, ?)").run(listId, userId, name);
}

/** The task's due (VALARMs relative to it), live or not. */
export function dueOfTask(c: Conn, taskId: string): string | null {
  return c.sqlite.query<{ due_at: string | null }, [string]>("SELECT due_at FROM tasks WHERE id = ?").get(taskId)?.due_at ?? null;
}

/** Client state that may name `uid` (a child that arrived before its parent keeps RELATED-TO verbatim); the caller checks each. */
export function objectsMentioning(c: Conn, uid: string): DavObject[] {
  return c.sqlite
    .query<DavObject, [string]>("SELECT task_id, name, uid, extra FROM dav_objects WHERE instr(extra, 'RELATED-TO') > 0 AND instr(extra, ?) > 0 LIMIT 500")
    .all(uid);
}

/** The task's live siblings (same list and parent) in manual order, with their keys. */
export function siblingsInOrder(c: Conn, taskId: string): { id: string; rank: string }[] {
  return c.sqlite
    .query<{ id: string; rank: string }, [string]>(
      `SELECT s.id, s.rank FROM tasks t JOIN tasks s ON s.list_id = t.list_id AND s.parent_id IS t.parent_id AND s.deleted_at IS NULL AND s.id <> t.id
       WHERE t.id = ? ORDER BY s.rank, s.id`,
    )
    .all(taskId);
}

export function rankOf(c: Conn, taskId: string): string | null {
  return c.sqlite.query<{ rank: string }, [string]>("SELECT rank FROM tasks WHERE id = ?").get(taskId)?.rank ?? null;
}
