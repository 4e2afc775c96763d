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
