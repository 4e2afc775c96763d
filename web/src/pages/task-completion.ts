// Completing tasks, one or many, and undoing it exactly. A plain task is completed with PATCH and
// undone with PATCH (it was open: completed_at was null). A repeating one is completed through its
// recurrence (a completed copy is recorded and the task moves to its next occurrence, its subtasks
// reset); its undo is the server's own: POST /recurrences/completions/undo with the token the
// completion answered, which in one transaction removes the copy, puts the task back on the
// occurrence it was on with its subtasks, and brings back a recurrence that completion had ended.
// A batch is undone with POST /tasks/batch/undo and the batch's token.
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

const undoCompletion = (done: RecurrenceCompletion) => api.post("/recurrences/completions/undo", { undo_token: done.undo_token ?? "" });
/** POST /tasks/batch/undo with a batch's token (null: nothing to undo that way). */
export const undoBatch = (token: string | null | undefined) => (token ? api.post("/tasks/batch/undo", { undo_token: token }) : Promise.resolve());

/** Completes one task (a repeating one through its recurrence). */
export async function completeTask(task: Task): Promise<Completion> {
  const rec = await recurrenceOf(task);
  if (rec) {
    const r = await api.post<RecurrenceCompletion>(`/recurrences/${rec.id}/complete`, {}, { undo: true });
    return {
      updated: r.next ?? r.completed,
      recurring: true,
      message: r.next?.due_at ? t.tasks.nextOccurrence(formatDue(r.next.due_at)) : t.tasks.seriesEnded,
      undo: () => undoCompletion(r).then(() => undefined),
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
  const batch = plain.length ? await api.post<{ undo_token?: string | null }>("/tasks/batch", { task_ids: plain.map((x) => x.id), completed: true }, { undo: true }) : null;
  const repeating: RecurrenceCompletion[] = [];
  for (let i = 0; i < open.length; i++) {
    const rec = recs[i];
    if (rec) repeating.push(await api.post<RecurrenceCompletion>(`/recurrences/${rec.id}/complete`, {}, { undo: true }));
  }
  return {
    count: open.length,
    undo: async () => {
      for (const done of repeating.reverse()) await undoCompletion(done);
      await undoBatch(batch?.undo_token ?? null);
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
