import { Elysia, NotFoundError } from "elysia";
import { WebService, type ServedAsset } from "./web.service";

// The app's only page loads its script and style from /assets (same origin): no inline script or
// style, no other origin. Attachment previews and downloads use blob: URLs.
export const WEB_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

// Asset names carry a content hash, so a cached copy can never be stale.
const IMMUTABLE = "public, max-age=31536000, immutable";
// Fixed names (the manifest, /favicon.ico): cached a day, so a new release's icon shows up soon.
const ONE_DAY = "public, max-age=86400";

const notFound = () => new Response("not found\n", { status: 404, headers: { "content-type": "text/plain; charset=utf-8" } });

function respond(a: ServedAsset, request: Request, headers: Record<string, string>): Response {
  const h: Record<string, string> = { "content-type": a.type, vary: "accept-encoding", ...headers };
  if (a.gzip && /\bgzip\b/.test(request.headers.get("accept-encoding") ?? "")) {
    h["content-encoding"] = "gzip";
    return new Response(a.gzip, { headers: h });
  }
  return new Response(a.body, { headers: h });
}

function isApiPath(path: string): boolean {
  return path === "/api" || path.startsWith("/api/");
}

async function page(web: WebService, request: Request): Promise<Response> {
  // no-cache: revalidate index.html on every load, so a new release's asset names are picked up.
  return respond(await web.index(), request, { "cache-control": "no-cache", "content-security-policy": WEB_CSP, "referrer-policy": "same-origin" });
}

/**
 * The web app: `/`, the hashed files under `/assets/`, `/manifest.webmanifest`, `/sw.js` (the service
 * worker), `/favicon.ico`
 * (a real icon: browsers, feed readers and bookmark tools ask for it), and the SPA fallback that answers
 * index.html for any other GET outside /api (client-side routes such as /tasks or /memos/…).
 * /api/* never falls back: an unknown API path stays the problem+json 404.
 */
export function webRoutes(web: WebService) {
  return new Elysia({ name: "web" })
    .get("/", ({ request }) => page(web, request), { detail: { hide: true } })
    .get(
      "/assets/:file",
      async ({ params, request }) => {
        const a = await web.asset(params.file);
        if (!a) return notFound();
        return respond(a, request, { "cache-control": IMMUTABLE });
      },
      { detail: { hide: true } },
    )
    .get("/manifest.webmanifest", async ({ request }) => respond(await web.manifest(), request, { "cache-control": ONE_DAY }), { detail: { hide: true } })
    // The service worker: at the root so its scope is the whole app; revalidated on every check
    // (browsers also skip their HTTP cache for it after 24 h) so a release reaches installed apps.
    .get(
      "/sw.js",
      async ({ request }) => respond(await web.serviceWorker(), request, { "cache-control": "no-cache", "content-security-policy": WEB_CSP, "service-worker-allowed": "/" }),
      { detail: { hide: true } },
    )
    .get("/favicon.ico", async ({ request }) => respond(await web.favicon(), request, { "cache-control": ONE_DAY }), { detail: { hide: true } })
    .get(
      "/*",
      ({ path, request }) => {
        if (isApiPath(path)) throw new NotFoundError();
        if (path.startsWith("/assets/")) return notFound(); // a missing file is never the page
        return page(web, request);
      },
      { detail: { hide: true } },
    );
}
