// Shared lists in the web app (issue 19), with TWO browsers as two users of one server (dist/app
// when up to date, else `bun src/main.ts`): alice shares "Groceries" from its share dialog, bob
// accepts from the invitations page (its count in his sidebar), bob's new task appears in alice's
// open list without a reload (the EventSource), alice makes bob a viewer and his list loses every
// edit control, then alice removes him and the list leaves his sidebar; a second round covers the
// member's "Leave list" and the ownership transfer. axe-core on the dialog and the invitations page,
// light and dark, desktop and phone. Skipped, with a message, when /usr/bin/chromium is missing.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { en as t } from "../../web/src/i18n";
import { apiFromPage, axeViolations, DESKTOP, firstRunSetup, hasChromium, launchBrowser, PHONE, poll, screenshot, startServer, watchErrors, type Server } from "./harness";

const STEP = 180_000;
const ALICE = { username: "alice", password: "a long enough password" };
const BOB = { username: "bob", password: "another long password" };
let server: Server;
let aliceBrowser: Awaited<ReturnType<typeof launchBrowser>>;
let bobBrowser: Awaited<ReturnType<typeof launchBrowser>>;
let alice: Page;
let bob: Page;
let aliceErrors: string[] = [];
let bobErrors: string[] = [];
let groceries: { id: string; name: string };

interface ListView {
  id: string;
  name: string;
  role: string;
  member_count: number;
}
interface TaskView {
  id: string;
  title: string;
  version: number;
  created_by: { username: string } | null;
}

async function noViolations(page: Page, where: string): Promise<void> {
  const v = await axeViolations(page);
  expect({ where, violations: v.flatMap((x) => x.nodes.map((n) => `${x.id} (${x.impact}): ${n}`)) }).toEqual({ where, violations: [] });
}

/** axe in both colour schemes at desktop and phone size, then back to light desktop. */
async function everyLook(page: Page, name: string, ready: () => Promise<unknown>): Promise<void> {
  for (const scheme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    for (const [size, viewport] of [["desktop", DESKTOP], ["phone", PHONE]] as const) {
      await page.setViewportSize(viewport);
      await ready();
      await screenshot(page, `sharing-${name}-${scheme}-${size}`);
      await noViolations(page, `${name}, ${scheme}, ${size}`);
    }
  }
  await page.emulateMedia({ colorScheme: "light" });
  await page.setViewportSize(DESKTOP);
}

const sidebarList = (page: Page, name: string) => page.locator(`.sidebar a[data-list="${name}"]`);
const taskRow = (page: Page, title: string) => page.locator("li.task", { hasText: title });
const shareDialog = (page: Page) => page.getByRole("dialog", { name: t.sharing.shareTitle(groceries.name) });
const quickAdd = (page: Page) => page.getByLabel(t.tasks.quickAddLabel);

async function signIn(page: Page, who: { username: string; password: string }): Promise<void> {
  await page.goto("/");
  await page.getByRole("button", { name: t.login.submit }).waitFor();
  await page.getByLabel(t.fields.username).fill(who.username);
  await page.getByLabel(t.fields.password).fill(who.password);
  await page.getByRole("button", { name: t.login.submit }).click();
  await quickAdd(page).waitFor();
}

async function openShareDialog(): Promise<void> {
  if (await shareDialog(alice).isVisible()) return;
  await alice.getByRole("button", { name: t.sharing.share, exact: true }).click();
  await shareDialog(alice).getByRole("heading", { name: t.sharing.members }).waitFor();
}

