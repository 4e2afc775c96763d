import type { Core } from "../../core/core";
import { readSnapshot, writeTx, type Conn } from "../../core/db";
import { notFound, stateConflict, validationFailed } from "../../core/errors";
import type { RequestMeta } from "../../core/http";
import { newId } from "../../core/ids";
import { findUserById, findUserByKey, usernameKey } from "../account/account.repo";
import { recordAudit, type AuditAction } from "../audit/audit.repo";
import { requireOwner, roleOnList, type ListRole } from "../lists/lists.access";
import { findListFor, listHead, setListOwner, type ListView } from "../lists/lists.repo";
import {
  deleteInvitation,
  deleteInvitationsOfList,
  deleteMember,
  findInvitationPair,
  findMember,
  findPendingInvitation,
  insertInvitation,
  insertMember,
  invitationsFor,
  maxMemberPosition,
  membersOf,
  pendingInvitationsOfList,
  setMemberRole,
  INVITATION_TTL_MS,
  type InvitationRow,
  type MemberRole,
} from "../lists/lists.members.repo";
import { findList } from "../lists/lists.repo";
import { setOwnerOfListTasks, unlinkUserTagsOnList } from "../tasks/tasks.repo";
import type { TaskRepeatHooks } from "../tasks/tasks.repeat-hooks";
import type { InboxInvitation, InvitationCreate, ListInvitation, Member, Person } from "./sharing.schemas";


/**
 * Invitations, members, roles, ownership transfer, leaving: the use cases of sharing.md. Owns no
 * table (the lists feature owns list_members and list_invitations); every access decision is
 * lists.access's.
 */
/**
 * Called inside the transaction in which a member leaves or is removed (sharing.md: "the user's own
 * tags and reminders on those tasks disappear"). Features that keep per-user data on a list's tasks
 * (reminders) register here, so sharing never imports them.
 */
export type MemberGone = (c: Conn, userId: string, listId: string) => void;

export class MemberGoneHooks {
  private readonly hooks: MemberGone[] = [];

  register(hook: MemberGone): void {
    this.hooks.push(hook);
  }

  gone(c: Conn, userId: string, listId: string): void {
    for (const h of this.hooks) h(c, userId, listId);
  }
}

export class SharingService {
  /** Per-user data on the list's tasks goes when a member leaves or is removed. */
  readonly memberGone = new MemberGoneHooks();

  constructor(
    private readonly core: Core,
    private readonly repeatHooks: TaskRepeatHooks,
  ) {}

  /**
   * After the commit: everyone on the list (and those named) hears `membership.changed`; a member
   * who was removed or left has their event streams closed (they reconnect and see what they now may).
   */
  private emit(listId: string, userIds: string[], removed: string[] = []): void {
    this.core.events.publish({ type: "membership.changed", id: listId, list_id: listId, version: null }, { also: [...userIds, ...removed] });
    for (const u of removed) this.core.events.closeStreamsOf(u);
  }

  /**
   * After the commit: an invitation sent, withdrawn or declined is heard as `membership.changed` of
   * its list by the owner (pending invitations in the share dialog) and the invitee (the inbox and
   * its count) only: the list's members see no change, and the invitee, who may not see the list,
   * is told as one of `also` (a replay gives it to them too).
   */
  private emitInvitation(listId: string, ownerId: string, inviteeId: string): void {
    this.core.events.publish({ type: "membership.changed", id: listId, list_id: listId, version: null }, { audience: [ownerId], also: [inviteeId] });
  }

  private now(): Date {
    return this.core.clock.now();
  }

  private person(c: Conn, id: string): Person {
    const u = findUserById(c, id)!;
    return { id: u.id, username: u.username, display_name: u.displayName };
  }

  /** The list as the user sees it, with their role; 404 when they may not see it. */
  private visible(c: Conn, userId: string, listId: string): { head: NonNullable<ReturnType<typeof listHead>>; role: ListRole } {
    const head = listHead(c, listId);
    const role = head && roleOnList(c, userId, head);
    if (!head || !role) throw notFound("list");
    return { head, role };
  }

  /** Audit entries for the owner and for the member concerned (sharing.md), in the use case's transaction. */
  private audit(c: Conn, action: AuditAction, userIds: string[], meta: RequestMeta, listId: string, detail: Record<string, unknown>): void {
    for (const userId of new Set(userIds)) {
      recordAudit(c, { userId, action, at: this.now(), ip: meta.ip, userAgent: meta.userAgent, targetType: "list", targetId: listId, detail });
    }
  }

  lookup(username: string): Person {
    return readSnapshot(this.core.db, (c) => {
      const u = findUserByKey(c, usernameKey(username));
      if (!u) throw notFound("user");
      return { id: u.id, username: u.username, display_name: u.displayName };
    });
  }

