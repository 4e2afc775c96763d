// End-to-end: a new user does every flow of the web app in a real browser (Debian's chromium,
// headless) against the executable (dist/app when it is up to date, else `bun src/main.ts`).
// Screenshots of each main page at phone and desktop sizes go to test-artifacts/.
// Skipped, with a message, when /usr/bin/chromium is missing (install it: apt-get install chromium).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { en as t } from "../../web/src/i18n";
import { makeTestApp, setupAdmin } from "../helpers/app";
import { DESKTOP, hasChromium, launchBrowser, PHONE, screenshot, startServer, watchErrors, type Server } from "./harness";

// The few page globals the browser-side callbacks use. The test project has no DOM lib on purpose:
// DOM's fetch types clash with Bun's.
declare const document: { cookie: string; activeElement: unknown };
declare function getComputedStyle(el: unknown): { backgroundColor: string };

const STEP = 120_000; // generous: chromium shares 2 cores with everything else
const USER = { username: "alice", password: "a long enough password", display: "Alice" };

// Which optional endpoints this version serves (features land over time): read from the API
// document of an in-process app built from the same source.
const available = await (async () => {
  const app = makeTestApp();
  try {
    const c = await setupAdmin(app);
    const doc = (await c.get("/api/openapi.json")).body as { paths: Record<string, Record<string, unknown>> };
    const ops = new Set<string>();
    for (const [p, m] of Object.entries(doc.paths)) for (const k of Object.keys(m)) ops.add(`${k} ${p}`);
    return ops;
  } finally {
    app.close();
  }
})();
const hasAttachments = available.has("post /api/v1/tasks/{task_id}/attachments") && available.has("get /api/v1/attachments/{attachment_id}");
const hasBackup = available.has("get /api/v1/backup/export.zip") && available.has("post /api/v1/backup/preflight") && available.has("post /api/v1/backup/restore");
const hasLegacy = available.has("get /api/v1/export");
if (!hasChromium) console.log("e2e: /usr/bin/chromium not found: skipping the browser tests (apt-get install chromium)");
for (const [ok, what] of [[hasAttachments, "attachments"], [hasBackup, "backup"], [hasLegacy, "legacy export"]] as const) {
  if (!ok) console.log(`e2e: the server has no ${what} endpoints yet: skipping that flow`);
}

let server: Server;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let page: Page;
let errors: string[] = [];
const tmp = mkdtempSync(join(tmpdir(), "app-e2e-files-"));

/** Retries `f` until `ok` holds (the UI updates after the server answers); fails after 15 s. */
async function poll<T>(f: () => Promise<T>, ok: (v: T) => boolean): Promise<void> {
  let last: T | undefined;
  for (let i = 0; i < 150; i++) {
    last = await f();
    if (ok(last)) return;
    await Bun.sleep(100);
  }
  throw new Error(`condition not met; last value ${JSON.stringify(last)}`);
}
/** Each step starts from a fresh page load, so one failure does not leave a dialog over the next. */
async function fresh(path: string) {
  await page.goto(path);
  await page.locator("main.page h1").first().waitFor();
}

