import { Elysia } from "elysia";
import { doc } from "../../core/openapi";
import { principalOf, requestMeta } from "../../core/http";
import { SessionsService } from "./sessions.service";
import { SessionList, SessionParams } from "./sessions.schemas";

export function sessionsRoutes(service: SessionsService) {
  return new Elysia({ name: "sessions", prefix: "/api/v1" })
    .get("/sessions", ({ request }) => ({ items: service.list(principalOf(request)) }), {
      detail: doc({ summary: "Live sessions of the current user", tags: ["sessions"], ok: { status: 200, schema: SessionList } }),
    })
    .delete(
      "/sessions/others",
      ({ request, set }) => {
        service.revokeOthers(principalOf(request), requestMeta(request));
        set.status = 204;
      },
      { detail: doc({ summary: "End every session except this one", tags: ["sessions"], ok: { status: 204 }, errors: ["csrf_failed"] }) },
    )
    .delete(
      "/sessions/:session_id",
      ({ params, request, set }) => {
        service.revoke(principalOf(request), params.session_id, requestMeta(request));
        set.status = 204;
      },
      {
        params: SessionParams,
        detail: doc({ summary: "End one session", tags: ["sessions"], ok: { status: 204 }, errors: ["not_found", "csrf_failed", "validation_failed"] }),
      },
    );
}
