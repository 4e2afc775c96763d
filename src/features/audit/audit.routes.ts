import { Elysia } from "elysia";
import { doc } from "../../core/openapi";
import { principalOf } from "../../core/http";
import { PageQuery } from "../../core/pagination";
import { AuditService } from "./audit.service";
import { AuditPage } from "./audit.schemas";

export function auditRoutes(service: AuditService) {
  return new Elysia({ name: "audit", prefix: "/api/v1" }).get(
    "/audit-logs",
    ({ query, request }) => service.page(principalOf(request).user.id, query.limit, query.cursor),
    {
      query: PageQuery,
      detail: doc({
        summary: "The current user's audit log, newest first (cursor page)",
        description:
          "Only the user's own entries: `setup`, `login`, `login_failed`, `logout`, `password_changed`, `password_reset` (the server's `reset-password` command), `session_revoked`, `sessions_revoked`, `user_created`, `user_disabled` and `user_enabled` (the server's `app users` command), `task_purged`, `list_purged`, `backup_exported`, `backup_preflight`, `backup_restored`, `legacy_exported`, `legacy_restored`, `imported` (a file from TickTick, Todoist or iCalendar), and for shared lists (written for the owner and for the member concerned) `list_invitation_sent`, `list_invitation_withdrawn`, `list_invitation_accepted`, `list_invitation_declined`, `list_role_changed`, `list_member_removed`, `list_left` and `list_ownership_transferred`, each with the client address and user agent; `detail` holds what the action adds (a count, a username, a backup id). Cursor page: `limit` 1..100 (default 50), `cursor` from the previous page's `next_cursor`.",
        tags: ["audit"],
        ok: { status: 200, schema: AuditPage },
        errors: ["validation_failed", "invalid_cursor"],
      }),
    },
  );
}
