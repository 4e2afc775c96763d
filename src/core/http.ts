import { getContext } from "./request-context";
import type { Principal, SessionPrincipal } from "./auth/principal";
import { forbidden, unauthenticated } from "./errors";

/** Where a request came from, for sessions and the audit log. */
export interface RequestMeta {
  ip: string | null;
  userAgent: string | null;
  secure: boolean;
}

export function requestMeta(request: Request): RequestMeta {
  const ctx = getContext(request);
  return {
    ip: ctx?.ip ?? null,
    userAgent: ctx?.userAgent ?? request.headers.get("user-agent"),
    secure: ctx?.secure ?? new URL(request.url).protocol === "https:",
  };
}

/** The authenticated caller. The guard has already answered 401 on protected paths without one. */
export function principalOf(request: Request): Principal {
  const p = getContext(request)?.principal;
  if (!p) throw unauthenticated();
  return p;
}

/**
 * The caller of an operation only a signed-in session may perform (sign-out, password, sessions,
 * tokens). The guard already refuses tokens on these paths (core/auth/guard.ts tokenRefusedPath);
 * this says so again where the operation needs the session itself.
 */
export function sessionPrincipalOf(request: Request): SessionPrincipal {
  const p = principalOf(request);
  if (p.via !== "session") throw forbidden("this operation needs a signed-in session; API tokens cannot perform it");
  return p;
}

/**
 * The origin the client reached the server at (scheme://host[:port]), for absolute URLs in answers:
 * https when the request came over TLS or, with --trust-proxy, a proxy's X-Forwarded-Proto says so;
 * the host from X-Forwarded-Host behind a trusted proxy, else Host, else the URL's (as the cross-site checks of
 * core/auth/guard.ts read them). Null when the host is not a valid one.
 */
export function requestOrigin(request: Request, trustProxy: boolean): string | null {
  const secure = getContext(request)?.secure ?? request.url.startsWith("https:");
  const host = (trustProxy && request.headers.get("x-forwarded-host")?.split(",")[0]?.trim()) || request.headers.get("host") || new URL(request.url).host;
  try {
    const u = new URL(`${secure ? "https" : "http"}://${host}`);
    // A Host with a path, user info or query is not a host: refuse rather than build a URL from it.
    if (u.pathname !== "/" || u.username || u.password || u.search || u.hash) return null;
    return u.origin;
  } catch {
    return null;
  }
}
