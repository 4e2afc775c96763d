// End-to-end: quick add in natural language (issue 14). Sentences are typed into the box; what was
// understood is highlighted as you type; Backspace right after a piece or Escape keeps it as text;
// the saved task is read back through the API and compared with an independent computation of
// the expected deadline (Temporal, in the user's zone). axe-core on the box with its highlights,
// light and dark, desktop and phone. Skipped, with a message, when /usr/bin/chromium is missing.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { en as t } from "../../web/src/i18n";
import { apiFromPage, axeViolations, DESKTOP, hasChromium, launchBrowser, PHONE, poll, screenshot, type Server, startSession } from "./harness";

const STEP = 120_000;
let server: Server;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let page: Page;
let errors: string[] = [];

interface Task {
  id: string;
  title: string;
  due_at: string | null;
  priority: number;
  list_id: string;
  tags: { name: string }[];
}

const box = () => page.getByLabel(t.tasks.quickAddLabel);
async function typeSentence(s: string) {
  await box().click();
  await box().fill("");
  // Typed key by key, as a person would (the highlight follows every keystroke).
  await box().pressSequentially(s, { delay: 5 });
}
async function savedTitled(title: string): Promise<Task> {
  return poll(
    async () => (await apiFromPage<{ items: Task[] }>(page, "GET", "/tasks?limit=100")).items.find((x) => x.title === title),
    (x) => x !== undefined,
  ) as Promise<Task>;
}
const marks = () => page.locator(".quick-mirror mark").allTextContents();

/** Tomorrow at hh:00 in `zone`, as the API writes an instant. */
function tomorrowAt(zone: string, hour: number): string {
  const d = Temporal.Now.plainDateISO(zone).add({ days: 1 });
  return new Date(d.toZonedDateTime({ timeZone: zone, plainTime: Temporal.PlainTime.from({ hour }) }).epochMilliseconds).toISOString();
}

describe.skipIf(!hasChromium)("quick add in natural language (issue 14)", () => {
  beforeAll(async () => {
    ({ server, browser, page, errors } = await startSession());
    await apiFromPage(page, "PATCH", "/me", { timezone: "Europe/Berlin" });
    await apiFromPage(page, "POST", "/tags", { name: "work", color: "#255ccc" });
    await apiFromPage(page, "POST", "/lists", { name: "Home Stuff" });
    await page.goto("/tasks");
    await box().waitFor();
  }, STEP);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  }, STEP);

  test('"Call Bob tomorrow at 3pm #work !high": highlighted while typing, saved with its fields', async () => {
    await typeSentence("Call Bob tomorrow at 3pm #work !high");
    await poll(marks, (m) => m.length === 3);
    expect(await marks()).toEqual(["tomorrow at 3pm", "#work", "!high"]);
    const understood = page.getByRole("list", { name: t.quickAdd.understood });
    expect(await understood.getByRole("listitem").count()).toBe(3);
    await box().press("Enter");
    const task = await savedTitled("Call Bob");
    expect(task.due_at).toBe(tomorrowAt("Europe/Berlin", 15));
    expect(task.priority).toBe(3);
    expect(task.tags.map((x) => x.name)).toEqual(["work"]);
    await page.locator("li.task", { hasText: "Call Bob" }).waitFor();
    expect(await box().inputValue()).toBe("");
  }, STEP);

  test("a repeat, a list and a new tag: the recurrence is saved on the task", async () => {
    await typeSentence("Water plants every day after completion ~home stuff #garden !1");
    await poll(marks, (m) => m.length === 4);
    await box().press("Enter");
    const task = await savedTitled("Water plants");
    const lists = await apiFromPage<{ items: { id: string; name: string }[] }>(page, "GET", "/lists");
    expect(task.list_id).toBe(lists.items.find((l) => l.name === "Home Stuff")!.id);
    expect(task.tags.map((x) => x.name)).toEqual(["garden"]);
    expect(task.priority).toBe(1);
    expect(task.due_at).toBe(Temporal.Now.plainDateISO("Europe/Berlin").toString());
    const rec = await apiFromPage<{ kind: string; interval: number; unit: string }>(page, "GET", `/tasks/${task.id}/recurrence`);
    expect(rec).toMatchObject({ kind: "after_completion", interval: 1, unit: "day" });

    await typeSentence("Pay rent every month on the last day");
    await poll(marks, (m) => m.length === 1);
    await box().press("Enter");
    const rent = await savedTitled("Pay rent");
    const rrule = await apiFromPage<{ kind: string; rrule: string }>(page, "GET", `/tasks/${rent.id}/recurrence`);
    expect(rrule).toMatchObject({ kind: "rrule", rrule: "FREQ=MONTHLY;BYMONTHDAY=-1" });
    const today = Temporal.Now.plainDateISO("Europe/Berlin");
    expect(rent.due_at).toBe(today.with({ day: today.daysInMonth }).toString());
  }, STEP);

  test("Backspace right after a piece, or Escape, keeps it as text", async () => {
    await typeSentence("Read Tomorrow");
    await poll(marks, (m) => m.length === 1);
    await box().press("Backspace"); // undoes the date, deletes nothing
    await poll(marks, (m) => m.length === 0);
    expect(await box().inputValue()).toBe("Read Tomorrow");
    await box().press("Enter");
    const book = await savedTitled("Read Tomorrow");
    expect(book.due_at).toBeNull();

    await typeSentence("Buy flowers !high next fri");
    await poll(marks, (m) => m.length === 2);
    await box().press("Escape"); // the last one: the date
    await poll(marks, (m) => m.length === 1);
    expect(await marks()).toEqual(["!high"]);
    await page.getByRole("button", { name: t.quickAdd.keepAsText("!high") }).click(); // and by pointer
    await poll(marks, (m) => m.length === 0);
    await box().press("Enter");
    const flowers = await savedTitled("Buy flowers !high next fri");
    expect(flowers).toMatchObject({ due_at: null, priority: 0 });
  }, STEP);

  test("axe-core: the box with highlights, light and dark, desktop and phone", async () => {
    for (const scheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      for (const [size, viewport] of [["desktop", DESKTOP], ["phone", PHONE]] as const) {
        await page.setViewportSize(viewport);
        await typeSentence("Call Bob tomorrow at 3pm #work !high every monday ~home stuff");
        await poll(marks, (m) => m.length >= 5);
        await screenshot(page, `quick-add-${scheme}-${size}`);
        expect({ scheme, size, violations: await axeViolations(page) }).toEqual({ scheme, size, violations: [] });
      }
    }
    await box().fill("");
    await page.setViewportSize(DESKTOP);
    await page.emulateMedia({ colorScheme: "light" });
    expect(errors).toEqual([]);
  }, STEP);
});
