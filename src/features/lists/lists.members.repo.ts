import type { Conn } from "../../core/db";

// The sharing tables (docs/sharing-design.md): list_members (non-owner members, with their own
// placement of the list) and list_invitations (pending only). Owned here, in the lists feature,
// because every feature above lists (tasks, recurrence, attachments, trash) asks lists.access.ts.

export type MemberRole = "editor" | "viewer";

/** sharing.md: an invitation lapses after 14 days. */
export const INVITATION_TTL_MS = 14 * 24 * 3600 * 1000;

export interface MemberRow {
  list_id: string;
  user_id: string;
  role: MemberRole;
  folder_id: string | null;
  position: number;
  since: string;
}

export interface PersonRow {
  id: string;
  username: string;
  display_name: string;
}

/** The user's role on the list as a non-owner member, or null. Primary-key probe. */
export function memberRole(c: Conn, listId: string, userId: string): MemberRole | null {
  return c.sqlite.query<{ role: MemberRole }, [string, string]>("SELECT role FROM list_members WHERE list_id = ? AND user_id = ?").get(listId, userId)?.role ?? null;
}

export function findMember(c: Conn, listId: string, userId: string): MemberRow | null {
  return c.sqlite
    .query<MemberRow, [string, string]>("SELECT list_id, user_id, role, folder_id, position, since FROM list_members WHERE list_id = ? AND user_id = ?")
    .get(listId, userId);
}

/** The active lists shared with the user (they are a non-owner member), by list id. */
export function sharedListsOf(c: Conn, userId: string): { list_id: string; role: MemberRole }[] {
  return c.sqlite
    .query<{ list_id: string; role: MemberRole }, [string]>(
      `SELECT m.list_id, m.role FROM list_members m JOIN lists l ON l.id = m.list_id WHERE m.user_id = ? AND l.deleted_at IS NULL ORDER BY m.list_id`,
    )
    .all(userId);
}

/** Whether the user is a non-owner member of any list (one index probe: the no-sharing fast path). */
export function hasMemberships(c: Conn, userId: string): boolean {
  return c.sqlite.query<{ x: number }, [string]>("SELECT 1 AS x FROM list_members WHERE user_id = ? LIMIT 1").get(userId) !== null;
}

export function insertMember(c: Conn, m: MemberRow): void {
  c.sqlite
    .query("INSERT INTO list_members (list_id, user_id, role, folder_id, position, since) VALUES (?, ?, ?, ?, ?, ?)")
    .run(m.list_id, m.user_id, m.role, m.folder_id, m.position, m.since);
}

export function deleteMember(c: Conn, listId: string, userId: string): boolean {
  return c.sqlite.query("DELETE FROM list_members WHERE list_id = ? AND user_id = ?").run(listId, userId).changes > 0;
}

export function setMemberRole(c: Conn, listId: string, userId: string, role: MemberRole): void {
  c.sqlite.query("UPDATE list_members SET role = ? WHERE list_id = ? AND user_id = ?").run(role, listId, userId);
}

export function setMemberPlacement(c: Conn, listId: string, userId: string, p: { folderId?: string | null; position?: number }): void {
  if (p.folderId !== undefined) c.sqlite.query("UPDATE list_members SET folder_id = ? WHERE list_id = ? AND user_id = ?").run(p.folderId, listId, userId);
  if (p.position !== undefined) c.sqlite.query("UPDATE list_members SET position = ? WHERE list_id = ? AND user_id = ?").run(p.position, listId, userId);
}

/** A deleted folder's shared lists go to the member's root, as their own lists do. */
export function detachMembershipsFromFolder(c: Conn, userId: string, folderId: string): void {
  c.sqlite.query("UPDATE list_members SET folder_id = NULL WHERE user_id = ? AND folder_id = ?").run(userId, folderId);
}

export function maxMemberPosition(c: Conn, userId: string): number {
  return c.sqlite.query<{ m: number | null }, [string]>("SELECT max(position) AS m FROM list_members WHERE user_id = ?").get(userId)?.m ?? 0;
}

/** Members of a list with their names (owner not included: it is on the lists row). */
export function membersOf(c: Conn, listId: string): (MemberRow & { username: string; display_name: string })[] {
  return c.sqlite
    .query<MemberRow & { username: string; display_name: string }, [string]>(
      `SELECT m.list_id, m.user_id, m.role, m.folder_id, m.position, m.since, u.username, u.display_name
         FROM list_members m JOIN users u ON u.id = m.user_id WHERE m.list_id = ? ORDER BY m.since, u.username_key`,
    )
    .all(listId);
}