async function today(): Promise<string> {
  return page.evaluate(() => {
    const d = new Date();
    return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`;
  });
}
const row = (title: string) => page.locator("li.task", { has: page.locator(".title", { hasText: new RegExp(`^${title}$`) }) });
async function openTask(title: string) {
  await row(title).locator(".title").click();
  await page.getByRole("dialog", { name: t.tasks.details }).waitFor();
}
async function closeDialog() {
  await page.getByRole("dialog", { name: t.tasks.details }).getByRole("button", { name: t.close }).click();
  await page.getByRole("dialog").waitFor({ state: "detached" });
}
/** The task form has nothing left to save and no save in flight. */
async function saved() {
  const form = page.getByRole("dialog", { name: t.tasks.details }).locator("form.task-form");
  await poll(async () => (await form.getAttribute("aria-busy")) === "false" && (await form.getByRole("button", { name: t.save }).isDisabled()), (v) => v);
}
async function goTo(label: string) {
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: label }).click();
}
async function addTask(title: string) {
  const quick = page.getByLabel(t.tasks.quickAddLabel);
  await quick.fill(title);
  await quick.press("Enter");
  await row(title).waitFor();
}
/** An API call from the page (same session, CSRF header), for arranging a concurrent change. */
async function apiFromPage<T>(method: string, path: string, body?: unknown): Promise<T> {
  return page.evaluate(
    async ([method, path, body]) => {
      const csrf = decodeURIComponent(/(?:^|; )app_csrf=([^;]*)/.exec(document.cookie)?.[1] ?? "");
      const r = await fetch(`/api/v1${path}`, { method, headers: { "content-type": "application/json", "x-csrf-token": csrf }, body: body === undefined ? undefined : JSON.stringify(body) });
      return r.status === 204 ? null : r.json();
    },
    [method, path, body] as const,
  ) as Promise<T>;
}

describe.skipIf(!hasChromium)("web app in a browser", () => {
  beforeAll(async () => {
    server = await startServer();
    console.log(`e2e: server via ${server.via}`);
    browser = await launchBrowser(server.base);
    page = browser.context.pages()[0] ?? (await browser.context.newPage());
    errors = watchErrors(page);
  }, STEP);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  }, STEP);

  test("first-run setup creates the account and signs in", async () => {
    await page.goto("/");
    await page.getByRole("heading", { name: t.setup.title }).waitFor();
    await screenshot(page, "setup-desktop");
    await page.getByLabel(t.fields.username).fill(USER.username);
    await page.getByLabel(t.fields.displayName).fill(USER.display);
    await page.getByLabel(t.fields.password).fill(USER.password);
    await page.getByRole("button", { name: t.setup.submit }).click();
    await page.getByLabel(t.tasks.quickAddLabel).waitFor();
    expect(new URL(page.url()).pathname).toBe("/tasks");
    expect(await page.getByRole("heading", { name: t.tasks.inbox }).isVisible()).toBe(true);
  }, STEP);

  test("quick add: Enter adds, focus stays, and fast typing loses no keystroke", async () => {
    const quick = page.getByLabel(t.tasks.quickAddLabel);
    await quick.focus();
    const titles = ["Buy milk", "Buy bread", "Call the plumber about the kitchen sink 0123456789", "Write report"];
    for (const title of titles) {
      await page.keyboard.type(title, { delay: 0 }); // no waiting for the server between tasks
      await page.keyboard.press("Enter");
    }
    for (const title of titles) await row(title).waitFor();
    expect(await quick.evaluate((el) => el === document.activeElement)).toBe(true);
    expect(await quick.inputValue()).toBe("");
    expect(await page.locator("li.task").count()).toBe(titles.length);
  }, STEP);

  test("complete a task with one click; it shows under Completed", async () => {
    await fresh("/tasks");
    await row("Buy milk").getByRole("checkbox", { name: `${t.tasks.complete}: Buy milk` }).click();
    await row("Buy milk").waitFor({ state: "detached" });
    await page.getByRole("button", { name: t.tasks.filterDone }).click();
    await row("Buy milk").waitFor();
    expect(await row("Buy milk").getByRole("checkbox", { name: `${t.tasks.markOpen}: Buy milk` }).isChecked()).toBe(true);
    await page.getByRole("button", { name: t.tasks.filterOpen }).click();
    await row("Buy bread").waitFor();
  }, STEP);

  test("edit title, description, deadline and priority", async () => {
    await fresh("/tasks");
    await openTask("Write report");
    const dialog = page.getByRole("dialog", { name: t.tasks.details });
    await dialog.getByLabel(t.fields.title).fill("Write the annual report");
    await dialog.getByLabel(t.fields.description).fill("Numbers from Q4");
    await dialog.getByLabel(t.fields.due).fill("2031-03-14");
    await dialog.getByLabel(t.fields.priority).selectOption({ label: t.priorities[3]! });
    await dialog.locator("form.task-form").getByRole("button", { name: t.save }).click();
    await saved();
    await closeDialog();
    const r = row("Write the annual report");
    await r.waitFor();
    expect(await r.locator(".due").textContent()).toContain("14");
    expect(await r.getAttribute("class")).toContain("prio-3");
  }, STEP);

  test("a stale-version save shows both versions; keeping mine saves it over the newer one", async () => {
    await fresh("/tasks");
    await openTask("Write the annual report");
    const dialog = page.getByRole("dialog", { name: t.tasks.details });
    // I start editing; someone else saves first. (Had nothing been edited yet, the open dialog would
    // simply show their version: the live update, test/e2e/sharing.test.ts.)
    await dialog.getByLabel(t.fields.description).fill("My newer notes");
    const page1 = await apiFromPage<{ items: { id: string; title: string; version: number }[] }>("GET", "/tasks?q=annual");
    const task = page1.items[0]!;
    await apiFromPage("PATCH", `/tasks/${task.id}`, { title: "Changed elsewhere", version: task.version });
    // The change's event reaches the page; my edit stays in the form.
    await Bun.sleep(300);
    expect(await dialog.getByLabel(t.fields.description).inputValue()).toBe("My newer notes");
    await dialog.locator("form.task-form").getByRole("button", { name: t.save }).click();
    const conflict = page.getByRole("dialog", { name: t.tasks.conflictTitle });
    await conflict.waitFor();
    expect(await conflict.textContent()).toContain("Changed elsewhere");
    expect(await conflict.textContent()).toContain("My newer notes");
    await conflict.getByRole("button", { name: t.tasks.conflictMine }).click();
    await conflict.waitFor({ state: "detached" });
    const saved = await apiFromPage<{ title: string; description: string; version: number }>("GET", `/tasks/${task.id}`);
    expect(saved.description).toBe("My newer notes");
    expect(saved.title).toBe("Write the annual report");
    expect(saved.version).toBe(task.version + 2);
    await closeDialog();
  }, STEP);

  test("inline rename: the row's title is edited in place (button or F2), Escape cancels", async () => {
    await fresh("/tasks");
    await addTask("Typo tsak");
    await row("Typo tsak").hover();
    await page.getByRole("button", { name: `${t.tasks.renameTask}: Typo tsak` }).click();
    const input = page.getByRole("textbox", { name: t.tasks.renameTask });
    await input.fill("Typo task");
    await input.press("Enter");
    await row("Typo task").waitFor();
    const saved = await apiFromPage<{ items: { title: string; version: number }[] }>("GET", "/tasks?q=Typo");
    expect(saved.items.map((x) => [x.title, x.version])).toEqual([["Typo task", 2]]);
    await row("Typo task").focus();
    await page.keyboard.press("F2");
    await input.fill("Not kept");
    await input.press("Escape");
    await row("Typo task").waitFor();
    expect(await row("Not kept").count()).toBe(0);
    // Out of the way of the later steps (which expect an empty trash).
    const id = (await apiFromPage<{ items: { id: string }[] }>("GET", "/tasks?q=Typo")).items[0]!.id;
    await apiFromPage("DELETE", `/tasks/${id}`);
    await apiFromPage("DELETE", `/trash/${id}`);
  }, STEP);

  test("delete a task, then restore it from the trash", async () => {
    await fresh("/tasks");
    await openTask("Buy bread");
    await page.getByRole("button", { name: t.tasks.deleteTask }).click();
    await row("Buy bread").waitFor({ state: "detached" });
    await page.getByText(t.tasks.deleted).waitFor();
    await page.getByRole("link", { name: new RegExp(t.nav.trash) }).click();
    await page.getByRole("heading", { name: t.trash.title }).waitFor();
    await screenshot(page, "trash-desktop");
    await row("Buy bread").getByRole("button", { name: t.restore }).click();
    await row("Buy bread").waitFor({ state: "detached" });
    await page.getByText(t.trash.empty).waitFor();
    await page.getByRole("link", { name: `← ${t.nav.tasks}` }).click();
    await row("Buy bread").waitFor();
  }, STEP);

  test("add and complete a subtask", async () => {
    await fresh("/tasks");
    await openTask("Buy bread");
    const dialog = page.getByRole("dialog", { name: t.tasks.details });
    await dialog.getByLabel(t.tasks.addSubtask).fill("Sourdough");
    await dialog.getByLabel(t.tasks.addSubtask).press("Enter");
    const sub = dialog.getByRole("checkbox", { name: `${t.tasks.complete}: Sourdough` });
    await sub.waitFor();
    await sub.click();
    await poll(() => dialog.getByRole("checkbox", { name: `${t.tasks.complete}: Sourdough` }).isChecked(), (v) => v === true);
    await closeDialog();
    await poll(() => row("Buy bread").locator(".subcount").textContent(), (v) => String(v).includes("1/1"));
  }, STEP);

  test("a recurring task: completing it records the occurrence and shows the next one", async () => {
    await fresh("/tasks");
    await addTask("Water plants");
    await openTask("Water plants");
    const dialog = page.getByRole("dialog", { name: t.tasks.details });
    const day = await today();
    await dialog.getByLabel(t.fields.due).fill(day);
    await dialog.locator("form.task-form").getByRole("button", { name: t.save }).click();
    await saved();
    await dialog.getByRole("combobox", { name: t.recurrence.title }).selectOption("daily");
    await dialog.locator("section.recurrence").getByRole("button", { name: t.save }).click();
    await dialog.getByText(`${t.recurrence.repeats}: FREQ=DAILY`).waitFor();
    await closeDialog();
    await row("Water plants").getByRole("checkbox", { name: `${t.tasks.complete}: Water plants` }).click();
    await page.getByText(/Next occurrence/).waitFor();
    // Still open, now due tomorrow; the completed occurrence is listed under Completed.
    const tasks = await apiFromPage<{ items: { title: string; due_at: string; completed: boolean }[] }>("GET", "/tasks?q=Water");
    const open = tasks.items.filter((x) => !x.completed);
    const done = tasks.items.filter((x) => x.completed);
    expect(open.map((x) => x.due_at)).toEqual([new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10)]);
    expect(done.map((x) => x.due_at)).toEqual([day]);
    expect(await row("Water plants").getByRole("checkbox").last().isChecked()).toBe(false);
  }, STEP);

  test("a list in the sidebar; a task moved to it", async () => {
    await fresh("/tasks");
    await page.getByRole("button", { name: `+ ${t.tasks.newList}` }).click();
    const dialog = page.getByRole("dialog", { name: t.tasks.newList });
    await dialog.getByLabel(t.fields.name).fill("Groceries");
    await dialog.getByRole("button", { name: t.save }).click();
    await page.locator("aside [data-list=Groceries]").waitFor();
    await openTask("Buy bread");
    const detail = page.getByRole("dialog", { name: t.tasks.details });
    await detail.getByLabel(t.fields.list).selectOption({ label: "Groceries" });
    await detail.locator("form.task-form").getByRole("button", { name: t.save }).click();
    // It leaves this list's view, and its open details with it.
    await row("Buy bread").waitFor({ state: "detached" });
    await detail.waitFor({ state: "detached" });
    await page.locator("aside [data-list=Groceries]").click();
    await row("Buy bread").waitFor();
    await page.locator("aside").getByRole("link", { name: t.tasks.inbox }).click();
    await row("Buy bread").waitFor({ state: "detached" });
  }, STEP);

  test("folders: a new folder, and a list moved into it", async () => {
    await fresh("/tasks");
    await page.getByRole("button", { name: `+ ${t.tasks.newFolder}` }).click();
    const dialog = page.getByRole("dialog", { name: t.tasks.newFolder });
    await dialog.getByLabel(t.fields.name).fill("Home");
    await dialog.getByRole("button", { name: t.save }).click();
    await page.locator(".folder-name", { hasText: "Home" }).waitFor();
    await page.locator("aside li", { has: page.locator("[data-list=Groceries]") }).hover(); // its actions show on hover
    await page.getByRole("button", { name: `${t.edit} Groceries` }).click();
    const edit = page.getByRole("dialog", { name: t.rename });
    await edit.getByLabel(t.fields.folder).selectOption({ label: "Home" });
    await edit.getByRole("button", { name: t.save }).click();
    await page.locator(".folder", { hasText: "Home" }).locator("[data-list=Groceries]").waitFor();
  }, STEP);

  test("tags: create one on a task, then filter the list by it", async () => {
    await fresh("/tasks");
    await openTask("Write the annual report");
    page.once("dialog", (d) => void d.accept("work"));
    const dialog = page.getByRole("dialog", { name: t.tasks.details });
    await dialog.getByRole("button", { name: `+ ${t.tasks.newTag}` }).click();
    await dialog.getByRole("button", { name: "work", pressed: true }).waitFor();
    await dialog.locator("form.task-form").getByRole("button", { name: t.save }).click();
    await saved();
    await closeDialog();
    await row("Write the annual report").locator(".tag", { hasText: "work" }).waitFor();
    await page.getByLabel(t.tasks.filterTag).selectOption({ label: "work" });
    await row("Call the plumber about the kitchen sink 0123456789").waitFor({ state: "detached" });
    await row("Write the annual report").waitFor(); // the filtered page has loaded
    await poll(() => page.locator("li.task").count(), (n) => n === 1);
  }, STEP);

  test("multi-select: two tasks completed in one batch; drag a task onto a list moves it", async () => {
    await fresh("/tasks");
    await addTask("Batch one");
    await addTask("Batch two");
    await addTask("Drag me");
    await row("Batch one").getByRole("checkbox", { name: t.tasks.select }).check();
    await row("Batch two").getByRole("checkbox", { name: t.tasks.select }).check();
    await page.getByText(t.tasks.selected(2)).waitFor();
    await page.getByRole("toolbar").getByRole("button", { name: t.tasks.batchComplete }).click();
    await row("Batch one").waitFor({ state: "detached" });
    await row("Batch two").waitFor({ state: "detached" });
    await row("Drag me").dragTo(page.locator("aside [data-list=Groceries]"));
    await row("Drag me").waitFor({ state: "detached" });
    await page.locator("aside [data-list=Groceries]").click();
    await row("Drag me").waitFor();
  }, STEP);

  test("infinite scroll: the next cursor page loads at the end of the list", async () => {
    await fresh("/tasks");
    const list = await apiFromPage<{ id: string }>("POST", "/lists", { name: "Bulk" });
    for (let i = 0; i < 60; i++) await apiFromPage("POST", "/tasks", { title: `Bulk ${String(i).padStart(2, "0")}`, list_id: list.id });
    await fresh(`/tasks?list=${list.id}`);
    await row("Bulk 59").waitFor();
    expect(await page.locator("li.task").count()).toBe(50);
    await page.locator(".sentinel").scrollIntoViewIfNeeded();
    await row("Bulk 00").waitFor();
    expect(await page.locator("li.task").count()).toBe(60);
    // newest first, no repeats
    const titles = await page.locator("li.task .title").allTextContents();
    expect(new Set(titles).size).toBe(60);
    expect(titles[0]).toBe("Bulk 59");
    await apiFromPage("DELETE", `/lists/${list.id}`);
  }, STEP);

  test.skipIf(!hasAttachments)("upload an attachment with progress, then download it", async () => {
    await fresh("/tasks");
    await page.locator("aside [data-list=Groceries]").click();
    await openTask("Buy bread");
    const dialog = page.getByRole("dialog", { name: t.tasks.details });
    const content = "flour 500 g\nwater 350 g\nsalt 10 g\n";
    await dialog.locator('input[type="file"]').setInputFiles({ name: "recipe.txt", mimeType: "text/plain", buffer: Buffer.from(content) });
    const link = dialog.getByRole("link", { name: "recipe.txt" });
    await link.waitFor();
    const [download] = await Promise.all([page.waitForEvent("download"), link.click()]);
    expect(download.suggestedFilename()).toBe("recipe.txt");
    expect(readFileSync((await download.path())!, "utf8")).toBe(content);
    await closeDialog();
  }, STEP);

  test("habit: create one and check in today with one tap", async () => {
    await fresh("/tasks");
    await goTo(t.nav.habits);
    await page.getByRole("button", { name: `+ ${t.habits.add}` }).click();
    const dialog = page.getByRole("dialog", { name: t.habits.add });
    await dialog.getByLabel(t.fields.name).fill("Read 20 pages");
    await dialog.getByRole("button", { name: t.create }).click();
    const day = await today();
    const cell = page.locator(`button[aria-label^="Read 20 pages ${day}:"]`);
    await cell.waitFor();
    expect(await cell.getAttribute("aria-pressed")).toBe("false");
    await cell.click();
    await poll(() => cell.getAttribute("aria-pressed"), (v) => v === "true");
    expect(await cell.getAttribute("aria-label")).toBe(`Read 20 pages ${day}: ${t.habits.status.done}`);
    await page.getByRole("button", { name: "Read 20 pages", exact: true }).click();
    await page.getByText(t.habits.streak(1)).waitFor();
    // A pause from today: today is paused (not tappable); resuming makes it count again.
    await page.getByRole("button", { name: t.habits.pause, exact: true }).click();
    await page.getByRole("button", { name: t.habits.resume }).waitFor();
    await poll(() => cell.getAttribute("aria-label"), (v) => v === `Read 20 pages ${day}: ${t.habits.status.paused}`);
    expect(await cell.isDisabled()).toBe(true);
    await page.getByRole("button", { name: t.habits.resume }).click();
    await page.getByRole("button", { name: t.habits.pause, exact: true }).waitFor();
    await poll(() => cell.getAttribute("aria-label"), (v) => v === `Read 20 pages ${day}: ${t.habits.status.done}`);
  }, STEP);

  test("countdown: a lunar birthday shows its lunar date and the days left", async () => {
    await fresh("/tasks");
    await goTo(t.nav.countdowns);
    await page.getByRole("button", { name: `+ ${t.countdowns.add}` }).click();
    const dialog = page.getByRole("dialog", { name: t.countdowns.add });
    await dialog.getByLabel(t.fields.name).fill("Grandma");
    await dialog.getByLabel(t.fields.date).fill("1950-09-26"); // lunar 8/15 (Mid-Autumn) in 1950
    await dialog.getByLabel(t.fields.type).selectOption("birthday");
    await dialog.getByLabel(t.fields.repeat).selectOption("yearly");
    await dialog.getByLabel(t.fields.calendar).selectOption("lunar");
    await dialog.getByRole("button", { name: t.save }).click();
    const card = page.locator("[data-countdown=Grandma]");
    await card.waitFor();
    expect(await card.locator(".lunar").textContent()).toBe(t.countdowns.lunar(8, 15, false));
    expect(await card.locator(".days").textContent()).toMatch(/day|Today/);
    await card.getByRole("button", { name: t.pin }).click();
    await card.getByText(t.pinned).waitFor();
  }, STEP);

  test("memo: Markdown is rendered, and no script from a memo ever runs", async () => {
    await fresh("/tasks");
    await goTo(t.nav.memos);
    const text = [
      "# Plan",
      "Some **bold** and *italic* and `code`.",
      "- [x] first",
      "- second",
      '<img src=x onerror="window.__pwned=1"> <script>window.__pwned=1</script>',
      "[click](javascript:window.__pwned=1) and https://example.org",
    ].join("\n");
    await page.getByLabel(t.memos.placeholder).fill(text);
    await page.getByRole("button", { name: t.save }).click();
    const memo = page.locator("article.memo").first();
    await memo.waitFor();
    expect(await memo.locator("strong", { hasText: /^bold$/ }).count()).toBe(1);
    expect(await memo.locator("em").textContent()).toBe("italic");
    expect(await memo.locator("h3").textContent()).toBe("Plan");
    expect(await memo.locator("img, script").count()).toBe(0);
    expect(await memo.locator('a[href^="javascript"]').count()).toBe(0);
    expect(await memo.locator('a[href="https://example.org"]').count()).toBe(1);
    expect(await memo.textContent()).toContain("<script>"); // shown as text
    expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined();
  }, STEP);

  test("memo: a stale edit shows both versions; keeping mine saves it", async () => {
    await goTo(t.nav.memos);
    await page.getByLabel(t.memos.placeholder).fill("Shopping: eggs");
    await page.getByRole("button", { name: t.save }).click();
    const memo = page.locator("article.memo", { hasText: "Shopping: eggs" });
    await memo.waitFor();
    const list = await apiFromPage<{ items: { id: string; content: string; version: number }[] }>("GET", "/memos");
    const m = list.items.find((x) => x.content === "Shopping: eggs")!;
    await memo.getByRole("button", { name: t.edit }).click();
    const editor = page.locator(".memo-editor", { hasText: t.memos.preview }).last();
    await apiFromPage("PATCH", `/memos/${m.id}`, { content: "Shopping: eggs, milk", version: m.version });
    await editor.getByRole("textbox").fill("Shopping: eggs, flour");
    await editor.getByRole("button", { name: t.save }).click();
    const conflict = page.getByRole("dialog", { name: t.tasks.conflictTitle });
    await conflict.getByText("Shopping: eggs, milk").waitFor();
    await conflict.getByRole("button", { name: t.tasks.conflictMine }).click();
    await page.locator("article.memo", { hasText: "Shopping: eggs, flour" }).waitFor();
    const after = await apiFromPage<{ content: string; version: number }>("GET", `/memos/${m.id}`);
    expect(after).toMatchObject({ content: "Shopping: eggs, flour", version: m.version + 2 });
  }, STEP);

  test("settings: display name, and sign out then sign in again", async () => {
    await fresh("/tasks");
    await goTo(t.nav.settings);
    const profile = page.locator("form", { has: page.getByRole("heading", { name: t.settings.profile }) });
    await profile.getByLabel(t.fields.displayName).fill("Alice B.");
    await profile.getByRole("button", { name: t.save }).click();
    await page.locator("nav .user", { hasText: "Alice B." }).waitFor();
    await page.getByText(t.settings.thisDevice).waitFor();
    // The administrator adds another person, who can then sign in.
    const people = page.locator("form", { has: page.getByRole("heading", { name: t.settings.addUser }) });
    await people.getByLabel(t.fields.username).fill("bob");
    await people.getByLabel(t.fields.password).fill("bob's long password");
    await people.getByRole("button", { name: t.settings.addUser }).click();
    await page.locator(".card", { hasText: t.settings.users }).locator("strong", { hasText: /^bob$/ }).waitFor();
    await page.getByRole("button", { name: t.nav.logout, exact: true }).click();
    await page.getByRole("heading", { name: t.login.title }).waitFor();
    await screenshot(page, "login-desktop");
    await page.getByLabel(t.fields.password).fill("wrong password!");
    await page.getByLabel(t.fields.username).fill(USER.username);
    await page.getByRole("button", { name: t.login.submit }).click();
    await page.getByText(t.login.failed).waitFor();
    // Bob signs in and sees only his own (empty) inbox.
    await page.getByLabel(t.fields.username).fill("bob");
    await page.getByLabel(t.fields.password).fill("bob's long password");
    await page.getByRole("button", { name: t.login.submit }).click();
    await page.getByLabel(t.tasks.quickAddLabel).waitFor();
    await page.getByText(t.tasks.empty).waitFor();
    await goTo(t.nav.settings);
    await page.getByRole("button", { name: t.nav.logout, exact: true }).click();
    await page.getByLabel(t.fields.username).fill(USER.username);
    await page.getByLabel(t.fields.password).fill(USER.password);
    await page.getByRole("button", { name: t.login.submit }).click();
    await page.getByLabel(t.tasks.quickAddLabel).waitFor();
    await row("Write the annual report").waitFor();
  }, STEP);

  test.skipIf(!hasLegacy)("legacy export downloads the JSON v1 file", async () => {
    await fresh("/tasks");
    await goTo(t.nav.backup);
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: t.backup.exportJson }).click()]);
    const doc = JSON.parse(readFileSync((await download.path())!, "utf8"));
    expect(doc.format).toBe("app-legacy");
    expect(doc.tasks.some((x: { title: string }) => x.title === "Buy bread")).toBe(true);
  }, STEP);

  test.skipIf(!hasBackup)("complete backup: download, then a replace restore after the preflight summary", async () => {
    await fresh("/tasks");
    await goTo(t.nav.backup);
    const [download] = await Promise.all([page.waitForEvent("download"), page.getByRole("link", { name: t.backup.download }).click()]);
    const zip = join(tmp, "backup.zip");
    writeFileSync(zip, readFileSync((await download.path())!));
    // A change after the backup, which the replace restore must undo.
    await goTo(t.nav.tasks);
    await addTask("Made after the backup");
    await goTo(t.nav.backup);
    const restore = page.getByTestId("full-restore");
    await restore.locator('input[type="file"]').setInputFiles(zip);
    await restore.getByLabel(t.backup.replace).check();
    await restore.getByRole("button", { name: t.backup.check }).click();
    const summary = page.getByTestId("preflight");
    await summary.waitFor();
    // Counts by what a person calls them, never the archive's keys (recurrence_exceptions, habit_logs).
    const counts = await summary.locator("table.counts tbody th").allTextContents();
    expect(counts).toContain(t.backup.entities.tasks!);
    expect(counts).toContain(t.backup.entities.recurrence_exceptions!);
    expect(counts.filter((c) => /_/.test(c))).toEqual([]);
    await summary.getByText(t.backup.replaceWarning).waitFor();
    // The button says what it does, once ("Restore (Replace (delete my current data first))" was the bug).
    expect(await summary.locator(".buttons button").textContent()).toBe(t.backup.confirmReplace);
    await screenshot(page, "backup-preflight-desktop");
    await summary.getByRole("button", { name: t.backup.confirmReplace }).click();
    await page.getByText(new RegExp(t.backup.restored)).waitFor();
    await goTo(t.nav.tasks);
    await row("Call the plumber about the kitchen sink 0123456789").waitFor();
    expect(await row("Made after the backup").count()).toBe(0);
  }, STEP);

  test("a feature this server version lacks shows a clear Not available state", async () => {
    await fresh("/tasks");
    // What an older server answers for an endpoint it does not have.
    const missing = JSON.stringify({ type: "about:blank", title: "Not found", status: 404, code: "not_found", detail: "no such endpoint" });
    await page.route("**/api/v1/countdowns**", (r) => r.fulfill({ status: 404, contentType: "application/problem+json", body: missing }));
    await page.route("**/api/v1/tasks/*/attachments", (r) => r.fulfill({ status: 404, contentType: "application/problem+json", body: missing }));
    try {
      await goTo(t.nav.countdowns);
      await page.getByTestId("not-available").getByText(t.notAvailable).waitFor();
      await goTo(t.nav.tasks);
      await openTask("Write the annual report");
      await page.getByRole("dialog", { name: t.tasks.details }).locator("section.attachments").getByText(t.notAvailable).waitFor();
      await closeDialog();
    } finally {
      await page.unrouteAll();
    }
  }, STEP);

  test("keyboard shortcuts: ? shows help, g h goes to habits, n focuses quick add", async () => {
    await fresh("/tasks");
    await goTo(t.nav.tasks);
    await page.locator("body").click({ position: { x: 5, y: 400 } });
    await page.keyboard.press("?");
    await page.getByRole("dialog", { name: t.settings.shortcuts }).waitFor();
    await page.keyboard.press("Escape");
    await page.keyboard.press("g");
    await page.keyboard.press("h");
    await page.getByRole("heading", { name: t.habits.title }).waitFor();
    await page.keyboard.press("g");
    await page.keyboard.press("t");
    await page.getByLabel(t.tasks.quickAddLabel).waitFor();
    await page.locator("body").click({ position: { x: 5, y: 400 } });
    await page.keyboard.press("n");
    expect(await page.getByLabel(t.tasks.quickAddLabel).evaluate((el) => el === document.activeElement)).toBe(true);
  }, STEP);

  test("screenshots of each main page at phone and desktop sizes", async () => {
    const pages: [string, string][] = [["tasks", "/tasks"], ["habits", "/habits"], ["countdowns", "/countdowns"], ["memos", "/memos"], ["settings", "/settings"], ["backup", "/backup"]];
    for (const [size, viewport] of [["desktop", DESKTOP], ["phone", PHONE]] as const) {
      await page.setViewportSize(viewport);
      for (const [name, path] of pages) {
        await page.goto(path);
        await page.locator("main.page h1").first().waitFor();
        await page.waitForLoadState("networkidle");
        await screenshot(page, `${name}-${size}`);
      }
    }
    // The phone layout: bottom navigation and the list drawer.
    await page.goto("/tasks");
    await page.getByRole("button", { name: t.nav.menu }).click();
    await page.locator("aside [data-list=Groceries]").waitFor();
    await poll(async () => (await page.locator("aside.sidebar").boundingBox())?.x, (x) => x === 0); // slid in
    await screenshot(page, "tasks-drawer-phone");
    await page.setViewportSize(DESKTOP);
    // The dark theme follows the system.
    await page.emulateMedia({ colorScheme: "dark" });
    await fresh("/tasks");
    const bg = await page.locator("body").evaluate((body) => getComputedStyle(body).backgroundColor);
    expect(bg).toBe("rgb(17, 20, 24)");
    await screenshot(page, "tasks-desktop-dark");
    await page.emulateMedia({ colorScheme: "light" });
  }, STEP);

  test("no script error and no CSP violation on any page", () => {
    expect(errors).toEqual([]);
  });
});