  invite(userId: string, listId: string, input: InvitationCreate, meta: RequestMeta): ListInvitation {
    const out = writeTx(this.core.db, (tx): ListInvitation => {
      const { head, role } = this.visible(tx, userId, listId);
      requireOwner(role);
      const invitee = findUserByKey(tx, usernameKey(input.username));
      if (!invitee) throw validationFailed([{ path: "username", message: "no such user" }], "no user with that username");
      if (invitee.id === userId) throw validationFailed([{ path: "username", message: "you cannot invite yourself" }], "the owner is already on the list");
      if (head.isInbox) throw validationFailed([{ path: "list_id", message: "the inbox cannot be shared" }], "the inbox cannot be shared");
      if (head.deletedAt !== null) throw validationFailed([{ path: "list_id", message: "the list is archived" }], "an archived list cannot be shared; restore it first");
      if (findMember(tx, listId, invitee.id)) throw stateConflict(`${invitee.username} is already a member of the list`);
      const nowD = this.now();
      const now = nowD.toISOString();
      const existing = findInvitationPair(tx, listId, invitee.id);
      if (existing && existing.expires_at > now) throw stateConflict(`${invitee.username} is already invited to the list`);
      if (existing) deleteInvitation(tx, existing.id);
      const inv: InvitationRow = {
        id: newId(),
        list_id: listId,
        inviter_id: userId,
        invitee_id: invitee.id,
        role: input.role,
        created_at: now,
        expires_at: new Date(nowD.getTime() + INVITATION_TTL_MS).toISOString(),
      };
      insertInvitation(tx, inv);
      this.audit(tx, "list_invitation_sent", [userId, invitee.id], meta, listId, { invitee: invitee.username, role: input.role, list: head.name.slice(0, 100) });
      return { id: inv.id, list_id: listId, invitee: { id: invitee.id, username: invitee.username, display_name: invitee.displayName }, role: inv.role, created_at: inv.created_at, expires_at: inv.expires_at };
    });
    this.emitInvitation(listId, userId, out.invitee.id);
    return out;
  }

  listInvitations(userId: string, listId: string): ListInvitation[] {
    return readSnapshot(this.core.db, (c) => {
      requireOwner(this.visible(c, userId, listId).role);
      return pendingInvitationsOfList(c, listId, this.now().toISOString()).map((i) => ({
        id: i.id,
        list_id: i.list_id,
        invitee: { id: i.invitee_id, username: i.invitee_username, display_name: i.invitee_display_name },
        role: i.role,
        created_at: i.created_at,
        expires_at: i.expires_at,
      }));
    });
  }

  /** The owner withdraws a pending invitation; anyone else (the invitee declines instead) gets 404. */
  withdraw(userId: string, invitationId: string, meta: RequestMeta): void {
    const inv = writeTx(this.core.db, (tx) => {
      const inv = findPendingInvitation(tx, invitationId, this.now().toISOString());
      const head = inv && listHead(tx, inv.list_id);
      if (!inv || !head || head.ownerId !== userId) throw notFound("invitation");
      deleteInvitation(tx, inv.id);
      this.audit(tx, "list_invitation_withdrawn", [userId, inv.invitee_id], meta, inv.list_id, { invitee: this.person(tx, inv.invitee_id).username });
      return inv;
    });
    this.emitInvitation(inv.list_id, userId, inv.invitee_id);
  }

  inbox(userId: string): InboxInvitation[] {
    return readSnapshot(this.core.db, (c) =>
      invitationsFor(c, userId, this.now().toISOString()).map((i) => ({
        id: i.id,
        list: { id: i.list_id, name: i.list_name, color: i.list_color },
        from: { id: i.inviter_id, username: i.from_username, display_name: i.from_display_name },
        role: i.role,
        created_at: i.created_at,
        expires_at: i.expires_at,
      })),
    );
  }

  /** The invitee's pending invitation to an active list, else 404. */
  private ownInvitation(c: Conn, userId: string, invitationId: string): InvitationRow & { head: NonNullable<ReturnType<typeof listHead>> } {
    const inv = findPendingInvitation(c, invitationId, this.now().toISOString());
    const head = inv && listHead(c, inv.list_id);
    if (!inv || inv.invitee_id !== userId || !head || head.deletedAt !== null) throw notFound("invitation");
    return { ...inv, head };
  }

  accept(userId: string, invitationId: string, meta: RequestMeta): ListView {
    const out = writeTx(this.core.db, (tx) => {
      const inv = this.ownInvitation(tx, userId, invitationId);
      deleteInvitation(tx, inv.id);
      insertMember(tx, { list_id: inv.list_id, user_id: userId, role: inv.role, folder_id: null, position: maxMemberPosition(tx, userId) + 1, since: this.now().toISOString() });
      this.audit(tx, "list_invitation_accepted", [inv.head.ownerId, userId], meta, inv.list_id, { member: this.person(tx, userId).username, role: inv.role });
      return { view: findListFor(tx, userId, inv.list_id)!, ownerId: inv.head.ownerId };
    });
    this.emit(out.view.id, [out.ownerId, userId]);
    return out.view;
  }

