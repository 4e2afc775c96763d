// Accessibility in a real browser: axe-core (all its default rules: WCAG 2.x A and AA, best
// practices) on every page and every dialog of the web app, in the light and the dark colour scheme,
// at desktop and phone sizes, must find nothing; and a dialog takes the focus and keeps it.
// Skipped, with a message, when /usr/bin/chromium is missing (install it: apt-get install chromium).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { en as t } from "../../web/src/i18n";
import { apiFromPage, axeViolations, browserToday, DESKTOP, hasChromium, launchBrowser, PHONE, poll, startServer, type Server } from "./harness";

declare const document: { activeElement: { closest(sel: string): unknown } | null };

const STEP = 180_000; // chromium shares 2 cores with everything else; axe takes a second per page
const USER = { username: "alice", password: "a long enough password" };

let server: Server;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let page: Page;

type Found = Record<string, string[]>;

/** Runs axe and files what it found under `where` (only when it found something). */
async function scan(found: Found, where: string): Promise<void> {
  const v = await axeViolations(page);
  if (v.length) found[where] = v.flatMap((x) => x.nodes.map((n) => `${x.id} (${x.impact}): ${n}`));
}

async function open(path: string) {
  await page.goto(path);
  await page.locator("main h1").first().waitFor();
  await page.waitForLoadState("networkidle");
}

const api = <T>(method: string, path: string, body?: unknown) => apiFromPage<T>(page, method, path, body);
const dialog = (name: string) => page.getByRole("dialog", { name });
const row = (title: string) => page.locator("li.task", { has: page.locator(".title", { hasText: title }) });

/** Every page and dialog of the app, as a user who has some of everything sees them. */
async function scanEverything(found: Found, scheme: string): Promise<void> {
  await page.setViewportSize(DESKTOP);
  await open("/tasks");
  await scan(found, `${scheme} tasks`);
  await open("/tasks?show=all");
  await scan(found, `${scheme} tasks (all, with completed)`);
  await open("/tasks?q=milk");
  await scan(found, `${scheme} search`);

  await open("/tasks");
  await row("Buy milk").locator("input.select").check();
  await row("Call the bank").locator("input.select").check();
  await page.getByRole("toolbar").waitFor();
  await scan(found, `${scheme} tasks with the batch bar`);

  await open("/tasks");
  await row("Buy milk").locator(".title").click();
  await dialog(t.tasks.details).locator("section.recurrence h3").waitFor();
  await page.waitForLoadState("networkidle");
  await scan(found, `${scheme} task dialog`);
  await dialog(t.tasks.details).getByLabel(t.fields.title).fill("   ");
  await page.keyboard.press("Escape");
  await dialog(t.tasks.discardTitle).waitFor();
  await scan(found, `${scheme} discard dialog`);
  await dialog(t.tasks.discardTitle).getByRole("button", { name: t.tasks.discard }).click();
  await page.getByRole("dialog").waitFor({ state: "detached" });

  // A toast with its Undo button.
  await row("Call the bank").getByRole("checkbox", { name: `${t.tasks.complete}: Call the bank` }).click();
  await page.locator(".toast", { hasText: t.tasks.completed }).waitFor();
  await scan(found, `${scheme} toast`);
  await page.locator(".toast", { hasText: t.tasks.completed }).getByRole("button", { name: t.tasks.undo }).click();
  await row("Call the bank").waitFor();

  await page.getByRole("button", { name: `+ ${t.tasks.newList}` }).click();
  await dialog(t.tasks.newList).getByLabel(t.fields.name).fill("groceries");
  await page.getByText(t.tasks.duplicateList("groceries")).waitFor();
  await scan(found, `${scheme} new list dialog (duplicate name)`);
  await page.keyboard.press("Escape");

  await page.locator("body").click({ position: { x: 5, y: 600 } });
  await page.keyboard.press("?");
  await dialog(t.settings.shortcuts).waitFor();
  await scan(found, `${scheme} shortcuts dialog`);
  await page.keyboard.press("Escape");

  await open("/trash");
  await scan(found, `${scheme} trash`);

  await open("/habits");
  await scan(found, `${scheme} habits`);
  await page.getByRole("button", { name: "Drink water", exact: true }).click();
  await page.locator(".habit-panel .stats").waitFor();
  await scan(found, `${scheme} habit panel`);
  await page.getByRole("button", { name: t.habits.logAmount }).click();
  await page.getByRole("dialog").getByLabel(new RegExp(t.habits.amount)).waitFor();
  await scan(found, `${scheme} amount dialog`);
  await page.keyboard.press("Escape");
  await page.getByRole("button", { name: `+ ${t.habits.add}` }).click();
  await dialog(t.habits.add).waitFor();
  await scan(found, `${scheme} new habit dialog`);
  await page.keyboard.press("Escape");

  await open("/countdowns");
  await scan(found, `${scheme} countdowns`);
  await page.getByRole("button", { name: `+ ${t.countdowns.add}` }).click();
  await dialog(t.countdowns.add).getByLabel(t.fields.calendar).selectOption("lunar");
  await dialog(t.countdowns.add).getByLabel(t.countdowns.lunarYear).waitFor();
  await scan(found, `${scheme} lunar countdown dialog`);
  await page.keyboard.press("Escape");

  await open("/memos");
  await scan(found, `${scheme} memos`);
  await page.getByRole("tab", { name: t.memos.preview }).click();
  await scan(found, `${scheme} memo preview`);
  await page.getByRole("button", { name: t.memos.showDeleted }).click();
  await page.getByRole("heading", { name: t.memos.showDeleted }).waitFor();
  await scan(found, `${scheme} deleted memos`);

  await open("/settings");
  await scan(found, `${scheme} settings`);
  await open("/backup");
  await scan(found, `${scheme} backup`);
  await open("/import");
  await scan(found, `${scheme} import`);
  await open("/no/such/page");
  await scan(found, `${scheme} page not found`);

  // Phone: the bottom navigation, the list drawer, selecting, a full-screen dialog.
  await page.setViewportSize(PHONE);
  await open("/tasks");
  await scan(found, `${scheme} phone tasks`);
  await page.getByRole("button", { name: t.tasks.selectMode }).click();
  await page.getByRole("toolbar").waitFor();
  await scan(found, `${scheme} phone selecting`);
  await open("/tasks");
  await page.getByRole("button", { name: t.nav.menu }).click();
  await poll(async () => (await page.locator("aside.sidebar").boundingBox())?.x, (x) => x === 0);
  await scan(found, `${scheme} phone list drawer`);
  await open("/tasks");
  await row("Buy milk").locator(".title").click();
  await dialog(t.tasks.details).locator("section.recurrence h3").waitFor();
  await scan(found, `${scheme} phone task dialog`);
  await open("/habits");
  await scan(found, `${scheme} phone habits`);
  await page.setViewportSize(DESKTOP);

  // The server cannot be reached: the boot screen's error.
  await page.route("**/api/v1/**", (r) => r.abort("internetdisconnected"));
  try {
    await page.goto("/tasks");
    await page.getByText(t.offline).waitFor();
    await scan(found, `${scheme} server unreachable`);
  } finally {
    await page.unrouteAll();
  }
}

