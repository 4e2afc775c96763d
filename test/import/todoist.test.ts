// Todoist project CSV and backup ZIP import through the HTTP stack, on the committed fixtures
// (test/fixtures/import/README.md). DATE strings go through the quick add's parser
// (src/core/quick-add) at a pinned "now"; run under two process TZ values (package.json "test").
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { zipSync } from "fflate";
import { FixedClock, makeTestApp, rejected, setupAdmin, type TestApp, type TestClient } from "../helpers/app";
import { fixture, importFile, previewFile, tasksByTitle } from "./import-helpers";

const NOW = new Date("2026-11-26T12:00:00.000Z");

describe("a Todoist project CSV (IS_COLLAPSED header, sections, indents, labels, notes)", () => {
  let app: TestApp;
  let previewJson = "";
  const pv = () => JSON.parse(previewJson);
  beforeAll(async () => {
    app = makeTestApp({ clock: new FixedClock(NOW) });
    const c = await setupAdmin(app, { timezone: "America/Sao_Paulo" });
    previewJson = JSON.stringify((await importFile(app, c, "todoist", fixture("todoist-Household [7hQx2mPq].csv"), "Household [7hQx2mPq].csv")).preview);
  }, 60_000);
  afterAll(() => app.close());

  test("a folder per project: the project's own list and one list per section (an empty one too)", () => {
    expect(pv().counts).toEqual({ folders: 1, lists: 3, tasks: 7, subtasks: 2, tags: 3, recurrences: 3, memos: 0, reminders: 0 });
    const t = tasksByTitle(app);
    expect(t.get("Descale kettle")).toMatchObject({ list: "Household", folder: "Household" });
    expect(t.get("Rake leaves")).toMatchObject({ list: "Garden", folder: "Household" });
    const names = app.db.sqlite.query<{ name: string }, []>("SELECT name FROM lists WHERE is_inbox = 0 ORDER BY position").all().map((r) => r.name);
    expect(names).toEqual(["Household", "Garden", "Empty section"]);
  });

  test("INDENT 2 is a subtask; 3 is flattened onto the top-level task and reported", () => {
    const t = tasksByTitle(app);
    expect(t.get("Buy filter")!.parent).toBe("Descale kettle");
    expect(t.get("Check seal")!.parent).toBe("Descale kettle");
    expect(pv().changed).toContainEqual({ line: 6, item: "Check seal", what: expect.stringContaining("more than one level") });
  });

  test("@labels are tags and leave the title; an e-mail address is no label; a note joins its task's description", () => {
    const t = tasksByTitle(app);
    expect(t.get("Rake leaves")!.tags).toBe("outside,weekend");
    expect(t.get("Descale kettle")).toMatchObject({ tags: "kitchen", description: "Citric acid works\n\n---\nBought acid already" });
    expect(t.get('Call plumber, ask about "the valve"')!.description).toBe("Mail him at plumber@example.com");
  });

  test("PRIORITY 1 (p1) is high … 4 is none", () => {
    const t = tasksByTitle(app);
    expect(t.get("Rake leaves")!.priority).toBe(3);
    expect(t.get("Descale kettle")!.priority).toBe(2);
    expect(t.get("Order seeds")!.priority).toBe(1);
    expect(t.get("Buy filter")!.priority).toBe(0);
  });

  test("DATE through the quick add's parser, in the row's TIMEZONE", () => {
    const t = tasksByTitle(app);
    expect(t.get("Descale kettle")).toMatchObject({ due_at: "2027-01-05", rrule: "FREQ=WEEKLY;INTERVAL=2", rec_tz: "Europe/Lisbon" });
    expect(t.get("Rake leaves")).toMatchObject({ rec_kind: "after_completion", rec_interval: 10, rec_unit: "day" });
    // Monday 30 November, 07:00 in Denver (UTC-7).
    expect(t.get("Water the lawn")).toMatchObject({ due_at: "2026-11-30T14:00:00.000Z", rrule: "FREQ=WEEKLY;BYDAY=MO", rec_tz: "America/Denver" });
    // 09:00 Lisbon (UTC+0 in winter), the day after the import.
    expect(t.get('Call plumber, ask about "the valve"')!.due_at).toBe("2026-11-27T09:00:00.000Z");
    expect(t.get("Order seeds")!.due_at).toBe("2027-02-03");
  });

  test("a repeat that is not understood is never a one-off; relative and year-less dates are reported", () => {
    const t = tasksByTitle(app);
    expect(t.get("Prune roses")).toMatchObject({ due_at: null, rrule: null });
    expect(t.get("Sweep the patio")).toMatchObject({ due_at: null, rrule: null });
    expect(pv().skipped).toContainEqual({ line: 13, item: "Prune roses", reason: expect.stringContaining("not understood") });
    expect(pv().skipped).toContainEqual({ line: 14, item: "Sweep the patio", reason: expect.stringContaining("not understood") });
    expect(pv().changed).toContainEqual({ line: 11, item: 'Call plumber, ask about "the valve"', what: expect.stringContaining("relative") });
    expect(pv().changed).toContainEqual({ line: 10, item: "Order seeds", what: expect.stringContaining("no year") });
  });

  test("DEADLINE, DURATION and RESPONSIBLE are reported; so is the history Todoist does not export", () => {
    const skipped = pv().skipped;
    expect(skipped[0]).toEqual({ item: "completed tasks", reason: expect.stringContaining("open tasks only") });
    expect(skipped).toContainEqual({ line: 9, item: "Rake leaves", reason: expect.stringContaining("deadline") });
    expect(skipped).toContainEqual({ line: 3, item: "DURATION", reason: "durations are not kept" });
    expect(skipped).toContainEqual({ line: 9, item: "RESPONSIBLE", reason: expect.stringContaining("assignees") });
  });
});

