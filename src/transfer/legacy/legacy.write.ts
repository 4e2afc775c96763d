import type { Conn } from "../../core/db";
import { newId } from "../../core/ids";
import { collectGarbage, type MemoryPacer } from "../../core/streams/memory-pacing";
import { countdownOwners, insertRestoredCountdown } from "../../features/countdowns/countdowns.repo";
import { folderOwners, insertRestoredFolder } from "../../features/folders/folders.repo";
import { habitOwners, insertRestoredHabit } from "../../features/habits/habits.repo";
import { inboxIdOf, insertRestoredList, listOwners, placeInbox } from "../../features/lists/lists.repo";
import { insertRestoredMemo, memoOwners } from "../../features/memos/memos.repo";
import { insertRestoredRecurrence, recurrenceIdOfTask, recurrenceOwners, type RecurrenceExportRow } from "../../features/recurrence/recurrence.repo";
import { insertRestoredTag, tagIdsByKey, tagNameKey } from "../../features/tags/tags.repo";
import { existingTasksOf, insertRestoredTask, linkRestoredTags, taskOwners, type ExistingTask } from "../../features/tasks/tasks.repo";
import { recurrenceOnSubtaskProblem } from "../../features/tasks/tasks.rules";
import { insertRestoredReminder } from "../../features/reminders/reminders.repo";
import type { TargetKind } from "../../features/reminders/reminders.rules";
import type { CheckedFile } from "./legacy.check";
import { rejectWith, zeroCounts, type Locate, type Problem } from "./legacy.problems";
import type { LegacyRecords } from "./legacy.records";
import { recordAt, recordPacer, take, type StoredFile } from "./legacy.stored";
import { KINDS, type Counts, type Kind, type RestoreMode } from "./legacy.schemas";

/** Colour of a tag that a restore creates (tags travel by name only). */
const NEW_TAG_COLOR = "#808080";

/** Of a kind's ids, which exist and whose they are (the owning repo answers). */
const OWNERS: Record<Kind, (c: Conn, ids: string[]) => Map<string, string>> = {
  folders: folderOwners,
  lists: listOwners,
  tasks: taskOwners,
  recurrences: recurrenceOwners,
  habits: habitOwners,
  countdowns: countdownOwners,
  memos: memoOwners,
};

/** One restore's writing, inside the caller's transaction. */
interface Writing {
  c: Conn;
  userId: string;
  mode: RestoreMode;
  f: StoredFile;
  checked: CheckedFile;
  locate: Locate;
  now: string;
  /** Per kind: file id → target id. */
  maps: Record<Kind, Map<string, string>>;
  /** Per kind: the records skipped (merge: the user already has them). */
  skip: Record<Kind, Set<string>>;
  counts: Counts;
  skipped: Counts;
  problems: Problem[];
  pacer: MemoryPacer;
  /** Merge: the tasks the user already has that the file's records refer to. */
  existing: Map<string, ExistingTask>;
}

/**
 * Writes a checked file for `userId`: maps identifiers (kept where free), checks what depends on
 * the account, inserts through the owning repos. Throws (422) on a problem; the caller's
 * transaction then rolls back.
 */
export function writeFile(c: Conn, userId: string, f: StoredFile, checked: CheckedFile, mode: RestoreMode, locate: Locate, now: string): { counts: Counts; skipped: Counts } {
  const w: Writing = {
    c,
    userId,
    mode,
    f,
    checked,
    locate,
    now,
    maps: {} as Record<Kind, Map<string, string>>,
    skip: {} as Record<Kind, Set<string>>,
    counts: zeroCounts(),
    skipped: zeroCounts(),
    problems: [],
    pacer: recordPacer(true),
    existing: new Map(),
  };
  mapIds(w);
  writeFolders(w);
  writeLists(w);
  // Merge: a subtask whose parent the user already has must still obey the one-level rule there.
  if (mode === "merge") w.existing = existingTasksOf(c, userId, [...w.skip.tasks]);
  writeTasks(w);
  if (w.problems.length) rejectWith(w.problems);
  writeRecurrences(w);
  writeHabits(w);
  writeCountdowns(w);
  writeMemos(w);
  if (w.problems.length) rejectWith(w.problems);
  return { counts: w.counts, skipped: w.skipped };
}

