import type { Conn } from "./db";

/**
 * "These rows of mine changed": called inside the writing transaction, so what builds on a
 * feature (reminders on habits and countdowns) can follow at once without the feature importing
 * it. Each hook gets the transaction's Conn, the user and the ids that changed.
 */
export type RowsChanged = (c: Conn, userId: string, ids: string[]) => void;

export class ChangeHooks {
  private readonly hooks: RowsChanged[] = [];

  register(hook: RowsChanged): void {
    this.hooks.push(hook);
  }

  changed(c: Conn, userId: string, ids: string[]): void {
    if (ids.length === 0) return;
    for (const h of this.hooks) h(c, userId, ids);
  }
}
