import type { Conn } from "../../core/db";
import { invalidCursor } from "../../core/errors";
import { toPage, type Cursors } from "../../core/cursor";
import { listAudit } from "./audit.repo";
import type { AuditLogEntry } from "./audit.schemas";
import type { auditLogs } from "../../core/schema";

type AuditRow = typeof auditLogs.$inferSelect;

function present(r: AuditRow): AuditLogEntry {
  return {
    id: r.id,
    at: r.at,
    action: r.action,
    ip: r.ip,
    user_agent: r.userAgent,
    target_type: r.targetType,
    target_id: r.targetId,
    detail: r.detail ? (JSON.parse(r.detail) as Record<string, unknown>) : null,
  };
}

export class AuditService {
  private static readonly ENDPOINT = "audit-logs";
  constructor(
    private readonly db: Conn,
    private readonly cursors: Cursors,
  ) {}

  page(userId: string, limit: number, cursor: string | undefined) {
    let before: string | null = null;
    if (cursor) {
      const key = this.cursors.decode(AuditService.ENDPOINT, userId, cursor);
      if (key.length !== 1 || typeof key[0] !== "string") throw invalidCursor();
      before = key[0];
    }
    const rows = listAudit(this.db, userId, limit, before);
    return toPage(rows, limit, present, (r) => [r.id], (k) => this.cursors.encode(AuditService.ENDPOINT, userId, k));
  }
}
