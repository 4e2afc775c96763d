import type { Core } from "../../core/core";
import { writeTx } from "../../core/db";
import { notFound, validationFailed } from "../../core/errors";
import { newId } from "../../core/ids";
import type { FolderDeleteHooks } from "./folders.delete-hooks";
import { findActiveFolder, insertFolder, listActiveFolders, nextFolderPosition, updateFolder, type FolderRow } from "./folders.repo";
import type { FolderCreate, FolderPatch } from "./folders.schemas";

/** `ids` must name every item of `active` exactly once. */
export function checkReorder(ids: string[], active: string[]): void {
  const set = new Set(active);
  const seen = new Set<string>();
  const errors = [];
  for (const [i, id] of ids.entries()) {
    if (!set.has(id)) errors.push({ path: `ids.${i}`, message: `not one of the active items: ${id}` });
    else if (seen.has(id)) errors.push({ path: `ids.${i}`, message: `named twice: ${id}` });
    seen.add(id);
  }
  if (errors.length === 0 && seen.size !== set.size) errors.push({ path: "ids", message: `must name all ${set.size} active items, got ${seen.size}` });
  if (errors.length) throw validationFailed(errors, "ids must be exactly the active items, each once");
}

export class FoldersService {
  /** @param deleteHooks where features building on folders (lists) register what a folder's deletion does to them. */
  constructor(
    private readonly core: Core,
    private readonly deleteHooks: FolderDeleteHooks,
  ) {}

  list(userId: string): FolderRow[] {
    return listActiveFolders(this.core.db, userId);
  }

  get(userId: string, id: string): FolderRow {
    const f = findActiveFolder(this.core.db, userId, id);
    if (!f) throw notFound("folder");
    return f;
  }

  create(userId: string, input: FolderCreate): FolderRow {
    return writeTx(this.core.db, (tx) => {
      const now = this.core.clock.now().toISOString();
      const id = newId();
      insertFolder(tx, { id, userId, name: input.name, position: nextFolderPosition(tx, userId), createdAt: now, updatedAt: now });
      return findActiveFolder(tx, userId, id)!;
    });
  }

  update(userId: string, id: string, input: FolderPatch): FolderRow {
    return writeTx(this.core.db, (tx) => {
      if (!findActiveFolder(tx, userId, id)) throw notFound("folder");
      if (input.name !== undefined) updateFolder(tx, userId, id, { name: input.name, updatedAt: this.core.clock.now().toISOString() });
      return findActiveFolder(tx, userId, id)!;
    });
  }

  /** Soft delete; its lists move to root level (the lists feature's delete hook). */
  remove(userId: string, id: string): void {
    writeTx(this.core.db, (tx) => {
      if (!findActiveFolder(tx, userId, id)) throw notFound("folder");
      const now = this.core.clock.now().toISOString();
      updateFolder(tx, userId, id, { deletedAt: now, updatedAt: now });
      this.deleteHooks.deleted(tx, userId, id, now);
    });
  }

  reorder(userId: string, ids: string[]): FolderRow[] {
    return writeTx(this.core.db, (tx) => {
      checkReorder(
        ids,
        listActiveFolders(tx, userId).map((f) => f.id),
      );
      const now = this.core.clock.now().toISOString();
      ids.forEach((id, i) => updateFolder(tx, userId, id, { position: i + 1, updatedAt: now }));
      return listActiveFolders(tx, userId);
    });
  }
}
