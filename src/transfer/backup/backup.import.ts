import type { Conn } from "../../core/db";
import { collectGarbage } from "../../core/streams/memory-pacing";
import { AppError, stateConflict, type FieldProblem } from "../../core/errors";
import type { ZipEntry, ZipFile } from "./backup.archive";
import { exportHabitLogRow, habitOwner, habitStartOf, pausePeriodsOf } from "../../features/habits/habits.repo";
import { inboxIdOf, listHead } from "../../features/lists/lists.repo";
import { deleteInvitation, findInvitationPair, findMember, insertInvitation, INVITATION_TTL_MS } from "../../features/lists/lists.members.repo";
import { findUserByKey, usernameKey } from "../../features/account/account.repo";
import { newId } from "../../core/ids";
import { exportRecurrenceExceptionRow, recurrenceIdOfTask, recurrenceOwner } from "../../features/recurrence/recurrence.repo";
import { tagIdByName } from "../../features/tags/tags.repo";
import { parentOfTask } from "../../features/tasks/tasks.repo";
import { findRecord, insertRecord, ledgerLookup, ledgerRecord, ownerOf } from "./backup.repo";
import { logBeforeStartProblem, overlapMessage, overlappingPause, type PausePeriod } from "../../features/habits/habits.rules";
import { recurrenceOnSubtaskProblem } from "../../features/tasks/tasks.rules";
import { storedFields, type Entity } from "./backup.records";
import type { Mode } from "./backup.schemas";
import { DATA_ORDER, PROBLEM_LIST_MAX, Problems, readRecords } from "./backup.validate";

type Rec = Record<string, unknown>;

/** The kind a reminder's target type names. */
const REMINDER_TARGETS = { task: "tasks", habit: "habits", countdown: "countdowns" } as const;

function digestOf(r: Rec): string {
  return new Bun.CryptoHasher("sha256").update(JSON.stringify(r)).digest("hex");
}

/**
 * Imports a validated archive for `userId` inside the caller's (write) transaction. Synchronous by
 * design. Merge (contract §9): every source id maps to the ledger's target, else to itself when
 * free; an id this user already has is skipped when its content is equal and a same-id conflict
 * otherwise; an id of another user is a cross-user conflict. Replace: the user's data is already
 * gone, so any id still present is another user's (refused the same way). Any conflict throws
 * 409 merge_conflict listing each, and the transaction rolls back. The archive's inbox maps onto
 * the user's inbox in both modes.
 */
