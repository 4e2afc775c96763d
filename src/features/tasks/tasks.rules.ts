/**
 * Rules on tasks that hold however a task is written: by the API (tasks.service.ts, and
 * recurrence.service.ts, which builds on tasks) or by a restore (backup, legacy). One copy,
 * called by all of them; each caller words the refusal for its own direction.
 */

/**
 * Only top-level tasks recur (contract §12): a subtask cannot get a recurrence, and a task with one
 * cannot become a subtask. Why a task under `parentId` (null: top-level) cannot recur, or null.
 */
export function recurrenceOnSubtaskProblem(parentId: string | null): string | null {
  return parentId === null ? null : `only top-level tasks recur; this task is a subtask of task ${parentId}`;
}
