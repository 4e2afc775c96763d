import type { Conn } from "../../core/db";

/**
 * Called inside the transaction that deletes a tag, before the tag goes. What carries a tag
 * belongs to features building on tags (a task's version grows when its tags change); they
 * register here, so tags depend on nothing that builds on them.
 */
export type OnTagDeleted = (c: Conn, tagId: string, now: string) => void;

export class TagDeleteHooks {
  private readonly hooks: OnTagDeleted[] = [];

  register(hook: OnTagDeleted): void {
    this.hooks.push(hook);
  }

  deleting(c: Conn, tagId: string, now: string): void {
    for (const h of this.hooks) h(c, tagId, now);
  }
}