export function importArchive(s: Conn, zip: ZipFile, entries: Map<string, ZipEntry>, mode: Mode, userId: string, now: Date): void {
  const merge = mode === "merge";
  const inbox = inboxIdOf(s, userId);
  const maps = new Map<Entity, Map<string, string>>();
  for (const e of DATA_ORDER) maps.set(e, new Map());
  const conflicts: FieldProblem[] = [];
  const problems = new Problems();
  const sharedLists: { key: string; members: ArchivedMember[] }[] = [];
  /** What the rules read of the user's habits: their pauses before the import, their start dates. */
  const own: OwnHabits = { pauses: new Map(), starts: new Map() };
  const conflict = (entity: Entity, key: string, message: string) => {
    // Still mapped, so that records referring to it are checked too (the whole import rolls back).
    maps.get(entity)!.set(key, key);
    if (conflicts.length < PROBLEM_LIST_MAX) conflicts.push({ path: `${entity}/${key}`, message });
  };

  // Tasks refer to tasks (parent_id) that may come later in the file: know the archive's task ids
  // first (merge only: a replace archive's references all resolve inside it, checked at preflight
  // on these very bytes, and ids are kept, so a replace maps nothing but the inbox).
  const archiveTasks = new Set<string>();
  const tasksEntry = entries.get("data/tasks.json");
  if (merge && tasksEntry) readRecords(zip, tasksEntry, "tasks", problems, (r) => archiveTasks.add(r.id as string));
  collectGarbage(true);

  // Maps hold only targets that differ from the source (inbox, tags merged by name, ledger) and
  // conflicts; a record kept under its own id is found as the user's own row (it was inserted or
  // skipped as equal before anything refers to it), so 100k identity entries are not held.
  const resolve = (entity: Entity, id: string): string => {
    const m = maps.get(entity)!.get(id);
    if (m !== undefined) return m;
    if (!merge) return id;
    if (entity === "tasks" && archiveTasks.has(id)) return id;
    // Anything else must be the user's own (merge); another user's record is never referenced.
    if (ownerOf(s, entity, id) === userId) return id;
    throw stateConflict(`the archive refers to ${entity} ${id}, which is no longer among your data; run the preflight again`);
  };

  for (const entity of DATA_ORDER) {
    const entry = entries.get(`data/${entity}.json`);
    if (!entry) continue;
    const map = maps.get(entity)!;
    readRecords(zip, entry, entity, problems, (checked) => {
      // A shared list's members: invited once the lists are in (inviteArchivedMembers).
      if (entity === "lists" && Array.isArray(checked.members) && checked.members.length && checked.is_inbox !== true) {
        sharedLists.push({ key: checked.id as string, members: checked.members as ArchivedMember[] });
      }
      // Derived and mirrored API fields were checked at preflight and are not imported.
      const src = storedFields(entity, checked);
      // The archive's inbox is the user's inbox; never inserted, never a conflict.
      if (entity === "lists" && src.is_inbox === true) {
        map.set(src.id as string, inbox);
        return;
      }
      const key = keyOf(entity, src);
      if (merge) {
        // Imported by an earlier merge: nothing to do, not even its references (their targets may
        // have been deleted since; re-running a merge adds nothing).
        const led = ledgerLookup(s, userId, entity, key);
        if (led) {
          if (led.target_id !== key) map.set(key, led.target_id);
          return;
        }
      }
      const r = mapReferences(entity, src, resolve);
      const targetKey = keyOf(entity, r);
      if (merge) {
        const digest = digestOf(r);
        if (entity === "tags") {
          const byName = tagIdByName(s, userId, r.name as string);
          if (byName !== null && byName !== r.id) {
            map.set(key, byName);
            ledgerRecord(s, userId, entity, key, byName, digest);
            return;
          }
        }
        const existing = existingOf(s, entity, r);
        if (existing === "free") {
          const clash = clashWithOwn(s, entity, r, own);
          if (clash) {
            conflict(entity, key, clash);
            return;
          }
          if (!insertChecked(s, entity, userId, r, key)) return;
          if (targetKey !== key) map.set(key, targetKey);
          ledgerRecord(s, userId, entity, key, targetKey, digest);
        } else if (existing.owner === userId) {
          if (digestOf(existing.record!) === digest) {
            if (targetKey !== key) map.set(key, targetKey);
            ledgerRecord(s, userId, entity, key, targetKey, digest);
          } else conflict(entity, key, "you already have a record with this identifier and different content");
        } else conflict(entity, key, "this identifier belongs to another user");
        return;
      }
      const existing = existingOf(s, entity, r);
      if (existing !== "free") {
        conflict(entity, key, "this identifier belongs to another user");
        return;
      }
      insertChecked(s, entity, userId, r, key);
    }, 30);
  }
  if (problems.list.length > 0) {
    // The file was validated at preflight and its digest checked since: this is not expected.
    throw new AppError("internal_error", "the staged archive could not be read again; nothing was changed", { variant: "restore_failed" });
  }
  if (conflicts.length > 0) {
    throw new AppError("merge_conflict", `${conflicts.length} record(s) conflict with existing data; nothing was changed`, { errors: conflicts });
  }
  for (const l of sharedLists) inviteArchivedMembers(s, userId, maps.get("lists")!.get(l.key) ?? l.key, l.members, now);

  /**
   * Inserts the record; a uniqueness the checks above did not foresee (the database's own) is
   * a conflict naming the record, never a 500. False when it was not inserted.
   */
  function insertChecked(c: Conn, entity: Entity, uid: string, r: Rec, key: string): boolean {
    try {
      // At most one pinned countdown per user: in a merge, an incoming pin yields to the one the user has.
      insertRecord(c, entity, uid, r, merge);
      return true;
    } catch (e) {
      const code = (e as { code?: string }).code;
      if (code !== "SQLITE_CONSTRAINT_UNIQUE" && code !== "SQLITE_CONSTRAINT_PRIMARYKEY") throw e;
      conflict(entity, key, "conflicts with your existing data (a record that must be unique)");
      return false;
    }
  }
}

interface ArchivedMember {
  username: string;
  role: "editor" | "viewer";
}

/**
 * sharing.md: a restore recreates a shared list's memberships only as pending invitations, from
 * the restoring user, to the usernames that exist on this server; never access by itself. Not for
 * an archived list (it cannot be shared), nor for someone already a member or invited.
 */
function inviteArchivedMembers(s: Conn, userId: string, listId: string, members: ArchivedMember[], now: Date): void {
  const head = listHead(s, listId);
  if (!head || head.ownerId !== userId || head.isInbox || head.deletedAt !== null) return;
  const createdAt = now.toISOString();
  const expiresAt = new Date(now.getTime() + INVITATION_TTL_MS).toISOString();
  for (const m of members) {
    const user = findUserByKey(s, usernameKey(m.username));
    if (!user || user.id === userId || findMember(s, listId, user.id)) continue;
    const pending = findInvitationPair(s, listId, user.id);
    if (pending && pending.expires_at > createdAt) continue;
    if (pending) deleteInvitation(s, pending.id);
    insertInvitation(s, { id: newId(), list_id: listId, inviter_id: userId, invitee_id: user.id, role: m.role, created_at: createdAt, expires_at: expiresAt });
  }
}

