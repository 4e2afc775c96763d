import { deleteInBatches, type Conn } from "../../core/db";
import { deleteAccountContent } from "../account-content";
import {
  attachmentOwner,
  exportAttachmentRow,
  exportAttachmentRows,
  insertRestoredAttachment,
} from "../../features/attachments/attachments.repo";
import { countdownOwner, exportCountdownRow, exportCountdownRows, insertRestoredCountdown } from "../../features/countdowns/countdowns.repo";
import { exportFolderRow, exportFolderRows, folderOwner, insertRestoredFolder } from "../../features/folders/folders.repo";
import {
  exportHabitLogRows,
  exportHabitPauseRow,
  exportHabitPauseRows,
  exportHabitRow,
  exportHabitRows,
  habitOwner,
  habitPauseOwner,
  insertRestoredHabit,
  insertRestoredHabitLog,
  insertRestoredHabitPause,
} from "../../features/habits/habits.repo";
import { exportListRow, exportListRows, insertRestoredList, listOwner } from "../../features/lists/lists.repo";
import { memberUsernamesOf } from "../../features/lists/lists.members.repo";

/** The user's lists with, for the ones they share, the members by username (informational; sharing.md). */
function* exportListRowsWithMembers(c: Conn, userId: string): Generator<object> {
  for (const r of exportListRows(c, userId)) yield { ...r, members: memberUsernamesOf(c, r.id) };
}
import { exportMemoRow, exportMemoRows, insertRestoredMemo, memoOwner } from "../../features/memos/memos.repo";
import {
  exportRecurrenceExceptionRows,
  exportRecurrenceRow,
  exportRecurrenceRows,
  insertRestoredRecurrence,
  insertRestoredRecurrenceException,
  recurrenceOwner,
} from "../../features/recurrence/recurrence.repo";
import { exportTagRow, exportTagRows, insertRestoredTag, tagOwner } from "../../features/tags/tags.repo";
import { exportTaskRow, exportTaskRows, insertRestoredTask, linkRestoredTags, taskOwner } from "../../features/tasks/tasks.repo";
import { exportReminderRow, exportReminderRows, insertRestoredReminder, reminderOwner } from "../../features/reminders/reminders.repo";
import { channelOwner, deleteChannelsOfUser, exportChannelRow, exportChannelRows, insertRestoredChannel } from "../../features/reminders/channels.repo";
import type { Entity } from "./backup.records";
import type { Mode } from "./backup.schemas";

/**
 * The backup's records read and written through the owning feature repos (each the only file
 * naming its table's columns), in the backup's record shape; and the backup's own tables (the
 * merge ledger, preflights, restores). Reads iterate; nothing loads a whole table.
 */

type Row = Record<string, unknown>;

/**
 * The user's reminders whose target is in their backup: reminders are personal, so a member has
 * their own on a shared list's tasks, but those tasks are the list owner's (in the owner's backup,
 * never the member's, sharing.md); such a reminder would dangle in the member's archive.
 */
function* ownReminderRows(c: Conn, userId: string): Generator<object> {
  for (const r of exportReminderRows(c, userId)) if (r.target_type !== "task" || taskOwner(c, r.target_id) === userId) yield r;
}

/** Every record of one kind of the user's, in id order, as the owning repo reads it. */
const ROWS: Record<Entity, (c: Conn, userId: string) => Iterable<object>> = {
  folders: exportFolderRows,
  lists: exportListRowsWithMembers,
  tags: exportTagRows,
  tasks: exportTaskRows,
  recurrences: exportRecurrenceRows,
  recurrence_exceptions: exportRecurrenceExceptionRows,
  habits: exportHabitRows,
  habit_logs: exportHabitLogRows,
  habit_pauses: exportHabitPauseRows,
  countdowns: exportCountdownRows,
  memos: exportMemoRows,
  attachments: exportAttachmentRows,
  notification_channels: exportChannelRows,
  reminders: ownReminderRows,
};

