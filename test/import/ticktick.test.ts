// TickTick backup CSV import through the HTTP stack (preview → token → import), on the committed
// fixtures (test/fixtures/import/README.md says what each is modelled on). Run under the server
// TZ of the process and again under TZ=America/New_York (package.json "test"): dates are read in
// each row's own zone, so the expectations below hold under both.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { dump, FixedClock, makeTestApp, rejected, setupAdmin, signedInUser, type TestApp, type TestClient } from "../helpers/app";
import { count, fixture, importFile, previewFile, tasksByTitle } from "./import-helpers";

const NOW = new Date("2026-11-26T12:00:00.000Z");

describe("TickTick 7.2 backup (25 columns, BOM, CRLF)", () => {
  let app: TestApp;
  let c: TestClient;
  let previewJson = "";
  // A fresh copy per test: bun's toMatchObject leaves its matchers in the object it was given.
  const pv = () => JSON.parse(previewJson);
  let result: any;
  beforeAll(async () => {
    app = makeTestApp({ clock: new FixedClock(NOW) });
    c = await setupAdmin(app, { timezone: "America/Sao_Paulo" });
    const r = await importFile(app, c, "ticktick", fixture("ticktick-7.2.csv"), "TickTick-backup.csv");
    previewJson = JSON.stringify(r.preview);
    result = r.result;
  }, 60_000);
  afterAll(() => app.close());

  test("preview counts what is created, and the import creates exactly that", () => {
    const counts = { folders: 2, lists: 2, tasks: 7, subtasks: 3, tags: 4, recurrences: 2, memos: 1, reminders: 3 };
    expect(pv().counts).toEqual(counts);
    expect(pv().format).toBe("ticktick");
    expect(Date.parse(pv().expires_at) - NOW.getTime()).toBe(15 * 60 * 1000);
    expect(result).toEqual({ format: "ticktick", counts });
    expect(count(app, "folders")).toBe(2);
    expect(count(app, "lists")).toBe(3); // the inbox and two imported lists
    expect(count(app, "tasks")).toBe(10);
    expect(count(app, "memos")).toBe(1);
    expect(count(app, "recurrences")).toBe(2);
  });

  test("folders and lists by name; Inbox is the user's inbox", () => {
    const t = tasksByTitle(app);
    expect(t.get("Water ferns")).toMatchObject({ list: "Chores", folder: "Home" });
    expect(t.get("Ship invoice export")).toMatchObject({ list: "Sprint", folder: "Work" });
    const inbox = app.db.sqlite.query<{ name: string }, []>("SELECT name FROM lists WHERE is_inbox = 1").get()!.name;
    expect(t.get("Trip packing")!.list).toBe(inbox);
  });

  test("an all-day date is the date in the row's zone; a timed one keeps its instant", () => {
    const t = tasksByTitle(app);
    // 2026-11-23T23:00Z is midnight of the 24th in Vienna.
    expect(t.get("Water ferns")!.due_at).toBe("2026-11-24");
    // 15:00Z is midnight of 1 December in Tokyo.
    expect(t.get("Pay rent")!.due_at).toBe("2026-12-01");
    expect(t.get("Trip packing")!.due_at).toBe("2026-12-01T14:30:00.000Z");
  });

  test("Repeat becomes a recurrence in the row's zone; TickTick-only rules are dropped and reported", () => {
    const t = tasksByTitle(app);
    expect(t.get("Water ferns")).toMatchObject({ rec_kind: "rrule", rrule: "FREQ=WEEKLY;BYDAY=TU", rec_tz: "Europe/Vienna" });
    expect(t.get("Quarterly report")).toMatchObject({ rrule: "FREQ=MONTHLY;INTERVAL=3;BYMONTHDAY=-1", rec_tz: "Europe/Vienna" });
    expect(t.get("Pay rent")!.rrule).toBeNull();
    expect(t.get("Stand-up notes")!.rrule).toBeNull();
    const skipped = pv().skipped as { line: number; item: string; reason: string }[];
    expect(skipped.find((s) => s.item === "Pay rent")).toMatchObject({ line: 17, reason: expect.stringContaining("ERULE") });
    expect(skipped.find((s) => s.item === "Stand-up notes")).toMatchObject({ line: 18, reason: expect.stringContaining("TT_") });
  });

  test("priority 0/1/3/5 → 0/1/2/3; tags split and trimmed", () => {
    const t = tasksByTitle(app);
    expect(t.get("Trip packing")!.priority).toBe(3);
    expect(t.get("Water ferns")!.priority).toBe(2);
    expect(t.get("Ship invoice export")!.priority).toBe(1);
    expect(t.get("Old idea")!.priority).toBe(0);
    expect(t.get("Water ferns")!.tags).toBe("plants,weekly");
  });

  test("status: completed keeps its completion time; won't do is completed and reported", () => {
    const t = tasksByTitle(app);
    expect(t.get("Ship invoice export")).toMatchObject({ completed: 1, completed_at: "2026-09-04T16:20:00.000Z" });
    expect(t.get("Old idea")!.completed).toBe(1);
    expect(pv().changed).toContainEqual({ line: 14, item: "Old idea", what: expect.stringContaining("won't do") });
    expect(t.get("Water ferns")!.completed).toBe(0);
  });

  test("parentId makes a subtask (child row before its parent); checklist items become subtasks", () => {
    const t = tasksByTitle(app);
    expect(t.get("Repot the cactus")!.parent).toBe("Water ferns");
    expect(t.get("Charger")).toMatchObject({ parent: "Trip packing", completed: 0 });
    expect(t.get("Passport")).toMatchObject({ parent: "Trip packing", completed: 1 });
    expect(t.get("Trip packing")!.description).toBe("Leave keys with neighbour");
  });

  test("a NOTE becomes a memo; kanban columns are reported as skipped", () => {
    const memo = app.db.sqlite.query<{ content: string; created_at: string }, []>("SELECT content, created_at FROM memos").get()!;
    expect(memo).toEqual({ content: "Wifi password hint\n\nask the router", created_at: "2026-08-08T08:08:00.000Z" });
    const skipped = pv().skipped as { line?: number; item: string; reason: string }[];
    expect(skipped.filter((s) => s.reason.includes("reminder"))).toEqual([]);
    expect(skipped).toContainEqual({ line: 15, item: "Column Name", reason: expect.stringContaining("kanban") });
  });

  test("reminders: a timed task's -PT30M and PT0S are before_due 30 and 0; a repeating all-day task's P0DT8H0M0S counts from the reminder time (another zone: said so)", async () => {
    const t = tasksByTitle(app);
    const rem = async (title: string) => ((await c.get(`/api/v1/tasks/${t.get(title)!.id}/reminders`)).body.items as Record<string, unknown>[]).map((r) => [r.kind, r.minutes_before, r.at]);
    expect(await rem("Trip packing")).toEqual([
      ["before_due", 30, null],
      ["before_due", 0, null],
    ]);
    // 08:00 Vienna on the day = 60 min before the user's 09:00 (counted in the user's zone, Sao Paulo).
    expect(await rem("Water ferns")).toEqual([["before_due", 60, null]]);
    expect(pv().changed).toContainEqual({ line: 9, item: "Water ferns", what: expect.stringContaining("counted in your time zone (America/Sao_Paulo)") });
  });

  test("the same file again creates nothing and answers the same counts", async () => {
    const before = dump(app.db, ["audit_logs", "sessions", "__drizzle_migrations", "import_tokens"]);
    const again = await importFile(app, c, "ticktick", fixture("ticktick-7.2.csv"));
    expect(again.result).toEqual({ format: "ticktick", counts: result.counts, already_imported: true });
    expect(dump(app.db, ["audit_logs", "sessions", "__drizzle_migrations", "import_tokens"])).toEqual(before);
  });

  test("a used token is 409 token_consumed", async () => {
    const p = await previewFile(app, c, "ticktick", fixture("ticktick-7.2.csv"));
    expect((await c.post("/api/v1/import", { import_token: p.json.import_token })).status).toBe(200);
    await rejected(app, () => c.post("/api/v1/import", { import_token: p.json.import_token }), 409, "token_consumed");
  });

  test("the import is audited", () => {
    const n = app.db.sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM audit_logs WHERE action = 'imported'").get()!.n;
    expect(n).toBe(1);
  });
});

