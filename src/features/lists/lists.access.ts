import type { Conn } from "../../core/db";
import { forbidden } from "../../core/errors";
import { hasMemberships, memberRole, sharedListsOf, type MemberRole } from "./lists.members.repo";

/**
 * THE access rule for lists and everything in them (docs/sharing-design.md), written once:
 * every read and write path of lists, tasks, subtasks, recurrences, exceptions, attachments,
 * trash, search and cursors asks here (tasks through tasks.repo findTaskWithList).
 *
 * - the list's owner (`lists.user_id`) is `owner`, whether the list is active or archived;
 * - a member (list_members) has their role while the list is active: archiving a shared list
 *   is the owner's act and removes it from the members' views;
 * - anyone else has no role: the list and everything in it answer 404, like a missing row.
 * A visible list whose role does not allow the act answers 403 forbidden (requireEditor /
 * requireOwner): the list is visible, so 404 would lie.
 */
export type ListRole = "owner" | MemberRole;

export function roleOnList(c: Conn, userId: string, list: { id: string; ownerId: string; deletedAt: string | null }): ListRole | null {
  if (list.ownerId === userId) return "owner";
  if (list.deletedAt !== null) return null;
  return memberRole(c, list.id, userId);
}

export const canEdit = (role: ListRole | null | undefined): boolean => role === "owner" || role === "editor";

export function requireEditor(role: ListRole): void {
  if (!canEdit(role)) throw forbidden("a viewer of a shared list cannot change it or its tasks");
}

export function requireOwner(role: ListRole): void {
  if (role !== "owner") throw forbidden("only the list's owner may do this");
}

/** A list scope a page walks: the user's own rows, or one shared list. */
export type TaskScope = { kind: "own"; userId: string } | { kind: "list"; listId: string; role: MemberRole };

/**
 * What the user can see beyond their own rows: the active lists shared with them. A user with no
 * membership costs one index probe, and their pages run exactly the single-owner statement.
 */
export function visibleScopes(c: Conn, userId: string): TaskScope[] {
  const own: TaskScope = { kind: "own", userId };
  if (!hasMemberships(c, userId)) return [own];
  return [own, ...sharedListsOf(c, userId).map((s): TaskScope => ({ kind: "list", listId: s.list_id, role: s.role }))];
}

