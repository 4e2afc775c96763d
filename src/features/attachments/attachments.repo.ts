import type { Conn } from "../../core/db";
import type { SqlRow } from "../../core/db";
import { attachments } from "../../core/schema";
import { isOwnRow, iterateRows, ownerOfRow, rowById } from "../../core/table-rows";

// Prepared statements on `c.sqlite` (cached by bun:sqlite per SQL string); inside a transaction
// they see its writes.

/** An attachment row as the presenter reads it (snake_case, straight from SQLite). */
export interface AttachmentRecord {
  id: string;
  user_id: string;
  task_id: string;
  filename: string;
  content_type: string;
  size: number;
  sha256: string;
  created_at: string;
}

const COLS = "a.id, a.user_id, a.task_id, a.filename, a.content_type, a.size, a.sha256, a.created_at";

/**
 * The user's attachment, whatever the state of its task: the service asks the tasks feature
 * whether that task is visible (findVisibleTask), and answers an invisible one like a missing one.
 */
export function findUserAttachment(c: Conn, userId: string, id: string): AttachmentRecord | null {
  return c.sqlite.query<AttachmentRecord, [string, string]>(`SELECT ${COLS} FROM attachments a WHERE a.id = ? AND a.user_id = ?`).get(id, userId);
}

/** A task's attachments, oldest first. */
export function listOfTask(c: Conn, taskId: string): AttachmentRecord[] {
  return c.sqlite
    .query<AttachmentRecord, [string]>(`SELECT ${COLS} FROM attachments a WHERE a.task_id = ? ORDER BY a.created_at, a.id`)
    .all(taskId);
}

export function insertAttachment(c: Conn, r: AttachmentRecord): void {
  c.sqlite
    .query(
      `INSERT INTO attachments (id, user_id, task_id, filename, content_type, size, sha256, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .run(r.id, r.user_id, r.task_id, r.filename, r.content_type, r.size, r.sha256, r.created_at);
}

/**
 * An attachment by id, whoever uploaded it (`user_id` is the uploader, whose storage it counts
 * to): on a shared list members upload to each other's tasks, so access goes through the task
 * (the service asks findVisibleTask), never through user_id.
 */
export function findAttachmentById(c: Conn, id: string): AttachmentRecord | null {
  return c.sqlite.query<AttachmentRecord, [string]>(`SELECT ${COLS} FROM attachments a WHERE a.id = ?`).get(id);
}

/** Deletes an attachment the caller has checked (through its task). */
export function deleteAttachment(c: Conn, id: string): boolean {
  return c.sqlite.query("DELETE FROM attachments WHERE id = ?").run(id).changes > 0;
}

/** Ids of the attachments of the given tasks (checked by the caller), whoever uploaded them. */
export function idsOfTasks(c: Conn, taskIds: string[]): string[] {
  return c.sqlite
    .query<{ id: string }, [string]>("SELECT id FROM attachments WHERE task_id IN (SELECT value FROM json_each(?))")
    .all(JSON.stringify(taskIds))
    .map((r) => r.id);
}

/** Every attachment id (start-up sweep). */
export function allIds(c: Conn): string[] {
  return c.sqlite
    .query<{ id: string }, []>("SELECT id FROM attachments")
    .all()
    .map((r) => r.id);
}

export function deleteByIds(c: Conn, ids: string[]): number {
  if (ids.length === 0) return 0;
  return c.sqlite.query("DELETE FROM attachments WHERE id IN (SELECT value FROM json_each(?))").run(JSON.stringify(ids)).changes;
}

/** Bytes the user's attachments take (attachment_usage, kept by triggers on attachments). */
export function usedBytes(c: Conn, userId: string): number {
  return c.sqlite.query<{ bytes: number }, [string]>("SELECT bytes FROM attachment_usage WHERE user_id = ?").get(userId)?.bytes ?? 0;
}

/** Bytes all users' attachments take (a few rows: one per user with attachments). */
export function totalUsedBytes(c: Conn): number {
  return c.sqlite.query<{ n: number }, []>("SELECT coalesce(sum(bytes), 0) AS n FROM attachment_usage").get()!.n;
}

// ---- Export and restore (used by src/transfer/) ----


/** An attachment row as backup reads and writes it: every stored column but the owner. */
export type AttachmentExportRow = Omit<SqlRow<typeof attachments>, "user_id">;
const ATTACHMENT_COLUMNS = "id, task_id, filename, content_type, size, sha256, created_at";

/**
 * The attachments of the user's tasks (their lists' tasks, whoever uploaded them: a shared
 * list's owner's backup holds the list whole; a member's holds none of another owner's list).
 * Reached through the user's lists (lists_user_idx, then tasks_list_idx): tasks have no plain
 * user_id index.
 */
const OF_USERS_TASKS = "a.task_id IN (SELECT t.id FROM lists l JOIN tasks t ON t.list_id = l.id WHERE l.user_id = ?)";

/** The attachment rows of the user's tasks in id order. */
export function exportAttachmentRows(c: Conn, userId: string): Generator<AttachmentExportRow> {
  return iterateRows(c, `SELECT ${ATTACHMENT_COLUMNS.split(", ").map((x) => `a.${x}`).join(", ")} FROM attachments a WHERE ${OF_USERS_TASKS} ORDER BY a.id`, userId);
}

export function exportAttachmentRow(c: Conn, id: string): AttachmentExportRow | null {
  return rowById<AttachmentExportRow>(c, attachments, ATTACHMENT_COLUMNS, id);
}

export function insertRestoredAttachment(c: Conn, userId: string, r: AttachmentExportRow): void {
  insertAttachment(c, { ...r, user_id: userId });
}

/** The bytes the attachments of the user's tasks take (what their backup holds), summed in the caller's snapshot. */
export function attachmentBytesOfUser(c: Conn, userId: string): number {
  return c.sqlite.query<{ n: number }, [string]>(`SELECT coalesce(sum(a.size), 0) AS n FROM attachments a WHERE ${OF_USERS_TASKS}`).get(userId)!.n;
}

/** Ids of the attachments of the user's tasks (a replace restore removes those with the tasks). */
export function attachmentIdsOfUser(c: Conn, userId: string): string[] {
  return c.sqlite
    .query<{ id: string }, [string]>(`SELECT a.id FROM attachments a WHERE ${OF_USERS_TASKS}`)
    .all(userId)
    .map((r) => r.id);
}

export const attachmentOwner = (c: Conn, id: string) => ownerOfRow(c, attachments, id);
export const isOwnAttachment = (c: Conn, id: string, userId: string) => isOwnRow(c, attachments, id, userId);