/** The kinds with an id of their own: the row with an id, and its owner. */
const BY_ID: Partial<Record<Entity, { row(c: Conn, id: string): object | null; owner(c: Conn, id: string): string | null }>> = {
  folders: { row: exportFolderRow, owner: folderOwner },
  lists: { row: exportListRow, owner: listOwner },
  tags: { row: exportTagRow, owner: tagOwner },
  tasks: { row: exportTaskRow, owner: taskOwner },
  recurrences: { row: exportRecurrenceRow, owner: recurrenceOwner },
  habits: { row: exportHabitRow, owner: habitOwner },
  habit_pauses: { row: exportHabitPauseRow, owner: habitPauseOwner },
  countdowns: { row: exportCountdownRow, owner: countdownOwner },
  memos: { row: exportMemoRow, owner: memoOwner },
  attachments: { row: exportAttachmentRow, owner: attachmentOwner },
  notification_channels: { row: exportChannelRow, owner: channelOwner },
  reminders: { row: exportReminderRow, owner: reminderOwner },
};

/**
 * Row → the stored part of a backup record (without the API-only fields the export adds, see
 * API_ONLY_FIELDS), keys in the record schema's order (the content digest depends on it).
 */
export function toRecord(entity: Entity, r: Row): Row {
  switch (entity) {
    case "lists":
      return { ...r, is_inbox: r.is_inbox === 1 };
    case "tasks": {
      const { tag_ids, created_at, updated_at, deleted_at, ...rest } = r;
      const ids = typeof tag_ids === "string" && tag_ids ? tag_ids.split(",").sort() : [];
      return { ...rest, completed: r.completed === 1, tag_ids: ids, created_at, updated_at, deleted_at };
    }
    case "habits":
      return { ...r, frequency: JSON.parse(r.frequency as string) };
    case "countdowns": {
      const { lunar_month, lunar_day, lunar_leap, pinned, archived_at, created_at, updated_at, ...rest } = r;
      const lunar = rest.calendar === "lunar" && lunar_month != null ? { month: lunar_month, day: lunar_day, leap: lunar_leap === 1 } : null;
      return { ...rest, lunar, pinned: pinned === 1, archived_at, created_at, updated_at };
    }
    case "memos":
      return { ...r, pinned: r.pinned === 1 };
    case "notification_channels": {
      const { created_at, updated_at, ...rest } = r;
      return { ...rest, enabled: r.enabled === 1, config: JSON.parse(r.config as string), secrets: JSON.parse(r.secrets as string), created_at, updated_at };
    }
    case "reminders": {
      const { target_type, target_id, ...rest } = r;
      return { id: rest.id, target: { type: target_type, id: target_id }, kind: rest.kind, minutes_before: rest.minutes_before, at: rest.at, time: rest.time, days_before: rest.days_before, created_at: rest.created_at, updated_at: rest.updated_at };
    }
    default:
      return r;
  }
}

/** Every record of one kind of the user's, in id order, one row at a time. */
export function* iterateRecords(c: Conn, entity: Entity, userId: string): Generator<Row> {
  for (const r of ROWS[entity](c, userId)) yield toRecord(entity, r as Row);
}

/** The owner of an identifier of this kind, or null when it is free. */
export function ownerOf(c: Conn, entity: Entity, id: string): string | null {
  return BY_ID[entity]?.owner(c, id) ?? null;
}

/** The stored record with this id, in the backup's shape (for the same-id content comparison). */
export function findRecord(c: Conn, entity: Entity, id: string): Row | null {
  const r = BY_ID[entity]?.row(c, id) ?? null;
  return r ? toRecord(entity, r as Row) : null;
}

// ---- writes (inside the importing transaction) ----

