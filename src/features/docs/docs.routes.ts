import { Elysia, type AnyElysia } from "elysia";
import { loadLazySchemas } from "../../core/openapi";

const INIT_JS = `window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    url: "/api/openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    withCredentials: true,
    requestInterceptor: function (req) {
      var m = document.cookie.match(/(?:^|; )__Host-app_csrf=([^;]*)/) || document.cookie.match(/(?:^|; )app_csrf=([^;]*)/);
      if (m) req.headers["X-CSRF-Token"] = decodeURIComponent(m[1]);
      return req;
    }
  });
});`;

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>app API</title><link rel="stylesheet" href="/api/docs/swagger-ui.css"></head>
<body><div id="swagger-ui"></div>
<script src="/api/docs/swagger-ui-bundle.js"></script><script src="/api/docs/init.js"></script></body></html>`;

const CSP = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'";

/** `/api/openapi.json` and `/api/docs`, both behind login (the guard covers every /api path). */
export function docsRoutes(getApp: () => AnyElysia, version: string) {
  let cached: string | null = null;
  const asset = (body: string, type: string) =>
    new Response(body, { headers: { "content-type": type, "cache-control": "private, max-age=3600" } });
  return new Elysia({ name: "docs" })
    .get("/api/openapi.json", async () => {
      // The generator is loaded on first use: it is not needed to serve the API.
      if (cached === null) {
        const { buildOpenApiDocument } = await import("../../core/openapi-document");
        // Schemas of features loaded on first use (their modules load now).
        await loadLazySchemas();
        cached = JSON.stringify(buildOpenApiDocument(getApp(), version));
      }
      return new Response(cached, { headers: { "content-type": "application/json" } });
    }, { detail: { hide: true } })
    .get("/api/docs", () => new Response(PAGE, { headers: { "content-type": "text/html; charset=utf-8", "content-security-policy": CSP } }), {
      detail: { hide: true },
    })
    .get("/api/docs/swagger-ui-bundle.js", async () => asset((await import("./docs-assets")).swaggerBundle, "text/javascript; charset=utf-8"), {
      detail: { hide: true },
    })
    .get("/api/docs/swagger-ui.css", async () => asset((await import("./docs-assets")).swaggerCss, "text/css; charset=utf-8"), { detail: { hide: true } })
    .get("/api/docs/init.js", () => asset(INIT_JS, "text/javascript; charset=utf-8"), { detail: { hide: true } });
}
