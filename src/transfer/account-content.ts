import type { Conn } from "../core/db";
import { deleteCountdownsOfUser } from "../features/countdowns/countdowns.repo";
import { deleteFoldersOfUser } from "../features/folders/folders.repo";
import { deleteHabitsOfUser } from "../features/habits/habits.repo";
import { deleteListsOfUser } from "../features/lists/lists.repo";
import { deleteMemosOfUser } from "../features/memos/memos.repo";
import { deleteTagsOfUser } from "../features/tags/tags.repo";
import { deleteTasksOfUser } from "../features/tasks/tasks.repo";
import { deleteImportLedgerOf } from "./import/import.repo";
import { deleteRemindersOfUser } from "../features/reminders/reminders.repo";

/**
 * Removes a user's business content before a replace restore (backup and legacy alike): folders,
 * lists except the inbox (the inbox row stays; its tasks go), tasks (with their tags, recurrences
 * and attachment rows by cascade), tags, habits with their logs (pauses by cascade), countdowns,
 * memos and reminders. Each owning repo removes its own rows; attachment files are the caller's to
 * remove after the commit. The import ledger goes too: a file imported before the replace may be
 * imported again.
 */
export function deleteAccountContent(c: Conn, userId: string): void {
  deleteTasksOfUser(c, userId);
  deleteListsOfUser(c, userId);
  deleteFoldersOfUser(c, userId);
  deleteTagsOfUser(c, userId);
  deleteHabitsOfUser(c, userId);
  deleteCountdownsOfUser(c, userId);
  deleteMemosOfUser(c, userId);
  deleteImportLedgerOf(c, userId);
  // Their targets are gone: so are the reminders.
  deleteRemindersOfUser(c, userId);
}
