import type { Core } from "../../core/core";
import { runAfterCommit, writeTx, type Conn } from "../../core/db";
import { inboxImmutable, invalidReference, notArchived, notFound, stateConflict } from "../../core/errors";
import type { RequestMeta } from "../../core/http";
import { newId } from "../../core/ids";
import { recordAudit } from "../audit/audit.repo";
import { findActiveFolder } from "../folders/folders.repo";
import { checkReorder } from "../folders/folders.service";
import type { FolderDeleteHooks } from "../folders/folders.delete-hooks";
import {
  activeReorderableListIds,
  deleteList,
  detachListsFromFolder,
  findList,
  insertList,
  listLists,
  nextListPosition,
  updateList,
  type ListView,
} from "./lists.repo";
import type { ListPurgeHooks } from "./lists.purge-hooks";
import type { ListCreate, ListPatch } from "./lists.schemas";

export class ListsService {
  /**
   * @param purgeHooks where features building on lists (tasks) register what purging a list does to them.
   * @param folderHooks lists in a deleted folder move to root level: registered here.
   */
  constructor(
    private readonly core: Core,
    private readonly purgeHooks: ListPurgeHooks,
    folderHooks: FolderDeleteHooks,
  ) {
    folderHooks.register(detachListsFromFolder);
  }

  private now(): string {
    return this.core.clock.now().toISOString();
  }

  /** The user's list (active or archived), else 404. */
  private existing(c: Conn, userId: string, id: string): ListView {
    const l = findList(c, userId, id);
    if (!l) throw notFound("list");
    return l;
  }

  /** The user's active list, else 404 (archived lists cannot be renamed or moved). */
  private active(c: Conn, userId: string, id: string): ListView {
    const l = this.existing(c, userId, id);
    if (l.deletedAt !== null) throw notFound("list");
    return l;
  }

  private requireFolder(c: Conn, userId: string, folderId: string | null | undefined): string | null {
    if (folderId === undefined || folderId === null) return null;
    if (!findActiveFolder(c, userId, folderId)) throw invalidReference([{ path: "folder_id", message: `no folder ${folderId}` }], `folder ${folderId} does not exist`);
    return folderId;
  }

  list(userId: string, archived: boolean): ListView[] {
    return listLists(this.core.db, userId, archived);
  }

  get(userId: string, id: string): ListView {
    return this.existing(this.core.db, userId, id);
  }

  create(userId: string, input: ListCreate): ListView {
    return writeTx(this.core.db, (tx) => {
      const folderId = this.requireFolder(tx, userId, input.folder_id);
      const now = this.now();
      const id = newId();
      insertList(tx, {
        id,
        userId,
        name: input.name,
        folderId,
        isInbox: false,
        color: input.color ?? null,
        position: nextListPosition(tx, userId),
        createdAt: now,
        updatedAt: now,
      });
      return findList(tx, userId, id)!;
    });
  }

  update(userId: string, id: string, input: ListPatch): ListView {
    return writeTx(this.core.db, (tx) => {
      const l = this.active(tx, userId, id);
      if (l.isInbox && input.name !== undefined) throw inboxImmutable();
      const set: { name?: string; color?: string | null; sort?: ListPatch["sort"]; updatedAt: string } = { updatedAt: this.now() };
      if (input.sort !== undefined) set.sort = input.sort;
      if (input.name !== undefined) set.name = input.name;
      if (input.color !== undefined) set.color = input.color;
      updateList(tx, userId, id, set);
      return findList(tx, userId, id)!;
    });
  }

  /** Archive: the list and its tasks disappear from every task view until restored. */
  archive(userId: string, id: string): void {
    writeTx(this.core.db, (tx) => {
      const l = this.existing(tx, userId, id);
      if (l.isInbox) throw inboxImmutable();
      if (l.deletedAt !== null) throw notFound("list");
      const now = this.now();
      updateList(tx, userId, id, { deletedAt: now, updatedAt: now });
    });
  }

  restore(userId: string, id: string): ListView {
    return writeTx(this.core.db, (tx) => {
      const l = this.existing(tx, userId, id);
      if (l.deletedAt === null) throw stateConflict("the list is not archived");
      updateList(tx, userId, id, { deletedAt: null, updatedAt: this.now() });
      return findList(tx, userId, id)!;
    });
  }

  /** Removes an archived list for good, with its tasks (their recurrences and attachments too). */
  purge(userId: string, id: string, meta: RequestMeta): void {
    const after = writeTx(this.core.db, (tx) => {
      const l = this.existing(tx, userId, id);
      if (l.isInbox) throw inboxImmutable();
      if (l.deletedAt === null) throw notArchived("list");
      const content = this.purgeHooks.beforePurge(tx, userId, id);
      deleteList(tx, userId, id); // tasks, tag links and recurrences go by FK cascade
      recordAudit(tx, {
        userId,
        action: "list_purged",
        at: this.core.clock.now(),
        ip: meta.ip,
        userAgent: meta.userAgent,
        targetType: "list",
        targetId: id,
        detail: { name: l.name.slice(0, 100), ...content.detail },
      });
      return content.afterCommit;
    });
    runAfterCommit(after, (e) => this.core.logger.error("after-purge hook failed", { error: String(e) }));
  }

  move(userId: string, id: string, folderId: string | null): ListView {
    return writeTx(this.core.db, (tx) => {
      const l = this.existing(tx, userId, id);
      if (l.isInbox) throw inboxImmutable();
      if (l.deletedAt !== null) throw notFound("list");
      updateList(tx, userId, id, { folderId: this.requireFolder(tx, userId, folderId), updatedAt: this.now() });
      return findList(tx, userId, id)!;
    });
  }

  /** `ids` is exactly the active lists except the inbox, which always stays first. */
  reorder(userId: string, ids: string[]): ListView[] {
    return writeTx(this.core.db, (tx) => {
      checkReorder(ids, activeReorderableListIds(tx, userId));
      const now = this.now();
      ids.forEach((id, i) => updateList(tx, userId, id, { position: i + 1, updatedAt: now }));
      return ids.map((id) => findList(tx, userId, id)!);
    });
  }
}
