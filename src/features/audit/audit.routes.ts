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
        tags: ["audit"],
        ok: { status: 200, schema: AuditPage },
        errors: ["validation_failed", "invalid_cursor"],
      }),
    },
  );
}
