// A CalDAV PUT is one transaction (core/db.ts writeTx joins an open transaction as a savepoint;
// afterCommit holds events until the outermost commit): every write of the PUT (tags, task,
// repeat, skipped dates, order, alarms, the resource row, the sync log's trigger rows) commits or
// rolls back together, and the event streams hear of it only after the commit. Through the whole
// stack (Basic auth, dav.routes, dav.service, the services, real SQLite). The kill -9 side is in
// crash.test.ts.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { dump, makeTestApp, setupAdmin, type TestApp, type TestClient } from "../helpers/app";
import { openEvents, typed, type SseStream } from "../sharing/sse";
import { DavClient, davClientFor, vtodo } from "./helpers";

const V = "/api/v1";
let app: TestApp;
let web: TestClient;
let dav: DavClient;
let list: { id: string };
let coll: string;
let events: SseStream;

beforeEach(async () => {
  app = makeTestApp();
  web = await setupAdmin(app);
  dav = await davClientFor(app, web, "owner");
  list = (await web.post(`${V}/lists`, { name: "Chores", color: "#112233" })).body;
  coll = `/dav/calendars/owner/${list.id}/`;
  events = await openEvents(app, web);
  expect(events.status).toBe(200);
});
afterEach(() => {
  events.close();
  app.close();
});

/**
 * Everything stored, audit entries included, but the bookkeeping of the credential's use (an
 * app password's last use and its token_used entry are written when the request is let in,
 * before the PUT's transaction).
 */
function stored(): Record<string, unknown[]> {
  const all = dump(app.db, ["sessions", "__drizzle_migrations", "api_tokens", "login_throttle"]);
  all["audit_logs"] = (all["audit_logs"] ?? []).filter((r) => !String(r).includes('"action":"token_used"'));
  return all;
}

/** A PUT of a new repeating task with a tag, a skipped date, an order and two alarms: every step of a PUT writes. */
const FULL = (uid: string, extra: string[] = []) =>
  vtodo(uid, [
    "SUMMARY:Water the plants",
    "DUE;VALUE=DATE:20261201",
    "RRULE:FREQ=WEEKLY",
    "EXDATE;VALUE=DATE:20261208",
    "CATEGORIES:garden,weekly",
    "X-APPLE-SORT-ORDER:5",
    "BEGIN:VALARM",
    "ACTION:DISPLAY",
    "DESCRIPTION:soon",
    "TRIGGER:-PT30M",
    "END:VALARM",
    "BEGIN:VALARM",
    "ACTION:DISPLAY",
    "DESCRIPTION:at",
    "TRIGGER;VALUE=DATE-TIME:20261130T080000Z",
    "END:VALARM",
    ...extra,
  ]);

/** Runs `fn` with failpoint `name` throwing (APP_FAILPOINT_ACTION=throw) instead of killing the process. */
async function withThrowingFailpoint<T>(name: string, fn: () => Promise<T>): Promise<T> {
  const saved = { fp: process.env.APP_FAILPOINT, action: process.env.APP_FAILPOINT_ACTION };
  process.env.APP_FAILPOINT = name;
  process.env.APP_FAILPOINT_ACTION = "throw";
  try {
    return await fn();
  } finally {
    if (saved.fp === undefined) delete process.env.APP_FAILPOINT;
    else process.env.APP_FAILPOINT = saved.fp;
    if (saved.action === undefined) delete process.env.APP_FAILPOINT_ACTION;
    else process.env.APP_FAILPOINT_ACTION = saved.action;
  }
}

async function taskByTitle(title: string): Promise<{ id: string; version: number; list_id: string } | undefined> {
  return ((await web.get(`${V}/tasks?list_id=${list.id}`)).body.items as { id: string; title: string; version: number; list_id: string }[]).find((t) => t.title === title);
}

