import type { Conn } from "../../core/db";
import { stateConflict } from "../../core/errors";
import { listHead } from "../lists/lists.repo";
import { requireEditor, roleOnList } from "../lists/lists.access";
import { findTagsOfTasks, findTasksWithList, ownedTagIds, replaceTags, updateRankOnly, updateTaskIfVersion, type TaskChanges } from "./tasks.repo";

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
    // Tags are personal: only the user's own links are part of their snapshot (other members' stay as they are).
    const links = findTagsOfTasks(c, ids);
    const own = ownedTagIds(c, userId, [...new Set(links.map((t) => t.id))]);
    for (const t of links) if (own.has(t.id)) tags.get(t.task_id)?.push(t.id);
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
 * All or nothing: a task changed since (its version moved on, or it went to the trash, or the user
 * no longer sees it), a list no longer active (or no longer visible) or a tag deleted since refuses
 * the whole undo with `state_conflict`. Tasks of shared lists follow lists.access: the user must
 * still be allowed to edit them (403 for a viewer); a task going back into another owner's list
 * becomes that owner's row again (`reassign` moves what hangs off it, e.g. its recurrence).
 */
export function restoreSnapshots(c: Conn, userId: string, snaps: TaskSnapshot[], now: string, reassign?: (ids: string[], ownerId: string) => void): void {
  const owners = new Map<string, string>();
  for (const id of new Set(snaps.map((s) => s[2]))) {
    const l = listHead(c, id);
    const role = l && roleOnList(c, userId, l);
    if (!l || !role || l.deletedAt !== null) throw stateConflict("a list these tasks were in is no longer active; nothing was undone");
    owners.set(id, l.ownerId);
  }
  const tagIds = [...new Set(snaps.flatMap((s) => s[7] ?? []))];
  if (tagIds.length && ownedTagIds(c, userId, tagIds).size !== tagIds.length) throw stateConflict("a tag these tasks had was deleted since; nothing was undone");
  const current = new Map(findTasksWithList(c, userId, snaps.map((s) => s[0])).map((t) => [t.id, t]));
  for (const [id, version, listId, dueAt, completed, completedAt, priority, tags, rank] of snaps) {
    const cur = current.get(id);
    if (!cur || cur.version !== version) throw stateConflict(`task ${id} was changed since; nothing was undone`);
    const fieldsChange =
      cur.list_id !== listId || cur.due_at !== dueAt || cur.completed !== completed || cur.completed_at !== completedAt || cur.priority !== priority || cur.rank !== rank;
    // Only the user's own tags coming back is a viewer's right too (as PATCH with only tag_ids).
    if (fieldsChange) {
      requireEditor(cur.role);
      const target = listHead(c, listId)!;
      requireEditor(roleOnList(c, userId, target)!);
    }
    const owner = owners.get(listId)!;
    const ch: TaskChanges = { listId, dueAt, completed: completed === 1, completedAt, priority };
    if (cur.completed !== completed) ch.completedBy = completed === 1 ? userId : null;
    if (owner !== cur.user_id) ch.ownerId = owner;
    if (!updateTaskIfVersion(c, cur.user_id, id, version, ch, now)) throw stateConflict(`task ${id} was changed since; nothing was undone`);
    if (ch.ownerId !== undefined) reassign?.([id], ch.ownerId);
    if (tags) replaceTags(c, [id], tags, userId);
    updateRankOnly(c, id, rank);
  }
}
