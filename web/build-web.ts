// Bundles the web app (web/src) with Bun's bundler into hashed, minified assets plus an index.html
// that references them. Used by build.ts (embedded in dist/app) and, when the server runs from
// source, by src/features/web on first request.
import { dirname, join } from "node:path";
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";

export interface WebAsset {
  type: string;
  /** Text, or base64 for a binary file (`base64: true`): the bundle is embedded as JSON. */
  body: string;
  base64?: boolean;
}
export interface WebBundle {
  /** index.html: the only page; references the hashed assets. */
  indexHtml: string;
  /** Hashed file name (e.g. `main-4f3a2b1c.js`) → content; served under /assets/. */
  assets: Record<string, WebAsset>;
  /** /manifest.webmanifest (the web app manifest; its icons are hashed assets). */
  manifest: WebAsset;
  /** /favicon.ico: the app icon in an ICO container, for clients that ask for it by that name. */
  favicon: WebAsset;
  /** /sw.js: the service worker (web/src/sw/sw.ts) with this bundle's app shell list. */
  serviceWorker: WebAsset;
  /** Gzipped bytes of the JavaScript the first page loads, and of the parts loaded later on demand. */
  jsGzip: { firstPage: number; lazy: number };
}

const TYPES: Record<string, string> = {
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  svg: "image/svg+xml",
  png: "image/png",
  map: "application/json; charset=utf-8",
};

const ASSETS_DIR = join(import.meta.dir, "..", "assets");
const THEME = "#255ccc"; // the icon's colour, also the browser's toolbar colour
// Computed, so that bundling the server (build.ts) does not follow it: dist/app embeds the icons
// made here and never runs the rasteriser.
const ICONS_MODULE = join(import.meta.dir, "icons.ts");

/** `name-<hash>.ext` for a file read from assets/, so it can be cached for a year like the bundle. */
function hashedName(file: string, bytes: Uint8Array): string {
  const dot = file.lastIndexOf(".");
  return `${file.slice(0, dot)}-${Bun.hash(bytes).toString(36).slice(0, 8)}${file.slice(dot)}`;
}

/**
 * An ICO file holding one PNG image (Windows Vista and every browser read PNG-in-ICO): a 6-byte
 * header and one 16-byte directory entry in front of the PNG's own bytes.
 */
export function icoOf(png: Uint8Array): Uint8Array {
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  const width = view.getUint32(16); // IHDR
  const height = view.getUint32(20);
  const ico = new Uint8Array(22 + png.length);
  const h = new DataView(ico.buffer);
  h.setUint16(2, 1, true); // type: icon
  h.setUint16(4, 1, true); // one image
  ico[6] = width >= 256 ? 0 : width; // 0 means 256
  ico[7] = height >= 256 ? 0 : height;
  h.setUint16(10, 1, true); // colour planes
  h.setUint16(12, 32, true); // bits per pixel
  h.setUint32(14, png.length, true);
  h.setUint32(18, 22, true); // offset of the image
  ico.set(png, 22);
  return ico;
}

