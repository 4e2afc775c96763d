// calendar-query time-range on repeating tasks (RFC 4791 §9.9: a VTODO with an RRULE matches when
// any of its instances overlaps the range), through the whole stack. The instances are those of
// the object served (DTSTART = the current due): the current due and the later occurrences of the
// recurrence engine, without the skipped ones (EXDATE); see src/features/dav/dav.instances.ts.
import { afterEach, beforeEach, expect, test } from "bun:test";
import { makeTestApp, setupAdmin, type TestApp, type TestClient } from "../helpers/app";
import { DavClient, QUERY_VTODO, davClientFor, responseHrefs, vtodo } from "./helpers";

const V = "/api/v1";
let app: TestApp;
let web: TestClient;
let dav: DavClient;
let coll: string;

beforeEach(async () => {
  app = makeTestApp();
  web = await setupAdmin(app);
  dav = await davClientFor(app, web, "owner");
  const list = (await web.post(`${V}/lists`, { name: "Chores" })).body;
  coll = `/dav/calendars/owner/${list.id}/`;
});
afterEach(() => app.close());

/** The names (without .ics) of the members matching a VTODO time-range, sorted. */
async function inRange(start: string, end: string): Promise<string[]> {
  const q = await dav.report(coll, QUERY_VTODO("<d:getetag/>", `<c:time-range start="${start}" end="${end}"/>`));
  expect(q.status).toBe(207);
  return responseHrefs(q.text)
    .map((h) => h.slice(coll.length).replace(/\.ics$/, ""))
    .sort();
}

async function put(name: string, lines: string[]): Promise<void> {
  expect((await dav.put(`${coll}${name}.ics`, vtodo(`${name}-uid`, [`SUMMARY:${name}`, ...lines]))).status).toBe(201);
}

test("a weekly task whose current due lies before the range matches by a later instance inside it; none in the range, or all before the current due: no match", async () => {
  // Tuesdays from 5 Jan 2027: 5, 12, 19, 26 Jan …
  await put("weekly", ["DTSTART;VALUE=DATE:20270105", "DUE;VALUE=DATE:20270105", "RRULE:FREQ=WEEKLY"]);
  await put("once", ["DUE;VALUE=DATE:20270105"]);
  expect(await inRange("20270119T000000Z", "20270120T000000Z")).toEqual(["weekly"]);
  // Instances far on: 52 weeks later is Tuesday 4 Jan 2028.
  expect(await inRange("20280104T000000Z", "20280105T000000Z")).toEqual(["weekly"]);
  // Between two instances (Wednesday to Monday): nothing.
  expect(await inRange("20270113T000000Z", "20270118T000000Z")).toEqual([]);
  // Before the current due: no earlier instance (the object's DTSTART is the current due).
  expect(await inRange("20261201T000000Z", "20261231T000000Z")).toEqual([]);
  // The current due itself, as before.
  expect(await inRange("20270105T000000Z", "20270106T000000Z")).toEqual(["once", "weekly"]);
  // An open end: every later instance is in; an open start: the current due is.
  expect(await dav.report(coll, QUERY_VTODO("<d:getetag/>", `<c:time-range start="20270301T000000Z"/>`)).then((r) => responseHrefs(r.text).map((h) => h.slice(coll.length)))).toEqual(["weekly.ics"]);
});

test("a timed series (TZID) matches at its instances' instants, not an hour before; a skipped instance (EXDATE) alone in the range does not match", async () => {
  expect((await web.patch(`${V}/me`, { timezone: "Europe/Berlin" })).status).toBe(200);
  // Mondays 09:00 Berlin (08:00Z in winter) from 4 Jan 2027; the 18th skipped.
  await put("standup", ["DTSTART;TZID=Europe/Berlin:20270104T090000", "DUE;TZID=Europe/Berlin:20270104T090000", "RRULE:FREQ=WEEKLY", "EXDATE;TZID=Europe/Berlin:20270118T090000"]);
  expect(await inRange("20270111T073000Z", "20270111T083000Z")).toEqual(["standup"]);
  expect(await inRange("20270111T063000Z", "20270111T073000Z")).toEqual([]);
  // The skipped Monday alone: no match; the week after: a match.
  expect(await inRange("20270118T000000Z", "20270119T000000Z")).toEqual([]);
  expect(await inRange("20270125T000000Z", "20270126T000000Z")).toEqual(["standup"]);
  // A skip made in the web app counts as well.
  const [task] = (await web.get(`${V}/tasks`)).body.items as { id: string }[];
  const rec = (await web.get(`${V}/tasks/${task!.id}/recurrence`)).body as { id: string };
  expect((await web.post(`${V}/recurrences/${rec.id}/exceptions`, { date: "2027-01-25" })).status).toBe(200);
  expect(await inRange("20270125T000000Z", "20270126T000000Z")).toEqual([]);
  // Across the summer time change the instant moves with the wall clock: 09:00 Berlin is 07:00Z in July.
  expect(await inRange("20270705T065000Z", "20270705T071000Z")).toEqual(["standup"]);
});

