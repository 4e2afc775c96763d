import { csrfFailed, unauthenticated } from "../errors";
import { constantTimeEqual, type ServerSecret } from "../secret";
import type { RequestContext } from "../request-context";
import { CSRF_HEADER, PLAIN_NAMES, SECURE_NAMES, SESSION_COOKIE, csrfTokenFor, type CookieNames } from "./cookies";
import type { Principal } from "./principal";
import { SessionStore } from "./session-store";

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
 * Runs first on every request (Elysia's onRequest, before body parsing and validation), so a
 * forged write is 403 and an anonymous one 401, never 422. Order: cross-site check for session
 * starting endpoints, CSRF double-submit for cookie-authenticated writes, then authentication.
 */
export class AuthGuard {
  constructor(
    private readonly secret: ServerSecret,
    private readonly sessions: SessionStore,
    private readonly trustProxy: boolean,
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
    if (SESSION_STARTING_PATHS.has(path) && isWrite) this.rejectCrossSite(request, ctx.secure);

    // Most anonymous requests carry no session cookie at all: skip the parsing.
    const cookieHeader = request.headers.get("cookie");
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
      throw unauthenticated();
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
