import type { WebAsset, WebBundle } from "../../../web/build-web";
import { embeddedWeb } from "#web-assets";

export interface ServedAsset {
  type: string;
  body: Uint8Array<ArrayBuffer>;
  /** gzip-compressed body, when the client accepts it and compression pays. */
  gzip: Uint8Array<ArrayBuffer> | null;
}

/**
 * The web app's files: embedded in dist/app by build.ts, or (running from source) bundled from web/
 * on first use. Bodies are encoded and gzipped once and kept: the whole app is a few dozen KiB.
 */
export class WebService {
  private bundle: Promise<WebBundle> | null = null;
  private readonly encoded = new Map<string, ServedAsset>();
  // From source only: when web/src last changed as of the current bundle, and the assets of earlier
  // bundles (a page loaded just before a rebuild still gets its files).
  private builtFrom = 0;
  private readonly earlier: Record<string, WebAsset> = {};

  constructor(private readonly source: WebBundle | null = embeddedWeb) {}

  private load(): Promise<WebBundle> {
    this.bundle ??= this.source
      ? Promise.resolve(this.source)
      : import("../../../web/build-web").then(async (m) => {
          const from = m.newestSourceMtime();
          const b = await m.buildWeb();
          this.builtFrom = from;
          return b;
        });
    this.bundle.catch(() => {
      this.bundle = null; // let a later request try again
    });
    return this.bundle;
  }

  /** Running from source, a page load after an edit under web/src gets a fresh bundle (development). */
  private async reloadIfEdited(): Promise<void> {
    if (this.source || !this.bundle) return;
    const m = await import("../../../web/build-web");
    if (m.newestSourceMtime() <= this.builtFrom) return;
    const old = await this.bundle.catch(() => null);
    if (old) Object.assign(this.earlier, old.assets);
    this.encoded.delete("index.html");
    this.encoded.delete("manifest.webmanifest");
    this.encoded.delete("sw.js");
    this.encoded.delete("favicon.ico");
    this.bundle = null;
  }

  async index(): Promise<ServedAsset> {
    await this.reloadIfEdited();
    const b = await this.load();
    return this.encode("index.html", { type: "text/html; charset=utf-8", body: b.indexHtml });
  }

  /** /manifest.webmanifest: the web app manifest (name, start page, colours, icons). */
  async manifest(): Promise<ServedAsset> {
    await this.reloadIfEdited();
    return this.encode("manifest.webmanifest", (await this.load()).manifest);
  }

  /** /sw.js: the service worker, with this bundle's app shell list. */
  async serviceWorker(): Promise<ServedAsset> {
    await this.reloadIfEdited();
    return this.encode("sw.js", (await this.load()).serviceWorker);
  }

  /** /favicon.ico: the app icon as an ICO file (never the page). */
  async favicon(): Promise<ServedAsset> {
    return this.encode("favicon.ico", (await this.load()).favicon);
  }

  /** A hashed asset by file name, or null. */
  async asset(name: string): Promise<ServedAsset | null> {
    const b = await this.load();
    const a = Object.hasOwn(b.assets, name) ? b.assets[name] : Object.hasOwn(this.earlier, name) ? this.earlier[name] : undefined;
    return a ? this.encode(name, a) : null;
  }

  private encode(name: string, a: WebAsset): ServedAsset {
    let e = this.encoded.get(name);
    if (!e) {
      const body = a.base64 ? Uint8Array.from(Buffer.from(a.body, "base64")) : new TextEncoder().encode(a.body);
      const gz = body.length > 1024 ? Bun.gzipSync(body, { level: 9 }) : null;
      e = { type: a.type, body, gzip: gz && gz.length < body.length ? gz : null };
      this.encoded.set(name, e);
    }
    return e;
  }
}
