import type { Conn } from "../../core/db";
import type { Tag } from "../tags/tags.schemas";
import { subtasksOfParents, tagsAt, type TaskRow } from "./tasks.repo";
import type { Subtask, Task } from "./tasks.schemas";

/** Row → API shape (the field order is the JSON's), given its tags and subtasks. */
function shape<S extends Subtask[]>(r: TaskRow, tags: Tag[], subtasks: S) {
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
    rank: r.rank,
    tags,
    subtasks,
    created_at: r.created_at,
    updated_at: r.updated_at,
    deleted_at: r.deleted_at,
  };
}

/**
 * Presents many tasks with two extra statements in all, never one per task: the subtasks of the
 * top-level rows, then the tags of every task shown (each tag row names its task by position).
 * `withDeletedSubtasks` for the trash, where subtasks went with their parent.
 */
export function presentTasks(c: Conn, rows: TaskRow[], withDeletedSubtasks = false): Task[] {
  const n = rows.length;
  if (n === 0) return [];
  const parents = new Set<string>();
  for (const r of rows) if (r.parent_id === null) parents.add(r.id);
  const subs = subtasksOfParents(c, [...parents], withDeletedSubtasks);
  const ids: string[] = new Array(n + subs.length);
  const tags: Tag[][] = new Array(n + subs.length);
  for (let i = 0; i < n; i++) {
    ids[i] = rows[i]!.id;
    tags[i] = [];
  }
  for (let i = 0; i < subs.length; i++) {
    ids[n + i] = subs[i]!.id;
    tags[n + i] = [];
  }
  for (const t of tagsAt(c, ids)) tags[t.at]!.push({ id: t.id, name: t.name, color: t.color });
  const byParent = new Map<string, Subtask[]>();
  for (let i = 0; i < subs.length; i++) {
    const s = subs[i]!;
    const sub: Subtask = shape(s, tags[n + i]!, []);
    const arr = byParent.get(s.parent_id!);
    if (arr) arr.push(sub);
    else byParent.set(s.parent_id!, [sub]);
  }
  const out: Task[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const r = rows[i]!;
    out[i] = shape(r, tags[i]!, (subs.length && r.parent_id === null && byParent.get(r.id)) || []);
  }
  return out;
}