/** alice invites bob from the dialog; bob accepts on his invitations page. */
async function inviteAndAccept(role: "editor" | "viewer"): Promise<void> {
  await openShareDialog();
  const dlg = shareDialog(alice);
  await dlg.getByLabel(t.fields.username).fill("BOB"); // the look-up is case-insensitive
  await dlg.locator("form.invite-form").getByLabel(t.sharing.role).selectOption(role);
  await dlg.getByRole("button", { name: t.sharing.invite }).click();
  await dlg.getByRole("status").filter({ hasText: t.sharing.invited("Bob (bob)") }).waitFor();
  await dlg.locator(".share-pending li", { hasText: "bob" }).waitFor();
  await dlg.getByRole("button", { name: t.close }).click();

  await bob.goto("/tasks");
  const link = bob.locator(".sidebar a.invitations-link");
  await link.waitFor();
  expect(await link.locator(".count").textContent()).toBe("1");
  await link.click();
  await bob.getByRole("heading", { name: t.sharing.invitations, level: 1 }).waitFor();
  await bob.getByRole("button", { name: t.sharing.acceptList(groceries.name) }).click();
  await bob.waitForURL(`**/tasks?list=${groceries.id}`);
  await bob.locator(".list-sharing", { hasText: t.sharing.sharedBy("alice") }).waitFor();
}

