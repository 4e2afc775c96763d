import type { Tx } from "../../core/db";

/**
 * Called inside the purging transaction, before tasks are removed for good (trash delete, list
 * purge), with every task id about to go (subtasks included). Recurrences go by FK cascade; a
 * feature that owns something outside the database (attachment files) registers here and may
 * return a callback to run after the commit (removing files only once the rows are gone).
 */
export type BeforePurgeTasks = (tx: Tx, userId: string, taskIds: string[]) => (() => void) | void;

export class TaskPurgeHooks {
  private readonly hooks: BeforePurgeTasks[] = [];

  register(hook: BeforePurgeTasks): void {
    this.hooks.push(hook);
  }

  /** Runs every hook inside the transaction; returns what must run after the commit. */
  beforePurge(tx: Tx, userId: string, taskIds: string[]): (() => void)[] {
    const after: (() => void)[] = [];
    if (taskIds.length === 0) return after;
    for (const h of this.hooks) {
      const cb = h(tx, userId, taskIds);
      if (cb) after.push(cb);
    }
    return after;
  }
}

/** Post-commit work must not turn a committed purge into an error answer. */
export function runAfterCommit(callbacks: (() => void)[], onError: (e: unknown) => void): void {
  for (const cb of callbacks) {
    try {
      cb();
    } catch (e) {
      onError(e);
    }
  }
}