describe("a CalDAV PUT is one transaction", () => {
  test("an error after every step of a new task's PUT (before the commit) leaves nothing of it and no event; the same PUT then commits whole, its events after", async () => {
    const before = stored();
    const r = await withThrowingFailpoint("dav.put.before_commit", () => dav.put(`${coll}plants.ics`, FULL("tx-plants@example.org")));
    expect(r.status).toBe(500);
    expect(stored()).toEqual(before);
    expect(await events.settle()).toEqual([]);

    const ok = await dav.put(`${coll}plants.ics`, FULL("tx-plants@example.org"));
    expect(ok.status).toBe(201);
    const t = (await taskByTitle("Water the plants"))!;
    expect(t).toBeDefined();
    expect((await web.get(`${V}/tasks/${t.id}/recurrence`)).body).toMatchObject({ rrule: expect.stringContaining("FREQ=WEEKLY") });
    expect((await web.get(`${V}/tasks/${t.id}/reminders`)).body.items).toHaveLength(2);
    expect(((await web.get(`${V}/tags`)).body.items as { name: string }[]).map((x) => x.name).sort()).toEqual(["garden", "weekly"]);
    // The committed PUT's events, exactly: the task's creation (its repeat, alarms and tags do not
    // move its version), sent once the whole PUT was committed.
    await events.until((e) => e.length >= 1);
    expect(typed(await events.settle())).toEqual([{ type: "task.changed", id: t.id, list_id: list.id, version: t.version }]);
  });

  test("an error late in an update's PUT (title, repeat, alarm, tag changed; before the commit) leaves the task exactly as it was", async () => {
    expect((await dav.put(`${coll}a.ics`, vtodo("tx-a@example.org", ["SUMMARY:Old title", "DUE;VALUE=DATE:20261201"]))).status).toBe(201);
    await events.until((e) => e.length >= 1);
    const seen = events.events.length;
    const before = stored();
    const r = await withThrowingFailpoint("dav.put.before_commit", () => dav.put(`${coll}a.ics`, FULL("tx-a@example.org", ["SUMMARY;X-NOTE=x:New title"])));
    expect(r.status).toBe(500);
    expect(stored()).toEqual(before);
    expect((await events.settle()).length).toBe(seen);
  });

  test("a step the tasks service refuses after the repeat was stored (an existing task made a subtask while it now repeats): 4xx, nothing of the PUT kept, no event", async () => {
    expect((await dav.put(`${coll}parent.ics`, vtodo("tx-parent@example.org", ["SUMMARY:Parent"]))).status).toBe(201);
    expect((await dav.put(`${coll}child.ics`, vtodo("tx-child@example.org", ["SUMMARY:Child", "DUE;VALUE=DATE:20261201"]))).status).toBe(201);
    await events.until((e) => e.length >= 2);
    const seen = events.events.length;
    const before = stored();
    // The RRULE is applied first (the recurrence service stores it), then the task update naming a
    // parent is refused: a task with a recurrence cannot become a subtask.
    const r = await dav.put(
      `${coll}child.ics`,
      vtodo("tx-child@example.org", ["SUMMARY:Child renamed", "DUE;VALUE=DATE:20261201", "RRULE:FREQ=DAILY", "RELATED-TO:tx-parent@example.org", "CATEGORIES:new-tag"]),
    );
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.status).toBeLessThan(500);
    expect(r.text).toContain("valid-calendar-object-resource");
    expect(stored()).toEqual(before);
    expect((await events.settle()).length).toBe(seen);
  });

  test("iOS's move by PUT (same UID and name into another list) refused after the move and the repeat were applied: 4xx, the task still in its list, no event", async () => {
    const other = (await web.post(`${V}/lists`, { name: "Other" })).body;
    const ocoll = `/dav/calendars/owner/${other.id}/`;
    expect((await dav.put(`${coll}r.ics`, vtodo("ios-r@example.org", ["SUMMARY:Errand", "DUE;VALUE=DATE:20261201"]))).status).toBe(201);
    expect((await dav.put(`${ocoll}p.ics`, vtodo("ios-p@example.org", ["SUMMARY:Parent there"]))).status).toBe(201);
    await events.until((e) => e.length >= 2);
    const seen = events.events.length;
    const before = stored();
    // The task moves to the other list (tasks service), gets its repeat (recurrence service), then
    // the update naming a parent there is refused: a task with a recurrence cannot become a subtask.
    const r = await dav.put(`${ocoll}r.ics`, vtodo("ios-r@example.org", ["SUMMARY:Errand", "DUE;VALUE=DATE:20261201", "RRULE:FREQ=DAILY", "RELATED-TO:ios-p@example.org"]));
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.status).toBeLessThan(500);
    expect(stored()).toEqual(before);
    expect((await dav.request("GET", `${coll}r.ics`)).status).toBe(200);
    expect((await dav.request("GET", `${ocoll}r.ics`)).status).toBe(404);
    expect((await events.settle()).length).toBe(seen);
  });

  test("more CATEGORIES than a task may have tags (the tags are created before the task is refused): 4xx, no tag left behind, no event", async () => {
    const before = stored();
    const cats = Array.from({ length: 101 }, (_, i) => `t${i}`).join(",");
    const r = await dav.put(`${coll}many.ics`, vtodo("tx-many@example.org", ["SUMMARY:Many tags", `CATEGORIES:${cats}`]));
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.status).toBeLessThan(500);
    expect(stored()).toEqual(before);
    expect((await web.get(`${V}/tags`)).body.items).toEqual([]);
    expect(await events.settle()).toEqual([]);
  });

  test("a refusal the PUT recovers from (the recurrence service refuses a subtask's repeat, the RRULE stays verbatim) does not undo the rest: the PUT commits", async () => {
    // A subtask cannot repeat: the recurrence service refuses, the RRULE is kept in the object.
    expect((await dav.put(`${coll}p.ics`, vtodo("tx-p@example.org", ["SUMMARY:P"]))).status).toBe(201);
    const r = await dav.put(`${coll}s.ics`, vtodo("tx-s@example.org", ["SUMMARY:S", "DUE;VALUE=DATE:20261201", "RRULE:FREQ=DAILY", "RELATED-TO:tx-p@example.org"]));
    expect(r.status).toBe(201);
    const s = app.db.sqlite.query("SELECT id, parent_id FROM tasks WHERE title = 'S'").get() as { id: string; parent_id: string | null };
    expect(s.parent_id).not.toBeNull();
    expect((await web.get(`${V}/tasks/${s.id}/recurrence`)).body).toBeNull();
    const got = await dav.request("GET", `${coll}s.ics`);
    expect(got.text).toContain("RRULE:FREQ=DAILY");
  });
});

