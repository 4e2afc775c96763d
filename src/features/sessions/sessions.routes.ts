import { Elysia } from "elysia";
import { doc } from "../../core/openapi";
import { requestMeta, sessionPrincipalOf } from "../../core/http";
import { SessionsService } from "./sessions.service";
import { SessionList, SessionParams } from "./sessions.schemas";

export function sessionsRoutes(service: SessionsService) {
  return new Elysia({ name: "sessions", prefix: "/api/v1" })
    .get("/sessions", ({ request }) => ({ items: service.list(sessionPrincipalOf(request)) }), {
      detail: doc({ summary: "Live sessions of the current user", description: "Sessions that are neither revoked nor expired, newest first, each with the client address and user agent it was created from and when it was last used. `current` marks the session making the request; `expires_at` is the earlier of the idle and the absolute expiry.", tags: ["sessions"], ok: { status: 200, schema: SessionList } }),
    })
    .delete(
      "/sessions/others",
      ({ request, set }) => {
        service.revokeOthers(sessionPrincipalOf(request), requestMeta(request));
        set.status = 204;
      },
      { detail: doc({ summary: "End every session except this one", description: "Revokes every other session of the user at once (a lost phone, a shared computer); the one making the request stays signed in. Audited (`sessions_revoked`, with the count).", tags: ["sessions"], ok: { status: 204 }, errors: ["csrf_failed"] }) },
    )
    .delete(
      "/sessions/:session_id",
      ({ params, request, set }) => {
        service.revoke(sessionPrincipalOf(request), params.session_id, requestMeta(request));
        set.status = 204;
      },
      {
        params: SessionParams,
        detail: doc({ summary: "End one session", description: "Revokes one of the user's live sessions; its next request is `401`. Ending the current session this way signs this client out (its cookies stay until cleared). An id that is not a live session of the user is `404`. Audited (`session_revoked`).", tags: ["sessions"], ok: { status: 204 }, errors: ["not_found", "csrf_failed", "validation_failed"] }),
      },
    );
}