describe("TickTick 7.1 backup (24 columns, LF, bare empty cells)", () => {
  let app: TestApp;
  let preview: any;
  beforeAll(async () => {
    app = makeTestApp({ clock: new FixedClock(NOW) });
    const c = await setupAdmin(app, { timezone: "America/Sao_Paulo" });
    ({ preview } = await importFile(app, c, "ticktick", fixture("ticktick-7.1.csv")));
  }, 60_000);
  afterAll(() => app.close());

  test("counts, with a grandchild flattened and a duplicate tag folded", () => {
    expect(preview.counts).toEqual({ folders: 1, lists: 1, tasks: 4, subtasks: 2, tags: 1, recurrences: 1, memos: 0, reminders: 0 });
    const t = tasksByTitle(app);
    expect(t.get("Buy oat milk")!.parent).toBe("Weekly shop");
    expect(t.get("Pick the ripe ones")!.parent).toBe("Weekly shop");
    expect(preview.changed).toContainEqual({ line: 10, item: "Pick the ripe ones", what: expect.stringContaining("more than one level") });
    expect(t.get("Buy oat milk")!.tags).toBe("shopping");
  });

  test("all-day dates in Berlin and Shanghai; Status 1 is completed; a multi-line title is one line", () => {
    const t = tasksByTitle(app);
    expect(t.get("Weekly shop")).toMatchObject({ due_at: "2025-03-08", rrule: "FREQ=WEEKLY;BYDAY=SA", description: 'A "big" shop, with commas' });
    expect(t.get("Call the bank about the card")).toMatchObject({ due_at: "2025-08-04", completed: 1, completed_at: "2025-08-02T10:00:00.000Z" });
  });

  test("a space-separated time without offset is UTC; an empty Timezone is reported once", () => {
    const t = tasksByTitle(app);
    expect(t.get("Dentist")!.due_at).toBe("2025-09-10T07:30:00.000Z");
    expect(preview.changed).toContainEqual({ line: 13, item: "Timezone", what: "empty: dates read in your time zone (America/Sao_Paulo)" });
  });

  test("open with a completion time (reopened in TickTick) stays open and is reported", () => {
    expect(tasksByTitle(app).get("Reopened task")!.completed).toBe(0);
    expect(preview.changed).toContainEqual({ line: 14, item: "Reopened task", what: expect.stringContaining("reopened") });
  });
});

