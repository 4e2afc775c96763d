// iCalendar VTODO import through the HTTP stack, on the committed fixtures
// (test/fixtures/import/README.md). Run under two process TZ values (package.json "test").
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import ICAL from "ical.js";
import { dump, FixedClock, makeTestApp, rejected, setupAdmin, type TestApp, type TestClient } from "../helpers/app";
import { taskToVtodo, vtodoToTask } from "../../src/transfer/import/vtodo.mapping";
import { count, fixture, importFile, previewFile, tasksByTitle } from "./import-helpers";

const NOW = new Date("2026-11-26T12:00:00.000Z");
const USER_TZ = "America/Sao_Paulo";

/** The physical line of the BEGIN:VTODO before the first line containing `needle`. */
function todoLine(name: string, needle: string): number {
  const lines = new TextDecoder().decode(fixture(name)).split(/\r?\n/);
  let at = lines.findIndex((l) => l.includes(needle));
  while (lines[at] !== "BEGIN:VTODO") at--;
  return at + 1;
}

async function imported(name: string) {
  const app = makeTestApp({ clock: new FixedClock(NOW) });
  const c = await setupAdmin(app, { timezone: USER_TZ });
  const r = await importFile(app, c, "ics", fixture(name), name);
  return { app, c, previewJson: JSON.stringify(r.preview), result: r.result };
}

describe("Nextcloud Tasks calendar (VTIMEZONE, two CATEGORIES lines, floating, cancelled)", () => {
  let app: TestApp;
  let c: TestClient;
  let previewJson = "";
  const pv = () => JSON.parse(previewJson);
  beforeAll(async () => ({ app, c, previewJson } = await imported("nextcloud-tasks.ics")), 60_000);
  afterAll(() => app.close());

  test("one list named by X-WR-CALNAME; counts", () => {
    expect(pv().counts).toEqual({ folders: 0, lists: 1, tasks: 3, subtasks: 1, tags: 3, recurrences: 1, memos: 0, reminders: 1 });
    const t = tasksByTitle(app);
    expect(t.get("Paint hallway")!.list).toBe("Renovation");
  });

  test("TZID, DATE and floating values; escapes and folding", () => {
    const t = tasksByTitle(app);
    expect(t.get("Paint hallway")).toMatchObject({ due_at: "2026-12-05T17:00:00.000Z", priority: 3, tags: "diy,home,paint", description: "Two coats, white.\nCheck the ceiling first." });
    expect(t.get("Buy rollers")).toMatchObject({ due_at: "2026-12-01", parent: "Paint hallway", completed: 1, completed_at: "2026-11-30T17:15:00.000Z" });
    const long = "Call the electrician about the fuse box in the cellar and the new sockets in the kitchen";
    // 09:00 floating, read in São Paulo (UTC-3).
    expect(t.get(long)).toMatchObject({ due_at: "2026-12-03T12:00:00.000Z", completed: 1 });
    const line = todoLine("nextcloud-tasks.ics", "UID:float-55aa");
    expect(pv().changed).toContainEqual({ line, item: long, what: expect.stringContaining("floating") });
    expect(pv().changed).toContainEqual({ line, item: long, what: expect.stringContaining("CANCELLED") });
  });

  test("RRULE on a date-only DUE; PRIORITY 7 is low", () => {
    expect(tasksByTitle(app).get("Ventilate the attic")).toMatchObject({ due_at: "2026-11-02", rrule: "FREQ=WEEKLY;BYDAY=MO", priority: 1 });
  });

  test("VALARM, VEVENT and unknown properties: the alarm is a reminder, the rest reported", () => {
    const skipped = pv().skipped;
    expect(skipped.filter((s: { reason: string }) => s.reason.includes("VALARM"))).toEqual([]);
    // TRIGGER:-PT1H is relative to the start, which the VTODO does not have: read relative to DUE (18:00 Madrid).
    expect(pv().changed).toContainEqual({ line: todoLine("nextcloud-tasks.ics", "UID:parent-7f3a"), item: "Paint hallway", what: expect.stringContaining("read relative to DUE") });
    const id = tasksByTitle(app).get("Paint hallway")!.id;
    expect(app.db.sqlite.query<{ kind: string; minutes_before: number }, [string]>("SELECT kind, minutes_before FROM reminders WHERE target_id = ?").all(id)).toEqual([{ kind: "before_due", minutes_before: 60 }]);
    expect(skipped).toContainEqual(expect.objectContaining({ item: "VEVENT", reason: expect.stringContaining("events are not tasks") }));
    expect(skipped).toContainEqual(expect.objectContaining({ item: "X-OC-HIDESUBTASKS" }));
  });

  test("the same file again creates nothing", async () => {
    const before = dump(app.db, ["audit_logs", "sessions", "__drizzle_migrations", "import_tokens"]);
    const again = await importFile(app, c, "ics", fixture("nextcloud-tasks.ics"));
    expect(again.result.already_imported).toBe(true);
    expect(dump(app.db, ["audit_logs", "sessions", "__drizzle_migrations", "import_tokens"])).toEqual(before);
  });
});

