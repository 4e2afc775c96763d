import { deleteAccountContent, deleteUserRowsInBatches } from "../../features/account/account-content.repo";
import type { Database } from "bun:sqlite";
import { sqliteOf, type Tx } from "../../core/db";
import { taskSearchText } from "../../features/tasks/tasks.search";
import { tagNameKey } from "../../features/tags/tags.repo";
import type { Entity } from "./backup.records";
import type { Mode } from "./backup.schemas";

/**
 * Every feature's tables, read and written in the backup's record shape with prepared statements
 * (bulk: 100k rows). Reads iterate; nothing loads a whole table.
 */

type Row = Record<string, unknown>;

const SELECTS: Record<Entity, string> = {
  folders: "SELECT id, name, position, created_at, updated_at, deleted_at FROM folders WHERE user_id = ? ORDER BY id",
  lists: "SELECT id, name, folder_id, is_inbox, color, position, created_at, updated_at, deleted_at FROM lists WHERE user_id = ? ORDER BY id",
  tags: "SELECT id, name, color, created_at, updated_at FROM tags WHERE user_id = ? ORDER BY id",
  tasks: `SELECT t.id, t.list_id, t.parent_id, t.title, t.description, t.completed, t.completed_at, t.due_at, t.priority, t.version, t.position,
            (SELECT group_concat(tag_id, ',') FROM task_tags WHERE task_id = t.id) AS tag_ids, t.created_at, t.updated_at, t.deleted_at
          FROM tasks t WHERE t.user_id = ? ORDER BY t.id`,
  recurrences: "SELECT id, task_id, kind, rrule, interval, unit, timezone, dtstart, created_at, updated_at FROM recurrences WHERE user_id = ? ORDER BY id",
  recurrence_exceptions: `SELECT e.recurrence_id, e.date, e.created_at FROM recurrence_exceptions e JOIN recurrences r ON r.id = e.recurrence_id
          WHERE r.user_id = ? ORDER BY e.recurrence_id, e.date`,
  habits: "SELECT id, name, icon, color, frequency, goal, unit, start_date, position, archived_at, created_at, updated_at FROM habits WHERE user_id = ? ORDER BY id",
  habit_logs: "SELECT habit_id, date, value, note, created_at, updated_at FROM habit_logs WHERE user_id = ? ORDER BY habit_id, date",
  habit_pauses: "SELECT id, habit_id, start_date, end_date, created_at, updated_at FROM habit_pauses WHERE user_id = ? ORDER BY id",
  countdowns: `SELECT id, name, date, type, repeat, icon, calendar, lunar_month, lunar_day, lunar_leap, pinned, archived_at, created_at, updated_at
          FROM countdowns WHERE user_id = ? ORDER BY id`,
  memos: "SELECT id, content, pinned, version, created_at, updated_at, deleted_at FROM memos WHERE user_id = ? ORDER BY id",
  attachments: "SELECT id, task_id, filename, content_type, size, sha256, created_at FROM attachments WHERE user_id = ? ORDER BY id",
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
    default:
      return r;
  }
}

/** Every record of one kind of the user's, in id order, one row at a time. */
export function* iterateRecords(sqlite: Database, entity: Entity, userId: string): Generator<Row> {
  const stmt = sqlite.prepare(SELECTS[entity]);
  try {
    for (const r of stmt.iterate(userId) as Iterable<Row>) yield toRecord(entity, r);
  } finally {
    stmt.finalize();
  }
}

/** A recurrence's exception dates, ascending (prepared once per export; the primary key serves it). */
export function exceptionDatesQuery(sqlite: Database): { of(recurrenceId: string): string[]; finalize(): void } {
  const stmt = sqlite.prepare<{ date: string }, [string]>("SELECT date FROM recurrence_exceptions WHERE recurrence_id = ? ORDER BY date");
  return { of: (id) => stmt.all(id).map((r) => r.date), finalize: () => stmt.finalize() };
}

export function countRecords(sqlite: Database, entity: Entity, userId: string): number {
  return (sqlite.query(`SELECT count(*) AS n FROM (${SELECTS[entity]})`).get(userId) as { n: number }).n;
}

export function attachmentBytesOf(sqlite: Database, userId: string): number {
  return (sqlite.query("SELECT coalesce(sum(size), 0) AS n FROM attachments WHERE user_id = ?").get(userId) as { n: number }).n;
}

