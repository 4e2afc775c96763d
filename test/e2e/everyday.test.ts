// Everyday use in a real browser, item by item as a new user's week found them (issue 12): phone
// layout and touch, closing a task whose title cannot be saved, one clear sentence per error, long
// pasted titles, Undo for every completion and deletion, and the smaller things (text direction,
// page titles, duplicate list names, partial habit amounts, a habit's start date, lunar dates).
// Desktop 1280×800 and phone 390×844. Skipped, with a message, when /usr/bin/chromium is missing.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { en as t } from "../../web/src/i18n";
import { apiFromPage, browserToday, DESKTOP, hasChromium, launchBrowser, PHONE, poll, type Server, startSession, watchConsole } from "./harness";

declare function getComputedStyle(el: unknown): { direction: string };
declare const document: { title: string; body: { innerText: string } };

const STEP = 120_000;

interface Task {
  id: string;
  title: string;
  description: string;
  completed: boolean;
  due_at: string | null;
  version: number;
  deleted_at: string | null;
}
interface Rec {
  id: string;
  rrule: string | null;
}

let server: Server;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let page: Page;
let errors: string[] = [];

const api = <T>(method: string, path: string, body?: unknown) => apiFromPage<T>(page, method, path, body);
const row = (title: string) => page.locator("li.task", { has: page.locator(".title", { hasText: new RegExp(`^${title}$`) }) });
const details = () => page.getByRole("dialog", { name: t.tasks.details });
const toastWith = (text: string | RegExp) => page.locator(".toast", { hasText: text });

