/**
 * One path per request, for the router, the guard and the log alike.
 *
 * Elysia 1.4 does not parse the URL: it takes the path from `url.indexOf("/", 11)`, assuming
 * "http://" and a host of at least four characters. With a shorter Host (`nas` behind a proxy on
 * port 80, `a`) it cut the path in the wrong place: every /api request of `Host: nas` got the web
 * app, and with `Host: a` the router saw `/api/openapi.json` where the guard saw
 * `/ab/api/openapi.json` (public) and the document went out without a session (issue 11). Bun also
 * hands over a relative URL ("/api/v1/me") when the Host is empty or not a valid host name.
 *
 * So a request whose path Elysia would look for in the wrong place is given to Elysia as a copy
 * whose URL has a fixed origin (ROUTING_ORIGIN) and the same path and query; headers (Host and
 * Origin for the cross-site checks), method and body are the original's. Everyone then reads the
 * path with requestPath(), which finds it where Elysia does on such URLs.
 */

/** Long enough that Elysia finds the path; `.invalid` can never be a real origin (RFC 6761). */
export const ROUTING_ORIGIN = "http://app.invalid";

/** Where the path starts in `url` (absolute, or relative as Bun gives it for a bad Host); -1 when there is none. */
function pathStart(url: string): number {
  if (url.charCodeAt(0) === 0x2f) return 0;
  const scheme = url.indexOf("://");
  return scheme < 0 ? -1 : url.indexOf("/", scheme + 3);
}

/**
 * The request as Elysia should get it: the same object when Elysia finds its path where it is
 * (every Host of four characters or more), else a copy with URL ROUTING_ORIGIN + path + query.
 */
export function routableRequest(request: Request): Request {
  const url = request.url;
  const start = pathStart(url);
  if (start >= 11 && url.indexOf("/", 11) === start) return request;
  return new Request(ROUTING_ORIGIN + (start < 0 ? "/" : url.slice(start)), request);
}

/** The path of a (routable) request URL, without the query (which may carry cursors or other secrets). */
export function requestPath(url: string): string {
  const start = pathStart(url);
  if (start < 0) return "/";
  const q = url.indexOf("?", start);
  return q === -1 ? url.slice(start) : url.slice(start, q);
}
