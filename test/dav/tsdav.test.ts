// The npm tsdav client (a CalDAV client nobody here wrote) against a real listening server:
// discovery from the root URL through /.well-known/caldav, the task lists as calendars, create /
// fetch / update / delete of VTODOs, sync-collection after changes made in the web app. In process
// without APP_EXE; with APP_EXE, against the executable behind the README's nginx and Caddy over
// https (test/dav/targets.ts).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { DAVClient } from "tsdav";
import type { TestClient } from "../helpers/app";
import { davTargets, startDavTarget, type DavTarget } from "./targets";

const V = "/api/v1";
const VTODO_FILTER = [{ type: "comp-filter", attributes: { name: "VCALENDAR" }, children: [{ type: "comp-filter", attributes: { name: "VTODO" } }] }];

for (const spec of davTargets("tsdav.test.ts")) {
  describe.skipIf(spec.missing !== null)(`tsdav: ${spec.name}`, () => {
    let target: DavTarget;
    let web: TestClient;
    let client: DAVClient;
    /** Every request tsdav sent during login: method, URL, status, Location. */
    const seen: { method: string; url: string; status: number; location: string | null }[] = [];

    beforeAll(async () => {
      target = await startDavTarget(spec);
      web = target.web;
      const secret = (await web.post(`${V}/tokens`, { name: "tsdav", scopes: ["caldav"] })).body.secret as string;
      const recording = (async (input: string | URL | Request, init?: RequestInit) => {
        const res = await target.fetch(input, init);
        seen.push({ method: init?.method ?? "GET", url: String(input), status: res.status, location: res.headers.get("location") });
        return res;
      }) as typeof fetch;
      client = new DAVClient({ serverUrl: `${target.base}/`, credentials: { username: "owner", password: secret }, authMethod: "Basic", defaultAccountType: "caldav", fetch: recording });
      await client.login();
    });
    afterAll(async () => {
      await target?.stop();
    });

    test("tsdav discovers the principal and home from the root URL through the well-known redirect, and lists the task lists as VTODO calendars", async () => {
      // RFC 6764 §5: PROPFIND /.well-known/caldav → 301 to the context path, which tsdav then asks.
      expect(seen[0]).toEqual({ method: "PROPFIND", url: `${target.base}/.well-known/caldav`, status: 301, location: "/dav/" });
      expect(seen[1]).toMatchObject({ method: "PROPFIND", url: `${target.base}/dav/`, status: 207 });
      expect(client.account?.principalUrl).toBe(`${target.base}/dav/principals/owner/`);
      expect(client.account?.homeUrl).toBe(`${target.base}/dav/calendars/owner/`);
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
      const tokenBeforeDelete = (await client.fetchCalendars()).find((c) => c.displayName === "tsdav list")!.syncToken;
      const del = await client.deleteCalendarObject({ calendarObject: { url: mine.url, etag: mine.etag } });
      expect(del.status).toBe(204);
      expect((await web.get(`${V}/tasks/${tasks[0]!.id}`)).body.deleted_at).not.toBeNull();
      // The deletion arrives as a tombstone (404 response) in the next sync.
      const after = await client.syncCollection({ url: cal.url, props: { "d:getetag": {} }, syncLevel: 1, syncToken: tokenBeforeDelete });
      expect(after.some((r) => r.href === `/dav/calendars/owner/${list.id}/tsdav-1.ics` && r.status === 404)).toBe(true);
    });

    test("tsdav creates a calendar (MKCALENDAR) that appears as a list", async () => {
      await client.makeCalendar({ url: `${client.account!.homeUrl}from-tsdav/`, props: { displayname: "Made by tsdav" } });
      const lists = (await web.get(`${V}/lists`)).body.items as { name: string }[];
      expect(lists.map((l) => l.name)).toContain("Made by tsdav");
    });
  });
}
