import { Elysia } from "elysia";
import { doc } from "../../core/openapi";
import { principalOf, requestMeta } from "../../core/http";
import { presentList } from "../lists/lists.present";
import { List, ListParams } from "../lists/lists.schemas";
import type { SharingService } from "./sharing.service";
import {
  InboxInvitationList,
  InvitationCreate,
  InvitationParams,
  ListInvitation,
  ListInvitationList,
  LookupQuery,
  Member,
  MemberList,
  MemberParams,
  MemberPatch,
  Person,
} from "./sharing.schemas";

const WRITE_ERRORS = ["validation_failed", "csrf_failed", "malformed_request", "payload_too_large"] as const;

/** sharing.md: look-up, invitations, members, roles, ownership transfer, leaving. */
export function sharingRoutes(service: SharingService) {
  return new Elysia({ name: "sharing", prefix: "/api/v1" })
    .get("/users/lookup", ({ query }) => service.lookup(query.username), {
      query: LookupQuery,
      detail: doc({
        summary: "Find a user of this server by exact username (to invite them)",
        description: "Exact, case-insensitive match only: no listing and no prefix search. `404` when no user has that username.",
        tags: ["sharing"],
        ok: { status: 200, schema: Person },
        errors: ["validation_failed", "not_found"],
      }),
    })
    .post(
      "/lists/:list_id/invitations",
      ({ params, body, request, set }) => {
        const inv = service.invite(principalOf(request).user.id, params.list_id, body, requestMeta(request));
        set.status = 201;
        // No URL of its own to read: the list's pending invitations, where it is listed.
        set.headers["location"] = `/api/v1/lists/${params.list_id}/invitations`;
        return inv;
      },
      {
        params: ListParams,
        body: InvitationCreate,
        detail: doc({
          summary: "Invite a user to a list you own, as editor or viewer",
          description:
            "The invitee sees it in `GET /invitations` and accepts or declines it; it expires after 14 days. `409 state_conflict` when they are already a member or have a pending invitation; `422 validation_failed` for yourself, an unknown username, the inbox or an archived list. A member who is not the owner gets `403 forbidden`; someone who cannot see the list `404`. Audited for the owner and the invitee (`list_invitation_sent`).",
          tags: ["sharing"],
          ok: { status: 201, schema: ListInvitation, headers: { Location: { description: "the list's pending invitations, where this one is listed" } } },
          errors: [...WRITE_ERRORS, "not_found", "forbidden", "state_conflict"],
        }),
      },
    )
    .get("/lists/:list_id/invitations", ({ params, request }) => ({ items: service.listInvitations(principalOf(request).user.id, params.list_id) }), {
      params: ListParams,
      detail: doc({
        summary: "The list's pending invitations (owner only)",
        description: "Oldest first; expired ones are not listed. A member who is not the owner gets `403 forbidden`.",
        tags: ["sharing"],
        ok: { status: 200, schema: ListInvitationList },
        errors: ["validation_failed", "not_found", "forbidden"],
      }),
    })
    .delete(
      "/invitations/:invitation_id",
      ({ params, request, set }) => {
        service.withdraw(principalOf(request).user.id, params.invitation_id, requestMeta(request));
        set.status = 204;
      },
      {
        params: InvitationParams,
        detail: doc({
          summary: "Withdraw a pending invitation (the list's owner)",
          description: "Anyone but the list's owner gets `404` (the invitee declines instead). Audited (`list_invitation_withdrawn`).",
          tags: ["sharing"],
          ok: { status: 204 },
          errors: ["not_found", "csrf_failed", "validation_failed"],
        }),
      },
    )
    .get("/invitations", ({ request }) => ({ items: service.inbox(principalOf(request).user.id) }), {
      detail: doc({
        summary: "Your pending invitations, newest first",
        description: "Each with the list (`id`, `name`, `color`), who invited you, the role offered and when it expires.",
        tags: ["sharing"],
        ok: { status: 200, schema: InboxInvitationList },
        errors: [],
      }),
    })
    .post("/invitations/:invitation_id/accept", ({ params, request }) => presentList(service.accept(principalOf(request).user.id, params.invitation_id, requestMeta(request))), {
      params: InvitationParams,
      detail: doc({
        summary: "Accept an invitation: the list is shared with you from now on",
        description:
          "Answers the list as you now see it (your `role`, its `owner`, at your root level, last). An invitation that is not yours, expired, withdrawn or to an archived list is `404`. Audited for the owner and you (`list_invitation_accepted`).",
        tags: ["sharing"],
        ok: { status: 200, schema: List },
        errors: ["not_found", "csrf_failed", "validation_failed"],
      }),
    })
    .post(
      "/invitations/:invitation_id/decline",
      ({ params, request, set }) => {
        service.decline(principalOf(request).user.id, params.invitation_id, requestMeta(request));
        set.status = 204;
      },
      {
        params: InvitationParams,
        detail: doc({
          summary: "Decline an invitation",
          description: "The invitation goes; the owner may invite you again. Not yours or not pending: `404`. Audited (`list_invitation_declined`).",
          tags: ["sharing"],
          ok: { status: 204 },
          errors: ["not_found", "csrf_failed", "validation_failed"],
        }),
      },
    )
    .get("/lists/:list_id/members", ({ params, request }) => ({ items: service.members(principalOf(request).user.id, params.list_id) }), {
      params: ListParams,
      detail: doc({
        summary: "The list's members, owner first",
        description: "Any member may ask (a private list answers its owner alone). Someone who cannot see the list gets `404`.",
        tags: ["sharing"],
        ok: { status: 200, schema: MemberList },
        errors: ["validation_failed", "not_found"],
      }),
    })
    .patch("/lists/:list_id/members/:user_id", ({ params, body, request }) => service.changeRole(principalOf(request).user.id, params.list_id, params.user_id, body.role, requestMeta(request)), {
      params: MemberParams,
      body: MemberPatch,
      detail: doc({
        summary: "Change a member's role; `owner` transfers ownership (owner only)",
        description:
          "`editor` or `viewer` sets the member's role (`list_role_changed`). `owner` transfers the list to that member, who must be an editor (`409 state_conflict` otherwise, or for an archived list): the old owner becomes an editor, the list's tasks belong to the new owner, each keeps their own folder and position (`list_ownership_transferred`). Audited for both. A non-owner member gets `403 forbidden`; a user who is not a member `404`.",
        tags: ["sharing"],
        ok: { status: 200, schema: Member },
        errors: [...WRITE_ERRORS, "not_found", "forbidden", "state_conflict"],
      }),
    })
    .delete(
      "/lists/:list_id/members/:user_id",
      ({ params, request, set }) => {
        service.remove(principalOf(request).user.id, params.list_id, params.user_id, requestMeta(request));
        set.status = 204;
      },
      {
        params: MemberParams,
        detail: doc({
          summary: "Remove a member (owner), or leave the list (your own user id)",
          description:
            "Takes effect on the next request: the list, its tasks and your own tags on them disappear from the member's views, and their event streams stop carrying the list. The owner cannot leave (`409 state_conflict`: transfer ownership first). Another member removing someone gets `403 forbidden`. Audited for the owner and the member (`list_member_removed`, `list_left`).",
          tags: ["sharing"],
          ok: { status: 204 },
          errors: ["not_found", "forbidden", "state_conflict", "csrf_failed", "validation_failed"],
        }),
      },
    );
}