export async function buildWeb(opts: { minify?: boolean } = {}): Promise<WebBundle> {
  const result = await Bun.build({
    entrypoints: [join(import.meta.dir, "src", "main.tsx")],
    target: "browser",
    format: "esm",
    // Code that only some screens need (the lunar calendar) is a separate chunk loaded by import().
    splitting: true,
    minify: opts.minify ?? true,
    naming: { entry: "[name]-[hash].[ext]", chunk: "[name]-[hash].[ext]", asset: "[name]-[hash].[ext]" },
    define: { "process.env.NODE_ENV": '"production"' },
  });
  if (!result.success) throw new AggregateError(result.logs, "web build failed");
  const assets: Record<string, WebAsset> = {};
  const scripts: string[] = [];
  const styles: string[] = [];
  const jsGzip = { firstPage: 0, lazy: 0 };
  for (const out of result.outputs) {
    const name = out.path.replace(/^.*[\\/]/, "");
    const ext = name.slice(name.lastIndexOf(".") + 1);
    const body = await out.text();
    assets[name] = { type: TYPES[ext] ?? "application/octet-stream", body };
    if (out.kind === "entry-point" && ext === "js") scripts.push(name);
    if (ext === "css") styles.push(name);
    if (ext === "js") jsGzip[out.kind === "entry-point" ? "firstPage" : "lazy"] += Bun.gzipSync(body).length;
  }
  // The app icon: assets/icon.svg is the one source; the PNGs (manifest, maskable, apple-touch-icon,
  // /favicon.ico) are rasterised from it here (web/icons.ts).
  const svgText = readFileSync(join(ASSETS_DIR, "icon.svg"), "utf8");
  const icons: typeof import("./icons") = await import(ICONS_MODULE);
  const addPng = async (name: string, svg: string, size: number) => {
    const png = await icons.pngOf(svg, size);
    const hashed = hashedName(name, png);
    assets[hashed] = { type: TYPES.png!, body: Buffer.from(png).toString("base64"), base64: true };
    return { name: hashed, png };
  };
  const svgName = hashedName("icon.svg", new TextEncoder().encode(svgText));
  assets[svgName] = { type: TYPES.svg!, body: svgText };
  const icon192 = await addPng("icon-192.png", svgText, 192);
  const icon512 = await addPng("icon-512.png", svgText, 512);
  const maskable = await addPng("icon-maskable-512.png", icons.maskableSvg(svgText, THEME), 512);
  const touch = await addPng("apple-touch-icon-180.png", icons.maskableSvg(svgText, THEME), 180);
  const favicon = await icons.pngOf(svgText, 48);
  const manifest = {
    id: "/",
    name: "app",
    short_name: "app",
    description: "Tasks, habits, countdowns and memos",
    start_url: "/tasks",
    scope: "/",
    display: "standalone",
    background_color: "#f6f7f9",
    theme_color: THEME,
    icons: [
      { src: `/assets/${svgName}`, type: "image/svg+xml", sizes: "any", purpose: "any" },
      { src: `/assets/${icon192.name}`, type: "image/png", sizes: "192x192", purpose: "any" },
      { src: `/assets/${icon512.name}`, type: "image/png", sizes: "512x512", purpose: "any" },
      { src: `/assets/${maskable.name}`, type: "image/png", sizes: "512x512", purpose: "maskable" },
    ],
  };
  const indexHtml = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover">
<meta name="color-scheme" content="light dark">
<meta name="theme-color" content="${THEME}">
<title>app</title>
<link rel="icon" href="/assets/${svgName}" type="image/svg+xml">
<link rel="apple-touch-icon" href="/assets/${touch.name}">
<link rel="manifest" href="/manifest.webmanifest">
${styles.map((s) => `<link rel="stylesheet" href="/assets/${s}">`).join("\n")}
${scripts.map((s) => `<script type="module" src="/assets/${s}"></script>`).join("\n")}
</head>
<body><div id="root"></div><noscript>This app needs JavaScript.</noscript></body>
</html>
`;
  return {
    indexHtml,
    assets,
    manifest: { type: "application/manifest+json; charset=utf-8", body: JSON.stringify(manifest) },
    favicon: { type: "image/x-icon", body: Buffer.from(icoOf(favicon)).toString("base64"), base64: true },
    serviceWorker: await buildServiceWorker(indexHtml, assets, opts.minify ?? true),
    jsGzip,
  };
}

/**
 * /sw.js (web/src/sw/sw.ts), bundled on its own as a classic script, with the app shell's URLs and
 * a version derived from them and index.html: a release with any new file is a new worker.
 */
async function buildServiceWorker(indexHtml: string, assets: Record<string, WebAsset>, minify: boolean): Promise<WebAsset> {
  const files = ["/", "/manifest.webmanifest", "/favicon.ico", ...Object.keys(assets).filter((n) => !n.endsWith(".map")).sort().map((n) => `/assets/${n}`)];
  const version = Bun.hash(JSON.stringify(files) + indexHtml).toString(36);
  const result = await Bun.build({
    entrypoints: [join(import.meta.dir, "src", "sw", "sw.ts")],
    target: "browser",
    format: "iife",
    minify,
    define: { __SHELL_FILES__: JSON.stringify(files), __SHELL_VERSION__: JSON.stringify(version) },
  });
  if (!result.success) throw new AggregateError(result.logs, "service worker build failed");
  return { type: TYPES.js!, body: await result.outputs[0]!.text() };
}

/** The newest modification time under web/src: the server, run from source, rebuilds when it moves. */
export function newestSourceMtime(dir = join(import.meta.dir, "src")): number {
  let max = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    max = Math.max(max, e.isDirectory() ? newestSourceMtime(p) : statSync(p).mtimeMs);
  }
  return max;
}

/**
 * Where build.ts puts the bundled web app for dist/app: an ignored file under dist/, which
 * `#web-assets` resolves to under the `app-embed` condition (package.json "imports"). Running from
 * source, the same specifier resolves to src/features/web/web-assets.source.ts (null: bundle on demand).
 */
export const GENERATED_WEB_ASSETS = join(import.meta.dir, "..", "dist", "web-assets.generated.ts");

/** Bundles the web app and writes it into the generated module that dist/app embeds. */
export async function embedWebAssets(): Promise<void> {
  const bundle = await buildWeb();
  const kib = (n: number) => (n / 1024).toFixed(1);
  console.log(`web: ${Object.keys(bundle.assets).length} assets, first-page JS ${kib(bundle.jsGzip.firstPage)} KiB gzipped (+ ${kib(bundle.jsGzip.lazy)} KiB loaded on demand)`);
  mkdirSync(dirname(GENERATED_WEB_ASSETS), { recursive: true });
  writeFileSync(
    GENERATED_WEB_ASSETS,
    `// Generated by build.ts (web/build-web.ts embedWebAssets); not tracked.\nimport type { WebBundle } from "../web/build-web";\n\nexport const embeddedWeb: WebBundle | null = ${JSON.stringify(bundle)};\n`,
  );
}

if (import.meta.main) {
  const b = await buildWeb();
  for (const [n, a] of Object.entries(b.assets)) {
    const bytes = a.base64 ? Buffer.from(a.body, "base64") : a.body;
    console.log(n, bytes.length, "bytes,", Bun.gzipSync(bytes).length, "gzipped");
  }
  console.log(`first-page JS ${b.jsGzip.firstPage} bytes gzipped, lazy chunks ${b.jsGzip.lazy} bytes gzipped`);
}
