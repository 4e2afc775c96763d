// Bundles the web app (web/src) with Bun's bundler into hashed, minified assets plus an index.html
// that references them. Used by build.ts (embedded in dist/app) and, when the server runs from
// source, by src/features/web on first request.
import { join } from "node:path";
import { readdirSync, statSync, utimesSync, writeFileSync } from "node:fs";

export interface WebAsset {
  type: string;
  body: string;
}
export interface WebBundle {
  /** index.html: the only page; references the hashed assets. */
  indexHtml: string;
  /** Hashed file name (e.g. `main-4f3a2b1c.js`) → content; served under /assets/. */
  assets: Record<string, WebAsset>;
}

const TYPES: Record<string, string> = {
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  svg: "image/svg+xml",
  map: "application/json; charset=utf-8",
};

export async function buildWeb(opts: { minify?: boolean } = {}): Promise<WebBundle> {
  const result = await Bun.build({
    entrypoints: [join(import.meta.dir, "src", "main.tsx")],
    target: "browser",
    format: "esm",
    minify: opts.minify ?? true,
    naming: { entry: "[name]-[hash].[ext]", chunk: "[name]-[hash].[ext]", asset: "[name]-[hash].[ext]" },
    define: { "process.env.NODE_ENV": '"production"' },
  });
  if (!result.success) throw new AggregateError(result.logs, "web build failed");
  const assets: Record<string, WebAsset> = {};
  const scripts: string[] = [];
  const styles: string[] = [];
  for (const out of result.outputs) {
    const name = out.path.replace(/^.*[\\/]/, "");
    const ext = name.slice(name.lastIndexOf(".") + 1);
    assets[name] = { type: TYPES[ext] ?? "application/octet-stream", body: await out.text() };
    if (out.kind === "entry-point" && ext === "js") scripts.push(name);
    if (ext === "css") styles.push(name);
  }
  const indexHtml = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover">
<meta name="color-scheme" content="light dark">
<title>app</title>
${styles.map((s) => `<link rel="stylesheet" href="/assets/${s}">`).join("\n")}
${scripts.map((s) => `<script type="module" src="/assets/${s}"></script>`).join("\n")}
</head>
<body><div id="root"></div><noscript>This app needs JavaScript.</noscript></body>
</html>
`;
  return { indexHtml, assets };
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

const GENERATED = join(import.meta.dir, "..", "src", "features", "web", "web-assets.generated.ts");
const STUB = `// Replaced by build.ts with the bundled web app while it compiles dist/app, then restored.
// null: running from source, so src/features/web builds the app from web/ on first request.
import type { WebBundle } from "../../../web/build-web";

export const embeddedWeb: WebBundle | null = null;
`;

/** Writes the bundle into the generated module that dist/app embeds; returns a function restoring the stub. */
export async function embedWebAssets(): Promise<() => void> {
  const bundle = await buildWeb();
  const { atime, mtime } = statSync(GENERATED);
  const js = Object.entries(bundle.assets).filter(([n]) => n.endsWith(".js"));
  const gz = js.reduce((n, [, a]) => n + Bun.gzipSync(a.body).length, 0);
  console.log(`web: ${Object.keys(bundle.assets).length} assets, JS ${(gz / 1024).toFixed(1)} KiB gzipped`);
  writeFileSync(
    GENERATED,
    `import type { WebBundle } from "../../../web/build-web";\n\nexport const embeddedWeb: WebBundle | null = ${JSON.stringify(bundle)};\n`,
  );
  return () => {
    writeFileSync(GENERATED, STUB);
    utimesSync(GENERATED, atime, mtime); // the stub is unchanged: keep dist/app newer than the sources
  };
}

if (import.meta.main) {
  const b = await buildWeb();
  for (const [n, a] of Object.entries(b.assets)) console.log(n, a.body.length, "bytes,", Bun.gzipSync(a.body).length, "gzipped");
}
