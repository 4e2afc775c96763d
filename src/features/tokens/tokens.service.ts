import type { Core } from "../../core/core";
import { readTx, writeTx } from "../../core/db";
import { notFound, stateConflict, validationFailed } from "../../core/errors";
import type { RequestMeta } from "../../core/http";
import { newId, newToken } from "../../core/ids";
import { authUserOf, type SessionPrincipal } from "../../core/auth/principal";
import { tokenSecretHash, type TokenCredentials } from "../../core/auth/token-credentials";
import { recordAudit } from "../audit/audit.repo";
import { findUserByKey, usernameKey } from "../account/account.repo";
import { countTokens, deleteRevokedTokens, findToken, findTokenBySecretHash, insertToken, listTokens, markTokenUsed, revokeToken, type TokenRow } from "./tokens.repo";
import { parseScopes } from "./tokens.present";
import { TOKENS_PER_USER_MAX, type TokenCreate } from "./tokens.schemas";

/**
 * Secrets start with this prefix (so a secret scanner or a person can tell what leaked) followed
 * by 256 random bits in base64url.
 */
export const TOKEN_SECRET_PREFIX = "app_";

/**
 * A revoked token's row is kept this long, so a device still using it is audited against its owner
 * (token_failed with the token's id); the user's next new token deletes older ones, so the rows of
 * years of devices do not pile up.
 */
export const REVOKED_KEPT_MS = 30 * 24 * 3600_000;

/** Personal API tokens / app passwords: the rules, no HTTP. Only a session manages them. */
export class TokensService {
  constructor(private readonly core: Core) {}

  list(p: SessionPrincipal): TokenRow[] {
    return readTx(this.core.db, (tx) => listTokens(tx, p.user.id));
  }

  get(p: SessionPrincipal, id: string): TokenRow {
    const row = readTx(this.core.db, (tx) => findToken(tx, p.user.id, id));
    if (!row) throw notFound("token");
    return row;
  }

  create(p: SessionPrincipal, input: TokenCreate, meta: RequestMeta): { row: TokenRow; secret: string } {
    const now = this.core.clock.now();
    if (input.expires_at && input.expires_at <= now.toISOString()) {
      throw validationFailed([{ path: "expires_at", message: "must be in the future" }], "the token would already have expired");
    }
    const secret = TOKEN_SECRET_PREFIX + newToken();
    return writeTx(this.core.db, (tx) => {
      deleteRevokedTokens(tx, p.user.id, new Date(now.getTime() - REVOKED_KEPT_MS).toISOString());
      if (countTokens(tx, p.user.id) >= TOKENS_PER_USER_MAX) {
        throw stateConflict(`a user may hold at most ${TOKENS_PER_USER_MAX} tokens; revoke one first`);
      }
      const row: TokenRow = {
        id: newId(),
        userId: p.user.id,
        name: input.name,
        // Sorted, so a token's scopes read the same whatever order they were asked in.
        scopes: JSON.stringify([...input.scopes].sort()),
        secretHash: tokenSecretHash(this.core.secret, secret),
        createdAt: now.toISOString(),
        expiresAt: input.expires_at ?? null,
        lastUsedAt: null,
        lastUsedIp: null,
        revokedAt: null,
      };
      insertToken(tx, row);
      recordAudit(tx, { userId: p.user.id, action: "token_created", at: now, ip: meta.ip, userAgent: meta.userAgent, targetType: "token", targetId: row.id, detail: { name: row.name.slice(0, 64), scopes: parseScopes(row.scopes), expires_at: row.expiresAt } });
      return { row, secret };
    });
  }

  /**
   * Revoked at once: the guard reads the row on every request, so the next one with it is 401. An
   * event stream (GET /events) opened with it is a request still running: the user's streams are
   * closed, and each reconnects with its own credential (a browser's session does; the token is refused).
   */
  revoke(p: SessionPrincipal, id: string, meta: RequestMeta): void {
    writeTx(this.core.db, (tx) => {
      const now = this.core.clock.now();
      if (!revokeToken(tx, p.user.id, id, now.toISOString())) throw notFound("token");
      recordAudit(tx, { userId: p.user.id, action: "token_revoked", at: now, ip: meta.ip, userAgent: meta.userAgent, targetType: "token", targetId: id });
    });
    this.core.events.closeStreamsOf(p.user.id);
  }

  /** The statements the guard resolves `Bearer` and CalDAV `Basic` credentials with (core/auth/guard.ts). */
  credentials(): TokenCredentials {
    const db = this.core.db;
    return {
      find: (secretHash) => {
        const r = findTokenBySecretHash(db, secretHash);
        if (!r) return null;
        return {
          tokenId: r.token_id,
          scopes: parseScopes(r.scopes),
          expiresAt: r.expires_at,
          revokedAt: r.revoked_at,
          lastUsedAt: r.last_used_at,
          userDisabled: r.disabled_at !== null,
          usernameKey: r.username_key,
          user: authUserOf(r),
        };
      },
      usernameKey: (username) => usernameKey(username.trim()),
      userIdOf: (key) => findUserByKey(db, key)?.id ?? null,
      // Each recorded use is audited too (`token_used`, at most once a minute per token, as last_used_* is).
      markUsed: (u) =>
        writeTx(db, (tx) => {
          markTokenUsed(tx, u.tokenId, u.at.toISOString(), u.ip);
          recordAudit(tx, { userId: u.userId, action: "token_used", at: u.at, ip: u.ip, userAgent: u.userAgent, targetType: "token", targetId: u.tokenId, detail: { via: u.via } });
        }),
      recordFailure: (f) =>
        writeTx(db, (tx) => recordAudit(tx, { userId: f.userId, action: "token_failed", at: f.at, ip: f.ip, userAgent: f.userAgent, targetType: "token", targetId: typeof f.detail.token_id === "string" ? f.detail.token_id : null, detail: f.detail })),
    };
  }
}
