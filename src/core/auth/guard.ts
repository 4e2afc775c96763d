import { AppError, csrfFailed, forbidden, malformed, rateLimited, unauthenticated } from "../errors";
import { constantTimeEqual, type ServerSecret } from "../secret";
import type { Clock } from "../time";
import type { RequestContext } from "../request-context";
import { CSRF_HEADER, PLAIN_NAMES, SECURE_NAMES, SESSION_COOKIE, csrfTokenFor, type CookieNames } from "./cookies";
import type { Principal, TokenPrincipal } from "./principal";
import { SessionStore } from "./session-store";
import { addressKey, type LoginThrottle } from "./throttle";
import { tokenSecretHash, type TokenCredentials, type TokenRecord } from "./token-credentials";

/** Paths answered without a session (contract §2). Everything else under /api needs one. */
const PUBLIC_API_PATHS = new Set([
  "/api/v1/setup/status",
  "/api/v1/setup/initialize",
  "/api/v1/auth/login",
  "/api/v1/health/live",
  "/api/v1/health/ready",
]);

/**
 * Paths whose own token is the credential (a notification's done/snooze link): answered without a
 * session and without the CSRF check, even when the browser sends its cookies along (a service
 * worker's fetch does); a session, if any, is not used.
 */
const TOKEN_API_PREFIX = "/api/v1/reminder-actions/";

/** Endpoints that start a session: guarded by Origin/Sec-Fetch-Site instead of a CSRF token. */
const SESSION_STARTING_PATHS = new Set(["/api/v1/setup/initialize", "/api/v1/auth/login"]);

const WRITE_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/**
 * The paths CalDAV is served under (devices.md "CalDAV"): there, and only there, the credential is
 * HTTP Basic with a username and an app password (a token with the `caldav` scope); a session
 * cookie is not used (a cross-site form could otherwise write with it).
 */
export function isDavPath(path: string): boolean {
  return path === "/dav" || path.startsWith("/dav/") || path === "/.well-known/caldav" || path.startsWith("/.well-known/caldav/");
}

/** The challenge of a 401 on a DAV path: clients ask the user for a username and an app password. */
export const DAV_CHALLENGE = 'Basic realm="app", charset="UTF-8"';

/**
 * One answer for every refused DAV credential (none, malformed, unknown username, wrong or revoked
 * or expired token, a token without the caldav scope, the account password): nothing tells them apart.
 */
const davUnauthenticated = () =>
  new AppError("unauthenticated", "a username and an app password (an API token with the caldav scope) are required", { headers: { "WWW-Authenticate": DAV_CHALLENGE } });

const BAD_TOKEN = "the API token is unknown, revoked or expired";

/**
 * JSON API operations a token may not perform whatever its scopes (devices.md: account, session,
 * token and admin operations): signing in and out, set-up, password, the sessions, the tokens
 * themselves, the account's security log, the administrators' settings and user management. GET
 * /me (who the token belongs to) and /users/lookup (sharing) stay open to tokens.
 */
const TOKEN_REFUSED_PREFIX = /^\/api\/v1\/(?:auth|setup|sessions|tokens|admin|audit-logs)(?:\/|$)/;
const TOKEN_REFUSED_USERS = /^\/api\/v1\/users(?:$|\/(?!lookup$))/;

/** Whether a token may make this request at all (before its scopes are looked at). */
export function tokenRefusedPath(path: string, method: string): boolean {
  let p = path;
  // The router may decode %-escapes: the decision is taken on the decoded path.
  try {
    p = decodeURIComponent(path);
  } catch {
    // Not decodable: the router will not find a route for it either.
  }
  return TOKEN_REFUSED_PREFIX.test(p) || TOKEN_REFUSED_USERS.test(p) || (p === "/api/v1/me" && method !== "GET" && method !== "HEAD");
}

/** A token's last_used_at / last_used_ip are written at most this often: a read stays a read. */
export const TOKEN_TOUCH_MS = 60_000;

/**
 * Runs first on every request (Elysia's onRequest, before body parsing and validation), so a
 * forged write is 403 and an anonymous one 401, never 422. Order: cross-site check for session
 * starting endpoints, CSRF double-submit for cookie-authenticated writes, then authentication.
 */
