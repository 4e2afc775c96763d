import { Elysia, NotFoundError } from "elysia";
import { AppError } from "../../core/errors";
import type { Metrics } from "../../core/metrics";
import { sha256Hex, constantTimeEqual } from "../../core/secret";

/**
 * GET /metrics: the Prometheus text exposition, for a scraper holding the bearer token.
 *
 * - Metrics off (no `APP_METRICS_TOKEN`): the same 404 problem as any unknown path outside the web
 *   app, so a server does not advertise an endpoint nobody switched on (and a scraper pointed at it
 *   fails plainly rather than parsing the web app's page).
 * - No or another token: 401 with `WWW-Authenticate: Bearer realm="metrics"` (RFC 6750; with
 *   `error="invalid_token"` when a token was sent). The tokens are compared as SHA-256 digests in
 *   constant time: neither their content nor their length shows in the timing.
 *
 * Outside /api (Prometheus' conventional path, and not in the session-guarded API), so it is not in
 * /api/openapi.json; the README's operations section documents it.
 */
export function metricsRoutes(metrics: Metrics, token: string | undefined) {
  const expected = token === undefined ? null : sha256Hex(token);
  return new Elysia({ name: "metrics" }).get(
    "/metrics",
    async ({ request }) => {
      if (expected === null || !metrics.enabled) throw new NotFoundError();
      const auth = request.headers.get("authorization");
      const m = auth ? /^Bearer +(\S+) *$/i.exec(auth) : null;
      if (!m || !constantTimeEqual(sha256Hex(m[1]!), expected)) {
        throw new AppError("unauthenticated", m ? "the metrics token is wrong" : "a bearer token is required (Authorization: Bearer <APP_METRICS_TOKEN>)", {
          headers: { "WWW-Authenticate": m ? 'Bearer realm="metrics", error="invalid_token"' : 'Bearer realm="metrics"' },
        });
      }
      const { contentType, body } = await metrics.render();
      return new Response(body, { headers: { "content-type": contentType } });
    },
    { detail: { hide: true } },
  );
}
