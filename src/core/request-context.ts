import type { Principal } from "./auth/principal";

/** What the server knows about one request beyond the Request object itself. */
export interface RequestContext {
  id: string;
  startedAt: number;
  ip: string | null;
  userAgent: string | null;
  /** https directly, or through a trusted proxy. */
  secure: boolean;
  principal: Principal | null;
}

// Keyed by the Request object, so nothing leaks between requests and nothing needs cleaning.
const contexts = new WeakMap<Request, RequestContext>();

export function setContext(req: Request, ctx: RequestContext): void {
  contexts.set(req, ctx);
}

export function getContext(req: Request): RequestContext | undefined {
  return contexts.get(req);
}
