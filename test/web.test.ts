// The web feature through the real HTTP stack: the page, its hashed assets, the SPA fallback, and
// that the fallback never turns an /api 404 (or any non-GET) into the page.
import { DOCUMENTED_OUTSIDE_API } from "../src/core/openapi-document";
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
/** The answer's bytes (the test client decodes bodies as text). */
const raw = async (path: string) => new Uint8Array(await (await app.handle.fetch(new Request(`http://localhost${path}`))).arrayBuffer());

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

  test("the first page's JavaScript stays within the 60 KB (gzipped) budget; the lunar calendar is a chunk loaded on demand", async () => {
    const { buildWeb } = await import("../web/build-web");
    const b = await buildWeb();
    console.log(`web: first-page JS ${(b.jsGzip.firstPage / 1024).toFixed(1)} KiB gzipped, lazy ${(b.jsGzip.lazy / 1024).toFixed(1)} KiB`);
    expect(b.jsGzip.firstPage).toBeLessThanOrEqual(60 * 1024);
    // lunar-typescript is not in the entry, only in a chunk the entry imports dynamically.
    const entry = Object.entries(b.assets).find(([n]) => /^main-.*\.js$/.test(n))![1].body;
    const lunar = Object.keys(b.assets).find((n) => /^lunar-.*\.js$/.test(n));
    expect(lunar).toBeDefined();
    expect(entry).toContain(lunar!);
    expect(entry).not.toContain("getFirstJulianDay");
    const chunk = await anon.get(`/assets/${lunar}`);
    expect(chunk.status).toBe(200);
    expect(chunk.text).toContain("getFirstJulianDay");
  });

  test("/favicon.ico is a real icon (an ICO holding a PNG), never the page", async () => {
    const r = await anon.get("/favicon.ico");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("image/x-icon");
    expect(r.headers.get("cache-control")).toBe("public, max-age=86400");
    const b = await raw("/favicon.ico");
    expect([...b.slice(0, 6)]).toEqual([0, 0, 1, 0, 1, 0]); // ICO header: type 1 (icon), one image
    const size = new DataView(b.buffer, b.byteOffset).getUint32(14, true);
    const offset = new DataView(b.buffer, b.byteOffset).getUint32(18, true);
    expect(offset + size).toBe(b.length);
    expect([...b.slice(offset, offset + 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]); // PNG signature
    expect(r.text).not.toContain("<html");
    expect(r.headers.get("x-content-type-options")).toBe("nosniff");
  });

  test("the web app manifest: name, start page, colours and icons that are served", async () => {
    const page = await anon.get("/");
    expect(page.text).toContain('<link rel="manifest" href="/manifest.webmanifest">');
    const icon = /<link rel="icon" href="(\/assets\/icon-[\w-]+\.svg)" type="image\/svg\+xml">/.exec(page.text);
    expect(icon).not.toBeNull();
    const r = await anon.get("/manifest.webmanifest");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/manifest+json; charset=utf-8");
    const m = JSON.parse(r.text);
    expect(m).toMatchObject({ name: expect.any(String), short_name: expect.any(String), start_url: "/tasks", display: "standalone", theme_color: expect.stringMatching(/^#[0-9a-f]{6}$/) });
    expect([...new Set(m.icons.map((i: { type: string }) => i.type))].sort()).toEqual(["image/png", "image/svg+xml"]);
    for (const i of m.icons as { src: string; type: string }[]) {
      const a = await anon.get(i.src);
      expect({ src: i.src, status: a.status, type: a.headers.get("content-type") }).toEqual({ src: i.src, status: 200, type: i.type });
      expect(a.headers.get("cache-control")).toContain("immutable");
    }
    expect(m.icons.map((i: { src: string }) => i.src)).toContain(icon![1]);
    const png = await raw(m.icons.find((i: { type: string }) => i.type === "image/png").src);
    expect([...png.slice(1, 4)]).toEqual([0x50, 0x4e, 0x47]);
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
    // Only the API's own paths outside /api (a calendar feed's URL: DOCUMENTED_OUTSIDE_API), never a page's.
    expect(Object.keys(doc.body.paths).filter((p) => !p.startsWith("/api/") && !DOCUMENTED_OUTSIDE_API.has(p))).toEqual([]);
    expect([...DOCUMENTED_OUTSIDE_API]).toEqual(["/feeds/{file}"]);
  });
});

describe("web app embedded in the executable", () => {
  // What build.ts embeds: served as given, never rebuilt from web/.
  const bundle = {
    indexHtml: '<!doctype html><script type="module" src="/assets/main-abc123.js"></script>',
    assets: { "main-abc123.js": { type: "text/javascript; charset=utf-8", body: `console.log(${JSON.stringify("x".repeat(4000))});` } },
    manifest: { type: "application/manifest+json; charset=utf-8", body: '{"name":"app"}' },
    favicon: { type: "image/x-icon", body: Buffer.from([0, 0, 1, 0, 1, 0]).toString("base64"), base64: true },
    serviceWorker: { type: "text/javascript; charset=utf-8", body: "self.addEventListener('fetch', () => {});" },
    jsGzip: { firstPage: 0, lazy: 0 },
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
    expect(await (await get("/manifest.webmanifest")).text()).toBe('{"name":"app"}');
    expect([...new Uint8Array(await (await get("/favicon.ico")).arrayBuffer())]).toEqual([0, 0, 1, 0, 1, 0]);
  });
});
