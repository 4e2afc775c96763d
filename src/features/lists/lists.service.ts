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
  findListFor,
  insertList,
  listLists,
  nextListPosition,
  updateList,
  type ListView,
} from "./lists.repo";
import type { ListPurgeHooks } from "./lists.purge-hooks";
import type { ListCreate, ListPatch } from "./lists.schemas";
import { requireOwner } from "./lists.access";
import { detachMembershipsFromFolder, memberIdsOf, sharedListsOf, setMemberPlacement } from "./lists.members.repo";

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
    folderHooks.register((c, userId, folderId) => detachMembershipsFromFolder(c, userId, folderId));
  }

  private now(): string {
    return this.core.clock.now().toISOString();
  }

  /** After the commit: the list changed for everyone who sees it (event streams). */
  private announce(id: string, audience?: string[]): void {
    this.core.events.publish({ type: "list.changed", id, list_id: id, version: null }, audience ? { audience } : {});
  }

  /** The list as the user sees it (lists.access: owned, active or archived; or shared with them), else 404. */
  private existing(c: Conn, userId: string, id: string): ListView {
    const l = findListFor(c, userId, id);
    if (!l) throw notFound("list");
    return l;
  }

  /** The user's own list (owner-only acts): 404 when invisible, 403 forbidden for a member. */
  private owned(c: Conn, userId: string, id: string): ListView {
    const l = this.existing(c, userId, id);
    requireOwner(l.role);
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
      return findListFor(tx, userId, id)!;
    });
  }

  /**
   * Name and colour are the owner's; folder and position are each user's own placement (a
   * member's PATCH changes only theirs, in list_members).
   */
  update(userId: string, id: string, input: ListPatch): ListView {
    const out = this.updateTx(userId, id, input);
    this.announce(id);
    return out;
  }

  private updateTx(userId: string, id: string, input: ListPatch): ListView {
    return writeTx(this.core.db, (tx) => {
      const l = this.active(tx, userId, id);
      if (input.name !== undefined || input.color !== undefined || input.sort !== undefined) requireOwner(l.role);
      if (l.isInbox && (input.name !== undefined || input.folder_id !== undefined)) throw inboxImmutable();
      const folderId = input.folder_id === undefined ? undefined : this.requireFolder(tx, userId, input.folder_id);
      if (l.role !== "owner") {
        setMemberPlacement(tx, id, userId, { folderId, position: input.position });
        return findListFor(tx, userId, id)!;
      }
      const set: { name?: string; color?: string | null; sort?: ListPatch["sort"]; folderId?: string | null; position?: number; updatedAt: string } = { updatedAt: this.now() };
      if (input.sort !== undefined) set.sort = input.sort;
      if (input.name !== undefined) set.name = input.name;
      if (input.color !== undefined) set.color = input.color;
      if (folderId !== undefined) set.folderId = folderId;
      if (input.position !== undefined) set.position = input.position;
      updateList(tx, userId, id, set);
      return findListFor(tx, userId, id)!;
    });
  }

  /** Archive: the list and its tasks disappear from every task view until restored. */
  archive(userId: string, id: string): void {
    this.archiveTx(userId, id);
    this.announce(id);
  }

  private archiveTx(userId: string, id: string): void {
    writeTx(this.core.db, (tx) => {
      const l = this.owned(tx, userId, id);
      if (l.isInbox) throw inboxImmutable();
      if (l.deletedAt !== null) throw notFound("list");
      const now = this.now();
      updateList(tx, userId, id, { deletedAt: now, updatedAt: now });
    });
  }

  restore(userId: string, id: string): ListView {
    const out = this.restoreTx(userId, id);
    this.announce(id);
    return out;
  }

  private restoreTx(userId: string, id: string): ListView {
    return writeTx(this.core.db, (tx) => {
      const l = this.owned(tx, userId, id);
      if (l.deletedAt === null) throw stateConflict("the list is not archived");
      updateList(tx, userId, id, { deletedAt: null, updatedAt: this.now() });
      return findListFor(tx, userId, id)!;
    });
  }

  /** Removes an archived list for good, with its tasks (their recurrences and attachments too). */
  purge(userId: string, id: string, meta: RequestMeta): void {
    let audience: string[] = [];
    const after = writeTx(this.core.db, (tx) => {
      const l = this.owned(tx, userId, id);
      audience = [userId, ...memberIdsOf(tx, id)];
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
    runAfterCommit(this.core.db, after, (e) => this.core.logger.error("after-purge hook failed", { error: String(e) }));
    this.announce(id, audience);
  }

  move(userId: string, id: string, folderId: string | null): ListView {
    return writeTx(this.core.db, (tx) => {
      const l = this.existing(tx, userId, id);
      if (l.isInbox) throw inboxImmutable();
      if (l.deletedAt !== null) throw notFound("list");
      const target = this.requireFolder(tx, userId, folderId);
      // A member files a shared list in their own folder; the owner's placement stays.
      if (l.role !== "owner") setMemberPlacement(tx, id, userId, { folderId: target });
      else updateList(tx, userId, id, { folderId: target, updatedAt: this.now() });
      return findListFor(tx, userId, id)!;
    });
  }

  /** `ids` is exactly the active lists (shared ones too) except the inbox, which always stays first. */
  reorder(userId: string, ids: string[]): ListView[] {
    return writeTx(this.core.db, (tx) => {
      const shared = new Set(sharedListsOf(tx, userId).map((s) => s.list_id));
      checkReorder(ids, [...activeReorderableListIds(tx, userId), ...shared]);
      const now = this.now();
      ids.forEach((id, i) => {
        if (shared.has(id)) setMemberPlacement(tx, id, userId, { position: i + 1 });
        else updateList(tx, userId, id, { position: i + 1, updatedAt: now });
      });
      return ids.map((id) => findListFor(tx, userId, id)!);
    });
  }
}