interface OwnHabits {
  /** A habit's pauses before the import, read on the habit's first incoming pause. */
  pauses: Map<string, PausePeriod[]>;
  /** A habit's start_date, read on its first incoming log. */
  starts: Map<string, string | null>;
}

/**
 * Why a record that is new to the user (its id is free) cannot join what the user already has,
 * by the rules the API applies when such a record is created; null when it can. The archive's
 * own records were checked against each other at preflight; what is checked here is what a merge
 * maps onto the user's data (their own records, or targets an earlier merge recorded in the
 * ledger, which may have changed since).
 */
function clashWithOwn(s: Conn, entity: Entity, r: Rec, own: OwnHabits): string | null {
  if (entity === "recurrences") {
    const task = r.task_id as string;
    // Only top-level tasks recur (the API: 422; the task may have become a subtask since).
    const onSubtask = recurrenceOnSubtaskProblem(parentOfTask(s, task) ?? null);
    if (onSubtask) return `task ${task}: ${onSubtask}`;
    // One recurrence per task (the API: 409 when the task already recurs).
    const other = recurrenceIdOfTask(s, task);
    return other ? `task ${task} already has a recurrence (${other})` : null;
  }
  if (entity === "habit_logs") {
    // No log before the habit's start_date (the API: 422; the start may have moved since).
    const habit = r.habit_id as string;
    let start = own.starts.get(habit);
    if (start === undefined) own.starts.set(habit, (start = habitStartOf(s, habit)));
    return start === null ? null : logBeforeStartProblem(r.date as string, start);
  }
  if (entity === "habit_pauses") {
    // The pauses of one habit never overlap (the API: 409 naming the other pause). Against the
    // pauses the habit had before this import: the archive's own were checked together at
    // preflight (and reading the growing set per insert would be quadratic).
    const habit = r.habit_id as string;
    let pauses = own.pauses.get(habit);
    if (!pauses) own.pauses.set(habit, (pauses = pausePeriodsOf(s, habit)));
    const other = overlappingPause(pauses, r.start_date as string, r.end_date as string | null, r.id as string);
    return other ? overlapMessage(other) : null;
  }
  return null;
}

/** A record's identity: its id, or parent + date for the kinds without one. */
function keyOf(entity: Entity, r: Rec): string {
  if (entity === "habit_logs") return `${r.habit_id as string}:${r.date as string}`;
  if (entity === "recurrence_exceptions") return `${r.recurrence_id as string}:${r.date as string}`;
  return r.id as string;
}

function existingOf(s: Conn, entity: Entity, r: Rec): "free" | { owner: string; record: Rec | null } {
  if (entity === "habit_logs") {
    const row = exportHabitLogRow(s, r.habit_id as string, r.date as string);
    return row ? { owner: habitOwner(s, r.habit_id as string) ?? "", record: row } : "free";
  }
  if (entity === "recurrence_exceptions") {
    const row = exportRecurrenceExceptionRow(s, r.recurrence_id as string, r.date as string);
    return row ? { owner: recurrenceOwner(s, r.recurrence_id as string) ?? "", record: row } : "free";
  }
  const owner = ownerOf(s, entity, r.id as string);
  if (owner === null) return "free";
  return { owner, record: findRecord(s, entity, r.id as string) };
}

/** The record with its references mapped to their targets (key order kept: the digest depends on it). */
function mapReferences(entity: Entity, r: Rec, resolve: (e: Entity, id: string) => string): Rec {
  switch (entity) {
    case "lists":
      return r.folder_id ? { ...r, folder_id: resolve("folders", r.folder_id as string) } : r;
    case "tasks":
      return {
        ...r,
        list_id: resolve("lists", r.list_id as string),
        parent_id: r.parent_id ? resolve("tasks", r.parent_id as string) : null,
        tag_ids: (r.tag_ids as string[]).map((t) => resolve("tags", t)).sort(),
      };
    case "recurrences":
    case "attachments":
      return { ...r, task_id: resolve("tasks", r.task_id as string) };
    case "recurrence_exceptions":
      return { ...r, recurrence_id: resolve("recurrences", r.recurrence_id as string) };
    case "habit_logs":
    case "habit_pauses":
      return { ...r, habit_id: resolve("habits", r.habit_id as string) };
    case "reminders": {
      const t = r.target as { type: "task" | "habit" | "countdown"; id: string };
      return { ...r, target: { type: t.type, id: resolve(REMINDER_TARGETS[t.type], t.id) } };
    }
    default:
      return r;
  }
}
