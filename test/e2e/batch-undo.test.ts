// End-to-end: the batch bar sets a date, the priority and the tags (replaced, or one added or removed
// keeping the others) of many tasks, and every batch
// change and every completion has an Undo that puts the tasks back exactly (issue 14): compared
// through the API field by field (only version and updated_at move on). axe-core on the batch bar,
// light and dark, desktop and phone. Skipped, with a message, when /usr/bin/chromium is missing.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { en as t } from "../../web/src/i18n";
import { apiFromPage, axeViolations, browserToday, DESKTOP, hasChromium, launchBrowser, PHONE, poll, type Server, startSession } from "./harness";

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
  completed: boolean;
  completed_at: string | null;
  version: number;
  updated_at: string;
  tags: { id: string; name: string }[];
  subtasks: Task[];
}
const api = <T>(method: string, path: string, body?: unknown) => apiFromPage<T>(page, method, path, body);
const row = (title: string) => page.locator("li.task", { has: page.locator(".title", { hasText: new RegExp(`^${title}$`) }) });
const toastWith = (text: string | RegExp) => page.locator(".toast", { hasText: text });
const bar = () => page.getByRole("toolbar");
/** A task without what an undo may not bring back (version, updated_at). */
function state(x: Task): unknown {
  const { version: _v, updated_at: _u, subtasks, ...rest } = x;
  return { ...rest, subtasks: subtasks.map(state) };
}
const read = (id: string) => api<Task>("GET", `/tasks/${id}`);

async function selectRows(titles: string[]) {
  await page.goto("/tasks");
  for (const x of titles) await row(x).getByRole("checkbox", { name: `${t.tasks.select}: ${x}` }).check();
}

describe.skipIf(!hasChromium)("batch bar and undo (issue 14)", () => {
  let a: Task;
  let b: Task;
  let tagX: string;
  let tagY: string;
  beforeAll(async () => {
    ({ server, browser, page, errors } = await startSession());
    tagX = (await api<{ id: string }>("POST", "/tags", { name: "x", color: "#255ccc" })).id;
    tagY = (await api<{ id: string }>("POST", "/tags", { name: "y", color: "#1b7340" })).id;
    a = await api<Task>("POST", "/tasks", { title: "Alpha", due_at: "2026-12-01", priority: 1, tag_ids: [tagX] });
    b = await api<Task>("POST", "/tasks", { title: "Beta", due_at: "2026-12-02T08:30:00Z", tag_ids: [tagX, tagY] });
    await api("POST", "/tasks", { title: "Beta step", parent_id: b.id });
  }, STEP);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  }, STEP);

  for (const [what, act, check] of [
    ["priority", () => bar().getByLabel(t.tasks.batchPriority).selectOption(String(3)), (x: Task) => x.priority === 3],
    ["date", () => bar().getByLabel(t.tasks.batchDue, { exact: true }).selectOption({ label: t.tasks.dueTomorrow }), (x: Task) => x.due_at !== null && x.due_at.length === 10 && x.due_at > "2026-01-01"],
    ["date picked", () => bar().getByLabel(t.tasks.batchDueOn).fill("2027-03-04"), (x: Task) => x.due_at === "2027-03-04"],
    ["no date", () => bar().getByLabel(t.tasks.batchDue, { exact: true }).selectOption({ label: t.tasks.noDate }), (x: Task) => x.due_at === null],
    ["tags", () => bar().getByLabel(t.tasks.batchTags).selectOption({ label: t.tasks.onlyTag("y") }), (x: Task) => x.tags.map((g) => g.id).join() === tagY],
    // Alpha has x, Beta has x and y: adding y keeps Alpha's x; removing x keeps Beta's y.
    ["add a tag", () => bar().getByLabel(t.tasks.batchAddTag).selectOption({ label: t.tasks.tagOption("y") }), (x: Task) => x.tags.map((g) => g.id).sort().join() === [tagX, tagY].sort().join()],
    ["remove a tag", () => bar().getByLabel(t.tasks.batchRemoveTag).selectOption({ label: t.tasks.tagOption("x") }), (x: Task) => !x.tags.some((g) => g.id === tagX)],
    ["move", async () => bar().getByLabel(t.tasks.batchMove, { exact: true }).selectOption({ label: "Elsewhere" }), (x: Task) => x.title !== ""],
  ] as const) {
    test(`batch ${what} on two tasks, then Undo: both exactly as before`, async () => {
      if (what === "move") await api("POST", "/lists", { name: "Elsewhere" });
      const before = [state(await read(a.id)), state(await read(b.id))];
      await selectRows(["Alpha", "Beta"]);
      await act();
      const done = toastWith(t.tasks.batchChanged(2));
      await done.waitFor();
      for (const id of [a.id, b.id]) expect(check(await read(id))).toBe(true);
      if (what === "remove a tag") expect([(await read(a.id)).tags.map((g) => g.id), (await read(b.id)).tags.map((g) => g.id)]).toEqual([[], [tagY]]);
      if (what === "date") expect((await read(a.id)).due_at).toBe(new Date(Date.parse(`${await browserToday(page)}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10));
      await done.getByRole("button", { name: t.tasks.undo }).click();
      await toastWith(t.tasks.undone).waitFor();
      expect([state(await read(a.id)), state(await read(b.id))]).toEqual(before);
    }, STEP);
  }

  test("batch complete, then Undo: completion times gone, a repeating task back on its occurrence with the same recurrence", async () => {
    const day = await browserToday(page);
    const r = await api<Task>("POST", "/tasks", { title: "Gamma", due_at: day });
    const rec = await api<{ id: string }>("POST", "/recurrences", { task_id: r.id, kind: "rrule", rrule: "FREQ=WEEKLY;COUNT=2" });
    const recBefore = await api("GET", `/recurrences/${rec.id}`);
    const before = [state(await read(a.id)), state(await read(r.id))];
    await selectRows(["Alpha", "Gamma"]);
    await bar().getByRole("button", { name: t.tasks.batchComplete }).click();
    const done = toastWith(t.tasks.batchCompleted(2));
    await done.waitFor();
    expect((await read(a.id)).completed).toBe(true);
    expect((await read(r.id)).due_at).not.toBe(day);
    await done.getByRole("button", { name: t.tasks.undo }).click();
    await toastWith(t.tasks.undone).waitFor();
    expect([state(await read(a.id)), state(await read(r.id))]).toEqual(before);
    expect(await api("GET", `/recurrences/${rec.id}`)).toEqual(recBefore);
    const all = await api<{ items: Task[] }>("GET", "/tasks?limit=100&completed=true");
    expect(all.items.filter((x) => x.title === "Gamma")).toEqual([]); // the completed copy never existed
  }, STEP);

  test("axe-core: the batch bar, light and dark, desktop and phone", async () => {
    for (const scheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      for (const [size, viewport] of [["desktop", DESKTOP], ["phone", PHONE]] as const) {
        await page.setViewportSize(viewport);
        await page.goto("/tasks");
        if (size === "phone") {
          await page.getByRole("button", { name: t.tasks.selectMode }).click();
          await row("Alpha").locator(".title").click();
        } else await row("Alpha").getByRole("checkbox", { name: `${t.tasks.select}: Alpha` }).check();
        await poll(() => bar().getByLabel(t.tasks.batchPriority).isVisible(), (v) => v);
        expect({ scheme, size, violations: await axeViolations(page) }).toEqual({ scheme, size, violations: [] });
      }
    }
    await page.setViewportSize(DESKTOP);
    await page.emulateMedia({ colorScheme: "light" });
    expect(errors).toEqual([]);
  }, STEP);
});
