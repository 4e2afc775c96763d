// The app's PNG icons, rasterised at build time from the one source image assets/icon.svg by resvg
// (@resvg/resvg-wasm: WebAssembly, so the same on x64, ARM and musl build machines). Loaded by
// web/build-web.ts through a computed import, so the executable, which embeds the built icons,
// never carries the rasteriser.
import { readFileSync } from "node:fs";
import { initWasm, Resvg } from "@resvg/resvg-wasm";

let ready: Promise<void> | null = null;
function init(): Promise<void> {
  ready ??= initWasm(readFileSync(require.resolve("@resvg/resvg-wasm/index_bg.wasm")));
  return ready;
}

/** The SVG rendered as a square PNG of `size` pixels. */
export async function pngOf(svg: string, size: number): Promise<Uint8Array> {
  await init();
  const r = new Resvg(svg, { fitTo: { mode: "width", value: size } });
  const png = r.render().asPng();
  r.free();
  return png;
}

/**
 * A maskable icon (the platform crops it to a circle, squircle, …): the source drawn at 80 % in
 * the middle of a full-bleed square of `background`, so it stays inside the safe zone (a circle of
 * 40 % radius, https://www.w3.org/TR/appmanifest/#icon-masks).
 */
export function maskableSvg(svg: string, background: string): string {
  const inner = svg.replace(/^<svg\b/, '<svg x="51.2" y="51.2" width="409.6" height="409.6"');
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 512 512"><rect width="512" height="512" fill="${background}"/>${inner}</svg>`;
}
