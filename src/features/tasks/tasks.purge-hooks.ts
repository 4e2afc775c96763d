import type { Conn } from "../../core/db";

/**
 * Called inside the purging transaction (`c` is its Conn), before tasks are removed for good
 * (trash delete, list purge), with every task id about to go (subtasks included). Recurrences go
 * by FK cascade; a feature that owns something outside the database (attachment files) registers
 * here and may return a callback to run after the commit (removing files only once the rows are
 * gone).
 */
export type BeforePurgeTasks = (c: Conn, userId: string, taskIds: string[]) => (() => void) | void;

export class TaskPurgeHooks {
  private readonly hooks: BeforePurgeTasks[] = [];

  register(hook: BeforePurgeTasks): void {
    this.hooks.push(hook);
  }

  /** Runs every hook inside the transaction; returns what must run after the commit. */
  beforePurge(c: Conn, userId: string, taskIds: string[]): (() => void)[] {
    const after: (() => void)[] = [];
    if (taskIds.length === 0) return after;
    for (const h of this.hooks) {
      const cb = h(c, userId, taskIds);
      if (cb) after.push(cb);
    }
    return after;
  }
}

/** Where the callbacks beforePurge returns are run (kept here for the features that import it from tasks). */
export { runAfterCommit } from "../../core/db";
