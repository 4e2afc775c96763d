import type { Conn } from "../../core/db";

/**
 * Deletes one table's rows of a user in batches of 2,000: one DELETE of 100,000 tasks keeps a
 * statement journal of every page it touches, in memory (temp_store = MEMORY), ~30 MiB.
 */
export function deleteUserRowsInBatches(c: Conn, table: string, userId: string, extraCondition = ""): void {
  const stmt = c.sqlite.query(
    `DELETE FROM ${table} WHERE rowid IN (SELECT rowid FROM ${table} WHERE user_id = ?${extraCondition} LIMIT 2000)`,
  );
  while (stmt.run(userId).changes > 0) {
    /* next batch */
  }
}

/**
 * Removes a user's business content before a replace restore (backup and legacy alike): folders,
 * lists except the inbox (the inbox row stays; its tasks go), tasks (with their tags, recurrences
 * and attachment rows by cascade), tags, habits with their logs (pauses by cascade), countdowns and
 * memos. Attachment files are the caller's to remove after the commit.
 */
export function deleteAccountContent(c: Conn, userId: string): void {
  // Subtasks first, so the parent cascade does not walk row by row.
  deleteUserRowsInBatches(c, "tasks", userId, " AND parent_id IS NOT NULL");
  deleteUserRowsInBatches(c, "tasks", userId);
  deleteUserRowsInBatches(c, "lists", userId, " AND is_inbox = 0");
  deleteUserRowsInBatches(c, "folders", userId);
  deleteUserRowsInBatches(c, "tags", userId);
  deleteUserRowsInBatches(c, "habit_logs", userId);
  deleteUserRowsInBatches(c, "habits", userId);
  deleteUserRowsInBatches(c, "countdowns", userId);
  deleteUserRowsInBatches(c, "memos", userId);
}