export function usernameOf(sqlite: Database, userId: string): string {
  return (sqlite.query("SELECT username FROM users WHERE id = ?").get(userId) as { username: string }).username;
}

// ---- ownership lookups (merge conflicts, references to the user's own data) ----

const OWNER_OF: Partial<Record<Entity, string>> = {
  folders: "SELECT user_id FROM folders WHERE id = ?",
  lists: "SELECT user_id FROM lists WHERE id = ?",
  tags: "SELECT user_id FROM tags WHERE id = ?",
  tasks: "SELECT user_id FROM tasks WHERE id = ?",
  recurrences: "SELECT user_id FROM recurrences WHERE id = ?",
  habits: "SELECT user_id FROM habits WHERE id = ?",
  habit_pauses: "SELECT user_id FROM habit_pauses WHERE id = ?",
  countdowns: "SELECT user_id FROM countdowns WHERE id = ?",
  memos: "SELECT user_id FROM memos WHERE id = ?",
  attachments: "SELECT user_id FROM attachments WHERE id = ?",
};

/** The owner of an identifier of this kind, or null when it is free. */
export function ownerOf(sqlite: Database, entity: Entity, id: string): string | null {
  const q = OWNER_OF[entity];
  if (!q) return null;
  return (sqlite.query(q).get(id) as { user_id: string } | null)?.user_id ?? null;
}

const ONE: Partial<Record<Entity, string>> = {
  folders: "SELECT id, name, position, created_at, updated_at, deleted_at FROM folders WHERE id = ?",
  lists: "SELECT id, name, folder_id, is_inbox, color, position, created_at, updated_at, deleted_at FROM lists WHERE id = ?",
  tags: "SELECT id, name, color, created_at, updated_at FROM tags WHERE id = ?",
  tasks: `SELECT t.id, t.list_id, t.parent_id, t.title, t.description, t.completed, t.completed_at, t.due_at, t.priority, t.version, t.position,
            (SELECT group_concat(tag_id, ',') FROM task_tags WHERE task_id = t.id) AS tag_ids, t.created_at, t.updated_at, t.deleted_at
          FROM tasks t WHERE t.id = ?`,
  recurrences: "SELECT id, task_id, kind, rrule, interval, unit, timezone, dtstart, created_at, updated_at FROM recurrences WHERE id = ?",
  habits: "SELECT id, name, icon, color, frequency, goal, unit, start_date, position, archived_at, created_at, updated_at FROM habits WHERE id = ?",
  habit_pauses: "SELECT id, habit_id, start_date, end_date, created_at, updated_at FROM habit_pauses WHERE id = ?",
  countdowns: `SELECT id, name, date, type, repeat, icon, calendar, lunar_month, lunar_day, lunar_leap, pinned, archived_at, created_at, updated_at
          FROM countdowns WHERE id = ?`,
  memos: "SELECT id, content, pinned, version, created_at, updated_at, deleted_at FROM memos WHERE id = ?",
  attachments: "SELECT id, task_id, filename, content_type, size, sha256, created_at FROM attachments WHERE id = ?",
};

/** The stored record with this id, in the backup's shape (for the same-id content comparison). */
export function findRecord(sqlite: Database, entity: Entity, id: string): Row | null {
  const q = ONE[entity];
  if (!q) return null;
  const r = sqlite.query(q).get(id) as Row | null;
  return r ? toRecord(entity, r) : null;
}

export function findHabitLog(sqlite: Database, habitId: string, date: string): Row | null {
  const r = sqlite.query("SELECT habit_id, date, value, note, created_at, updated_at FROM habit_logs WHERE habit_id = ? AND date = ?").get(habitId, date) as Row | null;
  return r;
}

export function findRecurrenceException(sqlite: Database, recurrenceId: string, date: string): Row | null {
  return sqlite.query("SELECT recurrence_id, date, created_at FROM recurrence_exceptions WHERE recurrence_id = ? AND date = ?").get(recurrenceId, date) as Row | null;
}

/** The recurrence a task has, or null (one per task: a unique index). */
export function recurrenceOfTask(sqlite: Database, taskId: string): string | null {
  return (sqlite.query("SELECT id FROM recurrences WHERE task_id = ?").get(taskId) as { id: string } | null)?.id ?? null;
}

