import Memoirist from "memoirist";
import type { MetricsRegistry } from "../../core/metrics";

/**
 * Requests by route template and status, and their latency.
 *
 * The label is the template the router matched (`/api/v1/tasks/:id`), never the raw path: a path
 * holds ids, and one label value per id would grow the series without bound. The template is found
 * by a second router built from the app's own route list with the router Elysia itself uses
 * (memoirist), so it matches exactly what Elysia matched, also for answers given before routing (a
 * 401 of the session guard); a path no route matches is `unmatched`. Methods outside the standard
 * set are `other` for the same reason (any token is a valid method).
 *
 * Latency is the time until the response is ready (headers and a body, or the start of a streamed
 * one), as the request log's duration_ms; a streamed download's transfer time is not included.
 */

/** Upper bounds in seconds: a cached GET is well under 5 ms, an argon2 login around 100 ms, a big export seconds. */
export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** HTTP's and WebDAV/CalDAV's methods (a calendar client's PROPFIND and REPORT); any other is `other`. */
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "PROPFIND", "PROPPATCH", "REPORT", "MKCOL", "MKCALENDAR", "COPY", "MOVE", "LOCK", "UNLOCK"]);

export const UNMATCHED = "unmatched";

/** Route templates by method and path, as the app's router matches them. */
export class RouteTemplates {
  private readonly router = new Memoirist<string>();
  private readonly fixed = new Map<string, string>();

  constructor(routes: readonly { method: string; path: string }[]) {
    for (const r of routes) {
      const dynamic = r.path.includes(":") || r.path.includes("*");
      const paths = [r.path];
      // Elysia also answers "/x/" for "/x" (not strictPath).
      if (r.path.length > 1) paths.push(r.path.endsWith("/") ? r.path.slice(0, -1) : `${r.path}/`);
      for (const p of paths) {
        if (dynamic) this.router.add(r.method, p, r.path, { ignoreError: true, ignoreHistory: true });
        else if (!this.fixed.has(`${r.method} ${p}`)) this.fixed.set(`${r.method} ${p}`, r.path);
      }
    }
  }

  /** The template of `method path`, HEAD falling back to GET as Elysia does; UNMATCHED when none. */
  find(method: string, path: string): string {
    const m = method === "HEAD" ? ["HEAD", "GET"] : [method];
    for (const x of m) {
      const fixed = this.fixed.get(`${x} ${path}`);
      if (fixed) return fixed;
      const found = this.router.find(x, path);
      if (found) return found.store;
    }
    return UNMATCHED;
  }
}

export interface RequestMetrics {
  observe(method: string, path: string, status: number, seconds: number): void;
}

export function requestMetrics(metrics: MetricsRegistry, routes: RouteTemplates): RequestMetrics | null {
  if (!metrics.enabled) return null;
  const total = metrics.counter({
    name: "app_http_requests_total",
    help: "HTTP requests answered, by method, route template and status",
    labelNames: ["method", "route", "status"],
  });
  const duration = metrics.histogram({
    name: "app_http_request_duration_seconds",
    help: "Time until the response was ready (a streamed body's transfer not included), by method and route template",
    labelNames: ["method", "route"],
    buckets: LATENCY_BUCKETS,
  });
  // prom-client hashes the label set on every call; the children of each (method, route, status)
  // are looked up once and kept (bench/metrics-overhead.ts, loaded machine: 1.4-3.5 µs per request
  // before, 0.9-1.1 µs after). The map is bounded as every label is.
  const children = new Map<string, { inc(): void; observe(v: number): void }>();
  return {
    observe(method, path, status, seconds) {
      const m = METHODS.has(method) ? method : "other";
      const route = routes.find(method, path);
      const key = `${m} ${status} ${route}`;
      let c = children.get(key);
      if (!c) {
        const count = total.child({ method: m, route, status });
        const time = duration.child({ method: m, route });
        c = { inc: () => count.inc(), observe: (v) => time.observe(v) };
        children.set(key, c);
      }
      c.inc();
      c.observe(seconds);
    },
  };
}