describe("TickTick: names, bad files, tokens", () => {
  let app: TestApp;
  let clock: FixedClock;
  let c: TestClient;
  const header =
    '"Folder Name","List Name","Title","Kind","Tags","Content","Is Check list","Start Date","Due Date","Reminder","Repeat","Priority","Status","Created Time","Completed Time","Order","Timezone","Is All Day","Is Floating","Column Name","Column Order","View Mode","taskId","parentId"\n';
  const row = (cells: Partial<Record<string, string>>) => {
    const names = header.trim().split(",").map((h) => JSON.parse(h) as string);
    return names.map((n) => `"${(cells[n] ?? "").replace(/"/g, '""')}"`).join(",") + "\n";
  };
  beforeAll(async () => {
    clock = new FixedClock(NOW);
    app = makeTestApp({ clock });
    c = await setupAdmin(app);
  }, 60_000);
  afterAll(() => app.close());

  test("a list name already used gets ' (imported)'", async () => {
    expect((await c.post("/api/v1/lists", { name: "Errands" })).status).toBe(201);
    await importFile(app, c, "ticktick", `"Version: 7.1"\n${header}${row({ "List Name": "Errands", Title: "Post the letter" })}`);
    expect(tasksByTitle(app).get("Post the letter")!.list).toBe("Errands (imported)");
  });

  test("a completed row of a repeating task keeps no repeat (a past occurrence), and says so", async () => {
    const file = `${header}${row({ "List Name": "Rep", Title: "Done weekly", "Due Date": "2026-11-02T09:00:00+0000", Repeat: "FREQ=WEEKLY", Status: "2", Timezone: "Europe/Paris" })}`;
    const r = await importFile(app, c, "ticktick", file);
    expect(r.preview.skipped).toEqual([{ line: 2, item: "Done weekly", reason: "repeat dropped: the task is completed (a past occurrence)" }]);
    expect(tasksByTitle(app).get("Done weekly")).toMatchObject({ completed: 1, rrule: null });
  });

  test("subtasks above their parent in the file: linked, placed by Order, a subtask's repeat dropped and said in its row's place", async () => {
    // The import writes rows in the file's order (read again, one at a time): a subtask is written
    // before its parent, whose id is made first; the foreign keys are checked at the commit.
    const due = "2026-12-01T09:00:00+0000";
    const file =
      header +
      row({ "List Name": "Tree", Title: "Child late", taskId: "c1", parentId: "p1", Order: "20", Tags: "x".repeat(70) }) +
      row({ "List Name": "Tree", Title: "Child early", taskId: "c2", parentId: "p1", Order: "10", "Due Date": due, Repeat: "FREQ=DAILY", Timezone: "UTC" }) +
      row({ "List Name": "Tree", Title: "Parent", taskId: "p1", Order: "5" }) +
      row({ "List Name": "Tree", Title: "Grandchild", taskId: "g1", parentId: "c2", Order: "1" }) +
      row({ "List Name": "Tree", Title: "First", taskId: "t0", Order: "1", "Due Date": due, Repeat: "FREQ=WEEKLY", Status: "2", Timezone: "UTC" });
    const r = await importFile(app, c, "ticktick", file);
    expect(r.preview.counts).toMatchObject({ lists: 1, tasks: 2, subtasks: 3, recurrences: 0 });
    expect(r.result.counts).toEqual(r.preview.counts);
    const t = tasksByTitle(app);
    expect(["Child early", "Child late", "Grandchild"].map((n) => t.get(n)!.parent)).toEqual(["Parent", "Parent", "Parent"]);
    // Under the parent by Order: Grandchild (1), Child early (10), Child late (20); in the list: First (1), Parent (5).
    expect(["Grandchild", "Child early", "Child late"].map((n) => t.get(n)!.position)).toEqual([0, 1, 2]);
    expect([t.get("First")!.position, t.get("Parent")!.position, t.get("Parent")!.parent]).toEqual([0, 1, null]);
    expect(t.get("Child early")!.rrule).toBeNull();
    // The row checks' notes in file order, the repeat notes among them.
    expect(r.preview.skipped).toEqual([
      { line: 2, item: "Child late", reason: expect.stringContaining("is longer than") },
      { line: 3, item: "Child early", reason: "repeat dropped: only top-level tasks recur; this task is a subtask of task p1" },
      { line: 6, item: "First", reason: "repeat dropped: the task is completed (a past occurrence)" },
    ]);
    expect(r.preview.changed).toContainEqual({ line: 5, item: "Grandchild", what: expect.stringContaining("more than one level") });
  });

  test("a file without the header row is 422 import_invalid naming line 1, nothing written", async () => {
    const r = await rejected(app, async () => toResponse(await previewFile(app, c, "ticktick", "Title,Due\nx,y\n")), 422, "import_invalid");
    expect(r.body.errors[0]).toEqual({ path: "line 1", message: expect.stringContaining("List Name") });
  });

  test("bad values are listed with the line their row starts on; nothing is staged", async () => {
    const text =
      `"Date: x"\n"Status: \n0 Normal"\n${header}` +
      row({ "List Name": "A", Title: "multi\nline", Priority: "p1" }) +
      row({ "List Name": "A", Title: "b", Status: "9" }) +
      row({ "List Name": "A", Title: "c", "Due Date": "2026-02-30T10:00:00+0000" });
    const r = await rejected(app, async () => toResponse(await previewFile(app, c, "ticktick", text)), 422, "import_invalid");
    expect(r.body.errors).toEqual([
      { path: "line 5", message: 'Priority "p1" is not 0, 1, 3 or 5' },
      { path: "line 7", message: 'Status "9" is not 0, 1, 2 or -1' },
      { path: "line 8", message: 'Due Date "2026-02-30T10:00:00+0000" is not a date-time' },
    ]);
  });

  test("a CSV syntax error names its line; a file that is not UTF-8 is refused", async () => {
    const r = await rejected(app, async () => toResponse(await previewFile(app, c, "ticktick", `${header}"A","unterminated\n`)), 422, "import_invalid");
    expect(r.body.errors[0].path).toBe("line 2");
    const latin1 = new Uint8Array([...new TextEncoder().encode(header), 0x22, 0xe9, 0x22, 0x0a]);
    const r2 = await rejected(app, async () => toResponse(await previewFile(app, c, "ticktick", latin1)), 422, "import_invalid");
    expect(r2.body.errors[0].message).toContain("UTF-8");
  });

  test("no file field is 422 validation_failed; an unknown format is 422", async () => {
    const { multipart, rawRequest } = await import("../helpers/multipart");
    const { body, contentType } = multipart([{ name: "other", data: "x" }]);
    const r = await rawRequest(app, c, "POST", "/api/v1/import/preview?format=ticktick", { body, headers: { "content-type": contentType } });
    expect([r.status, r.json.code]).toEqual([422, "validation_failed"]);
    const r2 = await previewFile(app, c, "remember-the-milk", "x");
    expect([r2.status, r2.json.code]).toEqual([422, "validation_failed"]);
  });

  test("a token is bound to its user and expires after 15 minutes", async () => {
    const file = `${header}${row({ "List Name": "L", Title: "Token test" })}`;
    const p = await previewFile(app, c, "ticktick", file);
    const bob = await signedInUser(app, c, "bob");
    await rejected(app, () => bob.post("/api/v1/import", { import_token: p.json.import_token }), 422, "token_invalid");
    clock.advance(15 * 60 * 1000);
    await rejected(app, () => c.post("/api/v1/import", { import_token: p.json.import_token }), 422, "token_invalid");
    await rejected(app, () => c.post("/api/v1/import", { import_token: "nope" }), 422, "token_invalid");
  });

  test("an expired preview's staged file is removed by the next preview", async () => {
    const { readdirSync } = await import("node:fs");
    const staging = `${app.dir}/import/staging`;
    const p = await previewFile(app, c, "ticktick", `${header}${row({ "List Name": "L", Title: "Staged" })}`);
    expect(p.status).toBe(200);
    const before = readdirSync(staging);
    expect(before.length).toBeGreaterThan(0);
    clock.advance(15 * 60 * 1000);
    await previewFile(app, c, "ticktick", `${header}${row({ "List Name": "L", Title: "Staged again" })}`);
    expect(readdirSync(staging).filter((f) => before.includes(f))).toEqual([]);
  });

  test("at most 5 previews wait at once: 429 quota_exceeded", async () => {
    clock.advance(15 * 60 * 1000);
    const file = `${header}${row({ "List Name": "L", Title: "Quota" })}`;
    for (let i = 0; i < 5; i++) expect((await previewFile(app, c, "ticktick", file)).status).toBe(200);
    const r = await previewFile(app, c, "ticktick", file);
    expect([r.status, r.json.code, r.headers.get("retry-after")]).toEqual([429, "quota_exceeded", "60"]);
    clock.advance(15 * 60 * 1000);
    expect((await previewFile(app, c, "ticktick", file)).status).toBe(200);
  });

  test("a file over 64 MiB is 413 while reading, nothing written", async () => {
    const big = new Uint8Array(64 * 1024 * 1024 + 1).fill(0x41);
    await rejected(app, async () => toResponse(await previewFile(app, c, "ticktick", big)), 413, "payload_too_large");
  }, 60_000);

  test("a one-byte change is a new file: its own preview, imported again", async () => {
    const file = `${header}${row({ "List Name": "Twice", Title: "Digest test" })}`;
    await importFile(app, c, "ticktick", file);
    const again = await importFile(app, c, "ticktick", `${file}\n`);
    expect(again.result.already_imported).toBeUndefined();
    expect(app.db.sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM tasks WHERE title = 'Digest test'").get()!.n).toBe(2);
  });
});

describe("the ledger and a replace restore", () => {
  test("after a replace restore empties the account, the same file imports again", async () => {
    const app = makeTestApp({ clock: new FixedClock(NOW) });
    try {
      const c = await setupAdmin(app);
      const file = fixture("ticktick-7.1.csv");
      await importFile(app, c, "ticktick", file);
      const restored = await c.post("/api/v1/restore?mode=replace", { format: "app-legacy", version: 1 });
      expect(restored.status).toBe(200);
      expect(count(app, "tasks")).toBe(0);
      const again = await importFile(app, c, "ticktick", file);
      expect(again.result.already_imported).toBeUndefined();
      expect(count(app, "tasks")).toBe(6);
    } finally {
      app.close();
    }
  });
});

/** A RawResponse as rejected() reads it. */
function toResponse(r: { status: number; headers: Headers; json: any }) {
  return { status: r.status, headers: r.headers, text: JSON.stringify(r.json), body: r.json };
}