/** The parent of a task (null: top-level), or undefined when there is no such task. */
export function parentOfTask(sqlite: Database, taskId: string): string | null | undefined {
  return (sqlite.query("SELECT parent_id FROM tasks WHERE id = ?").get(taskId) as { parent_id: string | null } | null)?.parent_id;
}

/** A habit's start_date, or null when there is no such habit. */
export function habitStartOf(sqlite: Database, habitId: string): string | null {
  return (sqlite.query("SELECT start_date FROM habits WHERE id = ?").get(habitId) as { start_date: string } | null)?.start_date ?? null;
}

/** A habit's pauses, as the overlap rule reads them. */
export function pausesOfHabit(sqlite: Database, habitId: string): { id: string; startDate: string; endDate: string | null }[] {
  return sqlite.query("SELECT id, start_date AS startDate, end_date AS endDate FROM habit_pauses WHERE habit_id = ?").all(habitId) as {
    id: string;
    startDate: string;
    endDate: string | null;
  }[];
}

export function inboxOf(sqlite: Database, userId: string): string {
  return (sqlite.query("SELECT id FROM lists WHERE user_id = ? AND is_inbox = 1").get(userId) as { id: string }).id;
}

export function tagIdByName(sqlite: Database, userId: string, name: string): string | null {
  return (sqlite.query("SELECT id FROM tags WHERE user_id = ? AND name_key = ?").get(userId, tagNameKey(name)) as { id: string } | null)?.id ?? null;
}

export function hasPinnedCountdown(sqlite: Database, userId: string): boolean {
  return sqlite.query("SELECT 1 FROM countdowns WHERE user_id = ? AND pinned = 1").get(userId) !== null;
}

/** Ids of the user's rows of one kind, for references to the user's own data (merge). */
export function ownIds(sqlite: Database, table: "folders" | "lists" | "tasks" | "tags" | "habits" | "recurrences", userId: string): Set<string> {
  const out = new Set<string>();
  for (const r of sqlite.query(`SELECT id FROM ${table} WHERE user_id = ?`).iterate(userId) as Iterable<{ id: string }>) out.add(r.id);
  return out;
}

export function ownTopLevelTasks(sqlite: Database, userId: string): Map<string, { listId: string; parentId: string | null }> {
  const out = new Map<string, { listId: string; parentId: string | null }>();
  for (const r of sqlite.query("SELECT id, list_id, parent_id FROM tasks WHERE user_id = ?").iterate(userId) as Iterable<{ id: string; list_id: string; parent_id: string | null }>)
    out.set(r.id, { listId: r.list_id, parentId: r.parent_id });
  return out;
}

// ---- writes (inside the importing transaction) ----

/** Replace: the user's content goes (shared with the legacy restore), and so does the merge ledger. */
export function deleteBusinessData(tx: Tx, userId: string): void {
  deleteAccountContent(tx, userId);
  deleteUserRowsInBatches(tx, "backup_ledger", userId);
}

export function attachmentIdsOf(sqlite: Database, userId: string): string[] {
  return (sqlite.query("SELECT id FROM attachments WHERE user_id = ?").all(userId) as { id: string }[]).map((r) => r.id);
}

/** Whether the user has an attachment row with this id (a restore places only the files whose row committed). */
export function hasAttachmentRow(sqlite: Database, userId: string): (id: string) => boolean {
  const q = sqlite.query("SELECT 1 FROM attachments WHERE id = ? AND user_id = ?");
  return (id) => q.get(id, userId) !== null;
}