export class AuthGuard {
  constructor(
    private readonly secret: ServerSecret,
    private readonly sessions: SessionStore,
    private readonly trustProxy: boolean,
    private readonly tokens: TokenCredentials,
    private readonly throttle: LoginThrottle,
    private readonly clock: Clock,
  ) {}

  check(request: Request, rawPath: string, ctx: RequestContext): void {
    // The router takes "/api/v1/auth/login/" for "/api/v1/auth/login": so must the guard.
    const path = rawPath.length > 1 && rawPath.endsWith("/") ? rawPath.replace(/\/+$/, "") || "/" : rawPath;
    const method = request.method;
    const isWrite = WRITE_METHODS.has(method);
    if (path.startsWith(TOKEN_API_PREFIX)) {
      ctx.principal = null;
      return;
    }
    if (isDavPath(path)) {
      this.checkDav(request, ctx);
      return;
    }
    const authorization = path.startsWith("/api/v1/") ? request.headers.get("authorization") : null;
    const bearer = authorization !== null && /^bearer(?:\s|$)/i.test(authorization) ? authorization.slice(6).trim() : null;

    // Most anonymous requests carry no session cookie at all: skip the parsing.
    const cookieHeader = request.headers.get("cookie");
    if (bearer !== null) {
      // Two credentials: which one the client meant is a guess we do not make.
      if (cookieHeader && hasSessionCookie(new Bun.CookieMap(cookieHeader))) {
        throw malformed("the request carries both a session cookie and an Authorization: Bearer token; send one of them");
      }
      const found = this.resolveToken(bearer, ctx);
      ctx.principal = tokenPrincipal(found);
      if (tokenRefusedPath(path, method)) {
        throw forbidden("API tokens cannot be used for sign-in, account, session, token or administration requests; use the web app");
      }
      const reading = method === "GET" || method === "HEAD";
      const allowed = reading ? found.scopes.includes("read") || found.scopes.includes("write") : found.scopes.includes("write");
      if (!allowed) throw forbidden(`this token's scopes (${found.scopes.join(", ")}) do not allow ${method} requests`);
      // Recorded for a request the token may make only: a refused one leaves the data as it was.
      this.markUsed(found, ctx, "bearer");
      return;
    }
    if (SESSION_STARTING_PATHS.has(path) && isWrite) this.rejectCrossSite(request, ctx.secure);

    const cookies = cookieHeader && cookieHeader.includes(SESSION_COOKIE) ? new Bun.CookieMap(cookieHeader) : null;
    const names = cookies ? sessionCookieNames(cookies, ctx.secure) : null;
    const token = names ? cookies?.get(names.session) : null;
    const tokenHash = token ? SessionStore.hashToken(token) : null;

    if (isWrite && tokenHash && names && !SESSION_STARTING_PATHS.has(path)) {
      const header = request.headers.get(CSRF_HEADER);
      const cookie = cookies?.get(names.csrf);
      if (!header) throw csrfFailed(`the ${CSRF_HEADER} header is missing`);
      if (!cookie || !constantTimeEqual(header, cookie)) throw csrfFailed(`the ${CSRF_HEADER} header does not match the ${names.csrf} cookie`);
      if (!constantTimeEqual(header, csrfTokenFor(this.secret, tokenHash))) throw csrfFailed("the CSRF token does not belong to this session");
    }

    ctx.principal = tokenHash ? this.resolveSession(tokenHash) : null;
    const needsAuth = path.startsWith("/api/") && !PUBLIC_API_PATHS.has(path);
    if (needsAuth && !ctx.principal) {
      if (token) throw unauthenticated("the session is unknown, revoked or expired");
      if (!names && cookies?.has(PLAIN_NAMES.session)) throw unauthenticated(`the ${PLAIN_NAMES.session} cookie is not accepted over https; sign in again`);
      if (authorization !== null && /^basic(?:\s|$)/i.test(authorization)) {
        throw unauthenticated("HTTP Basic is not accepted on the JSON API: send a session cookie or Authorization: Bearer <token>");
      }
      throw unauthenticated();
    }
  }