describe("the other multi-step CalDAV writes are one transaction each", () => {
  test("MOVE with Overwrite: T (the destination deleted, then the task moved): an error before the commit leaves both where they were, no event; then it commits", async () => {
    const other = (await web.post(`${V}/lists`, { name: "Other" })).body;
    const ocoll = `/dav/calendars/owner/${other.id}/`;
    expect((await dav.put(`${coll}a.ics`, vtodo("mv-a@example.org", ["SUMMARY:Moving"]))).status).toBe(201);
    expect((await dav.put(`${ocoll}a.ics`, vtodo("mv-b@example.org", ["SUMMARY:In the way"]))).status).toBe(201);
    await events.until((e) => e.length >= 2);
    const seen = events.events.length;
    const before = stored();
    const r = await withThrowingFailpoint("dav.move.before_commit", () => dav.request("MOVE", `${coll}a.ics`, undefined, { destination: `${ocoll}a.ics`, overwrite: "T" }));
    expect(r.status).toBe(500);
    expect(stored()).toEqual(before);
    expect((await events.settle()).length).toBe(seen);
    expect((await dav.request("MOVE", `${coll}a.ics`, undefined, { destination: `${ocoll}a.ics`, overwrite: "T" })).status).toBe(204);
    expect((await dav.request("GET", `${ocoll}a.ics`)).text).toContain("SUMMARY:Moving");
    expect((await events.until((e) => e.length >= seen + 2)).length).toBeGreaterThanOrEqual(seen + 2);
  });

  test("MKCALENDAR at a client's path (the list, then its name for it): an error before the commit leaves no list and no name, no event", async () => {
    await events.settle(50);
    const seen = events.events.length;
    const before = stored();
    const path = "/dav/calendars/owner/6F1A2B3C-0000-4000-8000-00000000ABCD/";
    const body = `<?xml version="1.0"?><c:mkcalendar xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:set><d:prop><d:displayname>Trip</d:displayname></d:prop></d:set></c:mkcalendar>`;
    const r = await withThrowingFailpoint("dav.mkcalendar.before_commit", () => dav.request("MKCALENDAR", path, body));
    expect(r.status).toBe(500);
    expect(stored()).toEqual(before);
    expect((await events.settle()).length).toBe(seen);
    expect((await dav.request("MKCALENDAR", path, body)).status).toBe(201);
    expect((await dav.propfind(path, "<d:displayname/>")).text).toContain("Trip");
  });
});