describe.skipIf(!hasChromium)("accessibility (axe-core, light and dark)", () => {
  beforeAll(async () => {
    server = await startServer();
    browser = await launchBrowser(server.base);
    page = browser.context.pages()[0] ?? (await browser.context.newPage());
  }, STEP);
  afterAll(async () => {
    await page?.emulateMedia({ colorScheme: "light" });
    await browser?.close();
    await server?.stop();
  }, STEP);

  test("first-run setup, light and dark: no violation", async () => {
    const found: Found = {};
    for (const scheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.goto("/");
      await page.getByRole("heading", { name: t.setup.title }).waitFor();
      await scan(found, `${scheme} setup`);
    }
    await page.emulateMedia({ colorScheme: "light" });
    await page.getByLabel(t.fields.username).fill(USER.username);
    await page.getByLabel(t.fields.password).fill(USER.password);
    await page.getByRole("button", { name: t.setup.submit }).click();
    await page.getByLabel(t.tasks.quickAddLabel).waitFor();
    expect(found).toEqual({}); // after signing in: the next tests need the account either way
  }, STEP);

  test("arrange some of everything", async () => {
    const day = await browserToday(page);
    const work = await api<{ id: string }>("POST", "/tags", { name: "work", color: "#4f7cff" });
    await api("POST", "/tags", { name: "yellow", color: "#ffee00" }); // a colour no text could be read in
    const milk = await api<{ id: string }>("POST", "/tasks", { title: "Buy milk", due_at: "2020-01-01", priority: 3, tag_ids: [work.id], description: "2 litres" });
    await api("POST", "/tasks", { title: "Sourdough", parent_id: milk.id });
    await api("POST", "/tasks", { title: "Call the bank", due_at: day, priority: 2 });
    await api("POST", "/tasks", { title: "Water the plants", due_at: "2031-05-01", priority: 1 });
    await api("POST", "/tasks", { title: "اشتري الحليب" });
    await api("POST", "/tasks", { title: "Old chore", completed: true });
    const gone = await api<{ id: string }>("POST", "/tasks", { title: "Thrown away" });
    await api("DELETE", `/tasks/${gone.id}`);
    await api("POST", "/lists", { name: "Groceries" });
    const water = await api<{ id: string }>("POST", "/habits", { name: "Drink water", goal: 8, unit: "glasses", color: "#3aa675", start_date: "2020-01-01" });
    await api("PUT", `/habits/${water.id}/logs/${day}`, { value: 8 });
    const yesterday = new Date(Date.parse(`${day}T12:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
    await api("PUT", `/habits/${water.id}/logs/${yesterday}`, { value: 3 });
    await api("POST", "/habits", { name: "Stretch", frequency: { type: "weekdays", days: [1, 3, 5] } });
    const grandma = await api<{ id: string }>("POST", "/countdowns", { name: "Grandma", date: "1950-09-26", type: "birthday", repeat: "yearly", calendar: "lunar" });
    await api("POST", `/countdowns/${grandma.id}/pin`);
    await api("POST", "/countdowns", { name: "Trip", date: "2030-01-01" });
    await api("POST", "/countdowns", { name: "Moved in", date: "2020-03-01" });
    await api("POST", "/memos", { content: "# Plan\n\n## Week\n- [x] first\n- [ ] second\n1. one\n\n> quoted\n\n`code` **bold** [link](https://example.org)" });
    const old = await api<{ id: string }>("POST", "/memos", { content: "An old memo" });
    await api("DELETE", `/memos/${old.id}`);
  }, STEP);

  for (const scheme of ["light", "dark"] as const) {
    test(`every page and dialog in the ${scheme} scheme: no violation`, async () => {
      await page.emulateMedia({ colorScheme: scheme });
      const found: Found = {};
      await scanEverything(found, scheme);
      expect(found).toEqual({});
    }, STEP * 2);
  }

  test("sign-in page, light and dark: no violation", async () => {
    const found: Found = {};
    await page.emulateMedia({ colorScheme: "light" });
    await open("/settings");
    await page.getByRole("button", { name: t.nav.logout, exact: true }).click();
    await page.getByRole("heading", { name: t.login.title }).waitFor();
    for (const scheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await scan(found, `${scheme} sign-in`);
      await page.getByLabel(t.fields.username).fill(USER.username);
      await page.getByLabel(t.fields.password).fill("a wrong password!");
      await page.getByRole("button", { name: t.login.submit }).click();
      await page.getByText(t.login.failed).waitFor();
      await scan(found, `${scheme} sign-in refused`);
    }
    await page.emulateMedia({ colorScheme: "light" });
    await page.getByLabel(t.fields.password).fill(USER.password);
    await page.getByRole("button", { name: t.login.submit }).click();
    await page.getByLabel(t.tasks.quickAddLabel).waitFor();
    expect(found).toEqual({});
  }, STEP);

  /** Where the focus is: inside the topmost dialog, elsewhere, or nowhere. */
  const focusInDialog = () => page.evaluate(() => {
    const all = Array.from((globalThis as unknown as { document: { querySelectorAll(s: string): ArrayLike<{ contains(n: unknown): boolean }> } }).document.querySelectorAll(".modal"));
    const top = all[all.length - 1];
    return !!top && top.contains(document.activeElement);
  });
  async function tabs(n: number, key: "Tab" | "Shift+Tab"): Promise<number> {
    let outside = 0;
    for (let i = 0; i < n; i++) {
      await page.keyboard.press(key);
      if (!(await focusInDialog())) outside++;
    }
    return outside;
  }

  test("a dialog takes the focus, keeps it through 40 Tabs and 40 Shift+Tabs, and gives it back on close", async () => {
    await page.setViewportSize(DESKTOP);
    await open("/tasks");
    await row("Buy milk").focus();
    await page.keyboard.press("Enter");
    await dialog(t.tasks.details).locator("section.recurrence h3").waitFor();
    expect(await focusInDialog()).toBe(true);
    expect(await tabs(40, "Tab")).toBe(0);
    expect(await tabs(40, "Shift+Tab")).toBe(0);
    // A dialog over the dialog (discard) traps the focus in itself.
    await dialog(t.tasks.details).getByLabel(t.fields.title).fill(" ");
    await page.keyboard.press("Escape");
    await dialog(t.tasks.discardTitle).waitFor();
    expect(await page.evaluate(() => !!document.activeElement?.closest('[aria-label="Discard changes?"]'))).toBe(true);
    expect(await tabs(40, "Tab")).toBe(0);
    await page.getByRole("button", { name: t.tasks.keepEditing }).click();
    await dialog(t.tasks.discardTitle).waitFor({ state: "detached" });
    await poll(focusInDialog, (v) => v);
    await page.keyboard.press("Escape");
    await page.getByRole("button", { name: t.tasks.discard }).click();
    await page.getByRole("dialog").waitFor({ state: "detached" });
    // Back on the row the dialog was opened from.
    await poll(() => page.evaluate(() => !!document.activeElement?.closest("li.task")), (v) => v);

    // A small dialog: the new list form starts in its field.
    await page.getByRole("button", { name: `+ ${t.tasks.newList}` }).click();
    await dialog(t.tasks.newList).waitFor();
    expect(await page.evaluate(() => (document.activeElement as unknown as { name?: string } | null)?.name)).toBe("name");
    expect(await tabs(40, "Tab")).toBe(0);
    expect(await tabs(40, "Shift+Tab")).toBe(0);
    await page.keyboard.press("Escape");
    await page.getByRole("dialog").waitFor({ state: "detached" });

    // A dialog with nothing to fill in (the shortcuts): focus on the dialog, then on its one button.
    await page.locator("body").click({ position: { x: 5, y: 600 } });
    await page.keyboard.press("?");
    await dialog(t.settings.shortcuts).waitFor();
    expect(await focusInDialog()).toBe(true);
    expect(await tabs(40, "Tab")).toBe(0);
    expect(await tabs(40, "Shift+Tab")).toBe(0);
    await page.keyboard.press("Escape");
    await page.getByRole("dialog").waitFor({ state: "detached" });
  }, STEP);
});