  /**
   * `Authorization: Bearer <secret>` on the JSON API. Every use goes through the login throttle
   * (core/auth/throttle.ts) as a sign-in does, under the client's address (tokenThrottleKey): a
   * wrong, revoked or expired token counts as a failed attempt of that address, a good one is taken
   * back, and either is refused (429) while the address must wait. Never under the owner's
   * username: a token is 256 random bits, so the name's lock protects nothing here, while counting
   * there would let a stale phone with a revoked token lock its owner out of signing in, and let
   * anyone who knows a username stop that user's apps by failing logins for it.
   */
  private resolveToken(secret: string, ctx: RequestContext): TokenRecord {
    const ipKey = addressKey(ctx.ip);
    const found = secret === "" ? null : this.tokens.find(tokenSecretHash(this.secret, secret));
    const now = this.clock.now();
    const usable = found !== null && isUsable(found, now.toISOString());
    const attempt = this.throttle.reserve(ipKey, tokenThrottleKey(ipKey));
    if (!attempt.ok) throw rateLimited(attempt.retryAfter);
    if (!usable) {
      this.throttle.failed(attempt.reservation);
      this.tokens.recordFailure({ userId: found?.user.id ?? null, at: now, ip: ctx.ip, userAgent: ctx.userAgent, detail: { via: "bearer", ...(found ? { token_id: found.tokenId } : {}) } });
      throw unauthenticated(BAD_TOKEN);
    }
    this.throttle.accepted(attempt.reservation);
    return found;
  }

  /**
   * A DAV path: OPTIONS is answered without credentials (clients probe with it; the CalDAV feature
   * answers); everything else needs HTTP Basic with a username and the secret of a token of that
   * user with the `caldav` scope. The same work is done whether or not the username exists (the
   * token and the user are both looked up, each by one index), throttled (under the address, as
   * resolveToken explains: a phone given the account password by mistake must not lock its owner's
   * sign-in; the account password is never accepted here, so guessing it here gains nothing) and
   * audited as a sign-in.
   */
  private checkDav(request: Request, ctx: RequestContext): void {
    ctx.principal = null;
    if (request.method === "OPTIONS") return;
    const creds = parseBasic(request.headers.get("authorization"));
    // No credentials yet is how every client starts (it waits for the challenge): not a failure.
    if (!creds) throw davUnauthenticated();
    const ipKey = addressKey(ctx.ip);
    const key = this.tokens.usernameKey(creds.username);
    const namedUserId = this.tokens.userIdOf(key);
    const found = creds.secret === "" ? null : this.tokens.find(tokenSecretHash(this.secret, creds.secret));
    const now = this.clock.now();
    const ok = found !== null && isUsable(found, now.toISOString()) && found.usernameKey === key && found.scopes.includes("caldav");
    const attempt = this.throttle.reserve(ipKey, tokenThrottleKey(ipKey));
    if (!attempt.ok) throw rateLimited(attempt.retryAfter);
    if (!ok) {
      this.throttle.failed(attempt.reservation);
      this.tokens.recordFailure({
        userId: namedUserId ?? found?.user.id ?? null,
        at: now,
        ip: ctx.ip,
        userAgent: ctx.userAgent,
        detail: { via: "basic", username: creds.username.slice(0, 64), ...(found ? { token_id: found.tokenId } : {}) },
      });
      throw davUnauthenticated();
    }
    this.throttle.accepted(attempt.reservation);
    ctx.principal = tokenPrincipal(found);
    this.markUsed(found, ctx, "basic");
  }

  /** Records an accepted token's use: at most once a minute per token (TOKEN_TOUCH_MS), so a read stays a read. */
  private markUsed(found: TokenRecord, ctx: RequestContext, via: "bearer" | "basic"): void {
    const now = this.clock.now();
    if (found.lastUsedAt !== null && Date.parse(found.lastUsedAt) > now.getTime() - TOKEN_TOUCH_MS) return;
    try {
      this.tokens.markUsed({ tokenId: found.tokenId, userId: found.user.id, at: now, ip: ctx.ip, userAgent: ctx.userAgent, via });
    } catch {
      // A busy or read-only database must not turn a read into an error.
    }
  }

