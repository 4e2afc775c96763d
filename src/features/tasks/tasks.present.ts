import type { Db } from "../../core/db";
import type { Tag } from "../tags/tags.schemas";
import { findSubtasks, findTagsOfTasks, type TaskRecord } from "./tasks.repo";
import type { Subtask, Task } from "./tasks.schemas";

function base(r: TaskRecord, tags: Tag[]): Subtask {
  return {
    id: r.id,
    list_id: r.list_id,
    parent_id: r.parent_id,
    title: r.title,
    description: r.description,
    completed: r.completed === 1,
    completed_at: r.completed_at,
    due_at: r.due_at,
    priority: r.priority,
    version: r.version,
    tags,
    subtasks: [],
    created_at: r.created_at,
    updated_at: r.updated_at,
    deleted_at: r.deleted_at,
  };
}

/** Row → API shape, given its tags and (for a top-level task) its subtasks' rows. */
export function presentTask(r: TaskRecord, tagsByTask: Map<string, Tag[]>, subtasks: TaskRecord[]): Task {
  return { ...base(r, tagsByTask.get(r.id) ?? []), subtasks: subtasks.map((s) => base(s, tagsByTask.get(s.id) ?? [])) };
}

/**
 * Presents many tasks with two extra queries in all (subtasks, then the tags of every task
 * shown), never one per task. `withDeletedSubtasks` for the trash, where subtasks went with their parent.
 */
export function presentTasks(db: Db, rows: TaskRecord[], withDeletedSubtasks = false): Task[] {
  if (rows.length === 0) return [];
  const topIds = rows.filter((r) => r.parent_id === null).map((r) => r.id);
  const subs = findSubtasks(db, topIds, withDeletedSubtasks);
  const byParent = new Map<string, TaskRecord[]>();
  for (const s of subs) {
    const arr = byParent.get(s.parent_id!);
    if (arr) arr.push(s);
    else byParent.set(s.parent_id!, [s]);
  }
  const tagsByTask = new Map<string, Tag[]>();
  for (const t of findTagsOfTasks(db, [...rows.map((r) => r.id), ...subs.map((s) => s.id)])) {
    const tag = { id: t.id, name: t.name, color: t.color };
    const arr = tagsByTask.get(t.task_id);
    if (arr) arr.push(tag);
    else tagsByTask.set(t.task_id, [tag]);
  }
  return rows.map((r) => presentTask(r, tagsByTask, byParent.get(r.id) ?? []));
}
