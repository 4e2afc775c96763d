// The installable web app through the real HTTP stack: /sw.js (scope, caching headers, the app
// shell list it carries, every file of which is served), the manifest's icons rasterised from
// assets/icon.svg, and /favicon.ico made from the same source. The browser side (installability
// by the DevTools Protocol, the offline copy) is test/e2e/pwa.test.ts.
import { afterAll, describe, expect, test } from "bun:test";
import { makeTestApp, setupAdmin } from "../helpers/app";

const app = makeTestApp();
afterAll(() => app.close());
const raw = async (path: string) => new Uint8Array(await (await app.handle.fetch(new Request(`http://localhost${path}`))).arrayBuffer());
const pngSize = (b: Uint8Array) => {
  const v = new DataView(b.buffer, b.byteOffset);
  return [v.getUint32(16), v.getUint32(20)];
};

describe("installable web app", () => {
  test("/sw.js: JavaScript at the root (scope /), revalidated on every update check, never the page", async () => {
    const anon = app.client();
    const r = await anon.get("/sw.js");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(r.headers.get("cache-control")).toBe("no-cache");
    expect(r.headers.get("service-worker-allowed")).toBe("/");
    expect(r.text).not.toContain("<html");
    expect(r.text).toContain("addEventListener");
    expect(r.text).not.toContain("__SHELL_FILES__"); // the build filled it in
  });

  test("the worker's app shell list names the page, the manifest, the favicon and every script, style and icon; each is served", async () => {
    const admin = await setupAdmin(app);
    const sw = (await admin.get("/sw.js")).text;
    const page = (await admin.get("/")).text;
    const files = new Set([...sw.matchAll(/"(\/(?:assets\/[\w.-]+|manifest\.webmanifest|favicon\.ico)?)"/g)].map((m) => m[1]!));
    expect(files.has("/")).toBe(true);
    expect(files.has("/manifest.webmanifest")).toBe(true);
    expect(files.has("/favicon.ico")).toBe(true);
    for (const m of page.matchAll(/(?:src|href)="(\/assets\/[\w.-]+)"/g)) expect(files.has(m[1]!)).toBe(true);
    for (const f of files) {
      const r = await admin.get(f);
      expect({ f, status: r.status }).toEqual({ f, status: 200 });
    }
    // The lazily loaded chunk (the lunar calendar) is in the shell too, so it works offline.
    expect([...files].some((f) => /\/assets\/lunar-[\w]+\.js$/.test(f))).toBe(true);
  });

  test("manifest icons are rasterised from assets/icon.svg: 192 and 512 px PNGs, a maskable 512 px one", async () => {
    const m = JSON.parse((await app.client().get("/manifest.webmanifest")).text);
    expect(m).toMatchObject({ id: "/", scope: "/", start_url: "/tasks", display: "standalone", theme_color: "#255ccc" });
    const pngs = (m.icons as { src: string; type: string; sizes: string; purpose: string }[]).filter((i) => i.type === "image/png");
    expect(pngs.map((i) => `${i.sizes} ${i.purpose}`).sort()).toEqual(["192x192 any", "512x512 any", "512x512 maskable"]);
    for (const i of pngs) {
      const b = await raw(i.src);
      expect([...b.slice(1, 4)]).toEqual([0x50, 0x4e, 0x47]);
      const n = Number(i.sizes.split("x")[0]);
      expect(pngSize(b)).toEqual([n, n]);
    }
    // The maskable one fills its square (a platform mask may cut any corner): its corner pixel is not transparent,
    // where the plain icon's rounded corner is. Read from the PNG by the browser in the e2e; here: they differ.
    const any512 = await raw(pngs.find((i) => i.sizes === "512x512" && i.purpose === "any")!.src);
    const mask512 = await raw(pngs.find((i) => i.purpose === "maskable")!.src);
    expect(Buffer.from(any512).equals(Buffer.from(mask512))).toBe(false);
    // apple-touch-icon: a 180 px PNG named by the page.
    const page = (await app.client().get("/")).text;
    const touch = /<link rel="apple-touch-icon" href="([^"]+)">/.exec(page)![1]!;
    expect(pngSize(await raw(touch))).toEqual([180, 180]);
    expect(page).toContain('<meta name="theme-color" content="#255ccc">');
  });

  test("/favicon.ico holds a 48 px PNG of the same icon", async () => {
    const b = await raw("/favicon.ico");
    expect(b[6]).toBe(48);
    expect(b[7]).toBe(48);
    expect(pngSize(b.slice(22))).toEqual([48, 48]);
  });
});
