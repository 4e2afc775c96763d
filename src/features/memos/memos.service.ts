import type { Core } from "../../core/core";
import { writeTx } from "../../core/db";
import { invalidCursor, notArchived, notFound, stateConflict, versionConflict } from "../../core/errors";
import { newId } from "../../core/ids";
import { toPage, type Page } from "../../core/cursor";
import { deleteMemo, findMemo, insertMemo, pageMemos, setMemoDeleted, updateMemoIfVersion, type MemoRow } from "./memos.repo";
import type { Memo, MemoCreate, MemoPatch } from "./memos.schemas";
import { presentMemo } from "./memos.present";

const ENDPOINT = "memos";

/** Memos: Markdown notes with optimistic locking, soft delete, restore and purge. */
export class MemosService {
  constructor(private readonly core: Core) {}

  /** Newest first (created_at, then id); the cursor is bound to the state walked, so it cannot cross lists. */
  list(userId: string, deleted: boolean, limit: number, cursor: string | undefined): Page<Memo> {
    const endpoint = deleted ? `${ENDPOINT}:deleted` : ENDPOINT;
    let after: { at: string; id: string } | null = null;
    if (cursor) {
      const key = this.core.cursors.decode(endpoint, userId, cursor);
      if (key.length !== 2 || typeof key[0] !== "string" || typeof key[1] !== "string") throw invalidCursor();
      after = { at: key[0], id: key[1] };
    }
    const rows = pageMemos(this.core.db, userId, deleted, limit, after);
    return toPage(rows, limit, presentMemo, (r) => [r.createdAt, r.id], (k) => this.core.cursors.encode(endpoint, userId, k));
  }

  create(userId: string, input: MemoCreate): MemoRow {
    const now = this.core.clock.now().toISOString();
    const row: MemoRow = {
      id: newId(),
      userId,
      content: input.content,
      pinned: input.pinned ?? false,
      version: 1,
      createdAt: now,
      updatedAt: now,
      deletedAt: null,
    };
    writeTx(this.core.db, (tx) => insertMemo(tx, row));
    return row;
  }

  /** A soft-deleted memo is still answered, with its deleted_at. */
  get(userId: string, id: string): MemoRow {
    const row = findMemo(this.core.db, userId, id);
    if (!row) throw notFound("memo");
    return row;
  }

  /** Atomic compare-and-set on version; a soft-deleted memo must be restored before editing (404). */
  update(userId: string, id: string, patch: MemoPatch): MemoRow {
    return writeTx(this.core.db, (tx) => {
      if (patch.content === undefined && patch.pinned === undefined) {
        // Nothing to change: the version is still checked, and stays.
        const current = findMemo(tx, userId, id);
        if (!current || current.deletedAt !== null) throw notFound("memo");
        if (current.version !== patch.version) throw versionConflict("memo", current.version, patch.version);
        return current;
      }
      const set: { content?: string; pinned?: boolean; updatedAt: string } = { updatedAt: this.core.clock.now().toISOString() };
      if (patch.content !== undefined) set.content = patch.content;
      if (patch.pinned !== undefined) set.pinned = patch.pinned;
      if (!updateMemoIfVersion(tx, userId, id, patch.version, set)) {
        const current = findMemo(tx, userId, id);
        if (!current || current.deletedAt !== null) throw notFound("memo");
        throw versionConflict("memo", current.version, patch.version);
      }
      return findMemo(tx, userId, id)!;
    });
  }

  /** Soft delete; deleting an already deleted memo changes nothing. */
  softDelete(userId: string, id: string): void {
    writeTx(this.core.db, (tx) => {
      const current = findMemo(tx, userId, id);
      if (!current) throw notFound("memo");
      if (current.deletedAt !== null) return;
      const now = this.core.clock.now().toISOString();
      setMemoDeleted(tx, userId, id, now, now);
    });
  }

  /** Restoring an active memo answers it unchanged. */
  restore(userId: string, id: string): MemoRow {
    return writeTx(this.core.db, (tx) => {
      const current = findMemo(tx, userId, id);
      if (!current) throw notFound("memo");
      // Restore applies to a deleted memo only (contract §12), as for every restorable thing.
      if (current.deletedAt === null) throw stateConflict("the memo is not deleted");
      setMemoDeleted(tx, userId, id, null, this.core.clock.now().toISOString());
      return findMemo(tx, userId, id)!;
    });
  }

  purge(userId: string, id: string): void {
    writeTx(this.core.db, (tx) => {
      const current = findMemo(tx, userId, id);
      if (!current) throw notFound("memo");
      if (current.deletedAt === null) throw notArchived("memo");
      deleteMemo(tx, userId, id);
    });
  }
}
