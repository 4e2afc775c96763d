import type { Conn } from "../../core/db";
import type { AuthUser } from "../../core/auth/principal";

/**
 * What the tasks feature must ask about repeating tasks without depending on the feature that
 * owns them (recurrence builds on tasks, not the other way round). Recurrence registers one
 * implementation at start-up; every call runs inside the caller's transaction, whose Conn it is handed.
 */
export interface RepeatingTasks {
  /** Of these task ids (the user's), the ones that repeat. */
  repeating(c: Conn, userId: string, taskIds: string[]): Set<string>;
  /**
   * Completes the current occurrence of a repeating task exactly as POST
   * /recurrences/{id}/complete does (a completed copy, the task moved to its next occurrence, or
   * completed for good when the series has ended). The caller has already grown the task's
   * version by one for this change, so the move does not grow it again.
   */
  completeOccurrence(c: Conn, user: AuthUser, taskId: string, at: Date): void;
  /** The tasks moved into a list of another owner: their recurrences now belong to that owner. */
  reassign(c: Conn, taskIds: string[], ownerId: string): void;
}

/** The registry PATCH /tasks and POST /tasks/batch go through; without a registration nothing repeats. */
export class TaskRepeatHooks {
  private impl: RepeatingTasks | null = null;

  register(impl: RepeatingTasks): void {
    if (this.impl) throw new Error("repeating tasks are already registered");
    this.impl = impl;
  }

  repeating(c: Conn, userId: string, taskIds: string[]): Set<string> {
    return this.impl && taskIds.length ? this.impl.repeating(c, userId, taskIds) : new Set();
  }

  completeOccurrence(c: Conn, user: AuthUser, taskId: string, at: Date): void {
    if (!this.impl) throw new Error("no repeating-task implementation registered");
    this.impl.completeOccurrence(c, user, taskId, at);
  }

  reassign(c: Conn, taskIds: string[], ownerId: string): void {
    if (this.impl && taskIds.length) this.impl.reassign(c, taskIds, ownerId);
  }
}
