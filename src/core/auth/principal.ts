/**
 * The user's columns a credential lookup reads beside its own (a session's, a token's): what
 * authUserOf makes the AuthUser from. The account feature, which owns users, writes the SQL
 * (account.repo.ts AUTH_USER_COLUMNS).
 */
export interface AuthUserColumns {
  user_id: string;
  username: string;
  timezone: string;
  is_admin: number;
  display_name: string;
  created_at: string;
  reminder_time: string;
  quiet_start: string | null;
  quiet_end: string | null;
  attachment_bytes: number;
}

/** The AuthUser of a credential lookup's row, the same whichever credential found it. */
export function authUserOf(r: AuthUserColumns): AuthUser {
  return {
    id: r.user_id,
    username: r.username,
    timezone: r.timezone,
    isAdmin: r.is_admin === 1,
    displayName: r.display_name,
    createdAt: r.created_at,
    reminderTime: r.reminder_time,
    quietStart: r.quiet_start,
    quietEnd: r.quiet_end,
    attachmentBytes: r.attachment_bytes,
  };
}

/** The authenticated user as every feature sees it. */
export interface AuthUser {
  id: string;
  username: string;
  timezone: string;
  isAdmin: boolean;
  displayName: string;
  createdAt: string;
  /** Reminder settings (GET /me reports them): HH:MM, and quiet hours (both or neither). */
  reminderTime?: string;
  quietStart?: string | null;
  quietEnd?: string | null;
  /** Bytes of the user's attachments, read with the session (GET /me reports it). */
  attachmentBytes?: number;
}

/** What a personal API token / app password may do (devices.md "Tokens"). */
export const TOKEN_SCOPES = ["read", "write", "caldav"] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];

/**
 * Who is calling and through which credential. Features only read `user`; `via` says which
 * credential the guard (core/auth/guard.ts, the one place credentials are resolved) accepted: a
 * session cookie, or a personal API token (`Authorization: Bearer` on the JSON API, HTTP Basic
 * with an app password on CalDAV).
 */
export type Principal = SessionPrincipal | TokenPrincipal;

export interface SessionPrincipal {
  user: AuthUser;
  via: "session";
  sessionId: string;
  /** SHA-256 of the session token: what the CSRF token is bound to. */
  tokenHash: string;
}

export interface TokenPrincipal {
  user: AuthUser;
  via: "token";
  tokenId: string;
  scopes: readonly TokenScope[];
}
