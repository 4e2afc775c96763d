// End-to-end harness: the server (dist/app when it is up to date, else `bun src/main.ts`) on a fresh
// data directory and a free port, and Debian's headless chromium driven by playwright-core.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Locator, type Page } from "playwright-core";
import { AppProcess, cleanEnv, FROM_SOURCE } from "../helpers/spawn";

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
  const exe = freshExecutable();
  const proc = await AppProcess.start(["serve", "--data-dir", dir, "--port", "0", "--log-format", "json"], {
    program: exe ? [exe] : FROM_SOURCE,
    cwd: ROOT,
    env: cleanEnv(),
    stderr: "inherit",
  });
  const base = proc.base;
  return {
    base,
    dir,
    via: exe ? "dist/app" : "bun src/main.ts",
    async stop() {
      await proc.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Chromium with a fresh profile directory (playwright passes it as --user-data-dir) and one context.
 * Phone-sized pages are made with setViewportSize, so one browser process serves the whole run.
 * The app's service worker is blocked unless asked for (`serviceWorkers: "allow"`, test/e2e/pwa.test.ts):
 * page.route cannot see requests a service worker makes, and the other flows simulate a lost
 * connection with it.
 */
export async function launchBrowser(
  base: string,
  opts: { serviceWorkers?: "allow" | "block"; hasTouch?: boolean; viewport?: { width: number; height: number } } = {},
): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const profile = mkdtempSync(join(tmpdir(), "app-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    timeout: 60_000,
    baseURL: base,
    acceptDownloads: true,
    viewport: opts.viewport ?? DESKTOP,
    // A touch screen (touch events on, navigator.maxTouchPoints > 0) for the flows driven by touch input.
    hasTouch: opts.hasTouch ?? false,
    serviceWorkers: opts.serviceWorkers ?? "block",
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

/** Every console error, 4xx answers included (watchErrors leaves those to the flows that expect them). */
export function watchConsole(page: Page): string[] {
  const errors: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  page.on("pageerror", (e) => errors.push(`pageerror: ${e.message}`));
  return errors;
}

const AXE = join(ROOT, "node_modules", "axe-core", "axe.min.js");
let axeSource: string | null = null;

export interface A11yViolation {
  id: string;
  impact: string | null;
  nodes: string[];
}

/**
 * axe-core's violations on the page as it is now (all of axe's default rules: WCAG 2.x A/AA and best
 * practices). axe is evaluated through the DevTools protocol, so the page's strict CSP (no inline
 * script) stays on and is not what is tested.
 */
export async function axeViolations(page: Page): Promise<A11yViolation[]> {
  axeSource ??= await Bun.file(AXE).text();
  if (!(await page.evaluate(() => "axe" in globalThis))) await page.evaluate(axeSource);
  return page.evaluate(async () => {
    // axe's own types are not in this project's (non-DOM) test typings.
    const axe = (globalThis as unknown as { axe: { run(ctx: unknown, opts: unknown): Promise<{ violations: { id: string; impact: string | null; nodes: { target: string[]; failureSummary?: string }[] }[] }> } }).axe;
    const r = await axe.run((globalThis as unknown as { document: unknown }).document, { resultTypes: ["violations"] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => `${n.target.join(" ")}: ${(n.failureSummary ?? "").replace(/\s+/g, " ").slice(0, 300)}`) }));
  });
}

// The page globals the browser-side callbacks below use (the test project has no DOM lib on purpose:
// DOM's fetch types clash with Bun's).
declare const document: { cookie: string };

/** An API call from the page (its session and CSRF header), to arrange data or check what a flow did. */
export async function apiFromPage<T>(page: Page, method: string, path: string, body?: unknown): Promise<T> {
  return page.evaluate(
    async ([method, path, body]) => {
      const m = /(?:^|; )(?:__Host-)?app_csrf=([^;]*)/.exec(document.cookie);
      const csrf = decodeURIComponent(m?.[1] ?? "");
      const r = await fetch(`/api/v1${path}`, { method, headers: { "content-type": "application/json", "x-csrf-token": csrf }, body: body === undefined ? undefined : JSON.stringify(body) });
      const text = await r.text();
      if (r.status >= 400) throw new Error(`${method} ${path}: ${r.status} ${text}`);
      return text ? JSON.parse(text) : null;
    },
    [method, path, body] as const,
  ) as Promise<T>;
}

/** The user's local date in the browser (YYYY-MM-DD). */
export function browserToday(page: Page): Promise<string> {
  return page.evaluate(() => {
    const d = new Date();
    return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`;
  });
}

/** Retries `f` until `ok` holds (the UI updates after the server answers); fails after 15 s. */
export async function poll<T>(f: () => Promise<T>, ok: (v: T) => boolean): Promise<T> {
  let last: T | undefined;
  for (let i = 0; i < 150; i++) {
    last = await f();
    if (ok(last)) return last;
    await Bun.sleep(100);
  }
  throw new Error(`condition not met; last value ${JSON.stringify(last)}`);
}

/** The account the e2e tests make on the first-run page (the instance's first user, an admin). */
export const FIRST_USER = { username: "alice", password: "a long enough password" };

/**
 * The first-run page of a fresh server, filled in and sent: the first account is made and signed
 * in, and the task page with its quick-add box is showing.
 */
export async function firstRunSetup(page: Page, user: { username: string; password: string } = FIRST_USER): Promise<void> {
  const { en: t } = await import("../../web/src/i18n");
  await page.goto("/");
  await page.getByRole("heading", { name: t.setup.title }).waitFor();
  await page.getByLabel(t.fields.username).fill(user.username);
  await page.getByLabel(t.fields.password).fill(user.password);
  await page.getByRole("button", { name: t.setup.submit }).click();
  await page.getByLabel(t.tasks.quickAddLabel).waitFor();
}

/** What most e2e files start from: a fresh server, a browser on it, its page watched for errors, the first account signed in. */
export interface Session {
  server: Server;
  browser: Awaited<ReturnType<typeof launchBrowser>>;
  page: Page;
  errors: string[];
}

export async function startSession(user: { username: string; password: string } = FIRST_USER): Promise<Session> {
  const server = await startServer();
  const browser = await launchBrowser(server.base);
  const page = browser.context.pages()[0] ?? (await browser.context.newPage());
  const errors = watchErrors(page);
  await firstRunSetup(page, user);
  return { server, browser, page, errors };
}

/**
 * What a QR code on the page says, read by a real decoder (zbar's zbarimg, Debian zbar-tools) from a
 * screenshot of it; null, with a warning naming the caller, when zbarimg is missing.
 */
export async function decodedQr(qr: Locator, who: string): Promise<string | null> {
  const zbarimg = Bun.which("zbarimg");
  if (!zbarimg) {
    console.warn(`${who}: zbarimg is missing (apt-get install zbar-tools): the QR code was not decoded`);
    return null;
  }
  const dir = mkdtempSync(join(tmpdir(), "app-qr-"));
  try {
    await qr.screenshot({ path: join(dir, "qr.png") });
    return Bun.spawnSync([zbarimg, "--quiet", "--raw", join(dir, "qr.png")], { stderr: "ignore" }).stdout.toString().trim();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
