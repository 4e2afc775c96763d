import type { Conn } from "../../core/db";

/** What a feature building on lists did with a list's content inside the purging transaction. */
export interface ListContentPurged {
  /** Counts added to the `list_purged` audit entry's detail (`tasks`: how many went with the list). */
  detail?: Record<string, number>;
  /** Work for after the commit (attachment files removed once their rows are gone). */
  afterCommit?: (() => void)[];
}

/**
 * Called inside the purging transaction, before an archived list is removed for good (its rows
 * go by FK cascade). Features that own what lives in a list (tasks, and through their own hooks
 * recurrences and attachments) register here: lists depend on nothing that builds on them.
 */
export type BeforePurgeList = (c: Conn, userId: string, listId: string) => ListContentPurged | void;

export class ListPurgeHooks {
  private readonly hooks: BeforePurgeList[] = [];

  register(hook: BeforePurgeList): void {
    this.hooks.push(hook);
  }

  /** Runs every hook inside the transaction; returns the audit detail they add and what must run after the commit. */
  beforePurge(c: Conn, userId: string, listId: string): { detail: Record<string, number>; afterCommit: (() => void)[] } {
    const detail: Record<string, number> = {};
    const afterCommit: (() => void)[] = [];
    for (const h of this.hooks) {
      const r = h(c, userId, listId);
      if (!r) continue;
      Object.assign(detail, r.detail);
      if (r.afterCommit) afterCommit.push(...r.afterCommit);
    }
    return { detail, afterCommit };
  }
}