test("bounded: a daily rule with a range a year (or centuries) ahead, a dense BYHOUR/BYMINUTE rule, COUNT and UNTIL that end before the range: each answered right", async () => {
  await put("daily", ["DTSTART;VALUE=DATE:20270101", "DUE;VALUE=DATE:20270101", "RRULE:FREQ=DAILY"]);
  await put("until", ["DTSTART;VALUE=DATE:20270101", "DUE;VALUE=DATE:20270101", "RRULE:FREQ=DAILY;UNTIL=20270110"]);
  await put("count", ["DTSTART;VALUE=DATE:20270101", "DUE;VALUE=DATE:20270101", "RRULE:FREQ=DAILY;COUNT=20"]);
  const minutes = Array.from({ length: 60 }, (_, i) => i).join(",");
  const hours = Array.from({ length: 24 }, (_, i) => i).join(",");
  await put("dense", ["DTSTART:20270101T000000Z", "DUE:20270101T000000Z", `RRULE:FREQ=DAILY;BYHOUR=${hours};BYMINUTE=${minutes}`]);
  await put("leap", ["DTSTART;VALUE=DATE:20280229", "DUE;VALUE=DATE:20280229", "RRULE:FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29"]);
  expect(await inRange("20280115T000000Z", "20280116T000000Z")).toEqual(["daily", "dense"]);
  // One minute: the dense rule's 12:00Z instance; the date instances of the 16th too (a date due matches a
  // range from at most its UTC midnight that ends after the midnight before: the single-due test's reading).
  expect(await inRange("20270115T120000Z", "20270115T120100Z")).toEqual(["count", "daily", "dense"]);
  expect(await inRange("20270115T120030Z", "20270115T120059Z")).toEqual(["count", "daily"]);
  // COUNT=20 ends on 20 Jan, UNTIL on 10 Jan.
  expect(await inRange("20270109T000000Z", "20270110T000000Z")).toEqual(["count", "daily", "dense", "until"]);
  expect(await inRange("20270119T000000Z", "20270120T000000Z")).toEqual(["count", "daily", "dense"]);
  expect(await inRange("20270121T000000Z", "20270122T000000Z")).toEqual(["daily", "dense"]);
  // Centuries ahead: the next 29 February after 2400-03-01 is in 2404; 2400-2403 has none.
  expect(await inRange("24040229T000000Z", "24040301T000000Z")).toEqual(["daily", "dense", "leap"]);
  expect(await inRange("24010101T000000Z", "24031231T000000Z")).toEqual(["daily", "dense"]);
  // Up to the last year there is.
  expect(await inRange("99991230T000000Z", "99991231T000000Z")).toEqual(["daily", "dense"]);
});

test("a rule the engine does not hold (kept verbatim: FREQ=HOURLY) or no rule: the current due decides, as before", async () => {
  await put("hourly", ["DUE:20270105T080000Z", "RRULE:FREQ=HOURLY"]);
  await put("plain", ["DUE:20270105T080000Z"]);
  expect(await inRange("20270105T070000Z", "20270105T090000Z")).toEqual(["hourly", "plain"]);
  expect(await inRange("20270106T070000Z", "20270106T090000Z")).toEqual([]);
});

test("after the series moved on, its earlier instances are not the series' (the occurrence done is its own resource and matches by its own due)", async () => {
  await put("weekly", ["DTSTART;VALUE=DATE:20270105", "DUE;VALUE=DATE:20270105", "RRULE:FREQ=WEEKLY"]);
  const done = vtodo("weekly-uid", ["SUMMARY:weekly", "DTSTART;VALUE=DATE:20270105", "DUE;VALUE=DATE:20270105", "RRULE:FREQ=WEEKLY", "STATUS:COMPLETED", "COMPLETED:20270105T080000Z"]);
  expect((await dav.put(`${coll}weekly.ics`, done)).status).toBe(204);
  const tasks = (await web.get(`${V}/tasks?completed=true`)).body.items as { id: string; due_at: string }[];
  expect(tasks.map((t) => t.due_at)).toEqual(["2027-01-05"]);
  expect(await inRange("20270105T000000Z", "20270106T000000Z")).toEqual([tasks[0]!.id]);
  expect(await inRange("20270112T000000Z", "20270113T000000Z")).toEqual(["weekly"]);
  expect(await inRange("20270126T000000Z", "20270127T000000Z")).toEqual(["weekly"]);
});

test("a task without a due (§9.9's CREATED and COMPLETED rows): open, it matches a range ending after its creation; completed, one reaching its creation or completion", async () => {
  await put("undated", []);
  await put("done", ["STATUS:COMPLETED", `COMPLETED:${new Date().toISOString().replace(/[-:]/g, "").slice(0, 15)}Z`]);
  expect(await inRange("20000101T000000Z", "20010101T000000Z")).toEqual([]);
  expect(await inRange("20000101T000000Z", "22000101T000000Z")).toEqual(["done", "undated"]);
  // After both: the open one still matches (end > CREATED), the completed one no more.
  expect(await inRange("21000101T000000Z", "22000101T000000Z")).toEqual(["undated"]);
});
