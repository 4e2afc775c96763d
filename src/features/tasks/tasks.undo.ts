import type { Conn } from "../../core/db";
import { stateConflict } from "../../core/errors";
import { findList } from "../lists/lists.repo";
import { findTagsOfTasks, findTasksWithList, ownedTagIds, replaceTags, updateRankOnly, updateTaskIfVersion } from "./tasks.repo";

/**
 * A task's fields as they were before a change, and the version the change left it at:
 * [id, versionAfter, list_id, due_at, completed (0/1), completed_at, priority, tag_ids or null (untouched), rank].
 * The rank comes back too: undoing a move to another list puts the task back at its place in the old one.
 * What an undo token of a batch (POST /tasks/batch/undo) or a recurring completion carries.
 */
export type TaskSnapshot = [string, number, string, string | null, 0 | 1, string | null, number, string[] | null, string];

/** The rows `ids` as they are now, each to be restored at version + `grow` (what the change will add). */
export function snapshotTasks(c: Conn, userId: string, ids: string[], withTags: boolean, grow = 1): TaskSnapshot[] {
  if (ids.length === 0) return [];
  const tags = new Map<string, string[]>();
  if (withTags) {
    for (const id of ids) tags.set(id, []);
    for (const t of findTagsOfTasks(c, ids)) tags.get(t.task_id)?.push(t.id);
  }
  return findTasksWithList(c, userId, ids).map((r) => [
    r.id,
    r.version + grow,
    r.list_id,
    r.due_at,
    r.completed === 1 ? 1 : 0,
    r.completed_at,
    r.priority,
    withTags ? (tags.get(r.id) ?? []) : null,
    r.rank,
  ]);
}

/** Whether a decoded payload is a list of snapshots (a token is signed, so this guards against our own format changes). */
export function isSnapshots(v: unknown): v is TaskSnapshot[] {
  return (
    Array.isArray(v) &&
    v.every(
      (s) =>
        Array.isArray(s) &&
        s.length === 9 &&
        typeof s[0] === "string" &&
        typeof s[1] === "number" &&
        typeof s[2] === "string" &&
        (s[3] === null || typeof s[3] === "string") &&
        (s[4] === 0 || s[4] === 1) &&
        (s[5] === null || typeof s[5] === "string") &&
        typeof s[6] === "number" &&
        (s[7] === null || (Array.isArray(s[7]) && s[7].every((x: unknown) => typeof x === "string"))) &&
        typeof s[8] === "string",
    )
  );
}

/**
 * Puts every task back as its snapshot says, in the caller's transaction; each version grows by one.
 * All or nothing: a task changed since (its version moved on, or it went to the trash), a list no
 * longer active or a tag deleted since refuses the whole undo with `state_conflict`.
 */
export function restoreSnapshots(c: Conn, userId: string, snaps: TaskSnapshot[], now: string): void {
  const lists = new Set(snaps.map((s) => s[2]));
  for (const id of lists) {
    const l = findList(c, userId, id);
    if (!l || l.deletedAt !== null) throw stateConflict("a list these tasks were in is no longer active; nothing was undone");
  }
  const tagIds = [...new Set(snaps.flatMap((s) => s[7] ?? []))];
  if (tagIds.length && ownedTagIds(c, userId, tagIds).size !== tagIds.length) throw stateConflict("a tag these tasks had was deleted since; nothing was undone");
  for (const [id, version, listId, dueAt, completed, completedAt, priority, tags, rank] of snaps) {
    const ok = updateTaskIfVersion(c, userId, id, version, { listId, dueAt, completed: completed === 1, completedAt, priority }, now);
    if (!ok) throw stateConflict(`task ${id} was changed since; nothing was undone`);
    if (tags) replaceTags(c, [id], tags);
    updateRankOnly(c, id, rank);
  }
}