/** A list's members by username, by when they joined (a backup's informational member list). */
export function memberUsernamesOf(c: Conn, listId: string): { username: string; role: MemberRole }[] {
  return c.sqlite
    .query<{ username: string; role: MemberRole }, [string]>(
      "SELECT u.username, m.role FROM list_members m JOIN users u ON u.id = m.user_id WHERE m.list_id = ? ORDER BY m.since, u.username_key",
    )
    .all(listId);
}

/** Members' user ids of a list. */
export function memberIdsOf(c: Conn, listId: string): string[] {
  return c.sqlite
    .query<{ user_id: string }, [string]>("SELECT user_id FROM list_members WHERE list_id = ?")
    .all(listId)
    .map((r) => r.user_id);
}

// ---- invitations ----

export interface InvitationRow {
  id: string;
  list_id: string;
  inviter_id: string;
  invitee_id: string;
  role: MemberRole;
  created_at: string;
  expires_at: string;
}

const INV_COLS = "i.id, i.list_id, i.inviter_id, i.invitee_id, i.role, i.created_at, i.expires_at";

export function insertInvitation(c: Conn, r: InvitationRow): void {
  c.sqlite
    .query("INSERT INTO list_invitations (id, list_id, inviter_id, invitee_id, role, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)")
    .run(r.id, r.list_id, r.inviter_id, r.invitee_id, r.role, r.created_at, r.expires_at);
}

/** A pending (not expired) invitation by id. */
export function findPendingInvitation(c: Conn, id: string, now: string): InvitationRow | null {
  return c.sqlite.query<InvitationRow, [string, string]>(`SELECT ${INV_COLS} FROM list_invitations i WHERE i.id = ? AND i.expires_at > ?`).get(id, now);
}

/** Any invitation (expired too) of this user to this list. */
export function findInvitationPair(c: Conn, listId: string, inviteeId: string): InvitationRow | null {
  return c.sqlite
    .query<InvitationRow, [string, string]>(`SELECT ${INV_COLS} FROM list_invitations i WHERE i.list_id = ? AND i.invitee_id = ?`)
    .get(listId, inviteeId);
}

export function deleteInvitation(c: Conn, id: string): void {
  c.sqlite.query("DELETE FROM list_invitations WHERE id = ?").run(id);
}

export type InvitationWithNames = InvitationRow & { invitee_username: string; invitee_display_name: string };

/** The list's pending invitations, oldest first, with the invitees' names. */
export function pendingInvitationsOfList(c: Conn, listId: string, now: string): InvitationWithNames[] {
  return c.sqlite
    .query<InvitationWithNames, [string, string]>(
      `SELECT ${INV_COLS}, u.username AS invitee_username, u.display_name AS invitee_display_name
         FROM list_invitations i JOIN users u ON u.id = i.invitee_id WHERE i.list_id = ? AND i.expires_at > ? ORDER BY i.created_at, i.id`,
    )
    .all(listId, now);
}

export type InboxInvitation = InvitationRow & {
  list_name: string;
  list_color: string | null;
  from_username: string;
  from_display_name: string;
};

/** The user's pending invitations to active lists, newest first, with the list and the inviter. */
export function invitationsFor(c: Conn, inviteeId: string, now: string): InboxInvitation[] {
  return c.sqlite
    .query<InboxInvitation, [string, string]>(
      `SELECT ${INV_COLS}, l.name AS list_name, l.color AS list_color, u.username AS from_username, u.display_name AS from_display_name
         FROM list_invitations i JOIN lists l ON l.id = i.list_id JOIN users u ON u.id = i.inviter_id
        WHERE i.invitee_id = ? AND i.expires_at > ? AND l.deleted_at IS NULL ORDER BY i.created_at DESC, i.id DESC`,
    )
    .all(inviteeId, now);
}

/** An ownership transfer: the new owner's pending invitations to the list are moot. */
export function deleteInvitationsOfList(c: Conn, listId: string, inviteeId?: string): void {
  if (inviteeId === undefined) c.sqlite.query("DELETE FROM list_invitations WHERE list_id = ?").run(listId);
  else c.sqlite.query("DELETE FROM list_invitations WHERE list_id = ? AND invitee_id = ?").run(listId, inviteeId);
}