describe("Apple Reminders (two VCALENDARs, LF, X-APPLE-SORT-ORDER)", () => {
  let app: TestApp;
  let previewJson = "";
  beforeAll(async () => ({ app, previewJson } = await imported("apple-reminders.ics")), 60_000);
  afterAll(() => app.close());

  test("one list per calendar; the one without X-WR-CALNAME is named after the file", () => {
    expect(JSON.parse(previewJson).counts).toEqual({ folders: 0, lists: 2, tasks: 3, subtasks: 0, tags: 0, recurrences: 0, memos: 0, reminders: 0 });
    const t = tasksByTitle(app);
    expect(t.get("Eggs")!.list).toBe("Groceries 🛒");
    expect(t.get("Renew passport")).toMatchObject({ list: "apple-reminders", due_at: "2026-03-01T08:00:00.000Z", priority: 2 });
  });

  test("ordered by X-APPLE-SORT-ORDER as numbers; COMPLETED kept", () => {
    const t = tasksByTitle(app);
    expect(t.get("Eggs")!.position).toBe(0);
    expect(t.get("Bread")).toMatchObject({ position: 1, completed: 1, completed_at: "2026-01-11T09:00:00.000Z", created_at: "2026-01-10T08:14:00.000Z" });
  });
});

describe("tasks.org calendar (RELATED-TO in every form, a rule this app cannot run)", () => {
  let app: TestApp;
  let previewJson = "";
  const pv = () => JSON.parse(previewJson);
  beforeAll(async () => ({ app, previewJson } = await imported("tasks-org.ics")), 60_000);
  afterAll(() => app.close());

  test("PARENT, CHILD on the parent, a grandchild flattened, a missing parent, DEPENDS-ON is no parent", () => {
    const t = tasksByTitle(app);
    expect(t.get("Collect numbers")!.parent).toBe("Quarterly planning");
    expect(t.get("Book the room")!.parent).toBe("Quarterly planning");
    expect(t.get("Ask finance")!.parent).toBe("Quarterly planning");
    expect(t.get("Review after planning")!.parent).toBeNull();
    const review = todoLine("tasks-org.ics", "SUMMARY:Review after planning");
    expect(pv().skipped).toContainEqual({ line: review, item: "Review after planning", reason: expect.stringContaining("DEPENDS-ON") });
    expect(pv().changed).toContainEqual({ line: review, item: "Review after planning", what: expect.stringContaining("not in the file") });
    expect(pv().changed).toContainEqual({ line: todoLine("tasks-org.ics", "SUMMARY:Ask finance"), item: "Ask finance", what: expect.stringContaining("more than one level") });
  });

  test("CATEGORIES folded case-insensitively; PRIORITY 5 is medium; TZID in America/Chicago", () => {
    expect(tasksByTitle(app).get("Quarterly planning")).toMatchObject({ tags: "Test tag,Work", priority: 2, due_at: "2026-10-30T22:00:00.000Z" });
    expect(pv().counts).toMatchObject({ tasks: 3, subtasks: 3, tags: 2, reminders: 1 });
  });

  test("a repeat on a subtask, and FREQ=HOURLY, are dropped and reported; DTSTART alone is the due date", () => {
    const t = tasksByTitle(app);
    expect(t.get("Collect numbers")!.rrule).toBeNull();
    expect(t.get("Hourly thing")!.rrule).toBeNull();
    expect(pv().skipped).toContainEqual({ line: todoLine("tasks-org.ics", "SUMMARY:Hourly thing"), item: "Hourly thing", reason: expect.stringContaining("HOURLY") });
    expect(t.get("Review after planning")!.due_at).toBe("2026-11-01T09:00:00.000Z");
  });
});

describe("calendars and components an importer must not merge or repeat", () => {
  test("two calendars of the same name are two lists; a duplicate UID and a RECURRENCE-ID override are skipped", async () => {
    const app = makeTestApp({ clock: new FixedClock(NOW) });
    try {
      const c = await setupAdmin(app, { timezone: USER_TZ });
      const cal = (todos: string) => `BEGIN:VCALENDAR\nVERSION:2.0\nX-WR-CALNAME:Home\n${todos}END:VCALENDAR\n`;
      const text =
        cal("BEGIN:VTODO\nUID:a\nSUMMARY:First\nDUE;VALUE=DATE:20261201\nRRULE:FREQ=DAILY\nEND:VTODO\nBEGIN:VTODO\nUID:a\nSUMMARY:Again\nEND:VTODO\n") +
        cal("BEGIN:VTODO\nUID:a\nRECURRENCE-ID;VALUE=DATE:20261202\nSUMMARY:Moved one\nEND:VTODO\nBEGIN:VTODO\nUID:b\nSUMMARY:Second\nEND:VTODO\n");
      const r = await importFile(app, c, "ics", text, "x.ics");
      expect(r.preview.counts).toMatchObject({ lists: 2, tasks: 2, recurrences: 1 });
      expect(r.preview.skipped).toEqual([
        { line: 10, item: "Again", reason: "UID a was already used at line 4: not imported" },
        { line: 18, item: "Moved one", reason: "an override of one occurrence (RECURRENCE-ID): not imported" },
      ]);
      const lists = app.db.sqlite.query<{ name: string }, []>("SELECT name FROM lists WHERE is_inbox = 0 ORDER BY position").all().map((l) => l.name);
      expect(lists).toEqual(["Home", "Home (imported)"]);
    } finally {
      app.close();
    }
  }, 60_000);
});