async function fresh(path: string) {
  await page.goto(path);
  await page.locator("main h1").first().waitFor();
}
async function addTask(title: string) {
  const quick = page.getByLabel(t.tasks.quickAddLabel);
  await quick.fill(title);
  await quick.press("Enter");
  await row(title).waitFor();
}
async function openTask(title: string) {
  await row(title).locator(".title").click();
  await details().locator("section.recurrence h3").waitFor();
}
/** Every task of the user with this title (open and completed, all lists), paged through. */
async function tasksTitled(title: string): Promise<Task[]> {
  const out: Task[] = [];
  let cursor: string | null = null;
  do {
    const p: { items: Task[]; next_cursor: string | null } = await api("GET", `/tasks?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
    out.push(...p.items.filter((x) => x.title === title));
    cursor = p.next_cursor;
  } while (cursor);
  return out;
}
async function trashTitled(title: string): Promise<Task[]> {
  return (await api<{ items: Task[] }>("GET", "/trash?limit=100")).items.filter((x) => x.title === title);
}
async function box(sel: ReturnType<Page["locator"]>) {
  const b = await sel.boundingBox();
  if (!b) throw new Error("not visible");
  return b;
}

describe.skipIf(!hasChromium)("everyday use (issue 12)", () => {
  beforeAll(async () => {
    ({ server, browser, page, errors } = await startSession());
  }, STEP);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  }, STEP);

  test("opening a task logs no console error: a task that does not repeat has recurrence null, not a 404", async () => {
    const seen = watchConsole(page);
    await fresh("/tasks");
    await addTask("Plain task");
    await openTask("Plain task");
    await details().getByRole("combobox", { name: t.recurrence.title }).waitFor();
    expect(await details().getByRole("combobox", { name: t.recurrence.title }).inputValue()).toBe("none");
    await page.keyboard.press("Escape");
    await page.getByRole("dialog").waitFor({ state: "detached" });
    expect(seen).toEqual([]);
  }, STEP);

  test("a title cleared to spaces: ✕, Escape and the backdrop each offer to discard; discarding keeps the saved task", async () => {
    await fresh("/tasks");
    await addTask("Discard me");
    await openTask("Discard me");
    const title = details().getByLabel(t.fields.title);
    await title.fill("   ");
    // ✕: asked; keep editing leaves the dialog open with the text as typed.
    await details().getByRole("button", { name: t.close }).first().click();
    const ask = page.getByRole("dialog", { name: t.tasks.discardTitle });
    await ask.waitFor();
    expect(await ask.textContent()).toContain(t.tasks.titleBlank);
    await ask.getByRole("button", { name: t.tasks.keepEditing }).click();
    await ask.waitFor({ state: "detached" });
    expect(await title.inputValue()).toBe("   ");
    // Escape: asked; discard closes.
    await page.keyboard.press("Escape");
    await ask.getByRole("button", { name: t.tasks.discard }).click();
    await page.getByRole("dialog").waitFor({ state: "detached" });
    // The backdrop: asked too.
    await openTask("Discard me");
    await title.fill(" ");
    await page.mouse.click(10, 400); // outside the 640 px dialog
    await ask.getByRole("button", { name: t.tasks.discard }).click();
    await page.getByRole("dialog").waitFor({ state: "detached" });
    const [task] = await tasksTitled("Discard me");
    expect(task).toMatchObject({ title: "Discard me", version: 1 });
    await row("Discard me").waitFor();
    // A change that can be saved is still saved on close, without a question.
    await openTask("Discard me");
    await details().getByLabel(t.fields.description).fill("kept");
    await page.keyboard.press("Escape");
    await page.getByRole("dialog").waitFor({ state: "detached" });
    expect((await tasksTitled("Discard me"))[0]!.description).toBe("kept");
  }, STEP);

  test("an error is one sentence chosen by its code, shown once", async () => {
    await fresh("/tasks");
    const task = await api<Task>("POST", "/tasks", { title: "Bad rule", due_at: "2031-01-06" });
    // What the server says about this rule (the app shows it once, after naming the field).
    const problem = await page.evaluate(async (id) => {
      const csrf = decodeURIComponent(/(?:^|; )app_csrf=([^;]*)/.exec((globalThis as unknown as { document: { cookie: string } }).document.cookie)?.[1] ?? "");
      const r = await fetch("/api/v1/recurrences", { method: "POST", headers: { "content-type": "application/json", "x-csrf-token": csrf }, body: JSON.stringify({ task_id: id, kind: "rrule", rrule: "FREQ=SOMETIMES" }) });
      return (await r.json()) as { code: string; errors: { path: string; message: string }[] };
    }, task.id);
    expect(problem.code).toBe("validation_failed");
    await fresh("/tasks");
    await openTask("Bad rule");
    await details().getByRole("combobox", { name: t.recurrence.title }).selectOption("custom");
    await details().getByLabel(t.recurrence.rrule).fill("FREQ=SOMETIMES");
    await details().locator("section.recurrence").getByRole("button", { name: t.save }).click();
    const expected = t.errors.invalid(`${t.fieldNames.rrule} (${problem.errors[0]!.message})`);
    await toastWith(expected).waitFor();
    const shown = (await page.locator(".toast").allTextContents()).join("\n");
    expect(shown.split(problem.errors[0]!.message).length - 1).toBe(1);
  }, STEP);

  test("no connection: \"The server cannot be reached\", never the browser's \"Failed to fetch\"", async () => {
    await fresh("/tasks");
    const quick = page.getByLabel(t.tasks.quickAddLabel);
    // The page's own loads must be done before the connection goes (the heading shows before them).
    await quick.waitFor();
    await page.waitForLoadState("networkidle");
    await page.route("**/api/v1/**", (r) => r.abort("internetdisconnected"));
    try {
      await quick.fill("Written offline");
      await quick.press("Enter");
      await toastWith(t.offline).waitFor();
      expect(await quick.inputValue()).toBe("Written offline"); // nothing lost
      await page.goto("/habits"); // a page load: the boot screen
      await page.getByText(t.offline).waitFor();
      expect(await page.evaluate(() => document.body.innerText)).not.toContain("Failed to fetch");
    } finally {
      await page.unrouteAll();
      // The aborted requests were this test's doing (dropped even when it fails, so that only its own failure shows).
      errors.splice(0, errors.length, ...errors.filter((e) => !/ERR_INTERNET_DISCONNECTED/.test(e)));
    }
    await page.getByRole("button", { name: t.retry }).click();
    await page.getByRole("heading", { name: t.habits.title }).waitFor();
  }, STEP);

  test("quick add of a 10,001-character paste says the title is too long and keeps the whole text", async () => {
    await fresh("/tasks");
    const text = "abcdefghij".repeat(1001).slice(0, 10_001);
    const quick = page.getByLabel(t.tasks.quickAddLabel);
    await quick.fill(text);
    await page.getByText(t.tasks.tooLong(10_001, 500)).waitFor();
    expect(await quick.inputValue()).toBe(text); // not cut
    await quick.press("Enter");
    await toastWith(t.tasks.tooLongAdded(500)).waitFor();
    const [task] = await tasksTitled(text.slice(0, 500));
    expect(task!.title.length).toBe(500);
    expect(task!.description).toBe(text);
    expect(await page.getByText(t.tasks.tooLong(10_001, 500)).count()).toBe(0);
  }, STEP);

  test("Undo after completing a task", async () => {
    await fresh("/tasks");
    await addTask("Undo me");
    await row("Undo me").getByRole("checkbox", { name: `${t.tasks.complete}: Undo me` }).click();
    await row("Undo me").waitFor({ state: "detached" });
    await toastWith(t.tasks.completed).getByRole("button", { name: t.tasks.undo }).click();
    await row("Undo me").waitFor();
    expect((await tasksTitled("Undo me")).map((x) => x.completed)).toEqual([false]);
  }, STEP);

  test("Undo after completing a repeating task: back on its occurrence, the completed copy gone, subtasks as they were", async () => {
    const day = await browserToday(page);
    const task = await api<Task>("POST", "/tasks", { title: "Daily undo", due_at: day });
    const sub = await api<Task>("POST", "/tasks", { title: "Step one", parent_id: task.id });
    await api("PATCH", `/tasks/${sub.id}`, { completed: true, version: sub.version });
    await api("POST", "/recurrences", { task_id: task.id, kind: "rrule", rrule: "FREQ=DAILY" });
    await fresh("/tasks");
    await row("Daily undo").getByRole("checkbox", { name: `${t.tasks.complete}: Daily undo` }).click();
    const done = toastWith(/Next occurrence/);
    await done.waitFor();
    expect((await tasksTitled("Daily undo")).length).toBe(2); // the copy and the moved task
    await done.getByRole("button", { name: t.tasks.undo }).click();
    await toastWith(t.tasks.undone).waitFor();
    const after = await tasksTitled("Daily undo");
    expect(after.map((x) => [x.id, x.due_at, x.completed])).toEqual([[task.id, day, false]]);
    expect(await trashTitled("Daily undo")).toEqual([]);
    const full = await api<{ subtasks: { id: string; completed: boolean }[] }>("GET", `/tasks/${task.id}`);
    expect(full.subtasks.map((s) => [s.id, s.completed])).toEqual([[sub.id, true]]);
    expect((await api<Rec | null>("GET", `/tasks/${task.id}/recurrence`))?.rrule).toBe("FREQ=DAILY");
  }, STEP);

  test("Undo after completing the last occurrence of a series: open again, with the same remaining schedule", async () => {
    const day = await browserToday(page);
    const task = await api<Task>("POST", "/tasks", { title: "Last one", due_at: day });
    const rec = await api<Rec>("POST", "/recurrences", { task_id: task.id, kind: "rrule", rrule: "FREQ=DAILY;COUNT=1" });
    await fresh("/tasks");
    await row("Last one").getByRole("checkbox", { name: `${t.tasks.complete}: Last one` }).click();
    await toastWith(t.tasks.seriesEnded).getByRole("button", { name: t.tasks.undo }).click();
    await toastWith(t.tasks.undone).waitFor();
    expect((await tasksTitled("Last one")).map((x) => [x.due_at, x.completed])).toEqual([[day, false]]);
    // The very recurrence that ended, back (the server's undo, issue 14): same id and rule.
    expect(await api<Rec | null>("GET", `/tasks/${task.id}/recurrence`)).toMatchObject({ id: rec.id, rrule: "FREQ=DAILY;COUNT=1" });
  }, STEP);

  test("Undo after a batch complete (plain and repeating tasks) and after a batch delete", async () => {
    const day = await browserToday(page);
    await fresh("/tasks");
    await addTask("Batch A");
    await addTask("Batch B");
    const rep = await api<Task>("POST", "/tasks", { title: "Batch R", due_at: day });
    await api("POST", "/recurrences", { task_id: rep.id, kind: "rrule", rrule: "FREQ=WEEKLY" });
    await fresh("/tasks");
    for (const x of ["Batch A", "Batch B", "Batch R"]) await row(x).getByRole("checkbox", { name: t.tasks.select }).check();
    await page.getByRole("toolbar").getByRole("button", { name: t.tasks.batchComplete }).click();
    const done = toastWith(t.tasks.batchCompleted(3));
    await done.waitFor();
    await row("Batch A").waitFor({ state: "detached" });
    await done.getByRole("button", { name: t.tasks.undo }).click();
    await toastWith(t.tasks.undone).waitFor();
    for (const x of ["Batch A", "Batch B"]) expect((await tasksTitled(x)).map((y) => y.completed)).toEqual([false]);
    expect((await tasksTitled("Batch R")).map((y) => [y.id, y.due_at, y.completed])).toEqual([[rep.id, day, false]]);
    await row("Batch A").waitFor();

    for (const x of ["Batch A", "Batch B"]) await row(x).getByRole("checkbox", { name: t.tasks.select }).check();
    await page.getByRole("toolbar").getByRole("button", { name: t.tasks.batchDelete }).click();
    const deleted = toastWith(t.tasks.batchDeleted(2));
    await deleted.waitFor();
    expect((await trashTitled("Batch A")).length).toBe(1);
    await deleted.getByRole("button", { name: t.tasks.undo }).click();
    await row("Batch A").waitFor();
    await row("Batch B").waitFor();
    expect([...(await trashTitled("Batch A")), ...(await trashTitled("Batch B"))]).toEqual([]);
  }, STEP);

  test("titles take their direction from their text (dir=auto): Arabic reads right to left", async () => {
    await fresh("/tasks");
    await addTask("اشتري الحليب");
    expect(await row("اشتري الحليب").locator(".title").evaluate((el) => getComputedStyle(el).direction)).toBe("rtl");
    expect(await row("Plain task").locator(".title").evaluate((el) => getComputedStyle(el).direction)).toBe("ltr");
  }, STEP);

  test("every page has its own document title", async () => {
    const list = await api<{ id: string }>("POST", "/lists", { name: "Errands" });
    const want: [string, string][] = [
      ["/tasks", t.tasks.inbox],
      [`/tasks?list=${list.id}`, "Errands"],
      ["/trash", t.trash.title],
      ["/habits", t.habits.title],
      ["/countdowns", t.countdowns.title],
      ["/memos", t.memos.title],
      ["/settings", t.settings.title],
      ["/backup", t.backup.title],
      ["/import", t.imports.title],
    ];
    for (const [path, name] of want) {
      await fresh(path);
      await poll(() => page.evaluate(() => document.title), (v) => v === t.docTitle(name));
    }
  }, STEP);

  test("a new list with the name of an existing one is flagged before it is created", async () => {
    await fresh("/tasks");
    await page.getByRole("button", { name: `+ ${t.tasks.newList}` }).click();
    const dialog = page.getByRole("dialog", { name: t.tasks.newList });
    await dialog.getByLabel(t.fields.name).fill("errands ");
    await dialog.getByText(t.tasks.duplicateList("errands")).waitFor();
    await dialog.getByLabel(t.fields.name).fill("Errands, later");
    await dialog.getByText(t.tasks.duplicateList("errands")).waitFor({ state: "detached" });
    await dialog.getByLabel(t.fields.name).fill("errands");
    await dialog.getByRole("button", { name: t.tasks.saveAnyway }).click(); // allowed, knowingly
    await page.getByRole("dialog").waitFor({ state: "detached" });
    await poll(async () => (await api<{ items: { name: string }[] }>("GET", "/lists")).items.filter((l) => l.name.toLowerCase() === "errands").length, (n) => n === 2);
  }, STEP);

  test("habit: the form takes a start date; a partial amount is logged from the panel or by right-clicking a day", async () => {
    const day = await browserToday(page);
    const start = new Date(Date.parse(`${day}T12:00:00Z`) - 3 * 86_400_000).toISOString().slice(0, 10);
    await fresh("/habits");
    await page.getByRole("button", { name: `+ ${t.habits.add}` }).click();
    const form = page.getByRole("dialog", { name: t.habits.add });
    await form.getByLabel(t.fields.name).fill("Water");
    await form.getByLabel(t.fields.goal).fill("8");
    await form.getByLabel(t.fields.unit).fill("glasses");
    expect(await form.getByLabel(t.habits.startDate).inputValue()).toBe(day); // defaults to today
    await form.getByLabel(t.habits.startDate).fill(start);
    await form.getByRole("button", { name: t.create }).click();
    const habit = (await poll(() => api<{ items: { id: string; name: string; start_date: string }[] }>("GET", "/habits"), (r) => r.items.some((h) => h.name === "Water"))).items.find((h) => h.name === "Water")!;
    expect(habit.start_date).toBe(start);

    await page.getByRole("button", { name: "Water", exact: true }).click();
    await page.getByRole("button", { name: t.habits.logAmount }).click();
    const amount = page.getByRole("dialog", { name: new RegExp(`^${t.habits.amountFor("Water", "")}`) });
    await amount.getByLabel(new RegExp(t.habits.amount)).fill("3");
    await amount.getByRole("button", { name: t.save }).click();
    const cell = page.locator(`button[aria-label^="Water ${day}:"]`);
    await poll(() => cell.getAttribute("aria-label"), (v) => v === `Water ${day}: ${t.habits.status.partial} (3/8)`);
    // Right-click a day: the same question for that day; a tap still logs the whole goal.
    await cell.click({ button: "right" });
    await page.getByRole("dialog").getByLabel(new RegExp(t.habits.amount)).fill("5");
    await page.getByRole("dialog").getByRole("button", { name: t.save }).click();
    await poll(() => cell.getAttribute("aria-label"), (v) => v === `Water ${day}: ${t.habits.status.partial} (5/8)`);
    await cell.click();
    await poll(() => cell.getAttribute("aria-pressed"), (v) => v === "true");
    const logs = await api<{ items: { date: string; value: number }[] }>("GET", `/habits/${habit.id}/logs?from=${day}&to=${day}`);
    expect(logs.items.map((l) => [l.date, l.value])).toEqual([[day, 8]]);
  }, STEP);

  test("habit: logging a day before its start date offers to move the start back", async () => {
    const day = await browserToday(page);
    const weekAgo = new Date(Date.parse(`${day}T12:00:00Z`) - 7 * 86_400_000).toISOString().slice(0, 10);
    const habit = await api<{ id: string }>("POST", "/habits", { name: "Journal", start_date: day });
    await fresh("/habits");
    await page.getByRole("button", { name: t.habits.prevWeek }).click();
    const cell = page.locator(`button[aria-label^="Journal ${weekAgo}:"]`);
    await cell.click();
    const ask = page.getByRole("dialog", { name: t.habits.beforeStartTitle });
    await ask.waitFor();
    await ask.getByRole("button", { name: t.cancel }).click();
    expect((await api<{ items: unknown[] }>("GET", `/habits/${habit.id}/logs?from=${weekAgo}&to=${day}`)).items).toEqual([]);
    await cell.click();
    await ask.getByRole("button", { name: t.habits.moveStart }).click();
    await poll(() => cell.getAttribute("aria-pressed"), (v) => v === "true");
    expect((await api<{ start_date: string }>("GET", `/habits/${habit.id}`)).start_date).toBe(weekAgo);
    expect((await api<{ items: { date: string }[] }>("GET", `/habits/${habit.id}/logs?from=${weekAgo}&to=${weekAgo}`)).items.length).toBe(1);

    // The API's own refusal (422 validation_failed on start_date, e.g. when the page is stale) asks the same.
    await page.getByRole("button", { name: t.habits.thisWeek }).click();
    await page.route(`**/api/v1/habits/${habit.id}/logs/${day}`, (r) =>
      r.request().method() === "PUT"
        ? r.fulfill({ status: 422, contentType: "application/problem+json", body: JSON.stringify({ type: "about:blank", title: "Validation failed", status: 422, code: "validation_failed", detail: "before start", errors: [{ path: "start_date", message: "the log is before the habit's start_date" }] }) })
        : r.continue(),
    );
    try {
      await page.locator(`button[aria-label^="Journal ${day}:"]`).click();
      await ask.waitFor();
      await ask.getByRole("button", { name: t.cancel }).click();
    } finally {
      await page.unrouteAll();
    }
  }, STEP);

  test("lunar countdown: the form takes a lunar month, day and leap flag and shows the Gregorian date", async () => {
    await fresh("/countdowns");
    await page.getByRole("button", { name: `+ ${t.countdowns.add}` }).click();
    const dialog = page.getByRole("dialog", { name: t.countdowns.add });
    await dialog.getByLabel(t.fields.name).fill("Grandpa");
    await dialog.getByLabel(t.fields.calendar).selectOption("lunar");
    await dialog.getByLabel(t.countdowns.lunarYear).fill("2023");
    await dialog.getByLabel(t.countdowns.lunarMonth).selectOption("2");
    await dialog.getByLabel(t.countdowns.lunarDay).selectOption("1");
    await dialog.getByLabel(t.countdowns.leapMonth).check(); // 2023 has a leap 2nd month: it began on 22 March
    await poll(() => dialog.getByLabel(t.fields.date).inputValue(), (v) => v === "2023-03-22");
    expect(await dialog.getByTestId("lunar-meaning").textContent()).toContain("2023");
    await dialog.getByLabel(t.countdowns.lunarYear).fill("2024");
    await dialog.getByText(t.countdowns.noLeap(2024, 2)).waitFor();
    expect(await dialog.getByRole("button", { name: t.save }).isDisabled()).toBe(true);
    await dialog.getByLabel(t.countdowns.leapMonth).uncheck();
    await dialog.getByLabel(t.countdowns.lunarYear).fill("1950");
    await dialog.getByLabel(t.countdowns.lunarMonth).selectOption("8");
    await dialog.getByLabel(t.countdowns.lunarDay).selectOption("15");
    await poll(() => dialog.getByLabel(t.fields.date).inputValue(), (v) => v === "1950-09-26");
    await dialog.getByLabel(t.fields.type).selectOption("birthday");
    await dialog.getByLabel(t.fields.repeat).selectOption("yearly");
    await dialog.getByRole("button", { name: t.save }).click();
    const card = page.locator("[data-countdown=Grandpa]");
    await card.waitFor();
    expect(await card.locator(".lunar").textContent()).toBe(t.countdowns.lunar(8, 15, false));
    // Editing shows the stored date as lunar fields again.
    await card.getByRole("button", { name: t.edit }).click();
    const edit = page.getByRole("dialog", { name: t.edit });
    await poll(() => edit.getByLabel(t.countdowns.lunarDay).inputValue().catch(() => ""), (v) => v === "15");
    expect(await edit.getByLabel(t.countdowns.lunarMonth).inputValue()).toBe("8");
    expect(await edit.getByLabel(t.countdowns.lunarYear).inputValue()).toBe("1950");
    await page.keyboard.press("Escape");
  }, STEP);

  describe("on a phone (390×844)", () => {
    beforeAll(async () => page.setViewportSize(PHONE));
    afterAll(async () => page.setViewportSize(DESKTOP));

    test("a list name of 95 characters: the task dialog fits the screen, ✕ and Save on it", async () => {
      const name = "A list with a long name for everything about the house renovation and the garden, spring 2027!!";
      expect(name.length).toBe(95);
      const list = await api<{ id: string }>("POST", "/lists", { name });
      await api("POST", "/tasks", { title: "Paint the fence", list_id: list.id });
      await fresh("/tasks");
      await addTask("Fits the screen");
      await openTask("Fits the screen");
      const d = await box(page.locator(".modal"));
      expect(d.x).toBeGreaterThanOrEqual(0);
      expect(d.x + d.width).toBeLessThanOrEqual(PHONE.width);
      for (const control of [details().getByRole("button", { name: t.close }).first(), details().locator("form.task-form").getByRole("button", { name: t.save })]) {
        await control.scrollIntoViewIfNeeded();
        const b = await box(control);
        expect(b.x).toBeGreaterThanOrEqual(0);
        expect(b.x + b.width).toBeLessThanOrEqual(PHONE.width);
      }
      expect(await page.locator(".modal").evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
      const close = await box(details().getByRole("button", { name: t.close }).first());
      expect(Math.min(close.width, close.height)).toBeGreaterThanOrEqual(44);
      await page.keyboard.press("Escape");
    }, STEP);

    test("touch targets: the complete checkbox is a 44 px square, all of it tappable", async () => {
      await fresh("/tasks");
      await addTask("Tap the corner");
      const hit = row("Tap the corner").locator("label.complete-hit");
      const b = await box(hit);
      expect(Math.min(b.width, b.height)).toBeGreaterThanOrEqual(44);
      await hit.click({ position: { x: 2, y: 2 } }); // the corner, far from the 22 px box
      await row("Tap the corner").waitFor({ state: "detached" });
      await toastWith(t.tasks.completed).getByRole("button", { name: t.tasks.undo }).click();
      await row("Tap the corner").waitFor();
      const rename = await box(row("Tap the corner").getByRole("button", { name: `${t.tasks.renameTask}: Tap the corner` }));
      expect(Math.min(rename.width, rename.height)).toBeGreaterThanOrEqual(44);
    }, STEP);

    test("multi-select on a phone: press and hold a task, tap others, complete them, Undo", async () => {
      await fresh("/tasks");
      await addTask("Phone one");
      await addTask("Phone two");
      expect(await row("Phone one").locator("input.select").isVisible()).toBe(false); // no checkbox until selecting
      const title = await box(row("Phone one").locator(".title"));
      await page.mouse.move(title.x + 5, title.y + 5);
      await page.mouse.down();
      await Bun.sleep(800);
      await page.mouse.up();
      await page.getByRole("toolbar").getByText(t.tasks.selected(1)).waitFor();
      expect(await page.getByRole("dialog").count()).toBe(0); // the press did not open the task
      await row("Phone two").locator(".title").click(); // while selecting, a tap selects
      await page.getByRole("toolbar").getByText(t.tasks.selected(2)).waitFor();
      const check = await box(row("Phone two").locator("label.select-hit"));
      expect(Math.min(check.width, check.height)).toBeGreaterThanOrEqual(44);
      await page.getByRole("toolbar").getByRole("button", { name: t.tasks.batchComplete }).click();
      await row("Phone one").waitFor({ state: "detached" });
      await toastWith(t.tasks.batchCompleted(2)).getByRole("button", { name: t.tasks.undo }).click();
      await row("Phone one").waitFor();
      await row("Phone two").waitFor();
      // The "Select tasks" button is the other way in.
      await page.getByRole("button", { name: t.tasks.selectMode }).click();
      await row("Phone one").locator("input.select").check();
      await page.getByRole("toolbar").getByText(t.tasks.selected(1)).waitFor();
      await page.getByRole("toolbar").getByRole("button", { name: t.tasks.clearSelection }).click();
      await page.getByRole("toolbar").waitFor({ state: "detached" });
    }, STEP);

    test("habit days are 44 px tall on a phone", async () => {
      await fresh("/habits");
      const cells = page.locator("button.cell");
      await cells.first().waitFor();
      const b = await box(cells.first());
      expect(b.height).toBeGreaterThanOrEqual(44);
    }, STEP);
  });

  test("no script error and no CSP violation on any page", () => {
    expect(errors).toEqual([]);
  });
});
