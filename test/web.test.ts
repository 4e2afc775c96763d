// The web feature through the real HTTP stack: the page, its hashed assets, the SPA fallback, and
// that the fallback never turns an /api 404 (or any non-GET) into the page.
import { afterAll, describe, expect, test } from "bun:test";
import { gunzipSync } from "node:zlib";
import { makeTestApp, setupAdmin, type TestClient } from "./helpers/app";
import { webRoutes } from "../src/features/web/web.routes";
import { WebService } from "../src/features/web/web.service";

const app = makeTestApp();
afterAll(() => app.close());
let admin: TestClient;
let anon: TestClient;
let scriptPath = "";
let stylePath = "";

describe("web app", () => {
  test("/ is the app's page for anyone, with no-cache and a strict CSP", async () => {
    admin = await setupAdmin(app);
    anon = app.client();
    const r = await anon.get("/");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(r.headers.get("cache-control")).toBe("no-cache");
    const csp = r.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("object-src 'none'");
    expect(csp).not.toContain("unsafe-inline");
    expect(csp).not.toContain("unsafe-eval");
    expect(csp).not.toMatch(/https?:/); // nothing from another origin
    // No inline script: every <script> has a same-origin src and no body; no inline handlers or styles.
    const scripts = [...r.text.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attrs, body] of scripts) {
      expect(attrs).toMatch(/src="\/assets\/[\w.-]+\.js"/);
      expect(body!.trim()).toBe("");
    }
    expect(r.text).not.toMatch(/\son[a-z]+=/i);
    expect(r.text).not.toMatch(/<style|style=/i);
    scriptPath = /src="(\/assets\/[^"]+\.js)"/.exec(r.text)![1]!;
    stylePath = /href="(\/assets\/[^"]+\.css)"/.exec(r.text)![1]!;
  });

  test("asset names carry a content hash and are cached for a year, immutable", async () => {
    expect(scriptPath).toMatch(/^\/assets\/main-[a-z0-9]{6,}\.js$/);
    const js = await anon.get(scriptPath);
    expect(js.status).toBe(200);
    expect(js.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(js.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(js.headers.get("x-content-type-options")).toBe("nosniff");
    const css = await anon.get(stylePath);
    expect(css.status).toBe(200);
    expect(css.headers.get("content-type")).toBe("text/css; charset=utf-8");
    expect(css.headers.get("cache-control")).toContain("immutable");
  });

  test("assets are gzipped for clients that accept it, and the first load stays within 150 KB of compressed JS", async () => {
    const res = await app.handle.fetch(new Request(`http://localhost${scriptPath}`, { headers: { "accept-encoding": "gzip, deflate, br" } }));
    expect(res.headers.get("content-encoding")).toBe("gzip");
    expect(res.headers.get("vary")).toBe("accept-encoding");
    const gz = new Uint8Array(await res.arrayBuffer());
    expect(gz.length).toBeLessThanOrEqual(150 * 1024);
    const plain = await anon.get(scriptPath);
    expect(new TextDecoder().decode(gunzipSync(gz))).toBe(plain.text);
  });

  test("an unknown or tampered asset name is a plain 404, not the page", async () => {
    for (const p of ["/assets/main-00000000.js", "/assets/..%2Fpackage.json", "/assets/"]) {
      const r = await anon.get(p);
      expect(r.status).toBe(404);
      expect(r.text).not.toContain("<html");
    }
  });

  test("client-side routes fall back to the page (SPA), with the same headers", async () => {
    for (const p of ["/tasks", "/tasks?list=abc", "/memos/0190", "/settings", "/some/deep/path"]) {
      const r = await anon.get(p);
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(r.headers.get("cache-control")).toBe("no-cache");
      expect(r.headers.get("content-security-policy")).toContain("script-src 'self'");
      expect(r.text).toContain(scriptPath);
    }
  });

  test("the fallback never swallows /api: an unknown API path is still the problem+json 404 (or 401 without a session)", async () => {
    for (const p of ["/api/v1/nope", "/api/v1/tasks/x/y/z", "/api/nope", "/api", "/api/v2/tasks"]) {
      const r = await admin.get(p);
      expect(r.status).toBe(404);
      expect(r.headers.get("content-type")).toContain("application/problem+json");
      expect(r.body.code).toBe("not_found");
      expect(r.text).not.toContain("<html");
      const a = await anon.get(p);
      expect(a.status).toBe(p === "/api" ? 404 : 401);
      expect(a.headers.get("content-type")).toContain("application/problem+json");
    }
    // and real API routes still answer as before
    expect((await admin.get("/api/v1/me")).body.username).toBe("owner");
  });

  test("only GET falls back: writes to non-API paths are 404, not the page", async () => {
    for (const m of ["POST", "PUT", "PATCH", "DELETE"]) {
      const r = await admin.request(m, "/tasks", { json: {} });
      expect(r.status).toBe(404);
      expect(r.text).not.toContain("<html");
    }
  });

  test("the page's routes are not in the API document", async () => {
    const doc = await admin.get("/api/openapi.json");
    expect(Object.keys(doc.body.paths).filter((p) => !p.startsWith("/api/"))).toEqual([]);
  });
});

describe("web app embedded in the executable", () => {
  // What build.ts embeds: served as given, never rebuilt from web/.
  const bundle = {
    indexHtml: '<!doctype html><script type="module" src="/assets/main-abc123.js"></script>',
    assets: { "main-abc123.js": { type: "text/javascript; charset=utf-8", body: `console.log(${JSON.stringify("x".repeat(4000))});` } },
  };
  const routes = webRoutes(new WebService(bundle));
  const get = (path: string, headers: Record<string, string> = {}) => routes.handle(new Request(`http://localhost${path}`, { headers }));

  test("the embedded page and assets are served as built, gzipped on request", async () => {
    const page = await get("/tasks");
    expect(await page.text()).toBe(bundle.indexHtml);
    expect(page.headers.get("cache-control")).toBe("no-cache");
    const js = await get("/assets/main-abc123.js");
    expect(await js.text()).toBe(bundle.assets["main-abc123.js"].body);
    const gz = await get("/assets/main-abc123.js", { "accept-encoding": "gzip" });
    expect(gz.headers.get("content-encoding")).toBe("gzip");
    expect(new TextDecoder().decode(gunzipSync(new Uint8Array(await gz.arrayBuffer())))).toBe(bundle.assets["main-abc123.js"].body);
    expect((await get("/assets/main-other.js")).status).toBe(404);
  });
});
