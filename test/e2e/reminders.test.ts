// Reminders in a real browser (Debian's chromium, headless) against the program (dist/app when up
// to date, else `bun src/main.ts`): a reminder set on a task in its dialog, one on a habit and one
// on a countdown; in Settings the reminder time and quiet hours, a webhook channel made, tested
// (a real local receiver gets it), disabled and deleted, and the deliveries list; axe-core finds
// nothing on these views. Skipped, with a message, when /usr/bin/chromium is missing.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { en as t } from "../../web/src/i18n";
import { apiFromPage, axeViolations, hasChromium, launchBrowser, poll, startSession, type Server } from "./harness";
import { Receiver } from "../reminders/helpers";

const STEP = 180_000;
let server: Server;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let page: Page;
const rx = new Receiver();
const api = <T>(method: string, path: string, body?: unknown) => apiFromPage<T>(page, method, path, body);

async function noViolations(where: string): Promise<void> {
  const v = await axeViolations(page);
  expect({ where, violations: v.flatMap((x) => x.nodes.map((n) => `${x.id} (${x.impact}): ${n}`)) }).toEqual({ where, violations: [] });
}

describe.skipIf(!hasChromium)("reminders in the web app", () => {
  beforeAll(async () => {
    ({ server, browser, page } = await startSession());
  }, STEP);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    rx.stop();
  }, STEP);

  test("a reminder on a task, set in its dialog, shows when it fires", async () => {
    const task = await api<{ id: string }>("POST", "/tasks", { title: "Dentist", due_at: "2031-05-01T14:00:00Z" });
    await page.goto("/tasks");
    await page.locator("li.task .title", { hasText: "Dentist" }).click();
    const dlg = page.getByRole("dialog", { name: t.tasks.details });
    await dlg.getByRole("heading", { name: "Reminders" }).waitFor();
    await dlg.getByLabel("When").selectOption("30");
    await dlg.getByRole("button", { name: "Add reminder" }).click();
    await dlg.locator("section.reminders li", { hasText: "30 minutes before" }).waitFor();
    const list = await api<{ items: { minutes_before: number; next_fire_at: string }[] }>("GET", `/tasks/${task.id}/reminders`);
    expect(list.items).toEqual([expect.objectContaining({ minutes_before: 30, next_fire_at: "2031-05-01T13:30:00.000Z" })]);
    await page.waitForLoadState("networkidle");
    await noViolations("task dialog with a reminder");
    await dlg.getByRole("button", { name: "Remove reminder: 30 minutes before" }).click();
    await poll(() => api<{ items: unknown[] }>("GET", `/tasks/${task.id}/reminders`), (r) => r.items.length === 0);
  }, STEP);

  test("a habit's and a countdown's reminders", async () => {
    const habit = await api<{ id: string; name: string }>("POST", "/habits", { name: "Stretch", frequency: { type: "daily" } });
    await page.goto("/habits");
    await page.getByText("Stretch").first().click();
    await page.getByRole("heading", { name: "Reminders" }).waitFor();
    await page.getByLabel("Time").fill("21:15");
    await page.getByRole("button", { name: "Add reminder" }).click();
    await page.locator("section.reminders li", { hasText: "Daily at 21:15 on scheduled days" }).waitFor();
    expect((await api<{ items: { time: string }[] }>("GET", `/habits/${habit.id}/reminders`)).items[0]!.time).toBe("21:15");
    await noViolations("habit panel with a reminder");

    const cd = await api<{ id: string }>("POST", "/countdowns", { name: "Trip", date: "2031-06-01" });
    await page.goto("/countdowns");
    await page.locator("article, li", { has: page.getByRole("heading", { name: "Trip" }) }).getByRole("button", { name: t.edit }).click();
    const dlg = page.getByRole("dialog");
    await dlg.getByRole("heading", { name: "Reminders" }).waitFor();
    await dlg.getByLabel("Days before").fill("3");
    await dlg.getByRole("button", { name: "Add reminder" }).click();
    await dlg.locator("section.reminders li", { hasText: "3 days before, at 09:00" }).waitFor();
    expect((await api<{ items: { days_before: number }[] }>("GET", `/countdowns/${cd.id}/reminders`)).items[0]!.days_before).toBe(3);
    await noViolations("countdown dialog with a reminder");
  }, STEP);

  test("Settings: reminder time, quiet hours, a webhook channel tested, disabled, deleted; deliveries", async () => {
    await page.goto("/settings");
    await page.getByRole("heading", { name: "Reminders", exact: true }).waitFor();
    await page.getByLabel("Reminder time for tasks due on a day (no time)").fill("08:30");
    await page.getByLabel("On", { exact: true }).check();
    await page.getByRole("form", { name: "Reminders" }).getByRole("button", { name: "Save" }).click();
    await poll(() => api<{ reminder_time: string; quiet_hours: unknown }>("GET", "/me"), (m) => m.reminder_time === "08:30" && m.quiet_hours !== null);

    await page.getByLabel("Type").selectOption("webhook");
    await page.getByLabel("URL", { exact: true }).fill(`${rx.url}/e2e`);
    await page.getByRole("button", { name: "Add channel" }).click();
    await page.getByText("shown only now").waitFor();
    await page.waitForLoadState("networkidle");
    await noViolations("settings with a new webhook's secret");
    await page.getByRole("button", { name: "I have copied it" }).click();
    await page.getByRole("button", { name: "Send test" }).click();
    await poll(async () => rx.got.filter((g) => g.path === "/e2e").length, (n) => n === 1);
    expect(JSON.parse(rx.got[0]!.body).event).toBe("test");
    await page.getByRole("button", { name: "Disable" }).click();
    await page.getByText("Webhook · disabled").waitFor();
    await page.getByText("No reminder has been sent yet.").waitFor();
    await page.getByRole("button", { name: "Delete", exact: true }).click();
    await page.getByRole("dialog", { name: "Delete channel" }).getByRole("button", { name: "Delete" }).click();
    await poll(() => api<{ items: unknown[] }>("GET", "/notification-channels"), (r) => r.items.length === 0);
    await noViolations("settings (reminders, channels, deliveries, admin SMTP and outbound)");
  }, STEP);
});
