import type { Principal } from "./auth/principal";

/**
 * What the server knows about one request beyond the Request object itself. The client address,
 * user agent and scheme are worked out on first use: most requests never need them.
 */
export class RequestContext {
  readonly startedAt = performance.now();
  principal: Principal | null = null;
  private ipValue: string | null | undefined;

  constructor(
    readonly id: string,
    private readonly request: Request,
    private readonly socketIp: () => string | null,
    private readonly trustProxy: boolean,
  ) {}

  /** The socket's address, or the last X-Forwarded-For hop when the proxy is trusted. */
  get ip(): string | null {
    if (this.ipValue === undefined) {
      let ip: string | null = null;
      if (this.trustProxy) {
        const xff = this.request.headers.get("x-forwarded-for");
        if (xff) {
          const hops = xff.split(",").map((s) => s.trim()).filter(Boolean);
          ip = hops[hops.length - 1]?.slice(0, 64) ?? null;
        }
      }
      this.ipValue = ip ?? this.socketIp();
    }
    return this.ipValue;
  }

  get userAgent(): string | null {
    return this.request.headers.get("user-agent");
  }

  /** https directly, or through a trusted proxy that says so. */
  get secure(): boolean {
    return (
      this.request.url.startsWith("https:") ||
      (this.trustProxy && this.request.headers.get("x-forwarded-proto")?.split(",")[0]?.trim() === "https")
    );
  }
}

// Kept on the Request object itself under a private symbol: it lives and dies with the request, and
// reading it is a property load (a WeakMap entry costs more and has to be swept by the collector).
const CONTEXT = Symbol("app.requestContext");
type WithContext = Request & { [CONTEXT]?: RequestContext };

export function setContext(req: Request, ctx: RequestContext): void {
  (req as WithContext)[CONTEXT] = ctx;
}

export function getContext(req: Request): RequestContext | undefined {
  return (req as WithContext)[CONTEXT];
}