  private resolveSession(tokenHash: string): Principal | null {
    const found = this.sessions.lookup(tokenHash);
    return found ? { user: found.user, via: "session", sessionId: found.sessionId, tokenHash } : null;
  }

  /**
   * Login and setup refuse requests a browser marks as coming from another site: a
   * `Sec-Fetch-Site` other than same-origin/same-site/none, or an `Origin` whose scheme, host or
   * port is not this server's as the request reached it (its scheme: https directly or, behind a
   * trusted proxy, `X-Forwarded-Proto`; its host: `Host` or, behind a trusted proxy,
   * `X-Forwarded-Host`). `https://host` posting to the plain-http server on the same host is
   * another origin (anyone who can answer for that host over https is not necessarily this server).
   */
  private rejectCrossSite(request: Request, secure: boolean): void {
    const site = request.headers.get("sec-fetch-site");
    if (site && site !== "same-origin" && site !== "same-site" && site !== "none") {
      throw csrfFailed("cross-site request refused");
    }
    const origin = request.headers.get("origin");
    if (origin === null) return;
    if (origin === "null") throw csrfFailed("cross-site request refused");
    let originOf: string;
    try {
      originOf = new URL(origin).origin;
    } catch {
      throw csrfFailed("invalid Origin header");
    }
    const host = (this.trustProxy && request.headers.get("x-forwarded-host")?.split(",")[0]?.trim()) || request.headers.get("host") || new URL(request.url).host;
    let expected: string;
    try {
      // Through URL so default ports and letter case compare the way a browser writes Origin.
      expected = new URL(`${secure ? "https" : "http"}://${host}`).origin;
    } catch {
      throw csrfFailed("cross-site request refused");
    }
    if (originOf !== expected) {
      throw csrfFailed(
        secure || !originOf.startsWith("https:")
          ? "cross-site request refused"
          : "cross-site request refused: the page is https but the request reached the server as plain http (behind a TLS proxy, start the server with --trust-proxy)",
      );
    }
  }
}

/**
 * Which pair of cookies carries the session. A `__Host-` session cookie is used on any request (a
 * browser only ever stores one set over https by this host). The plain pair is used only on a
 * request that is not HTTPS: over HTTPS a plain cookie may have been planted by anyone able to set
 * cookies for this name (a plain-http response on the network path, a sibling subdomain), so it is
 * ignored rather than accepted as a downgrade; someone who signed in over http before the switch to
 * https signs in once more.
 */
function sessionCookieNames(cookies: Bun.CookieMap, secure: boolean): CookieNames | null {
  if (cookies.has(SECURE_NAMES.session)) return SECURE_NAMES;
  if (!secure && cookies.has(PLAIN_NAMES.session)) return PLAIN_NAMES;
  return null;
}

/**
 * The login throttle's second key for a token use: one per client address, in the username table
 * but never a username (they cannot contain NUL), so token attempts from an address are counted
 * together and no real username is touched.
 */
function tokenThrottleKey(ipKey: string): string {
  return `\u0000token@${ipKey}`;
}

function tokenPrincipal(t: TokenRecord): TokenPrincipal {
  return { user: t.user, via: "token", tokenId: t.tokenId, scopes: t.scopes };
}

function hasSessionCookie(cookies: Bun.CookieMap): boolean {
  return cookies.has(SECURE_NAMES.session) || cookies.has(PLAIN_NAMES.session);
}

/** Not revoked, not expired, its owner not disabled. */
function isUsable(t: TokenRecord, nowIso: string): boolean {
  return t.revokedAt === null && !t.userDisabled && (t.expiresAt === null || t.expiresAt > nowIso);
}

/** `Basic base64(username:secret)` (RFC 7617, UTF-8), or null when absent or not of that form. */
function parseBasic(header: string | null): { username: string; secret: string } | null {
  const m = header === null ? null : /^basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header);
  if (!m) return null;
  const text = new TextDecoder().decode(Buffer.from(m[1]!, "base64"));
  const colon = text.indexOf(":");
  if (colon <= 0) return null;
  return { username: text.slice(0, colon), secret: text.slice(colon + 1) };
}