describe.skipIf(!hasChromium)("shared lists in the web app, two users (issue 19)", () => {
  beforeAll(async () => {
    server = await startServer();
    aliceBrowser = await launchBrowser(server.base);
    bobBrowser = await launchBrowser(server.base);
    alice = aliceBrowser.context.pages()[0] ?? (await aliceBrowser.context.newPage());
    bob = bobBrowser.context.pages()[0] ?? (await bobBrowser.context.newPage());
    aliceErrors = watchErrors(alice);
    bobErrors = watchErrors(bob);
    await firstRunSetup(alice, ALICE);
    await apiFromPage(alice, "POST", "/users", { username: BOB.username, password: BOB.password, display_name: "Bob" });
    groceries = await apiFromPage<{ id: string; name: string }>(alice, "POST", "/lists", { name: "Groceries" });
    await signIn(bob, BOB);
  }, STEP);
  afterAll(async () => {
    await aliceBrowser?.close();
    await bobBrowser?.close();
    await server?.stop();
  }, STEP);

  test("alice invites bob from the share dialog; an unknown username is said plainly; axe on the dialog; bob's open page shows the invitation and its withdrawal without a reload", async () => {
    await bob.goto("/tasks");
    await bob.locator(".sidebar").waitFor();
    await alice.goto(`/tasks?list=${groceries.id}`);
    await openShareDialog();
    const dlg = shareDialog(alice);
    await dlg.locator("li.person", { hasText: "alice" }).getByText(t.sharing.roles.owner).waitFor();
    await dlg.getByLabel(t.fields.username).fill("nobody");
    await dlg.getByRole("button", { name: t.sharing.invite }).click();
    await dlg.getByRole("status").filter({ hasText: t.sharing.noSuchUser("nobody") }).waitFor();
    expect((await apiFromPage<{ items: unknown[] }>(alice, "GET", `/lists/${groceries.id}/invitations`)).items).toEqual([]);

    await dlg.getByLabel(t.fields.username).fill("bob");
    await dlg.getByRole("button", { name: t.sharing.invite }).click();
    await dlg.locator(".share-pending li", { hasText: "bob" }).waitFor();
    const pending = await apiFromPage<{ items: { id: string; role: string; invitee: { username: string } }[] }>(alice, "GET", `/lists/${groceries.id}/invitations`);
    expect(pending.items.map((i) => [i.invitee.username, i.role])).toEqual([["bob", "editor"]]);
    await everyLook(alice, "dialog", () => dlg.locator(".share-pending li", { hasText: "bob" }).waitFor());
    // bob's page, open since before the invitation, counts it (the event stream; no reload, no focus change).
    await bob.locator(".sidebar a.invitations-link .count", { hasText: "1" }).waitFor();

    // Cancelled from the dialog: bob's count goes back to nothing, on his open page too.
    await dlg.getByRole("button", { name: t.sharing.cancelInvitation("Bob (bob)") }).click();
    await dlg.getByText(t.sharing.noPending).waitFor();
    expect((await apiFromPage<{ items: unknown[] }>(bob, "GET", "/invitations")).items).toEqual([]);
    await bob.locator(".sidebar a.invitations-link").waitFor({ state: "detached" });
  }, STEP);

  test("bob accepts in his invitations page (axe), adds a task, and it appears in alice's open list without a reload", async () => {
    await openShareDialog();
    const dlg = shareDialog(alice);
    await dlg.getByLabel(t.fields.username).fill("bob");
    await dlg.getByRole("button", { name: t.sharing.invite }).click();
    await dlg.locator(".share-pending li", { hasText: "bob" }).waitFor();
    await dlg.getByRole("button", { name: t.close }).click();

    await bob.goto("/tasks");
    const link = bob.locator(".sidebar a.invitations-link");
    await link.waitFor();
    expect(await link.locator(".count").textContent()).toBe("1");
    await link.click();
    await bob.getByRole("heading", { name: t.sharing.invitations, level: 1 }).waitFor();
    await bob.getByText(t.sharing.invitationFrom("alice", t.sharing.roles.editor)).waitFor();
    await everyLook(bob, "invitations", () => bob.getByRole("button", { name: t.sharing.acceptList(groceries.name) }).waitFor());
    await bob.getByRole("button", { name: t.sharing.acceptList(groceries.name) }).click();
    await bob.waitForURL(`**/tasks?list=${groceries.id}`);
    await bob.locator(".list-sharing", { hasText: `${t.sharing.sharedBy("alice")} · ${t.sharing.roles.editor}` }).waitFor();
    await sidebarList(bob, "Groceries").locator(".shared-badge").waitFor();
    expect(await bob.locator(".sidebar a.invitations-link").count()).toBe(0);

    // alice's page is open on the list; nothing reloads it from here on.
    await alice.locator(".list-sharing", { hasText: t.sharing.sharedWith(2) }).waitFor(); // the membership event re-read her lists
    await alice.evaluate(() => ((globalThis as unknown as { __noReload: boolean }).__noReload = true));
    await quickAdd(bob).fill("Milk");
    await quickAdd(bob).press("Enter");
    await taskRow(bob, "Milk").waitFor();
    await taskRow(alice, "Milk").waitFor();
    await taskRow(alice, "Milk").getByText(t.sharing.createdBy("bob")).waitFor();
    expect(await alice.evaluate(() => (globalThis as unknown as { __noReload?: boolean }).__noReload)).toBe(true);

    // Completing and renaming by bob show too; alice's own details name who did what.
    await taskRow(bob, "Milk").getByRole("checkbox", { name: `${t.tasks.complete}: Milk` }).click();
    await poll(() => taskRow(alice, "Milk").count(), (n) => n === 0); // her list shows open tasks
    await alice.getByRole("button", { name: t.tasks.filterAll, exact: true }).click();
    await taskRow(alice, "Milk").click();
    const details = alice.getByRole("dialog", { name: t.tasks.details });
    await details.getByText(`${t.sharing.createdBy("bob")} · ${t.sharing.completedBy("bob")}`).waitFor();
    // bob renames it while alice's dialog is open and untouched: the dialog shows the new title at once.
    const open = (await apiFromPage<{ items: TaskView[] }>(bob, "GET", `/tasks?list_id=${groceries.id}&completed=true`)).items[0]!;
    await apiFromPage(bob, "PATCH", `/tasks/${open.id}`, { title: "Oat milk", version: open.version });
    await poll(() => details.getByLabel(t.fields.title).inputValue(), (v) => v === "Oat milk");
    await details.getByRole("button", { name: t.close }).click();
    await alice.getByRole("button", { name: t.tasks.filterOpen, exact: true }).click();
    const milk = (await apiFromPage<{ items: TaskView[] }>(alice, "GET", `/tasks?list_id=${groceries.id}&completed=true`)).items[0]!;
    expect(milk.created_by?.username).toBe("bob");
  }, STEP);

  test("alice makes bob a viewer: his open list loses every edit control at once; a task dialog is read-only", async () => {
    const bread = await apiFromPage<{ id: string }>(alice, "POST", "/tasks", { title: "Bread", list_id: groceries.id });
    await apiFromPage(bob, "POST", "/tags", { name: "bobs-tag", color: "#255ccc" });
    await taskRow(bob, "Bread").waitFor(); // live, in bob's open list
    await openShareDialog();
    const dlg = shareDialog(alice);
    // The owner's controls on a member's row (role, make owner, remove), under axe too.
    await everyLook(alice, "dialog-member", () => dlg.getByRole("button", { name: t.sharing.makeOwner("Bob (bob)") }).waitFor());
    await dlg.getByLabel(t.sharing.roleOf("Bob (bob)")).selectOption("viewer");
    await poll(async () => (await apiFromPage<{ items: ListView[] }>(bob, "GET", "/lists")).items.find((l) => l.id === groceries.id)?.role, (r) => r === "viewer");
    await dlg.getByRole("button", { name: t.close }).click();

    // bob's page, without a reload: no add box, no selection, completion disabled, no rename, no drag.
    await bob.locator(".list-sharing", { hasText: t.sharing.readOnly }).waitFor();
    await screenshot(bob, "sharing-viewer-list");
    expect(await quickAdd(bob).count()).toBe(0);
    const row = taskRow(bob, "Bread");
    expect(await row.getByRole("checkbox", { name: `${t.tasks.complete}: Bread` }).isDisabled()).toBe(true);
    expect(await row.locator("input.select").count()).toBe(0);
    expect(await row.getByRole("button", { name: `${t.tasks.renameTask}: Bread` }).count()).toBe(0);
    expect(await row.getAttribute("draggable")).toBe("false");
    expect(await bob.locator(".drag-handle").count()).toBe(0);
    await row.focus();
    await bob.keyboard.press("Delete");
    await bob.keyboard.press("x");
    expect((await apiFromPage<{ items: TaskView[] }>(bob, "GET", `/tasks?list_id=${groceries.id}`)).items.map((x) => x.title)).toContain("Bread");
    // Not in "Move to" choices, nor a drop target, nor the sort (owner's) or archive.
    expect(await bob.getByRole("combobox", { name: t.planner.sort }).count()).toBe(0);
    expect(await sidebarList(bob, "Groceries").locator("..").getByRole("button", { name: `${t.archive} Groceries` }).count()).toBe(0);

    await row.click();
    const details = bob.getByRole("dialog", { name: t.tasks.details });
    await details.getByText(t.sharing.readOnly).waitFor();
    expect(await details.getByLabel(t.fields.title).getAttribute("readonly")).not.toBeNull();
    expect(await details.getByLabel(t.fields.priority).isDisabled()).toBe(true);
    expect(await details.getByRole("button", { name: t.tasks.deleteTask }).count()).toBe(0);
    expect(await details.getByLabel(t.tasks.addSubtask).count()).toBe(0);
    expect(await details.getByRole("button", { name: t.attachments.pick }).count()).toBe(0);
    // His own tags are his to set on a task he can see (sharing.md: tags stay personal).
    await details.getByRole("button", { name: "bobs-tag" }).click();
    await details.getByRole("button", { name: t.save }).click();
    await poll(async () => (await apiFromPage<{ tags: { name: string }[] }>(bob, "GET", `/tasks/${bread.id}`)).tags.map((g) => g.name), (n) => n.join() === "bobs-tag");
    expect((await apiFromPage<{ tags: unknown[] }>(alice, "GET", `/tasks/${bread.id}`)).tags).toEqual([]);
    await details.getByRole("button", { name: t.close }).click();
    await details.waitFor({ state: "detached" });

    // The members dialog is there for him, without the owner's controls.
    await bob.getByRole("button", { name: t.sharing.members, exact: true }).click();
    const members = bob.getByRole("dialog", { name: t.sharing.membersTitle("Groceries") });
    await members.locator("li.person", { hasText: "alice" }).waitFor();
    expect(await members.getByRole("combobox").count()).toBe(0);
    await members.getByRole("button", { name: t.sharing.leave }).waitFor();
    await noViolations(bob, "members dialog (viewer)");
    await members.getByRole("button", { name: t.close }).click();

    // In a smart view too, his shared task cannot be completed; his own can.
    await apiFromPage(bob, "POST", "/tasks", { title: "Own errand" });
    await bob.goto("/tasks?view=no_date");
    await bob.locator(".view-page li.task", { hasText: "Bread" }).waitFor();
    expect(await bob.locator(".view-page li.task", { hasText: "Bread" }).getByRole("checkbox").isDisabled()).toBe(true);
    expect(await bob.locator(".view-page li.task", { hasText: "Own errand" }).getByRole("checkbox").isDisabled()).toBe(false);
    await bob.goto(`/tasks?list=${groceries.id}`);
    await taskRow(bob, "Bread").waitFor();
  }, STEP);

  test("alice removes bob: the list leaves his sidebar and page without a reload", async () => {
    await openShareDialog();
    const dlg = shareDialog(alice);
    await dlg.getByRole("button", { name: t.sharing.remove("Bob (bob)") }).click();
    await alice.getByRole("dialog", { name: t.sharing.removeTitle }).getByRole("button", { name: t.sharing.removeTitle }).click();
    await poll(() => dlg.locator("li.person").count(), (n) => n === 1);
    await dlg.getByRole("button", { name: t.close }).click();

    await poll(() => sidebarList(bob, "Groceries").count(), (n) => n === 0);
    await poll(async () => new URL(bob.url()).search, (s) => !s.includes(groceries.id));
    await bob.getByText(t.sharing.gone("Groceries")).waitFor();
    expect((await apiFromPage<{ items: ListView[] }>(bob, "GET", "/lists")).items.map((l) => l.name)).not.toContain("Groceries");
    await alice.locator(".list-sharing").waitFor({ state: "detached" }); // not shared any more
  }, STEP);

  test("a member leaves from the members dialog; ownership goes to an editor", async () => {
    await inviteAndAccept("editor");
    await bob.getByRole("button", { name: t.sharing.members, exact: true }).click();
    const members = bob.getByRole("dialog", { name: t.sharing.membersTitle("Groceries") });
    await members.getByRole("button", { name: t.sharing.leave }).click();
    await bob.getByRole("dialog", { name: t.sharing.leaveTitle }).getByRole("button", { name: t.sharing.leave }).click();
    await poll(() => sidebarList(bob, "Groceries").count(), (n) => n === 0);
    await alice.locator(".list-sharing").waitFor({ state: "detached" });

    await inviteAndAccept("editor");
    await openShareDialog();
    const dlg = shareDialog(alice);
    await dlg.getByRole("button", { name: t.sharing.makeOwner("Bob (bob)") }).click();
    await alice.getByRole("dialog", { name: t.sharing.transferTitle }).getByRole("button", { name: t.sharing.transferTitle }).click();
    // alice is an editor now: her dialog becomes the members' view and her header says who owns it.
    await alice.getByRole("dialog", { name: t.sharing.membersTitle("Groceries") }).getByRole("button", { name: t.sharing.leave }).waitFor();
    await alice.getByRole("dialog", { name: t.sharing.membersTitle("Groceries") }).getByRole("button", { name: t.close }).click();
    await alice.locator(".list-sharing", { hasText: `${t.sharing.sharedBy("Bob")} · ${t.sharing.roles.editor}` }).waitFor();
    await bob.locator(".list-sharing", { hasText: t.sharing.sharedWith(2) }).waitFor();
    await bob.getByRole("button", { name: t.sharing.share, exact: true }).waitFor();
  }, STEP);

  test("no page errors in either browser", () => {
    expect(aliceErrors).toEqual([]);
    expect(bobErrors).toEqual([]);
  });
});
