// What the user may do with a list (sharing.md roles), as the web app decides which controls to show.
// The server enforces the same (403 forbidden); the UI only keeps the user from reaching it.
import type { List } from "../api/types";

/** Owner or editor: tasks can be added, changed, completed, moved, deleted. Unknown lists: the user's own. */
export const canEditList = (l: List | undefined): boolean => !l || l.role !== "viewer";

/** Shared with someone: the user is a member, or the owner with members. */
export const isShared = (l: List): boolean => l.role !== "owner" || l.member_count > 1;

/** The lists a task may be added to or moved into (a viewer's shared lists are not). */
export const editableLists = (lists: List[]): List[] => lists.filter((l) => l.role !== "viewer");
