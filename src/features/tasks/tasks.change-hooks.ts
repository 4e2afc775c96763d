import type { Conn } from "../../core/db";

/**
 * Called inside the transaction of every write that may change when a task's reminders fire: its
 * due_at, completion, trash state (PATCH, batch, delete, restore, a recurrence moving it to its
 * next occurrence). Reminders build on tasks and register here, so tasks never imports them; a
 * hook re-arms or cancels at once, in the same transaction as the change.
 */
export type TasksChanged = (c: Conn, userId: string, taskIds: string[]) => void;

export class TaskChangeHooks {
  private readonly hooks: TasksChanged[] = [];

  register(hook: TasksChanged): void {
    this.hooks.push(hook);
  }

  changed(c: Conn, userId: string, taskIds: string[]): void {
    if (taskIds.length === 0) return;
    for (const h of this.hooks) h(c, userId, taskIds);
  }
}