/** Replace: the user's content goes (shared with the legacy restore), and so does the merge ledger. */
export function deleteBusinessData(c: Conn, userId: string): void {
  deleteAccountContent(c, userId);
  // A complete backup holds the channels too (the legacy format does not: its restore keeps them).
  deleteChannelsOfUser(c, userId);
  deleteInBatches(c, "backup_ledger", "user_id = ?", userId);
}

/**
 * Inserts one record (already mapped to target ids) for `userId`. `keepOwnPin` (a merge): an
 * incoming pinned countdown yields to the one the user has.
 */
export function insertRecord(c: Conn, entity: Entity, userId: string, r: Row, keepOwnPin: boolean): void {
  // The records were schema-checked at preflight: each field has its column's type (booleans and
  // JSON values are turned into their stored form here).
  const row = r as never;
  switch (entity) {
    case "folders":
      return insertRestoredFolder(c, userId, row);
    case "lists":
      return insertRestoredList(c, userId, row);
    case "tags":
      return insertRestoredTag(c, userId, row);
    case "tasks":
      insertRestoredTask(c, userId, { ...r, completed: r.completed ? 1 : 0 } as never);
      linkRestoredTags(c, r.id as string, r.tag_ids as string[]);
      return;
    case "recurrences":
      return insertRestoredRecurrence(c, userId, row);
    case "recurrence_exceptions":
      return insertRestoredRecurrenceException(c, row);
    case "habits":
      return insertRestoredHabit(c, userId, { ...r, frequency: JSON.stringify(r.frequency) } as never);
    case "habit_logs":
      return insertRestoredHabitLog(c, userId, row);
    case "habit_pauses":
      return insertRestoredHabitPause(c, userId, row);
    case "countdowns": {
      const l = r.lunar as { month: number; day: number; leap: boolean } | null;
      const lunar = { lunar_month: l?.month ?? null, lunar_day: l?.day ?? null, lunar_leap: l ? (l.leap ? 1 : 0) : null };
      insertRestoredCountdown(c, userId, { ...r, ...lunar, pinned: r.pinned ? 1 : 0 } as never, keepOwnPin);
      return;
    }
    case "memos":
      return insertRestoredMemo(c, userId, { ...r, pinned: r.pinned ? 1 : 0 } as never);
    case "attachments":
      return insertRestoredAttachment(c, userId, row);
    case "notification_channels":
      return insertRestoredChannel(c, userId, { ...r, enabled: r.enabled ? 1 : 0, config: JSON.stringify(r.config), secrets: JSON.stringify(r.secrets) } as never);
    case "reminders": {
      const t = r.target as { type: "task" | "habit" | "countdown"; id: string };
      return insertRestoredReminder(c, userId, { id: r.id, target_type: t.type, target_id: t.id, kind: r.kind, minutes_before: r.minutes_before, at: r.at, time: r.time, days_before: r.days_before, created_at: r.created_at, updated_at: r.updated_at } as never);
    }
  }
}


// ---- the ledger ----

export function ledgerLookup(c: Conn, userId: string, entity: Entity, sourceId: string): { target_id: string; digest: string } | null {
  return c.sqlite.query("SELECT target_id, digest FROM backup_ledger WHERE user_id = ? AND entity = ? AND source_id = ?").get(userId, entity, sourceId) as {
    target_id: string;
    digest: string;
  } | null;
}

export function ledgerRecord(c: Conn, userId: string, entity: Entity, sourceId: string, targetId: string, digest: string): void {
  c.sqlite.query("INSERT OR REPLACE INTO backup_ledger (user_id, entity, source_id, target_id, digest) VALUES (?, ?, ?, ?, ?)").run(userId, entity, sourceId, targetId, digest);
}

// ---- preflights and restores ----

export interface PreflightRow {
  id: string;
  user_id: string;
  token_hash: string;
  file_sha256: string;
  mode: Mode;
  size: number;
  backup_id: string;
  summary: string;
  counts: string;
  created_at: string;
  expires_at: string;
  consumed_at: string | null;
}

