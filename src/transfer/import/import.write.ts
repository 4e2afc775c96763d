import type { Conn } from "../../core/db";
import { newId } from "../../core/ids";
import { exportFolderRows, insertRestoredFolder, nextFolderPosition } from "../../features/folders/folders.repo";
import { exportListRows, inboxIdOf, insertRestoredList, nextListPosition } from "../../features/lists/lists.repo";
import { insertRestoredMemo } from "../../features/memos/memos.repo";
import { insertRestoredRecurrence } from "../../features/recurrence/recurrence.repo";
import { insertRestoredReminder } from "../../features/reminders/reminders.repo";
import { insertRestoredTag, tagIdsByKey, tagNameKey } from "../../features/tags/tags.repo";
import { insertRestoredTask, linkRestoredTags } from "../../features/tasks/tasks.repo";
import type { Plan } from "./import.plan";

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
 * Writes a finished plan for `userId` through the owning repos, inside the caller's transaction
 * (import.jobs.ts): folders, lists, tags, tasks (parents first), recurrences, reminders, memos.
 * Every value was checked by PlanBuilder.finish(), so nothing here refuses; a database error rolls
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

  const taskIds = new Map<string, string>();
  const positions = new Map<string, number>();
  for (const t of plan.tasks) {
    const id = newId();
    taskIds.set(t.key, id);
    const listId = listIds.get(t.listKey)!;
    const slot = t.parentKey === null ? listId : t.parentKey;
    const position = positions.get(slot) ?? 0;
    positions.set(slot, position + 1);
    const created = t.createdAt ?? now;
    insertRestoredTask(c, userId, {
      id,
      list_id: listId,
      parent_id: t.parentKey === null ? null : taskIds.get(t.parentKey)!,
      title: t.title,
      description: t.description,
      completed: t.completed ? 1 : 0,
      completed_at: t.completed ? (t.completedAt ?? now) : null,
      due_at: t.dueAt,
      priority: t.priority,
      version: 1,
      position,
      created_at: created,
      updated_at: now,
      deleted_at: null,
    });
    if (t.tags.length) linkRestoredTags(c, id, t.tags.map(tagOf));
    const r = t.recurrence;
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
  }

  for (const m of plan.memos) {
    const created = m.createdAt ?? now;
    insertRestoredMemo(c, userId, { id: newId(), content: m.content, pinned: 0, version: 1, created_at: created, updated_at: now, deleted_at: null });
  }
}
