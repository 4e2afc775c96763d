import type { ServerSecret } from "../secret";
import type { AuthUser, TokenScope } from "./principal";

/** A token found by the keyed hash of its secret (tokenSecretHash), whatever its state: the guard decides whether it is usable. */
export interface TokenRecord {
  tokenId: string;
  scopes: TokenScope[];
  expiresAt: string | null;
  revokedAt: string | null;
  lastUsedAt: string | null;
  /** The owner's account is disabled (`app users disable`): none of its tokens authenticate. */
  userDisabled: boolean;
  /** The owner's case-folded username (what the login throttle counts under). */
  usernameKey: string;
  user: AuthUser;
}

/** An accepted use of a token (recorded at most once a minute per token). */
export interface TokenUse {
  tokenId: string;
  userId: string;
  at: Date;
  ip: string | null;
  userAgent: string | null;
  via: "bearer" | "basic";
}

/** A failed use of a token, for the audit log (the owner's when the token or the username is known). */
export interface TokenFailure {
  userId: string | null;
  at: Date;
  ip: string | null;
  userAgent: string | null;
  detail: Record<string, unknown>;
}

/**
 * What the guard needs of the tokens feature (src/features/tokens), handed in by app.ts as the
 * session lookup is: core imports no feature. The rules (expiry, revocation, scopes, throttling,
 * when to write last-used) stay in the guard; these are the feature's statements.
 */
export interface TokenCredentials {
  /** The token whose secret hashes to `secretHash` (revoked and expired ones too), or null. */
  find(secretHash: string): TokenRecord | null;
  /** The case-folded form of a username, as sign-in compares it. */
  usernameKey(username: string): string;
  /** The id of the user with that case-folded username, or null. */
  userIdOf(usernameKey: string): string | null;
  /** Records a successful use: last_used_at/ip and the audit log's `token_used` (called at most once a minute per token). */
  markUsed(use: TokenUse): void;
  /** Audits a refused token (`token_failed`). */
  recordFailure(f: TokenFailure): void;
}

/**
 * What is stored of a token's secret and looked up by: its HMAC-SHA256 under the server secret
 * (secret.key). The secret is 256 random bits, so no slow hash is needed; the key binds the tokens
 * to this server's secret as sessions' CSRF tokens are: a whole-instance snapshot (which carries
 * secret.key) keeps them working, while the database alone on a server with another secret.key
 * (a copy, a lost key) accepts none of them: they stay listed, and are refused until revoked.
 */
export function tokenSecretHash(server: ServerSecret, secret: string): string {
  return server.sign("api-token", secret);
}
