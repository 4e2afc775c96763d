import { csrfFailed } from "./errors";

/**
 * GETs that make the server read a whole account (14 s for `export.zip` over 53k tasks, issue 11).
 * A link or an image on another site would start one with the user's cookie; browsers say so in
 * Sec-Fetch-Site. Other GETs may be opened from elsewhere (a bookmark, a link in a mail).
 */
export const CROSS_SITE_REFUSED_GETS: ReadonlySet<string> = new Set(["/api/v1/backup/export.zip", "/api/v1/export", "/api/v1/export.csv"]);

export const CROSS_SITE_DOWNLOAD_REFUSED = "exports cannot be started from another site";

/**
 * Called on every request before the guard (onRequest): GET or HEAD of an export that a browser
 * marks `Sec-Fetch-Site: cross-site` is 403 csrf_failed. Same-site, same-origin, `none` (typed in
 * the address bar, a bookmark) and clients that send no such header are served.
 */
export function refuseCrossSiteDownload(request: Request, rawPath: string): void {
  if (request.method !== "GET" && request.method !== "HEAD") return;
  // The router takes "/x/" for "/x" (as the guard does).
  const path = rawPath.length > 1 && rawPath.endsWith("/") ? rawPath.replace(/\/+$/, "") : rawPath;
  if (CROSS_SITE_REFUSED_GETS.has(path) && request.headers.get("sec-fetch-site") === "cross-site") throw csrfFailed(CROSS_SITE_DOWNLOAD_REFUSED);
}
