// Completing tasks, one or many, and undoing it exactly. A plain task is completed with PATCH and
// undone with PATCH. A repeating one is completed through its recurrence (a completed copy is
// recorded and the task moves to its next occurrence, its subtasks reset), so undoing it removes the
// copy for good, moves the task back to the occurrence it was on and completes again the subtasks
// that were completed; when that completion ended the series (the task itself completed, the
// recurrence deleted), undo reopens the task and gives it the same remaining schedule again.
import { api } from "../api/client";
import type { Recurrence, RecurrenceCompletion, Task } from "../api/types";
import { t } from "../i18n";
import { formatDue } from "../ui";

export interface Completion {
  /** What the row shows now: the completed task, or the repeating task at its next occurrence. */
  updated: Task;
  recurring: boolean;
  /** A sentence for the toast. */
  message: string;
  /** Restores the state before the completion. */
  undo: () => Promise<void>;
}

const current = (id: string) => api.get<Task>(`/tasks/${id}`);

/** The task's recurrence, or null (a subtask never repeats). */
function recurrenceOf(task: Task): Promise<Recurrence | null> {
  return task.parent_id ? Promise.resolve(null) : api.get<Recurrence | null>(`/tasks/${task.id}/recurrence`);
}

/** Runs `f` over `xs`, at most `n` at a time (a batch of hundreds must not open hundreds of requests). */
async function limited<T, R>(xs: T[], n: number, f: (x: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(xs.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, xs.length) }, async () => {
      while (next < xs.length) {
        const i = next++;
        out[i] = await f(xs[i]!);
      }
    }),
  );
  return out;
}

async function reopen(id: string): Promise<void> {
  const now = await current(id);
  if (now.completed) await api.patch(`/tasks/${id}`, { completed: false, version: now.version });
}

/** Undoes a recurrence completion; `before` is the task as it was just before. */
async function undoRecurring(before: Task, rec: Recurrence, done: RecurrenceCompletion): Promise<void> {
  if (done.next) {
    // The completed copy goes for good (to the trash, then purged: it never existed).
    await api.del(`/tasks/${done.completed.id}`);
    await api.del(`/trash/${done.completed.id}`);
    let now = await current(before.id);
    if (now.due_at !== before.due_at) now = await api.patch<Task>(`/tasks/${before.id}`, { due_at: before.due_at, version: now.version });
    for (const s of before.subtasks) {
      const sub = now.subtasks.find((x) => x.id === s.id);
      if (s.completed && sub && !sub.completed) await api.patch(`/tasks/${s.id}`, { completed: true, version: sub.version });
    }
    return;
  }
  // The series had ended with this occurrence: the task itself was completed and the recurrence
  // deleted. Reopen it and give it the same remaining schedule: anchored at this occurrence, a COUNT
  // rule has exactly one occurrence left (this one); UNTIL rules keep their end, and the skipped
  // dates after this one are skipped again.
  await reopen(before.id);
  const body =
    rec.kind === "rrule"
      ? { task_id: before.id, kind: "rrule", rrule: (rec.rrule ?? "").replace(/COUNT=\d+/i, "COUNT=1"), timezone: rec.timezone }
      : { task_id: before.id, kind: "after_completion", interval: rec.interval, unit: rec.unit, timezone: rec.timezone };
  const again = await api.post<Recurrence>("/recurrences", body);
  const from = (before.due_at ?? "").slice(0, 10);
  for (const d of rec.exceptions) if (d > from) await api.post(`/recurrences/${again.id}/exceptions`, { date: d });
}

/** Completes one task (a repeating one through its recurrence). */
export async function completeTask(task: Task): Promise<Completion> {
  const rec = await recurrenceOf(task);
  if (rec) {
    const r = await api.post<RecurrenceCompletion>(`/recurrences/${rec.id}/complete`);
    return {
      updated: r.next ?? r.completed,
      recurring: true,
      message: r.next?.due_at ? t.tasks.nextOccurrence(formatDue(r.next.due_at)) : t.tasks.seriesEnded,
      undo: () => undoRecurring(task, rec, r),
    };
  }
  const updated = await api.patch<Task>(`/tasks/${task.id}`, { completed: true, version: task.version });
  return { updated, recurring: false, message: t.tasks.completed, undo: () => reopen(task.id) };
}

/**
 * Completes the open tasks among `tasks`: plain ones in one batch request, repeating ones each
 * through its recurrence (so that each completion can be undone exactly). Answers the undo.
 */
export async function completeTasks(tasks: Task[]): Promise<{ count: number; undo: () => Promise<void> }> {
  const open = tasks.filter((x) => !x.completed);
  const recs = await limited(open, 6, recurrenceOf);
  const plain = open.filter((_, i) => !recs[i]);
  if (plain.length) await api.post("/tasks/batch", { task_ids: plain.map((x) => x.id), completed: true });
  const repeating: [Task, Recurrence, RecurrenceCompletion][] = [];
  for (let i = 0; i < open.length; i++) {
    const rec = recs[i];
    if (rec) repeating.push([open[i]!, rec, await api.post<RecurrenceCompletion>(`/recurrences/${rec.id}/complete`)]);
  }
  return {
    count: open.length,
    undo: async () => {
      if (plain.length) await api.post("/tasks/batch", { task_ids: plain.map((x) => x.id), completed: false });
      for (const [task, rec, done] of repeating) await undoRecurring(task, rec, done);
    },
  };
}

/** Moves tasks to the trash in one batch; the undo restores each (with its subtasks). */
export async function deleteTasks(ids: string[]): Promise<{ count: number; undo: () => Promise<void> }> {
  await api.post("/tasks/batch", { task_ids: ids, soft_delete: true });
  return {
    count: ids.length,
    undo: async () => {
      await limited(ids, 4, (id) => api.post(`/tasks/${id}/restore`));
    },
  };
}