  decline(userId: string, invitationId: string, meta: RequestMeta): void {
    const inv = writeTx(this.core.db, (tx) => {
      const inv = this.ownInvitation(tx, userId, invitationId);
      deleteInvitation(tx, inv.id);
      this.audit(tx, "list_invitation_declined", [inv.head.ownerId, userId], meta, inv.list_id, { invitee: this.person(tx, userId).username });
      return inv;
    });
    this.emitInvitation(inv.list_id, inv.head.ownerId, userId);
  }

  /** The owner first, then the members by when they joined. Any member may ask. */
  members(userId: string, listId: string): Member[] {
    return readSnapshot(this.core.db, (c) => {
      const { head } = this.visible(c, userId, listId);
      const owner = findList(c, head.ownerId, listId)!;
      const out: Member[] = [{ user: this.person(c, head.ownerId), role: "owner", since: owner.createdAt }];
      for (const m of membersOf(c, listId)) out.push({ user: { id: m.user_id, username: m.username, display_name: m.display_name }, role: m.role, since: m.since });
      return out;
    });
  }

  /**
   * The owner changes a member's role; `owner` transfers ownership to an editor (the old owner
   * becomes an editor). The list's tasks (and their recurrences) then belong to the new owner:
   * their rows carry their list owner's id (docs/sharing-design.md).
   */
  changeRole(userId: string, listId: string, memberId: string, role: ListRole, meta: RequestMeta): Member {
    const out = writeTx(this.core.db, (tx) => {
      const { head, role: mine } = this.visible(tx, userId, listId);
      requireOwner(mine);
      const m = findMember(tx, listId, memberId);
      if (!m) throw notFound("member");
      const nowIso = this.now().toISOString();
      if (role !== "owner") {
        if (m.role !== role) {
          setMemberRole(tx, listId, memberId, role);
          this.audit(tx, "list_role_changed", [userId, memberId], meta, listId, { member: this.person(tx, memberId).username, from: m.role, to: role });
        }
        return { member: { user: this.person(tx, memberId), role, since: m.since } as Member, notify: [userId, memberId] };
      }
      if (head.deletedAt !== null) throw stateConflict("an archived list cannot change owner; restore it first");
      if (m.role !== "editor") throw stateConflict("ownership goes to an editor; make the member an editor first");
      const old = findList(tx, userId, listId)!;
      // The new owner's own placement becomes the list's; the old owner keeps theirs as a member.
      deleteMember(tx, listId, memberId);
      setListOwner(tx, listId, memberId, m.folder_id, m.position, nowIso);
      insertMember(tx, { list_id: listId, user_id: userId, role: "editor", folder_id: old.folderId, position: old.position, since: nowIso });
      const taskIds = setOwnerOfListTasks(tx, listId, memberId, nowIso);
      this.repeatHooks.reassign(tx, taskIds, memberId);
      deleteInvitationsOfList(tx, listId, memberId);
      this.audit(tx, "list_ownership_transferred", [userId, memberId], meta, listId, { from: this.person(tx, userId).username, to: this.person(tx, memberId).username });
      return { member: { user: this.person(tx, memberId), role: "owner", since: nowIso } as Member, notify: [userId, memberId] };
    });
    this.emit(listId, out.notify);
    return out.member;
  }

  /**
   * The owner removes a member, or a member leaves (memberId is themselves). Takes effect on the
   * next request: nothing is cached; their own tags on the list's tasks go with them, and
   * what other features keep per user on those tasks (memberGone: reminders).
   */
  remove(userId: string, listId: string, memberId: string, meta: RequestMeta): void {
    const ownerId = writeTx(this.core.db, (tx) => {
      const { head, role } = this.visible(tx, userId, listId);
      if (memberId === userId) {
        if (role === "owner") throw stateConflict("the owner cannot leave the list; transfer ownership first");
        deleteMember(tx, listId, userId);
        unlinkUserTagsOnList(tx, userId, listId);
        this.memberGone.gone(tx, userId, listId);
        this.audit(tx, "list_left", [head.ownerId, userId], meta, listId, { member: this.person(tx, userId).username });
        return head.ownerId;
      }
      requireOwner(role);
      if (!findMember(tx, listId, memberId)) throw notFound("member");
      deleteMember(tx, listId, memberId);
      unlinkUserTagsOnList(tx, memberId, listId);
      this.memberGone.gone(tx, memberId, listId);
      this.audit(tx, "list_member_removed", [userId, memberId], meta, listId, { member: this.person(tx, memberId).username });
      return head.ownerId;
    });
    this.emit(listId, [ownerId, memberId], [memberId]);
  }
}

export type { MemberRole };
