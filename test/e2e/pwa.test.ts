// End-to-end: the installable web app (issue 14). In a persistent Chromium profile on
// http://127.0.0.1 (a secure context, so the service worker runs):
// - the DevTools Protocol's Page.getInstallabilityErrors returns none (Lighthouse 12 has no PWA
//   category any more, so this is the check);
// - with lists loaded once, the server is stopped, the page reloaded: the app shell comes from the
//   service worker and the last loaded lists and tasks are shown, marked as a saved copy; a write
//   says clearly that it needs the server; axe-core finds nothing, light and dark, desktop and phone.
// Skipped, with a message, when /usr/bin/chromium is missing.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { en as t } from "../../web/src/i18n";
import { apiFromPage, axeViolations, DESKTOP, hasChromium, launchBrowser, PHONE, poll, screenshot, startServer, type Server, firstRunSetup } from "./harness";

declare const navigator: { serviceWorker: { controller: unknown; ready: Promise<unknown> } };
declare const document: { title: string; querySelector(s: string): { getAttribute(n: string): string | null } | null };

const STEP = 120_000;
let server: Server | null = null;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let page: Page;
let base = "";

describe.skipIf(!hasChromium)("installable web app (issue 14)", () => {
  beforeAll(async () => {
    server = await startServer();
    // 127.0.0.1 by name: the issue asks for it, and it is a secure context like localhost.
    const u = new URL(server.base);
    u.hostname = "127.0.0.1";
    base = u.origin;
    browser = await launchBrowser(base, { serviceWorkers: "allow" });
    page = browser.context.pages()[0] ?? (await browser.context.newPage());
    await firstRunSetup(page);
  }, STEP);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  }, STEP);

  test("the service worker controls the page and Chromium reports no installability error", async () => {
    await poll(() => page.evaluate(() => navigator.serviceWorker.ready.then(() => navigator.serviceWorker.controller !== null)), (v) => v);
    const cdp = await browser.context.newCDPSession(page);
    const manifest = (await cdp.send("Page.getAppManifest")) as { url: string; errors: unknown[] };
    expect(manifest.url).toBe(`${base}/manifest.webmanifest`);
    expect(manifest.errors).toEqual([]);
    const r = (await cdp.send("Page.getInstallabilityErrors")) as { installabilityErrors: { errorId: string }[] };
    expect(r.installabilityErrors).toEqual([]);
    await cdp.detach();
    expect(await page.evaluate(() => document.querySelector('meta[name="theme-color"]')?.getAttribute("content"))).toBe("#255ccc");
    expect(await page.evaluate(() => document.title)).toBe(t.docTitle(t.tasks.inbox));
  }, STEP);

  test("server stopped: a reload shows the last loaded lists and tasks; a write says it needs the server", async () => {
    const list = await apiFromPage<{ id: string }>(page, "POST", "/lists", { name: "Groceries" });
    await apiFromPage(page, "POST", "/tasks", { title: "Buy oat milk", list_id: list.id });
    await page.goto(`/tasks?list=${list.id}`);
    await page.locator("li.task", { hasText: "Buy oat milk" }).waitFor();
    await page.waitForLoadState("networkidle");

    await server!.stop();
    server = null;
    await page.reload();
    await page.locator("li.task", { hasText: "Buy oat milk" }).waitFor();
    await page.getByRole("link", { name: "Groceries" }).first().waitFor();
    const banner = page.locator(".offline-banner");
    await banner.waitFor();
    expect(await banner.textContent()).toContain("Offline: showing what was last loaded");

    const quick = page.getByLabel(t.tasks.quickAddLabel);
    await quick.fill("Written offline");
    await quick.press("Enter");
    await page.locator(".toast", { hasText: t.offlineWrite }).waitFor();
    expect(await quick.inputValue()).toBe("Written offline"); // nothing lost

    for (const scheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      for (const [size, viewport] of [["desktop", DESKTOP], ["phone", PHONE]] as const) {
        await page.setViewportSize(viewport);
        await screenshot(page, `pwa-offline-${scheme}-${size}`);
        expect({ scheme, size, violations: await axeViolations(page) }).toEqual({ scheme, size, violations: [] });
      }
    }
    await page.setViewportSize(DESKTOP);
    await page.emulateMedia({ colorScheme: "light" });
  }, STEP);
});
