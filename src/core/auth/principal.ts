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

/**
 * Who is calling and through which credential. Features only read `user`; `via` lets a second
 * credential type (personal API tokens as `Authorization: Bearer`, exempt from CSRF) be added
 * as one more resolver in `guard.ts` without touching any feature.
 */
export interface Principal {
  user: AuthUser;
  via: "session";
  sessionId: string;
  /** SHA-256 of the session token: what the CSRF token is bound to. */
  tokenHash: string;
}
