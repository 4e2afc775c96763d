import type { Core } from "../../core/core";
import { writeTx } from "../../core/db";
import { notFound } from "../../core/errors";
import type { RequestMeta } from "../../core/http";
import type { SessionPrincipal as Principal } from "../../core/auth/principal";
import { recordAudit } from "../audit/audit.repo";

export class SessionsService {
  constructor(private readonly core: Core) {}

  /** Live sessions of the user, newest first. */
  list(p: Principal) {
    return this.core.sessions
      .notRevoked(this.core.db, p.user.id)
      .filter((r) => this.core.sessions.isLive(r))
      .map((r) => ({
        id: r.id,
        created_at: r.createdAt,
        last_seen_at: r.lastSeenAt,
        expires_at: this.core.sessions.idleExpiry(r.lastSeenAt, r.expiresAt),
        ip: r.ip,
        user_agent: r.userAgent,
        current: r.id === p.sessionId,
      }));
  }

  revoke(p: Principal, sessionId: string, meta: RequestMeta): void {
    writeTx(this.core.db, (tx) => {
      if (!this.core.sessions.revoke(tx, p.user.id, sessionId)) throw notFound("session");
      recordAudit(tx, { userId: p.user.id, action: "session_revoked", at: this.core.clock.now(), ip: meta.ip, userAgent: meta.userAgent, targetType: "session", targetId: sessionId });
    });
  }

  revokeOthers(p: Principal, meta: RequestMeta): void {
    writeTx(this.core.db, (tx) => {
      const n = this.core.sessions.revokeAllExcept(tx, p.user.id, p.sessionId);
      recordAudit(tx, { userId: p.user.id, action: "sessions_revoked", at: this.core.clock.now(), ip: meta.ip, userAgent: meta.userAgent, detail: { count: n } });
    });
  }
}
