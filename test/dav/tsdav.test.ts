// The npm tsdav client (a CalDAV client nobody here wrote) against a real listening server:
// discovery from the root URL, the task lists as calendars, create / fetch / update / delete of
// VTODOs, sync-collection after changes made in the web app.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { DAVClient } from "tsdav";
import { makeTestApp, setupAdmin, type TestApp, type TestClient } from "../helpers/app";
import { serve, type ServedApp } from "../helpers/server";

const V = "/api/v1";
let app: TestApp;
let server: ServedApp;
let web: TestClient;
let client: DAVClient;

const VTODO_FILTER = [{ type: "comp-filter", attributes: { name: "VCALENDAR" }, children: [{ type: "comp-filter", attributes: { name: "VTODO" } }] }];

beforeAll(async () => {
  app = makeTestApp();
  server = serve(app);
  web = await setupAdmin(app);
  const secret = (await web.post(`${V}/tokens`, { name: "tsdav", scopes: ["caldav"] })).body.secret as string;
  client = new DAVClient({ serverUrl: `${server.base}/`, credentials: { username: "owner", password: secret }, authMethod: "Basic", defaultAccountType: "caldav" });
  await client.login();
});
afterAll(() => {
  server.stop();
  app.close();
});

test("tsdav discovers the principal and home from the root URL and lists the task lists as VTODO calendars", async () => {
  expect(client.account?.principalUrl).toBe(`${server.base}/dav/principals/owner/`);
  expect(client.account?.homeUrl).toBe(`${server.base}/dav/calendars/owner/`);
  const cals = await client.fetchCalendars();
  const lists = (await web.get(`${V}/lists`)).body.items as { id: string; name: string }[];
  expect(cals.map((c) => c.displayName).sort()).toEqual(lists.map((l) => l.name).sort());
  for (const c of cals) expect(c.components).toEqual(["VTODO"]);
});

test("create, fetch, update and delete a VTODO; web-app changes arrive through sync-collection", async () => {
  const list = (await web.post(`${V}/lists`, { name: "tsdav list" })).body;
  const cal = (await client.fetchCalendars()).find((c) => c.displayName === "tsdav list")!;
  const ics = (summary: string) => `BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//tsdav test//EN\r\nBEGIN:VTODO\r\nUID:tsdav-1\r\nDTSTAMP:20261101T000000Z\r\nSUMMARY:${summary}\r\nDUE;VALUE=DATE:20261201\r\nEND:VTODO\r\nEND:VCALENDAR\r\n`;
  const created = await client.createCalendarObject({ calendar: cal, filename: "tsdav-1.ics", iCalString: ics("from tsdav") });
  expect(created.status).toBe(201);
  const tasks = (await web.get(`${V}/tasks?list_id=${list.id}`)).body.items as { id: string; title: string; due_at: string; version: number }[];
  expect(tasks.map((t) => [t.title, t.due_at])).toEqual([["from tsdav", "2026-12-01"]]);

  let objs = await client.fetchCalendarObjects({ calendar: cal, filters: VTODO_FILTER });
  expect(objs.length).toBe(1);
  expect(objs[0]!.url).toBe(`${cal.url}tsdav-1.ics`);
  expect(objs[0]!.data).toContain("SUMMARY:from tsdav");
  expect(objs[0]!.etag).toMatch(/^"/);

  const upd = await client.updateCalendarObject({ calendarObject: { url: objs[0]!.url, etag: objs[0]!.etag, data: ics("renamed in tsdav") } });
  expect(upd.status).toBe(204);
  expect((await web.get(`${V}/tasks/${tasks[0]!.id}`)).body.title).toBe("renamed in tsdav");
  // A stale etag is refused.
  const stale = await client.updateCalendarObject({ calendarObject: { url: objs[0]!.url, etag: objs[0]!.etag, data: ics("lost") } });
  expect(stale.status).toBe(412);

  // The web app adds one task and edits the first: a sync sees both.
  const tokenBefore = cal.syncToken;
  const t2 = (await web.post(`${V}/tasks`, { title: "from the web", list_id: list.id })).body;
  const synced = await client.syncCollection({ url: cal.url, props: { "d:getetag": {} }, syncLevel: 1, syncToken: tokenBefore });
  const hrefs = synced.map((r) => r.href).filter(Boolean).sort();
  expect(hrefs).toEqual([`/dav/calendars/owner/${list.id}/${t2.id}.ics`, `/dav/calendars/owner/${list.id}/tsdav-1.ics`].sort());

  objs = await client.fetchCalendarObjects({ calendar: cal, filters: VTODO_FILTER });
  const mine = objs.find((o) => o.url.endsWith("tsdav-1.ics"))!;
  const del = await client.deleteCalendarObject({ calendarObject: { url: mine.url, etag: mine.etag } });
  expect(del.status).toBe(204);
  expect((await web.get(`${V}/tasks/${tasks[0]!.id}`)).body.deleted_at).not.toBeNull();
});

test("tsdav creates a calendar (MKCALENDAR) that appears as a list", async () => {
  await client.makeCalendar({ url: `${client.account!.homeUrl}from-tsdav/`, props: { displayname: "Made by tsdav" } });
  const lists = (await web.get(`${V}/lists`)).body.items as { name: string }[];
  expect(lists.map((l) => l.name)).toContain("Made by tsdav");
});