describe("a Todoist backup ZIP", () => {
  let app: TestApp;
  let c: TestClient;
  let previewJson = "";
  beforeAll(async () => {
    app = makeTestApp({ clock: new FixedClock(NOW) });
    c = await setupAdmin(app, { timezone: "America/Sao_Paulo" });
    previewJson = JSON.stringify((await importFile(app, c, "todoist", fixture("todoist-backup.zip"), "Todoist backup.zip")).preview);
  }, 60_000);
  afterAll(() => app.close());

  test("one folder per project; Inbox is the user's inbox; other entries are ignored and reported", () => {
    const p = JSON.parse(previewJson);
    expect(p.counts).toEqual({ folders: 1, lists: 2, tasks: 4, subtasks: 1, tags: 2, recurrences: 1, memos: 0, reminders: 0 });
    expect(p.skipped).toContainEqual({ item: "Todoist backup 2026-11-20 0830 UTC/notes.txt", reason: "not a .csv file: ignored" });
    const t = tasksByTitle(app);
    const inbox = app.db.sqlite.query<{ name: string }, []>("SELECT name FROM lists WHERE is_inbox = 1").get()!.name;
    expect(t.get("Reply to Marta")).toMatchObject({ list: inbox, priority: 3, tags: "email", due_at: "2026-12-31" });
    expect(t.get("Weekly report")).toMatchObject({ list: "Work", folder: "Work", rrule: "FREQ=WEEKLY;BYDAY=FR" });
    expect(t.get("Send it")!.parent).toBe("Weekly report");
    expect(t.get("Clean up the wiki")).toMatchObject({ list: "Later", folder: "Work" });
  });

  test("the same ZIP again creates nothing", async () => {
    const again = await importFile(app, c, "todoist", fixture("todoist-backup.zip"));
    expect(again.result.already_imported).toBe(true);
    expect(app.db.sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM tasks").get()!.n).toBe(5);
  });
});

describe("bad Todoist files: 422 import_invalid, nothing written", () => {
  let app: TestApp;
  let c: TestClient;
  beforeAll(async () => {
    app = makeTestApp({ clock: new FixedClock(NOW) });
    c = await setupAdmin(app);
  }, 60_000);
  afterAll(() => app.close());
  const refuse = async (data: Uint8Array | string, name = "p.csv") => {
    const r = await rejected(
      app,
      async () => {
        const p = await previewFile(app, c, "todoist", data, name);
        return { status: p.status, headers: p.headers, text: JSON.stringify(p.json), body: p.json };
      },
      422,
      "import_invalid",
    );
    return r.body.errors as { path: string; message: string }[];
  };
  const enc = (s: string) => new TextEncoder().encode(s);

  test("no TYPE/CONTENT header; a bad PRIORITY, INDENT and TYPE name their lines", async () => {
    expect((await refuse("Title,Due\nx,y\n"))[0]).toEqual({ path: "line 1", message: expect.stringContaining("TYPE and CONTENT") });
    const errors = await refuse("TYPE,CONTENT,PRIORITY,INDENT\ntask,a,p1,1\ntask,b,4,x\nsubtask,c,4,1\n");
    expect(errors).toEqual([
      { path: "line 2", message: 'PRIORITY "p1" is not 1, 2, 3 or 4' },
      { path: "line 3", message: 'INDENT "x" is not a whole number from 1' },
      { path: "line 4", message: 'TYPE "subtask" is not task, section, note or meta' },
    ]);
  });

  test("in a ZIP, problems name the entry and the line", async () => {
    const zip = zipSync({ "b/Work [1].csv": enc("TYPE,CONTENT,PRIORITY\ntask,a,9\n") });
    expect(await refuse(zip, "backup.zip")).toEqual([{ path: "b/Work [1].csv, line 2", message: 'PRIORITY "9" is not 1, 2, 3 or 4' }]);
  });

  test("a corrupt ZIP, a ZIP without CSVs, a path that climbs out", async () => {
    const good = zipSync({ "a.csv": enc("TYPE,CONTENT\ntask,a\n") });
    expect((await refuse(good.subarray(0, good.length - 10), "x.zip"))[0]!.message).toContain("ZIP");
    expect((await refuse(zipSync({ "readme.txt": enc("hi") }), "x.zip"))[0]!.message).toContain("no .csv");
    expect((await refuse(zipSync({ "../evil.csv": enc("TYPE,CONTENT\ntask,a\n") }), "x.zip"))[0]).toEqual({ path: "../evil.csv", message: expect.stringContaining("..") });
  });

  test("a ZIP bomb is refused before it is inflated", async () => {
    const bomb = zipSync({ "bomb.csv": new Uint8Array(8 * 1024 * 1024) }, { level: 9 });
    expect((await refuse(bomb, "bomb.zip"))[0]).toEqual({ path: "bomb.csv", message: expect.stringContaining("ZIP bomb") });
  }, 30_000);
});
