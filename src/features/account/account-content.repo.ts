import type { Conn } from "../../core/db";
import { deleteCountdownsOfUser } from "../countdowns/countdowns.repo";
import { deleteFoldersOfUser } from "../folders/folders.repo";
import { deleteHabitsOfUser } from "../habits/habits.repo";
import { deleteListsOfUser } from "../lists/lists.repo";
import { deleteMemosOfUser } from "../memos/memos.repo";
import { deleteTagsOfUser } from "../tags/tags.repo";
import { deleteTasksOfUser } from "../tasks/tasks.repo";

/**
 * Removes a user's business content before a replace restore (backup and legacy alike): folders,
 * lists except the inbox (the inbox row stays; its tasks go), tasks (with their tags, recurrences
 * and attachment rows by cascade), tags, habits with their logs (pauses by cascade), countdowns and
 * memos. Each owning repo removes its own rows; attachment files are the caller's to remove after
 * the commit.
 */
export function deleteAccountContent(c: Conn, userId: string): void {
  deleteTasksOfUser(c, userId);
  deleteListsOfUser(c, userId);
  deleteFoldersOfUser(c, userId);
  deleteTagsOfUser(c, userId);
  deleteHabitsOfUser(c, userId);
  deleteCountdownsOfUser(c, userId);
  deleteMemosOfUser(c, userId);
}
