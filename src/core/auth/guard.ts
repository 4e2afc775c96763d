import { csrfFailed, unauthenticated } from "../errors";
import { constantTimeEqual, type ServerSecret } from "../secret";
import type { RequestContext } from "../request-context";
import { CSRF_COOKIE, CSRF_HEADER, SESSION_COOKIE, csrfTokenFor } from "./cookies";
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
    if (SESSION_STARTING_PATHS.has(path) && isWrite) this.rejectCrossSite(request);

    // Most anonymous requests carry no session cookie at all: skip the parsing.
    const cookieHeader = request.headers.get("cookie");
    const cookies = cookieHeader && cookieHeader.includes(SESSION_COOKIE) ? new Bun.CookieMap(cookieHeader) : null;
    const token = cookies?.get(SESSION_COOKIE);
    const tokenHash = token ? SessionStore.hashToken(token) : null;

    if (isWrite && tokenHash && !SESSION_STARTING_PATHS.has(path)) {
      const header = request.headers.get(CSRF_HEADER);
      const cookie = cookies?.get(CSRF_COOKIE);
      if (!header) throw csrfFailed(`the ${CSRF_HEADER} header is missing`);
      if (!cookie || !constantTimeEqual(header, cookie)) throw csrfFailed(`the ${CSRF_HEADER} header does not match the ${CSRF_COOKIE} cookie`);
      if (!constantTimeEqual(header, csrfTokenFor(this.secret, tokenHash))) throw csrfFailed("the CSRF token does not belong to this session");
    }

    ctx.principal = tokenHash ? this.resolveSession(tokenHash) : null;
    const needsAuth = path.startsWith("/api/") && !PUBLIC_API_PATHS.has(path);
    if (needsAuth && !ctx.principal) throw unauthenticated(token ? "the session is unknown, revoked or expired" : undefined);
  }

  private resolveSession(tokenHash: string): Principal | null {
    const found = this.sessions.lookup(tokenHash);
    return found ? { user: found.user, via: "session", sessionId: found.sessionId, tokenHash } : null;
  }

  /** Login and setup refuse requests a browser marks as coming from another site. */
  private rejectCrossSite(request: Request): void {
    const site = request.headers.get("sec-fetch-site");
    if (site && site !== "same-origin" && site !== "same-site" && site !== "none") {
      throw csrfFailed("cross-site request refused");
    }
    const origin = request.headers.get("origin");
    if (origin && origin !== "null") {
      let originHost: string;
      try {
        originHost = new URL(origin).host;
      } catch {
        throw csrfFailed("invalid Origin header");
      }
      const host = (this.trustProxy && request.headers.get("x-forwarded-host")?.split(",")[0]?.trim()) || request.headers.get("host") || new URL(request.url).host;
      if (originHost.toLowerCase() !== host.toLowerCase()) throw csrfFailed("cross-site request refused");
    } else if (origin === "null") {
      throw csrfFailed("cross-site request refused");
    }
  }
}
