import { sqliteTable, text, integer, index } from "drizzle-orm/sqlite-core";
import { ownerColumn, users } from "./accounts";
import { tasks } from "./tasks";

// An attachment's bytes live in <data>/attachments/<id>: the server-chosen name is the row's id,
// so a user's filename never becomes a path. The row and the file are committed together (the
// file is renamed into place inside the inserting transaction; a start-up sweep removes files
// without rows and rows without files).
export const attachments = sqliteTable(
  "attachments",
  {
    id: text("id").primaryKey(),
    userId: ownerColumn(),
    // Purging a task removes its rows by cascade; the purge hook removes the files after commit.
    taskId: text("task_id")
      .notNull()
      .references(() => tasks.id, { onDelete: "cascade" }),
    filename: text("filename").notNull(),
    contentType: text("content_type").notNull(),
    size: integer("size").notNull(),
    sha256: text("sha256").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [index("attachments_task_idx").on(t.taskId, t.createdAt, t.id), index("attachments_user_idx").on(t.userId)],
);

// Per-user storage total for GET /me, kept by triggers on attachments (cascades fire them too),
// so the session lookup reads it with one primary-key probe instead of summing every row.
export const attachmentUsage = sqliteTable("attachment_usage", {
  userId: text("user_id")
    .primaryKey()
    .references(() => users.id, { onDelete: "cascade" }),
  bytes: integer("bytes").notNull().default(0),
});