/** A file id is kept where free; the user's own is kept and skipped (merge); another user's gets a new id. */
function mapIds(w: Writing): void {
  for (const kind of KINDS) {
    const ids = w.f.ids[kind];
    const owner = OWNERS[kind](w.c, ids);
    const map = new Map<string, string>();
    const sk = new Set<string>();
    for (const id of ids) {
      const o = owner.get(id);
      if (o === undefined) map.set(id, id);
      else if (o === w.userId && w.mode === "merge") {
        map.set(id, id);
        sk.add(id);
      } else map.set(id, newId());
    }
    w.maps[kind] = map;
    w.skip[kind] = sk;
    collectGarbage(false);
  }
}

/**
 * A restored record's reminders, the user's own, with new ids: stored unarmed (the scheduler
 * computes their schedule from the restored target within a minute, as after a backup restore).
 */
function writeReminders(w: Writing, type: TargetKind, targetId: string, list: LegacyRecords["tasks"][number]["reminders"]): void {
  for (const r of list ?? []) {
    insertRestoredReminder(w.c, w.userId, {
      id: newId(),
      target_type: type,
      target_id: targetId,
      kind: r.kind,
      minutes_before: r.minutes_before ?? null,
      at: r.at ?? null,
      time: r.time ?? null,
      days_before: r.days_before ?? null,
      created_at: w.now,
      updated_at: w.now,
    });
  }
}

/** Each record of a kind in file order, taken from the file once; skipped ones counted. */
function eachNew<K extends Kind>(w: Writing, kind: K, fn: (r: LegacyRecords[K][number], i: number) => void): void {
  for (let i = 0; i < w.f.json[kind].length; i++) {
    const r = take(w.f, kind, i);
    if (w.skip[kind].has(r.id)) {
      w.skipped[kind]++;
      continue;
    }
    fn(r, i);
  }
}

function writeFolders(w: Writing): void {
  eachNew(w, "folders", (r) => {
    insertRestoredFolder(w.c, w.userId, { ...r, id: w.maps.folders.get(r.id)!, deleted_at: null });
    w.counts.folders++;
  });
}

function writeLists(w: Writing): void {
  const inbox = inboxIdOf(w.c, w.userId);
  for (let i = 0; i < w.f.json.lists.length; i++) {
    const r = take(w.f, "lists", i);
    if (r.is_inbox) {
      // The file's inbox is the user's inbox: its tasks go there; replace takes its colour and place.
      w.maps.lists.set(r.id, inbox);
      if (w.mode === "replace") placeInbox(w.c, inbox, r.color, r.position, r.updated_at);
      continue;
    }
    if (w.skip.lists.has(r.id)) {
      w.skipped.lists++;
      continue;
    }
    const folderId = r.folder_id === null ? null : w.maps.folders.get(r.folder_id)!;
    insertRestoredList(w.c, w.userId, { ...r, id: w.maps.lists.get(r.id)!, folder_id: folderId });
    w.counts.lists++;
  }
}

