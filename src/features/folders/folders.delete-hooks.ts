import type { Conn } from "../../core/db";

/**
 * Called inside the transaction that deletes a folder, after the folder is marked deleted. What
 * lives in a folder belongs to features building on folders (lists move to root level); they
 * register here, so folders depend on nothing that builds on them.
 */
export type OnFolderDeleted = (c: Conn, userId: string, folderId: string, now: string) => void;

export class FolderDeleteHooks {
  private readonly hooks: OnFolderDeleted[] = [];

  register(hook: OnFolderDeleted): void {
    this.hooks.push(hook);
  }

  deleted(c: Conn, userId: string, folderId: string, now: string): void {
    for (const h of this.hooks) h(c, userId, folderId, now);
  }
}
