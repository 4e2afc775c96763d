import type { Conn } from "../../core/db";
import type { Tag } from "../tags/tags.schemas";
import { subtasksOfParents, tagsAt, usernamesOf, type TaskRow } from "./tasks.repo";
import type { Subtask, Task } from "./tasks.schemas";

/** Row → API shape (the field order is the JSON's), given its tags and subtasks. */
type Person = { id: string; username: string } | null;
function shape<S extends Subtask[]>(r: TaskRow, tags: Tag[], subtasks: S, names: Map<string, string>) {
  const person = (id: string | null): Person => (id !== null && names.has(id) ? { id, username: names.get(id)! } : null);
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
    created_by: person(r.created_by),
    completed_by: r.completed === 1 ? person(r.completed_by) : null,
  };
}

/**
 * Presents many tasks with two extra statements in all, never one per task: the subtasks of the
 * top-level rows, then the tags of every task shown (each tag row names its task by position).
 * `withDeletedSubtasks` for the trash, where subtasks went with their parent.
 */
export function presentTasks(c: Conn, viewerId: string, rows: TaskRow[], withDeletedSubtasks = false): Task[] {
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
  for (const t of tagsAt(c, ids, viewerId)) tags[t.at]!.push({ id: t.id, name: t.name, color: t.color });
  const people = new Set<string>();
  for (const r of rows) {
    if (r.created_by !== null) people.add(r.created_by);
    if (r.completed_by !== null) people.add(r.completed_by);
  }
  for (const r of subs) {
    if (r.created_by !== null) people.add(r.created_by);
    if (r.completed_by !== null) people.add(r.completed_by);
  }
  const names = usernamesOf(c, [...people]);
  const byParent = new Map<string, Subtask[]>();
  for (let i = 0; i < subs.length; i++) {
    const s = subs[i]!;
    const sub: Subtask = shape(s, tags[n + i]!, [], names);
    const arr = byParent.get(s.parent_id!);
    if (arr) arr.push(sub);
    else byParent.set(s.parent_id!, [sub]);
  }
  const out: Task[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const r = rows[i]!;
    out[i] = shape(r, tags[i]!, (subs.length && r.parent_id === null && byParent.get(r.id)) || [], names);
  }
  return out;
}