describe("malformed .ics files: 422 import_invalid with the line, nothing written", () => {
  let app: TestApp;
  let c: TestClient;
  beforeAll(async () => {
    app = makeTestApp({ clock: new FixedClock(NOW) });
    c = await setupAdmin(app);
  }, 60_000);
  afterAll(() => app.close());
  const refuse = async (text: string) => {
    const r = await rejected(
      app,
      async () => {
        const p = await previewFile(app, c, "ics", text, "bad.ics");
        return { status: p.status, headers: p.headers, text: JSON.stringify(p.json), body: p.json };
      },
      422,
      "import_invalid",
    );
    return r.body.errors as { path: string; message: string }[];
  };

  test("not an iCalendar file", async () => {
    expect(await refuse("TYPE,CONTENT\ntask,x\n")).toEqual([{ path: "line 1", message: "an iCalendar file starts with BEGIN:VCALENDAR" }]);
  });

  test("a missing END:VTODO", async () => {
    const errors = await refuse("BEGIN:VCALENDAR\nVERSION:2.0\nBEGIN:VTODO\nUID:1\nSUMMARY:x\nEND:VCALENDAR\n");
    expect(errors).toContainEqual({ path: "line 6", message: "END:VCALENDAR closes BEGIN:VTODO of line 3" });
  });

  test("an unescaped line break inside a value, and a PRIORITY that is not 0-9", async () => {
    const errors = await refuse("BEGIN:VCALENDAR\r\nBEGIN:VTODO\r\nUID:1\r\nDESCRIPTION:first\r\nsecond line\r\nPRIORITY:x\r\nEND:VTODO\r\nEND:VCALENDAR\r\n");
    expect(errors).toEqual([
      { path: "line 5", message: expect.stringContaining("not a content line") },
      { path: "line 6", message: 'PRIORITY "x" is not 0 to 9' },
    ]);
  });

  test("a value that is not of its type names the component's line", async () => {
    const errors = await refuse("BEGIN:VCALENDAR\nBEGIN:VTODO\nUID:1\nSUMMARY:ok\nEND:VTODO\nBEGIN:VTODO\nUID:2\nDUE:2026\nEND:VTODO\nEND:VCALENDAR\n");
    expect(errors).toEqual([{ path: "line 6", message: expect.stringContaining("VTODO") }]);
    expect(count(app, "tasks")).toBe(0);
  });
});

describe("the VTODO ⇄ task mapping both ways", () => {
  test("a task written as a VTODO reads back as the same task, in any server zone", () => {
    const task = {
      id: "t1",
      title: "Water, plants; daily",
      description: "line one\nline two",
      dueAt: "2026-12-01T08:30:00.000Z",
      priority: 2,
      completed: true,
      completedAt: "2026-12-01T09:00:00.000Z",
      createdAt: "2026-11-01T00:00:00.000Z",
      updatedAt: "2026-11-02T00:00:00.000Z",
      tags: ["garden", "a,b"],
      parentId: "p1",
      rrule: "FREQ=DAILY;INTERVAL=2",
      timezone: "Europe/Berlin",
    };
    const text = taskToVtodo(task).toString();
    expect(text).toContain("DUE;TZID=Europe/Berlin:20261201T093000");
    const back = vtodoToTask(new ICAL.Component(ICAL.parse(text)), "Asia/Tokyo");
    expect(back).toMatchObject({
      uid: "t1",
      title: task.title,
      description: task.description,
      dueAt: task.dueAt,
      timezone: "Europe/Berlin",
      priority: 2,
      completed: true,
      completedAt: task.completedAt,
      tags: ["garden", "a,b"],
      parentUid: "p1",
      rrule: "FREQ=DAILY;INTERVAL=2",
    });
    const dateOnly = vtodoToTask(new ICAL.Component(ICAL.parse(taskToVtodo({ ...task, dueAt: "2026-12-01", rrule: null }).toString())), "Pacific/Kiritimati");
    expect(dateOnly.dueAt).toBe("2026-12-01");
  });
});
