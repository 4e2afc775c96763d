import { changes, type Conn, type Db } from "../db";
import { sessions } from "../schema";
import { and, desc, eq, isNull, ne } from "drizzle-orm";
import { newId, newToken } from "../ids";
import { sha256Hex } from "../secret";
import type { Clock } from "../time";
import { authUserOf, type AuthUser, type AuthUserColumns } from "./principal";

export interface SessionLifetimes {
  idleSeconds: number;
  absoluteSeconds: number;
}

export interface IssuedSession {
  id: string;
  token: string;
  tokenHash: string;
  expiresAt: string;
}

/** A session found by its token hash (not revoked), with its user: what every authenticated request reads. */
export interface SessionLookupRow extends AuthUserColumns {
  session_id: string;
  last_seen_at: string;
  expires_at: string;
}

/**
 * Reads the session of a token hash (not revoked; expiry is checked here) joined with its user,
 * in one statement on `c`. The account feature supplies it at app construction: it owns users and
 * what GET /me reports of them (the attachment bytes), and core imports no feature.
 */
export type FindSession = (c: Conn, tokenHash: string) => SessionLookupRow | null;

export type SessionRow = typeof sessions.$inferSelect;

/** How often a session in use has its last_seen_at written: min(60 s, idle / 4). */
export function touchIntervalMs(idleSeconds: number): number {
  return Math.min(60_000, Math.floor((idleSeconds * 1000) / 4));
}

/** Sessions: only the SHA-256 of a token is stored; lookups are one indexed prepared statement. */
export class SessionStore {
  private readonly touchStmt;
  // last_seen_at is written at most once a minute per session, so reads stay reads; with a short
  // idle lifetime, four times per idle period, or a session in use would end between two writes
  // (with an idle time under a minute, it always did).
  private readonly touchEveryMs: number;

  /**
   * @param db the root connection: lookups (before any handler runs), last-seen writes, sweeps.
   * @param findSession the lookup's statement (see FindSession); null where no request is served
   *   (the job worker), and then lookup() refuses.
   */
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly lifetimes: SessionLifetimes,
    private readonly findSession: FindSession | null = null,
  ) {
    this.touchEveryMs = touchIntervalMs(lifetimes.idleSeconds);
    this.touchStmt = db.sqlite.query<unknown, [string, string]>(`UPDATE sessions SET last_seen_at = ? WHERE id = ?`);
  }

  // The instants a lookup compares with, as ISO text; computed once per millisecond of the clock.
  private bounds = { ms: NaN, now: "", idleCutoff: "", touchCutoff: "" };
  private boundsAt(nowMs: number): { now: string; idleCutoff: string; touchCutoff: string } {
    const b = this.bounds;
    if (b.ms !== nowMs) {
      this.bounds = {
        ms: nowMs,
        now: new Date(nowMs).toISOString(),
        idleCutoff: new Date(nowMs - this.lifetimes.idleSeconds * 1000).toISOString(),
        touchCutoff: new Date(nowMs - this.touchEveryMs).toISOString(),
      };
    }
    return this.bounds;
  }

  static hashToken(token: string): string {
    return sha256Hex(token);
  }

  /** Creates a session inside the caller's transaction. */
  issue(tx: Conn, userId: string, ip: string | null, userAgent: string | null): IssuedSession {
    const now = this.clock.now();
    const token = newToken();
    const tokenHash = SessionStore.hashToken(token);
    const id = newId();
    const expiresAt = new Date(now.getTime() + this.lifetimes.absoluteSeconds * 1000).toISOString();
    tx.insert(sessions)
      .values({
        id,
        userId,
        tokenHash,
        createdAt: now.toISOString(),
        lastSeenAt: now.toISOString(),
        expiresAt,
        ip,
        userAgent: userAgent?.slice(0, 512) ?? null,
      })
      .run();
    return { id, token, tokenHash, expiresAt };
  }

  /** The live session of a token, or null if unknown, revoked or expired (idle or absolute). */
  lookup(tokenHash: string): { sessionId: string; user: AuthUser } | null {
    if (!this.findSession) throw new Error("sessions are not looked up in this process");
    const b = this.boundsAt(this.clock.now().getTime());
    // Live: not revoked, expires_at > now, last_seen_at + idle > now (i.e. last_seen_at > now − idle).
    // The expiry checks compare text: instants are stored as toISOString(), whose string order is
    // time order, so nothing is parsed per request.
    const row = this.findSession(this.db, tokenHash);
    if (!row || row.expires_at <= b.now || row.last_seen_at <= b.idleCutoff) return null;
    if (row.last_seen_at <= b.touchCutoff) {
      try {
        this.touchStmt.run(b.now, row.session_id);
      } catch {
        // A busy or read-only database must not turn a read into an error.
      }
    }
    return {
      sessionId: row.session_id,
      user: authUserOf(row),
    };
  }

  /** The user's sessions not revoked (some may have expired: see isLive), newest first. */
  notRevoked(c: Conn, userId: string): SessionRow[] {
    return c
      .select()
      .from(sessions)
      .where(and(eq(sessions.userId, userId), isNull(sessions.revokedAt)))
      .orderBy(desc(sessions.createdAt))
      .all();
  }

  /** Whether a session row is live now (for listings). */
  isLive(s: { revokedAt: string | null; expiresAt: string; lastSeenAt: string }): boolean {
    const nowMs = this.clock.now().getTime();
    return (
      s.revokedAt === null &&
      Date.parse(s.expiresAt) > nowMs &&
      Date.parse(s.lastSeenAt) + this.lifetimes.idleSeconds * 1000 > nowMs
    );
  }

  idleExpiry(lastSeenAt: string, expiresAt: string): string {
    const idle = Date.parse(lastSeenAt) + this.lifetimes.idleSeconds * 1000;
    return new Date(Math.min(idle, Date.parse(expiresAt))).toISOString();
  }

  revoke(tx: Conn, userId: string, sessionId: string): boolean {
    const r = tx
      .update(sessions)
      .set({ revokedAt: this.clock.now().toISOString() })
      .where(and(eq(sessions.id, sessionId), eq(sessions.userId, userId), isNull(sessions.revokedAt)))
      .run();
    return changes(r) > 0;
  }

  /** Revokes every live session of the user except `keepSessionId` (null: all). */
  revokeAllExcept(tx: Conn, userId: string, keepSessionId: string | null): number {
    const cond = keepSessionId
      ? and(eq(sessions.userId, userId), isNull(sessions.revokedAt), ne(sessions.id, keepSessionId))
      : and(eq(sessions.userId, userId), isNull(sessions.revokedAt));
    return changes(tx.update(sessions).set({ revokedAt: this.clock.now().toISOString() }).where(cond).run());
  }

  /** Deletes rows that can never be live again (revoked or expired long ago). */
  sweep(): number {
    const cutoff = new Date(this.clock.now().getTime() - 7 * 24 * 3600 * 1000).toISOString();
    const idleCutoff = new Date(this.clock.now().getTime() - this.lifetimes.idleSeconds * 1000 - 7 * 24 * 3600 * 1000).toISOString();
    return this.db.sqlite
      .query(`DELETE FROM sessions WHERE (revoked_at IS NOT NULL AND revoked_at < ?) OR expires_at < ? OR last_seen_at < ?`)
      .run(cutoff, cutoff, idleCutoff).changes;
  }
}
