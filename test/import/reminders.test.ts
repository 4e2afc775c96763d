// Reminders of imported files (TickTick's Reminder cell, iCalendar VALARM) become this app's
// reminders, written in the import's transaction and armed by the scheduler's next pass as after a
// backup restore. Run under the process's TZ and again under TZ=America/New_York (package.json
// "test"): every expectation is an instant computed in the row's or the user's zone.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { dump, FixedClock, makeTestApp, setupAdmin, type TestApp, type TestClient } from "../helpers/app";
import { importFile, previewFile, tasksByTitle } from "./import-helpers";

const NOW = new Date("2026-11-26T12:00:00.000Z");
const IGNORE = ["audit_logs", "sessions", "__drizzle_migrations"];

const header =
  '"Folder Name","List Name","Title","Kind","Tags","Content","Is Check list","Start Date","Due Date","Reminder","Repeat","Priority","Status","Created Time","Completed Time","Order","Timezone","Is All Day","Is Floating","Column Name","Column Order","View Mode","taskId","parentId"\n';
const row = (cells: Partial<Record<string, string>>) => {
  const names = header.trim().split(",").map((h) => JSON.parse(h) as string);
  return names.map((n) => `"${(cells[n] ?? "").replace(/"/g, '""')}"`).join(",") + "\n";
};
const base = { Kind: "TEXT", Priority: "0", Status: "0", Timezone: "Europe/Berlin", "Is All Day": "false" };
const twelve = Array.from({ length: 12 }, (_, i) => `TRIGGER:-PT${i + 1}M`).join(",");

// Line 1 "Version", line 2 the header, rows from line 3.
const TICKTICK =
  `"Version: 7.1"\n${header}` +
  row({ ...base, Title: "Timed", "Due Date": "2026-12-10T10:00:00+0000", Reminder: "TRIGGER:-PT30M,TRIGGER:PT0S", taskId: "a" }) + // 3
  row({ ...base, Title: "All day once", "Due Date": "2026-12-11T23:00:00+0000", "Is All Day": "true", Reminder: "TRIGGER:P0DT9H0M0S\nTRIGGER:-P1DT15H0M0S", taskId: "b" }) + // 4-5
  row({ ...base, Title: "All day daily", "Due Date": "2026-12-11T23:00:00+0000", "Is All Day": "true", Repeat: "FREQ=DAILY", Reminder: "TRIGGER:P0DT8H30M0S,TRIGGER:P0DT20H0M0S", taskId: "c" }) + // 6 (the row above spans two lines)
  row({ ...base, Title: "After due", "Due Date": "2026-12-10T10:00:00+0000", Reminder: "TRIGGER:PT15M", taskId: "d" }) + // 7
  row({ ...base, Title: "No date", Reminder: "TRIGGER:-PT5M", taskId: "e" }) + // 8
  row({ ...base, Title: "Twelve", "Due Date": "2026-12-10T10:00:00+0000", Reminder: twelve, taskId: "f" }) + // 9
  row({ ...base, Title: "Garbage", "Due Date": "2026-12-10T10:00:00+0000", Reminder: "soon", taskId: "g" }); // 10

const ICS = [
  "BEGIN:VCALENDAR",
  "VERSION:2.0",
  "PRODID:-//test//EN",
  "BEGIN:VTODO", // 4
  "UID:ics-1",
  "SUMMARY:Ics timed",
  "DUE;TZID=Europe/Berlin:20261210T100000",
  "BEGIN:VALARM",
  "ACTION:DISPLAY",
  "TRIGGER;RELATED=END:-PT15M",
  "END:VALARM",
  "BEGIN:VALARM",
  "ACTION:DISPLAY",
  "TRIGGER;VALUE=DATE-TIME:20261209T080000Z",
  "END:VALARM",
  "END:VTODO",
  "BEGIN:VTODO", // 17
  "UID:ics-2",
  "SUMMARY:Ics from start",
  "DTSTART;TZID=Europe/Berlin:20261210T090000",
  "DUE;TZID=Europe/Berlin:20261210T100000",
  "BEGIN:VALARM",
  "ACTION:DISPLAY",
  "TRIGGER:-PT30M",
  "END:VALARM",
  "END:VTODO",
  "BEGIN:VTODO", // 27
  "UID:ics-3",
  "SUMMARY:Ics all day",
  "DUE;VALUE=DATE:20261212",
  "BEGIN:VALARM",
  "ACTION:DISPLAY",
  "TRIGGER;RELATED=END:PT9H",
  "END:VALARM",
  "END:VTODO",
  "BEGIN:VTODO", // 36
  "UID:ics-4",
  "SUMMARY:Ics no date",
  "BEGIN:VALARM",
  "ACTION:DISPLAY",
  "TRIGGER:-PT5M",
  "END:VALARM",
  "BEGIN:VALARM",
  "ACTION:DISPLAY",
  "TRIGGER;RELATED=END:PT5M",
  "END:VALARM",
  "END:VTODO",
  "END:VCALENDAR",
  "",
].join("\r\n");