function writeTasks(w: Writing): void {
  const { c, userId, f } = w;
  const tagIds = tagIdsByKey(c, userId);
  /** The user's tag of this name, created (grey) on first use. */
  const tagOf = (name: string): string => {
    const key = tagNameKey(name);
    let id = tagIds.get(key);
    if (!id) {
      id = newId();
      insertRestoredTag(c, userId, { id, name, color: NEW_TAG_COLOR, created_at: w.now, updated_at: w.now });
      tagIds.set(key, id);
    }
    return id;
  };
  const insert = (r: LegacyRecords["tasks"][number], i: number) => {
    if (w.skip.tasks.has(r.id)) {
      w.skipped.tasks++;
      return;
    }
    const listId = w.maps.lists.get(r.list_id)!;
    let parentId: string | null = null;
    if (r.parent_id !== null) {
      parentId = w.maps.tasks.get(r.parent_id)!;
      const p = w.existing.get(parentId);
      if (p && (p.parent_id !== null || p.list_id !== listId)) {
        w.problems.push({ code: "invalid_parent", path: w.locate("tasks", i, "parent_id"), message: `task ${r.parent_id} already exists here as a subtask or in another list` });
        return;
      }
    }
    const id = w.maps.tasks.get(r.id)!;
    insertRestoredTask(c, userId, { ...r, id, list_id: listId, parent_id: parentId, completed: r.completed ? 1 : 0, version: 1, position: 0 });
    linkRestoredTags(c, id, r.tags.map(tagOf));
    writeReminders(w, "task", id, r.reminders);
    w.counts.tasks++;
    w.pacer.add();
  };
  // File order, so that tasks created in the same millisecond come back in the same order (the
  // export orders by created_at, then insertion); a subtask that comes before its parent waits for
  // it (the foreign key is checked row by row). Validation made sure every parent is in the file.
  const placed = new Set<string>();
  const waiting = new Map<string, number[]>();
  const place = (r: LegacyRecords["tasks"][number], i: number): void => {
    insert(r, i);
    placed.add(r.id);
    const children = waiting.get(r.id);
    if (children) {
      waiting.delete(r.id);
      for (const j of children) place(take(f, "tasks", j), j);
    }
  };
  for (let i = 0; i < f.json.tasks.length; i++) {
    const r = recordAt(f, "tasks", i);
    if (r.parent_id !== null && !placed.has(r.parent_id)) {
      waiting.set(r.parent_id, [...(waiting.get(r.parent_id) ?? []), i]);
      continue;
    }
    f.json.tasks[i] = "";
    place(r, i);
  }
  // Unreachable after validation (every parent is a task of the file); kept so nothing is lost silently.
  for (const [, list] of waiting) for (const j of list) insert(take(f, "tasks", j), j);
}

function writeRecurrences(w: Writing): void {
  eachNew(w, "recurrences", (r, i) => {
    const taskId = w.maps.tasks.get(r.task_id)!;
    const had = w.existing.get(taskId);
    if (had && recurrenceIdOfTask(w.c, taskId) !== null) {
      w.problems.push({ code: "validation_failed", path: w.locate("recurrences", i, "task_id"), message: `task ${r.task_id} already has a recurrence here` });
      return;
    }
    // Merge: a task the user already has (skipped) may be a subtask here, whatever the file says of it.
    const onSubtask = had ? recurrenceOnSubtaskProblem(had.parent_id) : null;
    if (onSubtask) {
      w.problems.push({ code: "validation_failed", path: w.locate("recurrences", i, "task_id"), message: `task ${r.task_id} already exists here as a subtask: ${onSubtask}` });
      return;
    }
    const dtstart = w.checked.dtstart.get(r.id) ?? null;
    // `unit` was checked against the units (legacy.records.ts) while the file was read.
    insertRestoredRecurrence(w.c, w.userId, { ...r, id: w.maps.recurrences.get(r.id)!, task_id: taskId, dtstart, unit: r.unit as RecurrenceExportRow["unit"] });
    w.counts.recurrences++;
    w.pacer.add();
  });
}

function writeHabits(w: Writing): void {
  eachNew(w, "habits", (r) => {
    const archived_at = r.archived ? r.updated_at : null;
    const id = w.maps.habits.get(r.id)!;
    insertRestoredHabit(w.c, w.userId, { ...r, id, frequency: JSON.stringify(r.frequency), archived_at });
    writeReminders(w, "habit", id, r.reminders);
    w.counts.habits++;
  });
}

function writeCountdowns(w: Writing): void {
  eachNew(w, "countdowns", (r) => {
    const lunar = w.checked.lunar.get(r.id) ?? null;
    const id = w.maps.countdowns.get(r.id)!;
    insertRestoredCountdown(
      w.c,
      w.userId,
      {
        ...r,
        id,
        // An archived countdown is never pinned.
        pinned: r.pinned && !r.archived ? 1 : 0,
        lunar_month: lunar?.month ?? null,
        lunar_day: lunar?.day ?? null,
        lunar_leap: lunar ? (lunar.leap ? 1 : 0) : null,
        archived_at: r.archived ? r.updated_at : null,
      },
      // One pinned countdown per user: a merge keeps the pin the user already has.
      w.mode === "merge",
    );
    writeReminders(w, "countdown", id, r.reminders);
    w.counts.countdowns++;
  });
}

function writeMemos(w: Writing): void {
  eachNew(w, "memos", (r) => {
    insertRestoredMemo(w.c, w.userId, { ...r, id: w.maps.memos.get(r.id)!, pinned: r.pinned ? 1 : 0, version: 1 });
    w.counts.memos++;
    w.pacer.add();
  });
}