export function insertPreflight(c: Conn, p: PreflightRow): void {
  c.sqlite
    .query(
      `INSERT INTO backup_preflights (id, user_id, token_hash, file_sha256, mode, size, backup_id, summary, counts, created_at, expires_at, consumed_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)`,
    )
    .run(p.id, p.user_id, p.token_hash, p.file_sha256, p.mode, p.size, p.backup_id, p.summary, p.counts, p.created_at, p.expires_at);
}

export function findPreflightByToken(c: Conn, tokenHash: string): PreflightRow | null {
  return c.sqlite.query("SELECT * FROM backup_preflights WHERE token_hash = ?").get(tokenHash) as PreflightRow | null;
}

/** Pending (unconsumed, unexpired) preflights of a user: how many and their staged bytes. */
export function pendingOf(c: Conn, userId: string, now: string): { n: number; bytes: number } {
  return c.sqlite.query("SELECT count(*) AS n, coalesce(sum(size), 0) AS bytes FROM backup_preflights WHERE user_id = ? AND consumed_at IS NULL AND expires_at > ?").get(userId, now) as {
    n: number;
    bytes: number;
  };
}

/** Expired or consumed preflights whose staged file may go (the rows stay for consumed ones: the cleanup retry reads them). */
export function expiredPreflights(c: Conn, now: string): string[] {
  return (c.sqlite.query("SELECT id FROM backup_preflights WHERE consumed_at IS NULL AND expires_at <= ?").all(now) as { id: string }[]).map((r) => r.id);
}

export function deletePreflight(c: Conn, id: string): void {
  c.sqlite.query("DELETE FROM backup_preflights WHERE id = ? AND consumed_at IS NULL").run(id);
}

export function livePreflightIds(c: Conn): Set<string> {
  return new Set((c.sqlite.query("SELECT id FROM backup_preflights WHERE consumed_at IS NULL").all() as { id: string }[]).map((r) => r.id));
}

/** Consumes the token atomically: false when another request consumed it first. */
export function consumePreflight(c: Conn, id: string, now: string): boolean {
  return c.sqlite.query("UPDATE backup_preflights SET consumed_at = ? WHERE id = ? AND consumed_at IS NULL").run(now, id).changes === 1;
}

export interface RestoreRow {
  id: string;
  user_id: string;
  preflight_id: string;
  mode: Mode;
  backup_id: string;
  counts: string;
  committed_at: string;
  cleanup_done_at: string | null;
  /** When a request answered this restore's success to its client (null: no client has been told). */
  answered_at: string | null;
}

export function insertRestore(c: Conn, r: RestoreRow): void {
  c.sqlite
    .query("INSERT INTO backup_restores (id, user_id, preflight_id, mode, backup_id, counts, committed_at, cleanup_done_at, answered_at) VALUES (?, ?, ?, ?, ?, ?, ?, NULL, NULL)")
    .run(r.id, r.user_id, r.preflight_id, r.mode, r.backup_id, r.counts, r.committed_at);
}

export function findRestore(c: Conn, id: string): RestoreRow | null {
  return c.sqlite.query("SELECT * FROM backup_restores WHERE id = ?").get(id) as RestoreRow | null;
}

export function findRestoreOfPreflight(c: Conn, preflightId: string): RestoreRow | null {
  return c.sqlite.query("SELECT * FROM backup_restores WHERE preflight_id = ?").get(preflightId) as RestoreRow | null;
}

export function markCleanupDone(c: Conn, id: string, now: string): void {
  c.sqlite.query("UPDATE backup_restores SET cleanup_done_at = ? WHERE id = ? AND cleanup_done_at IS NULL").run(now, id);
}

/** A request is answering the restore's success: from now on its token is consumed (409) for good. */
export function markAnswered(c: Conn, id: string, now: string): void {
  c.sqlite.query("UPDATE backup_restores SET answered_at = ? WHERE id = ? AND answered_at IS NULL").run(now, id);
}