/** Inserts one record (already mapped to target ids) for `userId`. */
export function insertRecord(s: Database, entity: Entity, userId: string, r: Row): void {
  switch (entity) {
    case "folders":
      s.query("INSERT INTO folders (id, user_id, name, position, created_at, updated_at, deleted_at) VALUES (?, ?, ?, ?, ?, ?, ?)").run(
        r.id as string, userId, r.name as string, r.position as number, r.created_at as string, r.updated_at as string, r.deleted_at as string | null,
      );
      return;
    case "lists":
      s.query("INSERT INTO lists (id, user_id, name, folder_id, is_inbox, color, position, created_at, updated_at, deleted_at) VALUES (?, ?, ?, ?, 0, ?, ?, ?, ?, ?)").run(
        r.id as string, userId, r.name as string, r.folder_id as string | null, r.color as string | null, r.position as number,
        r.created_at as string, r.updated_at as string, r.deleted_at as string | null,
      );
      return;
    case "tags":
      s.query("INSERT INTO tags (id, user_id, name, name_key, color, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)").run(
        r.id as string, userId, r.name as string, tagNameKey(r.name as string), r.color as string, r.created_at as string, r.updated_at as string,
      );
      return;
    case "tasks": {
      s.query(
        `INSERT INTO tasks (id, user_id, list_id, parent_id, title, description, completed, completed_at, due_at, priority, version, position, created_at, updated_at, deleted_at, search_text)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(
        r.id as string, userId, r.list_id as string, r.parent_id as string | null, r.title as string, r.description as string, r.completed ? 1 : 0,
        r.completed_at as string | null, r.due_at as string | null, r.priority as number, r.version as number, r.position as number,
        r.created_at as string, r.updated_at as string, r.deleted_at as string | null, taskSearchText(r.title as string, r.description as string),
      );
      const tagStmt = s.query("INSERT OR IGNORE INTO task_tags (task_id, tag_id) VALUES (?, ?)");
      for (const tagId of r.tag_ids as string[]) tagStmt.run(r.id as string, tagId);
      return;
    }
    case "recurrences":
      s.query("INSERT INTO recurrences (id, user_id, task_id, kind, rrule, interval, unit, timezone, dtstart, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)").run(
        r.id as string, userId, r.task_id as string, r.kind as string, r.rrule as string | null, r.interval as number | null, r.unit as string | null,
        r.timezone as string, r.dtstart as string | null, r.created_at as string, r.updated_at as string,
      );
      return;
    case "recurrence_exceptions":
      s.query("INSERT INTO recurrence_exceptions (recurrence_id, date, created_at) VALUES (?, ?, ?)").run(r.recurrence_id as string, r.date as string, r.created_at as string);
      return;
    case "habits":
      s.query("INSERT INTO habits (id, user_id, name, icon, color, frequency, goal, unit, start_date, position, archived_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)").run(
        r.id as string, userId, r.name as string, r.icon as string | null, r.color as string | null, JSON.stringify(r.frequency), r.goal as number,
        r.unit as string | null, r.start_date as string, r.position as number, r.archived_at as string | null, r.created_at as string, r.updated_at as string,
      );
      return;
    case "habit_logs":
      s.query("INSERT INTO habit_logs (habit_id, user_id, date, value, note, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)").run(
        r.habit_id as string, userId, r.date as string, r.value as number, r.note as string | null, r.created_at as string, r.updated_at as string,
      );
      return;
    case "habit_pauses":
      s.query("INSERT INTO habit_pauses (id, habit_id, user_id, start_date, end_date, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)").run(
        r.id as string, r.habit_id as string, userId, r.start_date as string, r.end_date as string | null, r.created_at as string, r.updated_at as string,
      );
      return;
    case "countdowns": {
      const l = r.lunar as { month: number; day: number; leap: boolean } | null;
      s.query(
        `INSERT INTO countdowns (id, user_id, name, date, type, repeat, icon, calendar, lunar_month, lunar_day, lunar_leap, pinned, archived_at, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(
        r.id as string, userId, r.name as string, r.date as string, r.type as string, r.repeat as string, r.icon as string | null, r.calendar as string,
        l?.month ?? null, l?.day ?? null, l ? (l.leap ? 1 : 0) : null, r.pinned ? 1 : 0, r.archived_at as string | null, r.created_at as string, r.updated_at as string,
      );
      return;
    }
    case "memos":
      s.query("INSERT INTO memos (id, user_id, content, pinned, version, created_at, updated_at, deleted_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)").run(
        r.id as string, userId, r.content as string, r.pinned ? 1 : 0, r.version as number, r.created_at as string, r.updated_at as string, r.deleted_at as string | null,
      );
      return;
    case "attachments":
      s.query("INSERT INTO attachments (id, user_id, task_id, filename, content_type, size, sha256, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)").run(
        r.id as string, userId, r.task_id as string, r.filename as string, r.content_type as string, r.size as number, r.sha256 as string, r.created_at as string,
      );
      return;
  }
}

// ---- the ledger ----

export function ledgerLookup(s: Database, userId: string, entity: Entity, sourceId: string): { target_id: string; digest: string } | null {
  return s.query("SELECT target_id, digest FROM backup_ledger WHERE user_id = ? AND entity = ? AND source_id = ?").get(userId, entity, sourceId) as {
    target_id: string;
    digest: string;
  } | null;
}

export function ledgerRecord(s: Database, userId: string, entity: Entity, sourceId: string, targetId: string, digest: string): void {
  s.query("INSERT OR REPLACE INTO backup_ledger (user_id, entity, source_id, target_id, digest) VALUES (?, ?, ?, ?, ?)").run(userId, entity, sourceId, targetId, digest);
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

export function insertPreflight(tx: Tx, p: PreflightRow): void {
  sqliteOf(tx)
    .query(
      `INSERT INTO backup_preflights (id, user_id, token_hash, file_sha256, mode, size, backup_id, summary, counts, created_at, expires_at, consumed_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)`,
    )
    .run(p.id, p.user_id, p.token_hash, p.file_sha256, p.mode, p.size, p.backup_id, p.summary, p.counts, p.created_at, p.expires_at);
}

export function findPreflightByToken(s: Database, tokenHash: string): PreflightRow | null {
  return s.query("SELECT * FROM backup_preflights WHERE token_hash = ?").get(tokenHash) as PreflightRow | null;
}

/** Pending (unconsumed, unexpired) preflights of a user: how many and their staged bytes. */
export function pendingOf(s: Database, userId: string, now: string): { n: number; bytes: number } {
  return s.query("SELECT count(*) AS n, coalesce(sum(size), 0) AS bytes FROM backup_preflights WHERE user_id = ? AND consumed_at IS NULL AND expires_at > ?").get(userId, now) as {
    n: number;
    bytes: number;
  };
}

/** Expired or consumed preflights whose staged file may go (the rows stay for consumed ones: the cleanup retry reads them). */
export function expiredPreflights(s: Database, now: string): string[] {
  return (s.query("SELECT id FROM backup_preflights WHERE consumed_at IS NULL AND expires_at <= ?").all(now) as { id: string }[]).map((r) => r.id);
}

export function deletePreflight(s: Database, id: string): void {
  s.query("DELETE FROM backup_preflights WHERE id = ? AND consumed_at IS NULL").run(id);
}

export function livePreflightIds(s: Database): Set<string> {
  return new Set((s.query("SELECT id FROM backup_preflights WHERE consumed_at IS NULL").all() as { id: string }[]).map((r) => r.id));
}

/** Consumes the token atomically: false when another request consumed it first. */
export function consumePreflight(tx: Tx, id: string, now: string): boolean {
  return sqliteOf(tx).query("UPDATE backup_preflights SET consumed_at = ? WHERE id = ? AND consumed_at IS NULL").run(now, id).changes === 1;
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

export function insertRestore(tx: Tx, r: RestoreRow): void {
  sqliteOf(tx)
    .query("INSERT INTO backup_restores (id, user_id, preflight_id, mode, backup_id, counts, committed_at, cleanup_done_at, answered_at) VALUES (?, ?, ?, ?, ?, ?, ?, NULL, NULL)")
    .run(r.id, r.user_id, r.preflight_id, r.mode, r.backup_id, r.counts, r.committed_at);
}

export function findRestore(s: Database, id: string): RestoreRow | null {
  return s.query("SELECT * FROM backup_restores WHERE id = ?").get(id) as RestoreRow | null;
}

export function findRestoreOfPreflight(s: Database, preflightId: string): RestoreRow | null {
  return s.query("SELECT * FROM backup_restores WHERE preflight_id = ?").get(preflightId) as RestoreRow | null;
}

export function markCleanupDone(s: Database, id: string, now: string): void {
  s.query("UPDATE backup_restores SET cleanup_done_at = ? WHERE id = ? AND cleanup_done_at IS NULL").run(now, id);
}

/** A request is answering the restore's success: from now on its token is consumed (409) for good. */
export function markAnswered(s: Database, id: string, now: string): void {
  s.query("UPDATE backup_restores SET answered_at = ? WHERE id = ? AND answered_at IS NULL").run(now, id);
}
