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