type Rem = { kind: string; minutes_before: number | null; at: string | null; next_fire_at: string | null };

describe("imported reminders", () => {
  let app: TestApp;
  let c: TestClient;
  let tt: { preview: any; result: any };
  let ics: { preview: any; result: any };
  beforeAll(async () => {
    app = makeTestApp({ clock: new FixedClock(NOW) });
    c = await setupAdmin(app, { timezone: "Europe/Berlin" });
    tt = await importFile(app, c, "ticktick", TICKTICK, "TickTick.csv");
    ics = await importFile(app, c, "ics", ICS, "tasks.ics");
    await app.handle.scheduler.runDue();
  }, 60_000);
  afterAll(() => app.close());

  const rems = async (title: string): Promise<Rem[]> => {
    const r = await c.get(`/api/v1/tasks/${tasksByTitle(app).get(title)!.id}/reminders`);
    expect(r.status).toBe(200);
    return (r.body.items as Rem[]).map(({ kind, minutes_before, at, next_fire_at }) => ({ kind, minutes_before, at, next_fire_at }));
  };

  test("counts are what was created (preview and import alike)", () => {
    expect(tt.preview.counts.reminders).toBe(2 + 2 + 2 + 10);
    expect(tt.result.counts.reminders).toBe(16);
    expect(ics.preview.counts.reminders).toBe(4);
    expect(ics.result.counts.reminders).toBe(4);
  });

  test("TickTick timed task: -PT30M and PT0S are before_due 30 and 0, armed before the due time", async () => {
    expect(await rems("Timed")).toEqual([
      { kind: "before_due", minutes_before: 30, at: null, next_fire_at: "2026-12-10T09:30:00.000Z" },
      { kind: "before_due", minutes_before: 0, at: null, next_fire_at: "2026-12-10T10:00:00.000Z" },
    ]);
  });

  test("TickTick all-day task that does not repeat: the trigger's instant in the row's zone is an `at` reminder", async () => {
    // 2026-12-12 (Berlin): 09:00 that day; -P1DT15H from 00:00 = 09:00 on 12-10 (Berlin, UTC+1).
    expect(await rems("All day once")).toEqual([
      { kind: "at", minutes_before: null, at: "2026-12-12T08:00:00.000Z", next_fire_at: "2026-12-12T08:00:00.000Z" },
      { kind: "at", minutes_before: null, at: "2026-12-10T08:00:00.000Z", next_fire_at: "2026-12-10T08:00:00.000Z" },
    ]);
  });

  test("TickTick repeating all-day task: before_due from the reminder time when exact, else the nearest and a change note", async () => {
    // reminder_time 09:00: 08:30 is 30 min before it (exact); 20:00 is after it: at the reminder time.
    expect(await rems("All day daily")).toEqual([
      { kind: "before_due", minutes_before: 30, at: null, next_fire_at: "2026-12-12T07:30:00.000Z" },
      { kind: "before_due", minutes_before: 0, at: null, next_fire_at: "2026-12-12T08:00:00.000Z" },
    ]);
    const changed = tt.preview.changed as { line?: number; item: string; what: string }[];
    expect(changed.filter((x) => x.item === "All day daily")).toEqual([{ line: 6, item: "All day daily", what: expect.stringContaining("fires after your reminder time (09:00)") }]);
  });

  test("each skip names its reason and line", async () => {
    const skipped = tt.preview.skipped as { line?: number; item: string; reason: string }[];
    expect(skipped.filter((s) => s.reason.includes("reminder"))).toEqual([
      { line: 7, item: "After due", reason: "reminder TRIGGER:PT15M not imported: fires 15 min after the due time (reminders here fire at or before it)" },
      { line: 8, item: "No date", reason: "reminder TRIGGER:-PT5M not imported: the task has no due date to remind before" },
      { line: 10, item: "Garbage", reason: 'reminder "soon" not imported: not a TRIGGER duration' },
      { line: 9, item: "Twelve", reason: "2 reminder(s) past the first 10: a task has at most 10 reminders" },
    ]);
    expect(await rems("After due")).toEqual([]);
    expect(await rems("No date")).toEqual([]);
    expect((await rems("Twelve")).map((r) => r.minutes_before)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  test("VALARM: RELATED=END and an absolute trigger; a trigger relative to DTSTART; an all-day DUE", async () => {
    expect(await rems("Ics timed")).toEqual([
      { kind: "before_due", minutes_before: 15, at: null, next_fire_at: "2026-12-10T08:45:00.000Z" },
      { kind: "at", minutes_before: null, at: "2026-12-09T08:00:00.000Z", next_fire_at: "2026-12-09T08:00:00.000Z" },
    ]);
    // 30 min before DTSTART 09:00 = 90 min before DUE 10:00.
    expect(await rems("Ics from start")).toEqual([{ kind: "before_due", minutes_before: 90, at: null, next_fire_at: "2026-12-10T07:30:00.000Z" }]);
    // DUE 2026-12-12 in the user's zone (Berlin), PT9H after its start: 09:00 Berlin.
    expect(await rems("Ics all day")).toEqual([{ kind: "at", minutes_before: null, at: "2026-12-12T08:00:00.000Z", next_fire_at: "2026-12-12T08:00:00.000Z" }]);
    expect(await rems("Ics no date")).toEqual([]);
    const skipped = ics.preview.skipped as { line?: number; item: string; reason: string }[];
    expect(skipped.filter((s) => s.reason.includes("VALARM"))).toEqual([
      { line: 36, item: "Ics no date", reason: "reminder (VALARM) not imported: the task has no due date to remind before" },
      { line: 36, item: "Ics no date", reason: "reminder (VALARM) not imported: the task has no due date to remind before" },
    ]);
  });

  test("the same files again add nothing", async () => {
    const before = dump(app.db, [...IGNORE, "import_tokens"]);
    const again = await importFile(app, c, "ticktick", TICKTICK, "TickTick.csv");
    expect(again.result.already_imported).toBe(true);
    expect(again.result.counts.reminders).toBe(16);
    expect((await importFile(app, c, "ics", ICS, "tasks.ics")).result.already_imported).toBe(true);
    expect(dump(app.db, [...IGNORE, "import_tokens"])).toEqual(before);
  });
});

describe("one transaction", () => {
  let app: TestApp;
  let c: TestClient;
  beforeAll(async () => {
    app = makeTestApp({ clock: new FixedClock(NOW) });
    c = await setupAdmin(app, { timezone: "Europe/Berlin" });
  }, 60_000);
  afterAll(() => app.close());

  test("a reminder that cannot be written leaves nothing: no task, no list, the token still usable", async () => {
    const p = await previewFile(app, c, "ticktick", TICKTICK, "TickTick.csv");
    expect(p.status).toBe(200);
    app.db.sqlite.run("CREATE TRIGGER fail_reminders BEFORE INSERT ON reminders BEGIN SELECT RAISE(ABORT, 'reminder write failed'); END");
    const before = dump(app.db, IGNORE);
    const r = await c.post("/api/v1/import", { import_token: p.json.import_token });
    expect(r.status).toBe(500);
    expect(r.headers.get("content-type")).toContain("application/problem+json");
    expect(dump(app.db, IGNORE)).toEqual(before);
    app.db.sqlite.run("DROP TRIGGER fail_reminders");
    const ok = await c.post("/api/v1/import", { import_token: p.json.import_token });
    expect(ok.status).toBe(200);
    expect(ok.body.counts.reminders).toBe(16);
    expect(app.db.sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM reminders").get()!.n).toBe(16);
  });
});
