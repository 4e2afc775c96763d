// Settings → Devices & apps (issue 16) in the real browser against the real server (dist/app when up
// to date, else `bun src/main.ts`): the CalDAV address and its QR code, an app password created in
// the UI whose shown secret then works as `Authorization: Bearer` from outside the browser (a write
// with no CSRF header), its last use listed, revoking it after the confirmation, and 401 from then
// on. axe-core on the section (light and dark, desktop and phone) and on the confirmation dialog.
// Skipped, with a message, when /usr/bin/chromium is missing.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { en as t } from "../../web/src/i18n";
import { apiFromPage, axeViolations, decodedQr, DESKTOP, hasChromium, launchBrowser, PHONE, screenshot, startSession, type Server } from "./harness";

const STEP = 180_000;
let server: Server;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let page: Page;
let errors: string[] = [];

if (!hasChromium) console.warn("test/e2e/tokens.test.ts skipped: /usr/bin/chromium is missing (apt-get install chromium)");

async function noViolations(where: string): Promise<void> {
  const v = await axeViolations(page);
  expect({ where, violations: v.flatMap((x) => x.nodes.map((n) => `${x.id} (${x.impact}): ${n}`)) }).toEqual({ where, violations: [] });
}

function withBearer(secret: string, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${server.base}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${secret}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

describe.skipIf(!hasChromium)("Settings: devices & apps", () => {
  beforeAll(async () => {
    ({ server, browser, page, errors } = await startSession());
  }, STEP);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  }, STEP);

  test("create an app password, use it with Bearer, revoke it: 401 afterwards", async () => {
    await page.goto("/settings");
    const section = page.getByRole("region", { name: t.tokens.title });
    await section.waitFor();
    await expect(section.getByTestId("caldav-url").textContent()).resolves.toBe(`${server.base}/dav/`);
    const qr = section.getByRole("img", { name: t.tokens.qrLabel(`${server.base}/dav/`) });
    await qr.waitFor();
    // The QR code says the address: read by a real decoder (zbar) from a screenshot of it.
    const said = await decodedQr(qr, "test/e2e/tokens.test.ts");
    if (said !== null) expect(said).toBe(`${server.base}/dav/`);
    await section.getByText(t.tokens.none).waitFor();

    await section.getByLabel(t.tokens.name).fill("Backup script");
    await section.getByLabel(t.tokens.scopes.write).check();
    await section.getByRole("button", { name: t.tokens.create }).click();
    const secretField = section.getByRole("textbox", { name: t.tokens.secret, exact: true });
    await secretField.waitFor();
    const secret = await secretField.inputValue();
    expect(secret).toMatch(/^app_[A-Za-z0-9_-]{43}$/);
    await section.locator('li[data-token="Backup script"]').waitFor();

    // The shown secret works from outside the browser: a read, and a write with no cookie and no CSRF header.
    const lists = await withBearer(secret, "GET", "/lists");
    expect(lists.status).toBe(200);
    const made = await withBearer(secret, "POST", "/lists", { name: "Made by a script" });
    expect(made.status).toBe(201);

    for (const scheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      for (const [size, viewport] of [["desktop", DESKTOP], ["phone", PHONE]] as const) {
        await page.setViewportSize(viewport);
        await section.scrollIntoViewIfNeeded();
        await screenshot(page, `tokens-${scheme}-${size}`);
        await noViolations(`devices & apps with a new secret, ${scheme}, ${size}`);
      }
    }
    await page.emulateMedia({ colorScheme: "light" });
    await page.setViewportSize(DESKTOP);

    await section.getByRole("button", { name: t.done }).click();
    await expect(secretField.count()).resolves.toBe(0);
    // The list says when and from where it was last used (after a reload of the page).
    await page.reload();
    const row = page.getByRole("region", { name: t.tokens.title }).locator('li[data-token="Backup script"]');
    await row.getByText(/last used .* from /).waitFor();

    await row.getByRole("button", { name: t.tokens.revokeNamed("Backup script") }).click();
    const dialog = page.getByRole("dialog", { name: t.tokens.revokeTitle });
    await dialog.waitFor();
    await noViolations("revoke confirmation");
    await dialog.getByRole("button", { name: t.tokens.revoke }).click();
    await page.getByText(t.tokens.revoked("Backup script")).waitFor();
    await expect(row.count()).resolves.toBe(0);

    const after = await withBearer(secret, "GET", "/lists");
    expect(after.status).toBe(401);
    expect(((await after.json()) as { code: string }).code).toBe("unauthenticated");
    expect(errors).toEqual([]);
  }, STEP);

  test("an app password with an expiry date is valid through the end of that local day", async () => {
    const section = page.getByRole("region", { name: t.tokens.title });
    await section.getByLabel(t.tokens.name).fill("Phone");
    await section.getByLabel(t.tokens.expiry).fill("2099-12-31");
    await section.getByRole("button", { name: t.tokens.create }).click();
    await section.getByRole("textbox", { name: t.tokens.secret, exact: true }).waitFor();
    const row = section.locator('li[data-token="Phone"]');
    await row.getByText(/expires /).waitFor();
    await row.getByText(t.tokens.scopes.caldav).waitFor();
    const expected = await page.evaluate(() => new Date(2099, 11, 31, 23, 59, 59, 999).toISOString());
    const list = await apiFromPage<{ items: { name: string; expires_at: string | null; scopes: string[] }[] }>(page, "GET", "/tokens");
    expect(list.items.find((x) => x.name === "Phone")).toMatchObject({ expires_at: expected, scopes: ["caldav"] });
    expect(errors).toEqual([]);
  }, STEP);
});
