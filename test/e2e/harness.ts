// End-to-end harness: the server (dist/app when it is up to date, else `bun src/main.ts`) on a fresh
// data directory and a free port, and Debian's headless chromium driven by playwright-core.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";
export const ROOT = join(import.meta.dir, "..", "..");
export const ARTIFACTS = join(ROOT, "test-artifacts");
export const hasChromium = existsSync(CHROMIUM);

function newestMtime(dir: string): number {
  let max = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    max = Math.max(max, e.isDirectory() ? newestMtime(p) : statSync(p).mtimeMs);
  }
  return max;
}

/** dist/app if it was built after the last change to src/, web/ and migrations/; else null. */
export function freshExecutable(): string | null {
  const exe = join(ROOT, "dist", "app");
  if (!existsSync(exe)) return null;
  const built = statSync(exe).mtimeMs;
  const newest = Math.max(...["src", "web", "migrations"].map((d) => newestMtime(join(ROOT, d))));
  return built >= newest ? exe : null;
}

export interface Server {
  base: string;
  dir: string;
  via: string;
  stop(): Promise<void>;
}

export async function startServer(): Promise<Server> {
  const dir = mkdtempSync(join(tmpdir(), "app-e2e-"));
  const port = 21000 + Math.floor(Math.random() * 20000);
  const exe = freshExecutable();
  const cmd = exe ? [exe] : [process.execPath, join(ROOT, "src", "main.ts")];
  const proc = Bun.spawn([...cmd, "serve", "--data-dir", dir, "--port", String(port), "--log-format", "off"], { cwd: ROOT, stdout: "ignore", stderr: "inherit" });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${base}/api/v1/health/ready`)).status === 200) break;
    } catch {
      // not listening yet
    }
    if (i > 600) {
      proc.kill();
      throw new Error("the server did not become ready within 30 s");
    }
    await Bun.sleep(50);
  }
  return {
    base,
    dir,
    via: exe ? "dist/app" : "bun src/main.ts",
    async stop() {
      proc.kill("SIGTERM");
      await proc.exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Chromium with a fresh profile directory (playwright passes it as --user-data-dir) and one context.
 * Phone-sized pages are made with setViewportSize, so one browser process serves the whole run.
 */
export async function launchBrowser(base: string): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const profile = mkdtempSync(join(tmpdir(), "app-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    timeout: 60_000,
    baseURL: base,
    acceptDownloads: true,
    viewport: DESKTOP,
  });
  context.setDefaultTimeout(15_000);
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

export const PHONE = { width: 390, height: 844 };
export const DESKTOP = { width: 1280, height: 800 };

/** Collects page errors and CSP violations so a test can assert there were none. */
export function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(`pageerror: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error" && !/status of 4\d\d/.test(m.text())) errors.push(`console: ${m.text()}`);
  });
  return errors;
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: false });
}
