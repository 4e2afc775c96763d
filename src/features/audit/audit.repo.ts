import { and, desc, eq, lt } from "drizzle-orm";
import type { Conn } from "../../core/db";
import { newId } from "../../core/ids";
import { auditLogs } from "../../core/schema";

export type AuditAction =
  | "setup"
  | "login"
  | "login_failed"
  | "logout"
  | "password_changed"
  | "password_reset"
  | "session_revoked"
  | "sessions_revoked"
  | "user_created"
  | "user_disabled"
  | "user_enabled"
  | "list_purged"
  | "task_purged"
  | "backup_exported"
  | "backup_preflight"
  | "backup_restored"
  | "legacy_exported"
  | "legacy_restored"
  | "imported"
  // Sharing (sharing.md): recorded for the list's owner and for the member concerned.
  | "list_invitation_sent"
  | "list_invitation_withdrawn"
  | "list_invitation_accepted"
  | "list_invitation_declined"
  | "list_role_changed"
  | "list_member_removed"
  | "list_left"
  | "list_ownership_transferred"
  // API tokens / app passwords (devices.md): created, revoked, and every refused use of one.
  | "token_created"
  | "token_revoked"
  | "token_used"
  | "token_failed"
  // Calendar feeds (devices.md): a secret URL made or revoked.
  | "feed_created"
  | "feed_revoked";

/** Who did it and from where; written in the same transaction as the change it records. */
export interface AuditEntry {
  userId: string | null;
  action: AuditAction;
  at: Date;
  ip: string | null;
  userAgent: string | null;
  targetType?: string | null;
  targetId?: string | null;
  detail?: Record<string, unknown> | null;
}

export function recordAudit(c: Conn, e: AuditEntry): void {
  c.insert(auditLogs)
    .values({
      id: newId(),
      userId: e.userId,
      at: e.at.toISOString(),
      action: e.action,
      ip: e.ip,
      userAgent: e.userAgent?.slice(0, 512) ?? null,
      targetType: e.targetType ?? null,
      targetId: e.targetId ?? null,
      detail: e.detail ? JSON.stringify(e.detail) : null,
    })
    .run();
}

/** Newest first; keyset on the time-ordered id. Fetches limit + 1 rows. */
export function listAudit(c: Conn, userId: string, limit: number, beforeId: string | null) {
  return c
    .select()
    .from(auditLogs)
    .where(beforeId ? and(eq(auditLogs.userId, userId), lt(auditLogs.id, beforeId)) : eq(auditLogs.userId, userId))
    .orderBy(desc(auditLogs.id))
    .limit(limit + 1)
    .all();
}
