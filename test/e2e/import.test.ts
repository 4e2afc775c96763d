// The Import page in a real browser (issue 17): choose the format and a file, preview (counts, the
// skipped and changed rows with their lines), import; a bad file shows its line-numbered problems.
// axe-core finds nothing on the page with a preview and with an error, at desktop and phone sizes.
// Skipped, with a message, when /usr/bin/chromium is missing (install it: apt-get install chromium).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { en as t } from "../../web/src/i18n";
import { apiFromPage, axeViolations, DESKTOP, hasChromium, launchBrowser, PHONE, poll, type Server, startSession } from "./harness";

const STEP = 180_000;
const USER = { username: "ines", password: "a long enough password" };
const FIXTURE = join(import.meta.dir, "..", "fixtures", "import", "ticktick-7.2.csv");

if (!hasChromium) console.log("e2e import: /usr/bin/chromium is missing (apt-get install chromium): skipping");

describe.skipIf(!hasChromium)("Import page", () => {
  let server: Server;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let page: Page;
  let errors: string[] = [];
  const tmp = mkdtempSync(join(tmpdir(), "app-e2e-import-"));

  beforeAll(async () => {
    ({ server, browser, page, errors } = await startSession(USER));
  }, STEP);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    rmSync(tmp, { recursive: true, force: true });
  }, STEP);

  test("preview a TickTick backup, read its notes with line numbers, import it", async () => {
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: t.nav.import }).click();
    await page.getByRole("heading", { name: t.imports.title }).waitFor();
    await page.getByLabel(t.imports.formats.ticktick!).check();
    await page.getByLabel(t.fields.file).setInputFiles(FIXTURE);
    await page.getByRole("button", { name: t.imports.preview }).click();
    const preview = page.getByTestId("import-preview");
    await preview.waitFor();
    expect(await preview.locator('tr[data-kind="tasks"] td').textContent()).toBe("7");
    expect(await preview.locator('tr[data-kind="subtasks"] td').textContent()).toBe("3");
    const changed = page.getByTestId("import-changed");
    const wontDo = changed.locator("tr", { hasText: "Old idea" });
    expect(await wontDo.locator("td").first().textContent()).toBe("14");
    expect(await page.getByTestId("import-skipped").locator("tr", { hasText: "Pay rent" }).locator("td").first().textContent()).toBe("17");

    for (const size of [DESKTOP, PHONE]) {
      await page.setViewportSize(size);
      expect(await axeViolations(page)).toEqual([]);
    }
    await page.setViewportSize(DESKTOP);

    await page.getByRole("button", { name: t.imports.confirm }).click();
    await page.getByText(t.imports.done, { exact: false }).waitFor();
    await preview.waitFor({ state: "detached" });
    const tasks = await poll(
      () => apiFromPage<{ items: { title: string }[] }>(page, "GET", "/tasks?limit=100"),
      (r) => r.items.length > 0,
    );
    expect(tasks.items.map((x) => x.title)).toContain("Trip packing");

    // The same file again: the preview is shown, the import adds nothing and says so.
    await page.getByRole("button", { name: t.imports.preview }).click();
    await preview.waitFor();
    await page.getByRole("button", { name: t.imports.confirm }).click();
    await page.getByText(t.imports.already).waitFor();
  }, STEP);

  test("a file that is not of the format shows its problems with their lines", async () => {
    const bad = join(tmp, "tasks.ics");
    writeFileSync(bad, "BEGIN:VCALENDAR\nBEGIN:VTODO\nPRIORITY:urgent\nEND:VTODO\nEND:VCALENDAR\n");
    await page.getByLabel(t.imports.formats.ics!).check();
    await page.getByLabel(t.fields.file).setInputFiles(bad);
    await page.getByRole("button", { name: t.imports.preview }).click();
    const alert = page.getByRole("alert");
    await alert.waitFor();
    expect(await alert.textContent()).toContain('line 3: PRIORITY "urgent" is not 0 to 9');
    expect(await axeViolations(page)).toEqual([]);
    expect(errors).toEqual([]);
  }, STEP);
});
