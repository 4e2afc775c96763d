// Settings → Calendar feeds in a real browser (issue 16): create a feed of one list, read its URL
// from the page, fetch it as a calendar app would (no session), revoke it through the confirm
// dialog, and see the URL answer 404. axe-core finds nothing on the section at desktop and phone
// sizes. Skipped, with a message, when /usr/bin/chromium is missing (apt-get install chromium).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { en as t } from "../../web/src/i18n";
import { apiFromPage, axeViolations, browserToday, decodedQr, DESKTOP, hasChromium, launchBrowser, PHONE, screenshot, type Server, startSession } from "./harness";

const STEP = 180_000;
const USER = { username: "fern", password: "a long enough password" };

if (!hasChromium) console.log("e2e feeds: /usr/bin/chromium is missing (apt-get install chromium): skipping");

describe.skipIf(!hasChromium)("Calendar feeds in Settings", () => {
  let server: Server;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let page: Page;
  let errors: string[] = [];

  beforeAll(async () => {
    ({ server, browser, page, errors } = await startSession(USER));
  }, STEP);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  }, STEP);

  test("create a list feed, fetch it, revoke it", async () => {
    const list = await apiFromPage<{ id: string }>(page, "POST", "/lists", { name: "Garden" });
    // Due in five days: inside the feed's window (60 days back to two years ahead).
    const due = new Date(Date.parse(`${await browserToday(page)}T00:00:00Z`) + 5 * 86_400_000).toISOString().slice(0, 10);
    await apiFromPage(page, "POST", "/tasks", { title: "Plant tulips", due_at: due, list_id: list.id });
    await apiFromPage(page, "POST", "/tasks", { title: "Elsewhere", due_at: due });

    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: t.nav.settings }).click();
    const card = page.locator(".card", { has: page.getByRole("heading", { name: t.feeds.title }) });
    await card.waitFor();
    await card.getByText(t.feeds.none).waitFor();
    await card.getByLabel(t.feeds.oneList).check();
    await card.getByRole("combobox", { name: new RegExp(`^${t.feeds.list}`) }).selectOption({ label: "Garden" });
    await card.getByLabel(t.feeds.includes.countdowns).uncheck();
    await card.getByLabel(t.feeds.format).selectOption("events");
    await card.getByRole("button", { name: t.feeds.create }).click();
    const url = card.getByLabel(t.feeds.url);
    await url.waitFor();
    const href = await url.inputValue();
    expect(href).toStartWith(`${server.base}/feeds/`);
    expect(await card.getByRole("link", { name: t.feeds.subscribe }).getAttribute("href")).toBe(href.replace(/^http:/, "webcal:"));
    await card.locator(".feed-list strong", { hasText: "Garden" }).waitFor();
    // Its QR code (the webcal link, for a phone's camera), shown on demand and read by a real decoder.
    await card.getByRole("button", { name: t.feeds.qr }).click();
    const qr = card.getByRole("img", { name: t.feeds.qrLabel });
    await qr.waitFor();
    const said = await decodedQr(qr, "test/e2e/feeds.test.ts");
    if (said !== null) expect(said).toBe(href.replace(/^http:/, "webcal:"));

    for (const size of [DESKTOP, PHONE]) {
      await page.setViewportSize(size);
      await card.scrollIntoViewIfNeeded();
      await screenshot(page, `feeds-settings-${size.width}`);
      expect(await axeViolations(page)).toEqual([]);
    }
    await page.setViewportSize(DESKTOP);

    // A calendar app: no cookies.
    const r = await fetch(href);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("text/calendar; charset=utf-8");
    const body = await r.text();
    expect(body).toContain("SUMMARY:Plant tulips");
    expect(body).toContain(`DTSTART;VALUE=DATE:${due.replaceAll("-", "")}`);
    expect(body).not.toContain("Elsewhere");

    await card.getByRole("button", { name: t.feeds.revoke }).click();
    const dialog = page.getByRole("dialog", { name: t.feeds.revokeTitle });
    expect(await axeViolations(page)).toEqual([]);
    await dialog.getByRole("button", { name: t.feeds.revoke }).click();
    await card.getByText(t.feeds.none).waitFor();
    expect((await fetch(href)).status).toBe(404);
    expect(errors).toEqual([]);
  }, STEP);
});
