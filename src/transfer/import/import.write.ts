import type { Conn } from "../../core/db";
import { newId } from "../../core/ids";
import { exportFolderRows, insertRestoredFolder, nextFolderPosition } from "../../features/folders/folders.repo";
import { exportListRows, inboxIdOf, insertRestoredList, nextListPosition } from "../../features/lists/lists.repo";
import { insertRestoredMemo } from "../../features/memos/memos.repo";
import { insertRestoredRecurrence } from "../../features/recurrence/recurrence.repo";
import { insertRestoredReminder } from "../../features/reminders/reminders.repo";
import { insertRestoredTag, tagIdsByKey, tagNameKey } from "../../features/tags/tags.repo";
import { insertRestoredTask, linkRestoredTags } from "../../features/tasks/tasks.repo";
import { MemoryPacer } from "../../core/streams/memory-pacing";
import { ROWS_PER_GC, type Plan, type PlanMemo, type PlanTask } from "./import.plan";

/** Colour of a tag an import creates (the sources' tag colours are not in their files). */
const NEW_TAG_COLOR = "#808080";
const SUFFIX = " (imported)";

/**
 * A name not yet used among `taken` (compared case-insensitively): the source's, else with
 * " (imported)", else " (imported 2)", … (the spec: imported lists keep their source names).
 */
function freeName(name: string, taken: Set<string>, max: number): string {
  const key = (s: string) => s.toLocaleLowerCase("en");
  let out = name;
  for (let n = 1; taken.has(key(out)); n++) {
    const suffix = n === 1 ? SUFFIX : ` (imported ${n})`;
    out = [...name].slice(0, max - suffix.length).join("") + suffix;
  }
  taken.add(key(out));
  return out;
}

/**
 * Writes a plan for `userId` through the owning repos, inside the caller's transaction
 * (import.jobs.ts): folders and lists, then each task (with its tags, recurrence and reminders) and
 * memo as the file is read again (Plan.replay), with a collection every ROWS_PER_GC rows (a full
 * one every tenth: the legacy restore's rhythm), so memory does not grow with the file's length.
 * Every value was checked by the PlanBuilder as the row was read (the same checks on both passes),
 * so nothing here refuses; a file that reads differently the second time, or a database error, rolls
 * all back. Reminders are written as a backup restore writes them (insertRestoredReminder): due at
 * once and unarmed, so the scheduler's next pass (within a minute) computes their schedule from
 * the imported task; an occurrence before the import never fires.
 */
export function writePlan(c: Conn, userId: string, plan: Plan, now: string): void {
  const folderNames = new Set<string>();
  for (const f of exportFolderRows(c, userId)) if (f.deleted_at === null) folderNames.add(f.name.toLocaleLowerCase("en"));
  const listNames = new Set<string>();
  for (const l of exportListRows(c, userId)) listNames.add(l.name.toLocaleLowerCase("en"));

  const folderIds = new Map<string, string>();
  let folderPos = nextFolderPosition(c, userId);
  for (const f of plan.folders) {
    const id = newId();
    insertRestoredFolder(c, userId, { id, name: freeName(f.name, folderNames, 200), position: folderPos++, created_at: now, updated_at: now, deleted_at: null });
    folderIds.set(f.key, id);
  }

  const listIds = new Map<string, string>();
  const inbox = inboxIdOf(c, userId);
  let listPos = nextListPosition(c, userId);
  for (const l of plan.lists) {
    if (l.inbox) {
      listIds.set(l.key, inbox);
      continue;
    }
    const id = newId();
    const folderId = l.folderKey === null ? null : folderIds.get(l.folderKey)!;
    insertRestoredList(c, userId, { id, name: freeName(l.name, listNames, 200), folder_id: folderId, color: null, position: listPos++, created_at: now, updated_at: now, deleted_at: null });
    listIds.set(l.key, id);
  }

  const tagIds = tagIdsByKey(c, userId);
  const tagOf = (name: string): string => {
    const key = tagNameKey(name);
    let id = tagIds.get(key);
    if (!id) {
      id = newId();
      insertRestoredTag(c, userId, { id, name, color: NEW_TAG_COLOR, created_at: now, updated_at: now });
      tagIds.set(key, id);
    }
    return id;
  };

  // The tasks, read again from the file one at a time (Plan.replay), placed as the first pass
  // resolved them. A parent may come after its subtasks in the file: the parents' ids are made
  // when first needed, and the foreign keys are checked at the commit (defer_foreign_keys, reset
  // by SQLite when the transaction ends).
  const { parent, position } = plan.tree;
  const isParent = new Uint8Array(parent.length);
  for (const p of parent) if (p !== -1) isParent[p] = 1;
  const parentIds = new Map<number, string>();
  const idOf = (i: number): string => {
    let id = parentIds.get(i);
    if (id === undefined) parentIds.set(i, (id = newId()));
    return id;
  };
  c.sqlite.run("PRAGMA defer_foreign_keys = ON");
  const pacer = new MemoryPacer(ROWS_PER_GC, 10);
  let written = 0;
  plan.replay({
    task(t: PlanTask, i: number) {
      if (i !== written++ || i >= parent.length) throw new Error(`the file read differently the second time (task ${i})`);
      const id = isParent[i] ? idOf(i) : newId();
      const listId = listIds.get(t.listKey);
      if (listId === undefined) throw new Error(`the file read differently the second time (list of task ${i})`);
      const p = parent[i]!;
      const created = t.createdAt ?? now;
      insertRestoredTask(c, userId, {
        id,
        list_id: listId,
        parent_id: p === -1 ? null : idOf(p),
        title: t.title,
        description: t.description,
        completed: t.completed ? 1 : 0,
        completed_at: t.completed ? (t.completedAt ?? now) : null,
        due_at: t.dueAt,
        priority: t.priority,
        version: 1,
        position: position[i]!,
        created_at: created,
        updated_at: now,
        deleted_at: null,
      });
      if (t.tags.length) linkRestoredTags(c, id, t.tags.map(tagOf));
      // A subtask's repeat was dropped by the first pass (only top-level tasks recur).
      const r = p === -1 ? t.recurrence : null;
      if (r) {
        insertRestoredRecurrence(c, userId, {
          id: newId(),
          task_id: id,
          kind: r.kind,
          rrule: r.kind === "rrule" ? r.rrule : null,
          interval: r.kind === "after_completion" ? r.interval : null,
          unit: r.kind === "after_completion" ? r.unit : null,
          timezone: r.timezone,
          dtstart: r.kind === "rrule" ? t.dueAt : null,
          created_at: now,
          updated_at: now,
        });
      }
      for (const rem of t.reminders ?? []) {
        insertRestoredReminder(c, userId, {
          id: newId(),
          target_type: "task",
          target_id: id,
          kind: rem.kind,
          minutes_before: rem.kind === "before_due" ? rem.minutesBefore : null,
          at: rem.kind === "at" ? rem.at : null,
          time: null,
          days_before: null,
          created_at: now,
          updated_at: now,
        });
      }
      pacer.add();
    },
    memo(m: PlanMemo) {
      const created = m.createdAt ?? now;
      insertRestoredMemo(c, userId, { id: newId(), content: m.content, pinned: 0, version: 1, created_at: created, updated_at: now, deleted_at: null });
      pacer.add();
    },
  });
  if (written !== parent.length) throw new Error(`the file read differently the second time (${written} tasks, not ${parent.length})`);
}
