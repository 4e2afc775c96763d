import { z } from "zod";
import { maxChars } from "../../core/text";
import { UrlId } from "../../core/ids";

export const Person = z.object({ id: z.string(), username: z.string(), display_name: z.string() }).meta({ id: "Person" });
export type Person = z.infer<typeof Person>;

export const LookupQuery = z.strictObject({ username: maxChars(z.string().min(1, "username is required"), 100) });

export const MemberRoleInput = z.enum(["editor", "viewer"], { error: "role must be editor or viewer" });

export const InvitationCreate = z.strictObject({ username: maxChars(z.string().min(1, "username is required"), 100), role: MemberRoleInput });
export type InvitationCreate = z.infer<typeof InvitationCreate>;

/** An invitation as its list's owner sees it. */
export const ListInvitation = z
  .object({
    id: z.string(),
    list_id: z.string(),
    invitee: Person,
    role: z.enum(["editor", "viewer"]),
    created_at: z.string(),
    expires_at: z.string().describe("14 days after created_at; an expired invitation is gone"),
  })
  .meta({ id: "ListInvitation" });
export type ListInvitation = z.infer<typeof ListInvitation>;
export const ListInvitationList = z.object({ items: z.array(ListInvitation) });

/** An invitation as the invitee sees it (GET /invitations). */
export const InboxInvitation = z
  .object({
    id: z.string(),
    list: z.object({ id: z.string(), name: z.string(), color: z.string().nullable() }),
    from: Person,
    role: z.enum(["editor", "viewer"]),
    created_at: z.string(),
    expires_at: z.string(),
  })
  .meta({ id: "InboxInvitation" });
export type InboxInvitation = z.infer<typeof InboxInvitation>;
export const InboxInvitationList = z.object({ items: z.array(InboxInvitation) });

export const Member = z
  .object({ user: Person, role: z.enum(["owner", "editor", "viewer"]), since: z.string().describe("when they joined (the owner: when the list was created or transferred to them)") })
  .meta({ id: "Member" });
export type Member = z.infer<typeof Member>;
export const MemberList = z.object({ items: z.array(Member) });

export const MemberPatch = z.strictObject({ role: z.enum(["owner", "editor", "viewer"], { error: "role must be owner, editor or viewer" }) });
export type MemberPatch = z.infer<typeof MemberPatch>;

export const InvitationParams = z.object({ invitation_id: UrlId });
export const MemberParams = z.object({ list_id: UrlId, user_id: UrlId });
