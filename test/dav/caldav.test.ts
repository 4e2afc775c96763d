// CalDAV through the whole stack (guard with HTTP Basic + app password, dav.routes, dav.service,
// the tasks services, real SQLite). Scenarios from docs/research/caldav-clients.md (§1 discovery,
// §2 sync S1–S12, §3 mapping M3/M6/M8/M10/M12).
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { dump, makeTestApp, setupAdmin, signedInUser, type TestApp, type TestClient } from "../helpers/app";
import { DavClient, QUERY_VTODO, SYNC, davClientFor, responseHrefs, textOf, vtodo } from "./helpers";

const V = "/api/v1";
let app: TestApp;
let web: TestClient;
let dav: DavClient;
let list: { id: string };
let home: string;
let coll: string;

beforeEach(async () => {
  app = makeTestApp();
  web = await setupAdmin(app);
  dav = await davClientFor(app, web, "owner");
  list = (await web.post(`${V}/lists`, { name: "Groceries", color: "#112233" })).body;
  home = "/dav/calendars/owner/";
  coll = `${home}${list.id}/`;
});
afterEach(() => app.close());

/** A refused DAV request changes nothing stored (the sessions/tokens' last-use bookkeeping aside). */
async function unchanged<T>(run: () => Promise<T>): Promise<T> {
  const ignore = ["audit_logs", "sessions", "__drizzle_migrations", "api_tokens", "login_throttle"];
  const before = dump(app.db, ignore);
  const r = await run();
  expect(dump(app.db, ignore)).toEqual(before);
  return r;
}

describe("discovery and authentication", () => {
  test("OPTIONS answers without credentials with the CalDAV DAV header and Allow", async () => {
    for (const p of ["/dav/", "/dav/principals/owner/", home, coll, "/.well-known/caldav"]) {
      const r = await dav.request("OPTIONS", p, undefined, {}, null);
      expect(r.status).toBe(200);
      expect(r.headers.get("dav")).toContain("calendar-access");
      expect(r.headers.get("dav")).toContain("extended-mkcol");
      for (const m of ["PROPFIND", "REPORT", "MKCALENDAR", "MKCOL", "PUT", "DELETE", "PROPPATCH"]) expect(r.headers.get("allow")).toContain(m);
    }
  });

  test("no credentials, the account password, a session cookie or a token without caldav: 401 with a Basic challenge", async () => {
    const noAuth = await dav.request("PROPFIND", "/.well-known/caldav", "", { depth: "0", prefer: "return=minimal", brief: "t" }, null);
    expect(noAuth.status).toBe(401);
    expect(noAuth.headers.get("www-authenticate")).toContain("Basic");
    const password = `Basic ${Buffer.from("owner:correct horse battery").toString("base64")}`;
    expect((await dav.request("PROPFIND", "/dav/", "", { depth: "0" }, password)).status).toBe(401);
    const cookie = [...web.jar].map(([k, v]) => `${k}=${v}`).join("; ");
    expect((await dav.request("PROPFIND", "/dav/", "", { depth: "0", cookie }, null)).status).toBe(401);
    const readOnly = (await web.post(`${V}/tokens`, { name: "r", scopes: ["read"] })).body.secret;
    expect((await dav.request("PROPFIND", "/dav/", "", { depth: "0" }, `Basic ${Buffer.from(`owner:${readOnly}`).toString("base64")}`)).status).toBe(401);
  });

  test("/.well-known/caldav redirects (301) to /dav/, for GET and PROPFIND", async () => {
    for (const m of ["GET", "PROPFIND"]) {
      const r = await dav.request(m, "/.well-known/caldav", undefined, { depth: "0" });
      expect(r.status).toBe(301);
      expect(r.headers.get("location")).toBe("/dav/");
    }
  });

  test("root, principal and home each give current-user-principal and calendar-home-set", async () => {
    for (const p of ["/dav/", "/dav/principals/owner/", home]) {
      const r = await dav.propfind(p, "<d:current-user-principal/><c:calendar-home-set/>");
      expect(r.status).toBe(207);
      expect(r.text).toContain("<d:current-user-principal><d:href>/dav/principals/owner/</d:href></d:current-user-principal>");
      expect(r.text).toContain("<cal:calendar-home-set><d:href>/dav/calendars/owner/</d:href></cal:calendar-home-set>");
    }
    const p = await dav.propfind("/dav/principals/owner/", "<d:principal-URL/><d:resourcetype/>");
    expect(p.text).toContain("<d:principal-URL><d:href>/dav/principals/owner/</d:href></d:principal-URL>");
    expect(p.text).toContain("<d:principal/>");
  });

  test("Apple's principal PROPFIND: unknown properties are a 404 propstat (never 400/500); Prefer: return=minimal leaves them out", async () => {
    const props = "<d:displayname/><c:calendar-user-address-set/><cs:dropbox-home-URL/><cs:email-address-set/><cs:notification-URL/><d:principal-collection-set/><d:principal-URL/><d:resource-id/><c:schedule-inbox-URL/><c:schedule-outbox-URL/><d:supported-report-set/><x:odd xmlns:x=\"urn:example:odd\"/>";
    const full = await dav.propfind("/dav/principals/owner/", props);
    expect(full.status).toBe(207);
    expect(full.text).toContain("HTTP/1.1 404 Not Found");
    expect(full.text).toContain('<x:odd xmlns:x="urn:example:odd"/>');
    const minimal = await dav.propfind("/dav/principals/owner/", props, "0", { prefer: "return=minimal" });
    expect(minimal.status).toBe(207);
    expect(minimal.text).not.toContain("404 Not Found");
    expect(minimal.text).toContain("<d:principal-URL>");
  });

  test("another user's principal, home, collection and resources are 404", async () => {
    const bobWeb = await signedInUser(app, web, "bob");
    const bobList = (await bobWeb.post(`${V}/lists`, { name: "Bob's" })).body;
    const t = (await bobWeb.post(`${V}/tasks`, { title: "secret", list_id: bobList.id })).body;
    for (const p of ["/dav/principals/bob/", "/dav/calendars/bob/", `/dav/calendars/bob/${bobList.id}/`, `${home}${bobList.id}/`]) {
      expect((await dav.propfind(p, "<d:displayname/>")).status).toBe(404);
    }
    expect((await dav.request("GET", `${home}${bobList.id}/${t.id}.ics`)).status).toBe(404);
    expect((await dav.put(`${home}${bobList.id}/x.ics`, vtodo("x", ["SUMMARY:x"]))).status).toBe(404);
  });
});

describe("collections", () => {
  test("the home's Depth 1 lists every visible list (inbox included) as a VTODO calendar with ctag, sync-token, reports and privileges", async () => {
    const r = await dav.propfind(
      home,
      "<d:resourcetype/><d:displayname/><a:calendar-color/><cs:getctag/><d:sync-token/><c:supported-calendar-component-set/><d:supported-report-set/><d:current-user-privilege-set/><d:owner/>",
      "1",
    );
    expect(r.status).toBe(207);
    const lists = (await web.get(`${V}/lists`)).body.items as { id: string }[];
    expect(responseHrefs(r.text).sort()).toEqual([home, ...lists.map((l) => `${home}${l.id}/`)].sort());
    const mine = r.text.slice(r.text.indexOf(`<d:href>${coll}</d:href>`));
    expect(mine).toContain("<d:resourcetype><d:collection/><cal:calendar/></d:resourcetype>");
    expect(mine).toContain('<cal:supported-calendar-component-set><cal:comp name="VTODO"/></cal:supported-calendar-component-set>');
    expect(mine).toContain("<d:displayname>Groceries</d:displayname>");
    expect(mine).toContain("<ical:calendar-color>#112233FF</ical:calendar-color>");
    expect(mine).toContain("<cal:calendar-query/>");
    expect(mine).toContain("<d:sync-collection/>");
    expect(mine).toContain("<d:write/>");
    expect(textOf(mine, "cs:getctag")).toBe(textOf(mine, "d:sync-token"));
    expect(textOf(mine, "d:sync-token")).toMatch(/^https:\/\/app\.invalid\/ns\/sync\//);
  });

  test("a viewer's shared list is read-only: privilege set says read, PUT and DELETE are 403 and change nothing", async () => {
    const bobWeb = await signedInUser(app, web, "bob");
    const bob = await davClientFor(app, bobWeb, "bob");
    const t = (await web.post(`${V}/tasks`, { title: "milk", list_id: list.id })).body;
    const inv = (await web.post(`${V}/lists/${list.id}/invitations`, { username: "bob", role: "viewer" })).body;
    expect((await bobWeb.post(`${V}/invitations/${inv.id}/accept`)).status).toBe(200);
    const bcoll = `/dav/calendars/bob/${list.id}/`;
    const p = await bob.propfind(bcoll, "<d:current-user-privilege-set/><d:owner/>");
    expect(p.status).toBe(207);
    expect(p.text).toContain("<d:read/>");
    expect(p.text).not.toContain("<d:write/>");
    expect(p.text).toContain("<d:owner><d:href>/dav/principals/owner/</d:href></d:owner>");
    const get = await bob.request("GET", `${bcoll}${t.id}.ics`);
    expect(get.status).toBe(200);
    await unchanged(async () => {
      expect((await bob.put(`${bcoll}${t.id}.ics`, vtodo(t.id, ["SUMMARY:changed"]))).status).toBe(403);
      expect((await bob.put(`${bcoll}new.ics`, vtodo("new", ["SUMMARY:new"]))).status).toBe(403);
      expect((await bob.request("DELETE", `${bcoll}${t.id}.ics`)).status).toBe(403);
      expect((await bob.request("DELETE", bcoll)).status).toBe(403);
    });
    // Removed from the list: the collection is gone for bob.
    const bobId = (await bobWeb.get(`${V}/me`)).body.id;
    expect((await web.delete(`${V}/lists/${list.id}/members/${bobId}`)).status).toBe(204);
    expect((await bob.propfind(bcoll, "<d:displayname/>")).status).toBe(404);
  });

  // (A method Bun does not know, BREW or "Put", never reaches the app: Bun's server closes the connection.)
  test("a method CalDAV does not serve (LOCK, UNLOCK, COPY, ACL, SEARCH, POST, PATCH) is 405 with Allow, and changes nothing", async () => {
    expect((await dav.put(`${coll}m.ics`, vtodo("m", ["SUMMARY:keep"]))).status).toBe(201);
    for (const method of ["LOCK", "UNLOCK", "COPY", "ACL", "SEARCH", "POST", "PATCH"]) {
      for (const path of ["/dav/", home, coll, `${coll}m.ics`]) {
        const r = await unchanged(() => dav.request(method, path, "<x/>", { destination: `${coll}copy.ics` }));
        expect({ method, path, status: r.status }).toEqual({ method, path, status: 405 });
        expect(r.headers.get("allow")).toContain("PROPFIND");
      }
    }
  });

  test("MKCALENDAR at a client-chosen upper-case UUID creates a list that lives at that path; VEVENT-only is refused", async () => {
    const path = `${home}E6948AA3-86CC-40A1-874D-3B0A02FAA781/`;
    const r = await dav.request("MKCALENDAR", path, `<?xml version="1.0"?><c:mkcalendar xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav" xmlns:a="http://apple.com/ns/ical/"><d:set><d:prop><d:displayname>Trip</d:displayname><a:calendar-color>#FF8800FF</a:calendar-color></d:prop></d:set></c:mkcalendar>`);
    expect(r.status).toBe(201);
    const lists = (await web.get(`${V}/lists`)).body.items as { name: string; color: string | null }[];
    expect(lists.find((l) => l.name === "Trip")?.color).toBe("#FF8800");
    const p = await dav.propfind(path, "<d:displayname/><d:resourcetype/>");
    expect(p.status).toBe(207);
    expect(responseHrefs(p.text)).toEqual([path]);
    expect((await dav.put(`${path}a.ics`, vtodo("a", ["SUMMARY:passport"]))).status).toBe(201);
    expect((await dav.request("MKCALENDAR", path, "")).status).toBe(405);
    const vevent = await unchanged(() =>
      dav.request("MKCALENDAR", `${home}events/`, `<c:mkcalendar xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:set><d:prop><c:supported-calendar-component-set><c:comp name="VEVENT"/></c:supported-calendar-component-set></d:prop></d:set></c:mkcalendar>`),
    );
    expect(vevent.status).toBe(403);
    expect(vevent.text).toContain("supported-calendar-component");
  });

  test("Extended MKCOL (tasks.org) creates a list; PROPPATCH renames and recolours per property (207, never 501); DELETE archives it", async () => {
    const path = `${home}3f1a2b9c-0000-4000-8000-000000000001/`;
    const mk = await dav.request(
      "MKCOL",
      path,
      `<?xml version="1.0"?><d:mkcol xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav" xmlns:a="http://apple.com/ns/ical/"><d:set><d:prop><d:resourcetype><d:collection/><c:calendar/></d:resourcetype><d:displayname>Work</d:displayname><c:supported-calendar-component-set><c:comp name="VTODO"/></c:supported-calendar-component-set><a:calendar-color>#00AA00</a:calendar-color></d:prop></d:set></d:mkcol>`,
    );
    expect(mk.status).toBe(201);
    const pp = await dav.request(
      "PROPPATCH",
      path,
      `<d:propertyupdate xmlns:d="DAV:" xmlns:a="http://apple.com/ns/ical/"><d:set><d:prop><d:displayname>Office</d:displayname><a:calendar-color>#0000FF</a:calendar-color><a:calendar-order>3</a:calendar-order></d:prop></d:set></d:propertyupdate>`,
    );
    expect(pp.status).toBe(207);
    expect(pp.text).toContain("HTTP/1.1 200 OK");
    expect(pp.text).toContain("<ical:calendar-order/>");
    expect(pp.text).toContain("HTTP/1.1 403 Forbidden");
    const l = ((await web.get(`${V}/lists`)).body.items as { id: string; name: string; color: string }[]).find((x) => x.name === "Office")!;
    expect(l.color).toBe("#0000FF");
    expect((await dav.request("DELETE", path)).status).toBe(204);
    expect(((await web.get(`${V}/lists`)).body.items as { id: string }[]).some((x) => x.id === l.id)).toBe(false);
    expect((await web.get(`${V}/lists/${l.id}`)).body.deleted_at).not.toBeNull();
    expect((await dav.propfind(path, "<d:displayname/>")).status).toBe(404);
  });
});

describe("resources: GET, PUT, DELETE with ETags and preconditions", () => {
  test("create with If-None-Match: *, then again is 412; stale If-Match is 412 and changes nothing; the current one updates", async () => {
    const href = `${coll}0A1B-uid@example.com.ics`;
    const created = await dav.put(href, vtodo("uid-1@example.com", ["SUMMARY:eggs"]), { "if-none-match": "*" });
    expect(created.status).toBe(201);
    const g = await dav.request("GET", href);
    expect(g.status).toBe(200);
    expect(g.headers.get("content-type")).toContain("text/calendar");
    const etag = g.headers.get("etag")!;
    expect(etag).toMatch(/^"[^"]+"$/);
    await unchanged(async () => expect((await dav.put(href, vtodo("uid-1@example.com", ["SUMMARY:dup"]), { "if-none-match": "*" })).status).toBe(412));
    expect((await dav.put(href, vtodo("uid-1@example.com", ["SUMMARY:eggs (6)"]), { "if-match": etag })).status).toBe(204);
    const g2 = await dav.request("GET", href);
    expect(g2.text).toContain("SUMMARY:eggs (6)");
    expect(g2.headers.get("etag")).not.toBe(etag);
    await unchanged(async () => expect((await dav.put(href, vtodo("uid-1@example.com", ["SUMMARY:lost"]), { "if-match": etag })).status).toBe(412));
    expect((await dav.request("GET", href, undefined, { "if-none-match": g2.headers.get("etag")! })).status).toBe(304);
    // The PROPFIND/REPORT etag is the GET one.
    const q = await dav.report(coll, QUERY_VTODO());
    expect(q.text).toContain(`<d:href>${coll}0A1B-uid%40example.com.ics</d:href>`);
    expect(q.text.replace(/&quot;/g, '"')).toContain(`<d:getetag>${g2.headers.get("etag")}</d:getetag>`);
    // If-Match on a resource that does not exist.
    await unchanged(async () => expect((await dav.put(`${coll}nope.ics`, vtodo("nope", ["SUMMARY:x"]), { "if-match": etag })).status).toBe(412));
  });

  test("a web-app edit changes the resource's ETag and the collection's ctag; another member's ETag stays", async () => {
    const a = (await web.post(`${V}/tasks`, { title: "a", list_id: list.id })).body;
    const b = (await web.post(`${V}/tasks`, { title: "b", list_id: list.id })).body;
    const ea = (await dav.request("GET", `${coll}${a.id}.ics`)).headers.get("etag");
    const eb = (await dav.request("GET", `${coll}${b.id}.ics`)).headers.get("etag");
    const ctag = textOf((await dav.propfind(coll, "<cs:getctag/>")).text, "cs:getctag");
    expect((await web.patch(`${V}/tasks/${a.id}`, { version: a.version, title: "a2", priority: 3 })).status).toBe(200);
    expect((await dav.request("GET", `${coll}${a.id}.ics`)).headers.get("etag")).not.toBe(ea);
    expect((await dav.request("GET", `${coll}${b.id}.ics`)).headers.get("etag")).toBe(eb);
    expect(textOf((await dav.propfind(coll, "<cs:getctag/>")).text, "cs:getctag")).not.toBe(ctag);
  });

  test("unknown and X- properties, VALARMs and the client's PRIORITY survive a web-app edit (no data lost in a round trip)", async () => {
    const href = `${coll}rt.ics`;
    const lines = [
      "SUMMARY:round trip",
      "PRIORITY:2",
      "X-APPLE-SORT-ORDER:42",
      "X-OC-HIDESUBTASKS:1",
      "X-MOZ-LASTACK:20261101T000000Z",
      "GEO:37.386013;-122.082932",
      "URL:https://example.com/x",
      "CLASS:PRIVATE",
      "X-UNKNOWN-IANA;FOO=bar:value\\, with comma",
      "BEGIN:VALARM",
      "ACTION:DISPLAY",
      "DESCRIPTION:ring",
      "TRIGGER;VALUE=DATE-TIME:19760401T005545Z",
      "END:VALARM",
    ];
    expect((await dav.put(href, vtodo("rt", lines))).status).toBe(201);
    const task = ((await web.get(`${V}/tasks?list_id=${list.id}`)).body.items as { id: string; title: string; version: number; priority: number }[])[0]!;
    expect(task.priority).toBe(3);
    expect((await web.patch(`${V}/tasks/${task.id}`, { version: task.version, title: "edited in the web app" })).status).toBe(200);
    const g = await dav.request("GET", href);
    expect(g.text).toContain("SUMMARY:edited in the web app");
    // X-APPLE-SORT-ORDER is the manual order (its own test below); everything else comes back as sent.
    for (const l of lines.slice(1).filter((l) => !l.startsWith("X-APPLE-SORT-ORDER"))) expect(g.text).toContain(l);
    expect(g.text).toMatch(/X-APPLE-SORT-ORDER:\d+/);
    // The band changed in the web app: the band's value replaces the client's.
    const t2 = (await web.get(`${V}/tasks/${task.id}`)).body;
    expect((await web.patch(`${V}/tasks/${task.id}`, { version: t2.version, priority: 1 })).status).toBe(200);
    const g2 = await dav.request("GET", href);
    expect(g2.text).toContain("PRIORITY:9");
    expect(g2.text).not.toContain("PRIORITY:2");
  });

  test("VALARM ↔ the user's reminders: a client's alarm becomes a reminder, comes back marked, is removed with the alarm; web-app reminders are sent as VALARMs", async () => {
    const href = `${coll}al.ics`;
    const due = "DUE:20261201T090000Z";
    expect((await dav.put(href, vtodo("al", ["SUMMARY:call", due, "BEGIN:VALARM", "ACTION:DISPLAY", "DESCRIPTION:x", "TRIGGER;RELATED=END:-PT15M", "END:VALARM"]))).status).toBe(201);
    const task = ((await web.get(`${V}/tasks?list_id=${list.id}`)).body.items as { id: string; version: number }[])[0]!;
    let rems = (await web.get(`${V}/tasks/${task.id}/reminders`)).body.items as { id: string; kind: string; minutes_before: number }[];
    expect(rems.map((r) => [r.kind, r.minutes_before])).toEqual([["before_due", 15]]);
    const g = await dav.request("GET", href);
    expect(g.text.match(/BEGIN:VALARM/g)!.length).toBe(1);
    expect(g.text).toContain("TRIGGER;RELATED=END:-PT15M");
    expect(g.text).toContain(`X-APP-REMINDER:${rems[0]!.id}`);
    // Sent back as it came: the same reminder, nothing duplicated.
    expect((await dav.put(href, g.text)).status).toBe(204);
    const again = (await web.get(`${V}/tasks/${task.id}/reminders`)).body.items as { id: string }[];
    expect(again.map((r) => r.id)).toEqual([rems[0]!.id]);
    expect((await dav.request("GET", href)).text.match(/BEGIN:VALARM/g)!.length).toBe(1);
    // A reminder added in the web app is sent as a VALARM; an alarm the client dropped removes its reminder.
    expect((await web.post(`${V}/tasks/${task.id}/reminders`, { kind: "at", at: "2026-12-01T08:00:00Z" })).status).toBe(201);
    const g2 = await dav.request("GET", href);
    expect(g2.text).toContain("TRIGGER;VALUE=DATE-TIME:20261201T080000Z");
    expect((await dav.put(href, vtodo("al", ["SUMMARY:call", due]))).status).toBe(204);
    expect((await web.get(`${V}/tasks/${task.id}/reminders`)).body.items).toEqual([]);
  });

  test("X-APPLE-SORT-ORDER ↔ manual order: sent from the task's key, a client's move reorders the list, a web-app move changes only the moved task", async () => {
    const ids: string[] = [];
    for (const t of ["one", "two", "three"]) ids.push((await web.post(`${V}/tasks`, { title: t, list_id: list.id })).body.id);
    const order = async () => ((await web.get(`${V}/tasks?list_id=${list.id}&sort=manual`)).body.items as { title: string }[]).map((t) => t.title);
    expect(await order()).toEqual(["one", "two", "three"]);
    const sortOf = async (id: string) => Number(/X-APPLE-SORT-ORDER:(\d+)/.exec((await dav.request("GET", `${coll}${id}.ics`)).text)![1]);
    const [s1, s2, s3] = [await sortOf(ids[0]!), await sortOf(ids[1]!), await sortOf(ids[2]!)];
    expect(s1 < s2 && s2 < s3).toBe(true);
    // The client moves "three" between "one" and "two".
    const g = await dav.request("GET", `${coll}${ids[2]}.ics`);
    expect((await dav.put(`${coll}${ids[2]}.ics`, g.text.replace(`X-APPLE-SORT-ORDER:${s3}`, `X-APPLE-SORT-ORDER:${s1 + 1}`))).status).toBe(204);
    expect(await order()).toEqual(["one", "three", "two"]);
    // Sent back unchanged: no move.
    const g2 = await dav.request("GET", `${coll}${ids[2]}.ics`);
    expect((await dav.put(`${coll}${ids[2]}.ics`, g2.text)).status).toBe(204);
    expect(await order()).toEqual(["one", "three", "two"]);
    // A web-app move: only the moved task's resource changes.
    const e1 = (await dav.request("GET", `${coll}${ids[0]}.ics`)).headers.get("etag");
    expect((await web.post(`${V}/tasks/${ids[1]}/move`, { to: "first" })).status).toBe(200);
    expect(await order()).toEqual(["two", "one", "three"]);
    expect((await dav.request("GET", `${coll}${ids[0]}.ics`)).headers.get("etag")).toBe(e1);
    expect(await sortOf(ids[1]!)).toBeLessThan(await sortOf(ids[0]!));
  });

  test("mapping: DUE date ↔ date-only, TZID and UTC ↔ instant; CATEGORIES ↔ the user's tags; STATUS/COMPLETED ↔ completion; RELATED-TO ↔ subtask", async () => {
    expect((await dav.put(`${coll}p.ics`, vtodo("parent-uid", ["SUMMARY:parent", "DUE;VALUE=DATE:20261215", "CATEGORIES:home,errands"]))).status).toBe(201);
    expect((await dav.put(`${coll}c.ics`, vtodo("child-uid", ["SUMMARY:child", "DUE;TZID=America/New_York:20261201T090000", "RELATED-TO;RELTYPE=PARENT:parent-uid"]))).status).toBe(201);
    expect((await dav.put(`${coll}d.ics`, vtodo("done-uid", ["SUMMARY:done", "DUE:20261201T090000Z", "STATUS:COMPLETED", "COMPLETED:20261102T100000Z", "PERCENT-COMPLETE:100"]))).status).toBe(201);
    const items = (await web.get(`${V}/tasks?list_id=${list.id}&completed=false`)).body.items as { title: string; due_at: string; tags: { name: string }[]; subtasks: { title: string; due_at: string }[] }[];
    const parent = items.find((t) => t.title === "parent")!;
    expect(parent.due_at).toBe("2026-12-15");
    expect(parent.tags.map((t) => t.name).sort()).toEqual(["errands", "home"]);
    expect(parent.subtasks.map((s) => [s.title, s.due_at])).toEqual([["child", "2026-12-01T14:00:00.000Z"]]);
    const done = (await web.get(`${V}/tasks?list_id=${list.id}&completed=true`)).body.items as { title: string; completed: boolean }[];
    expect(done.map((t) => t.title)).toEqual(["done"]);
    const c = await dav.request("GET", `${coll}c.ics`);
    expect(c.text).toContain("RELATED-TO:parent-uid");
    expect(c.text).toContain("DUE:20261201T140000Z");
    const p = await dav.request("GET", `${coll}p.ics`);
    expect(p.text).toContain("DUE;VALUE=DATE:20261215");
    expect(p.text).toContain("CATEGORIES:errands,home");
    // Un-complete (M8).
    expect((await dav.put(`${coll}d.ics`, vtodo("done-uid", ["SUMMARY:done", "DUE:20261201T090000Z", "STATUS:NEEDS-ACTION"]))).status).toBe(204);
    const open = (await web.get(`${V}/tasks?list_id=${list.id}&completed=false`)).body.items as { title: string }[];
    expect(open.map((t) => t.title)).toContain("done");
    expect((await dav.request("GET", `${coll}d.ics`)).text).toContain("STATUS:NEEDS-ACTION");
  });

  test("a child sent before its parent (tasks.org) becomes its subtask when the parent arrives; a re-PUT of the parent keeps the link", async () => {
    expect((await dav.put(`${coll}child.ics`, vtodo("c-1", ["SUMMARY:child", "RELATED-TO;RELTYPE=PARENT:p-1"]))).status).toBe(201);
    expect((await dav.request("GET", `${coll}child.ics`)).text).toContain("RELATED-TO;RELTYPE=PARENT:p-1");
    expect((await dav.put(`${coll}parent.ics`, vtodo("p-1", ["SUMMARY:parent"]))).status).toBe(201);
    const top = () => web.get(`${V}/tasks?list_id=${list.id}`).then((r) => r.body.items as { title: string; subtasks: { title: string }[] }[]);
    expect((await top()).map((t) => [t.title, t.subtasks.map((s) => s.title)])).toEqual([["parent", ["child"]]]);
    const child = await dav.request("GET", `${coll}child.ics`);
    expect(child.text.match(/RELATED-TO/g)!.length).toBe(1);
    expect(child.text).toContain("RELATED-TO:p-1");
    expect((await dav.put(`${coll}parent.ics`, vtodo("p-1", ["SUMMARY:parent renamed"]))).status).toBe(204);
    expect((await top()).map((t) => [t.title, t.subtasks.map((s) => s.title)])).toEqual([["parent renamed", ["child"]]]);
  });

  test("DELETE moves the task to the trash; a stale If-Match is 412; a deleted href is 404; the UID can be used again", async () => {
    const t = (await web.post(`${V}/tasks`, { title: "x", list_id: list.id })).body;
    const href = `${coll}${t.id}.ics`;
    const etag = (await dav.request("GET", href)).headers.get("etag")!;
    await unchanged(async () => expect((await dav.request("DELETE", href, undefined, { "if-match": '"0-0"' })).status).toBe(412));
    expect((await dav.request("DELETE", href, undefined, { "if-match": etag })).status).toBe(204);
    expect((await web.get(`${V}/tasks/${t.id}`)).body.deleted_at).not.toBeNull();
    expect((await dav.request("GET", href)).status).toBe(404);
    expect((await dav.request("DELETE", href)).status).toBe(404);
    expect((await dav.put(`${coll}again.ics`, vtodo(t.id, ["SUMMARY:recreated"]))).status).toBe(201);
  });

  test("the same UID under another name or in another list is no-uid-conflict (never a second task)", async () => {
    const other = (await web.post(`${V}/lists`, { name: "Other" })).body;
    expect((await dav.put(`${coll}one.ics`, vtodo("same-uid", ["SUMMARY:one"]))).status).toBe(201);
    // Under another name, here or in another list: a conflict, whose href is the existing resource's URL path (RFC 4791 §5.3.2.1).
    for (const p of [`${coll}two.ics`, `${home}${other.id}/two.ics`]) {
      const r = await unchanged(() => dav.put(p, vtodo("same-uid", ["SUMMARY:two"])));
      expect(r.status).toBe(403);
      expect(r.text).toContain(`<cal:no-uid-conflict><d:href>${coll}one.ics</d:href></cal:no-uid-conflict>`);
    }
    // tasks.org moves a task: DELETE in the old list, PUT in the new one → one task.
    expect((await dav.request("DELETE", `${coll}one.ics`)).status).toBe(204);
    expect((await dav.put(`${home}${other.id}/one.ics`, vtodo("same-uid", ["SUMMARY:one"]))).status).toBe(201);
  });

  test("MOVE (RFC 4918 §9.9) to another collection: same task, UID and kept properties; 201/204; tombstone in the source, member in the target", async () => {
    const other = (await web.post(`${V}/lists`, { name: "Other" })).body;
    const ocoll = `${home}${other.id}/`;
    expect((await dav.put(`${coll}a.ics`, vtodo("uid-a", ["SUMMARY:a", "X-ODD;P=1:kept"]))).status).toBe(201);
    const [ta] = (await web.get(`${V}/tasks?list_id=${list.id}`)).body.items;
    const tok = (p: string) => dav.propfind(p, "<d:sync-token/>").then((r) => textOf(r.text, "d:sync-token")!);
    const [s0, o0] = [await tok(coll), await tok(ocoll)];
    // Absolute URL through a proxy (another host and scheme), the default Overwrite.
    const mv = await dav.request("MOVE", `${coll}a.ics`, undefined, { destination: `https://tasks.example.org${ocoll}a.ics` });
    expect(mv.status).toBe(201);
    expect(mv.headers.get("location")).toBe(`${ocoll}a.ics`);
    const moved = (await web.get(`${V}/tasks/${ta.id}`)).body;
    expect(moved.list_id).toBe(other.id);
    expect((await web.get(`${V}/tasks?list_id=${list.id}`)).body.items).toHaveLength(0);
    const got = await dav.request("GET", `${ocoll}a.ics`);
    expect(got.text).toContain("UID:uid-a");
    expect(got.text).toContain("X-ODD;P=1:kept");
    expect((await dav.request("GET", `${coll}a.ics`)).status).toBe(404);
    const src = await dav.report(coll, SYNC(s0));
    expect(src.text).toContain(`<d:response><d:href>${coll}a.ics</d:href><d:status>HTTP/1.1 404 Not Found</d:status></d:response>`);
    const dst = await dav.report(ocoll, SYNC(o0));
    expect(responseHrefs(dst.text)).toEqual([`${ocoll}a.ics`]);
    expect(dst.text).not.toContain("404 Not Found");
    // Back by path, percent-encoded; Overwrite: F onto an occupied name is 412 and changes nothing.
    expect((await dav.put(`${coll}a.ics`, vtodo("uid-b", ["SUMMARY:b"]))).status).toBe(201);
    await unchanged(async () => expect((await dav.request("MOVE", `${ocoll}a.ics`, undefined, { destination: `${coll}%61.ics`, overwrite: "F" })).status).toBe(412));
    // Overwrite: T replaces it (the occupant goes to the trash): 204.
    expect((await dav.request("MOVE", `${ocoll}a.ics`, undefined, { destination: `${coll}a.ics`, overwrite: "T" })).status).toBe(204);
    const items = (await web.get(`${V}/tasks?list_id=${list.id}`)).body.items;
    expect(items.map((t: { id: string }) => t.id)).toEqual([ta.id]);
    expect((await dav.request("GET", `${coll}a.ics`)).text).toContain("UID:uid-a");
    expect((await web.get(`${V}/trash`)).body.items.some((t: { title: string }) => t.title === "b")).toBe(true);
    const allow = (await dav.request("OPTIONS", coll, undefined, {}, null)).headers.get("allow")!;
    expect(allow).toContain("MOVE");
  });

  test("MOVE refusals: 404 source, 409 missing collection, 403 viewer/same href/collection/elsewhere (never a 5xx), 400 bad headers; nothing changes (a MOVE under another name: move-rename.test.ts)", async () => {
    const other = (await web.post(`${V}/lists`, { name: "Other" })).body;
    const ocoll = `${home}${other.id}/`;
    expect((await dav.put(`${coll}a.ics`, vtodo("uid-a", ["SUMMARY:a"]))).status).toBe(201);
    const bobWeb = await signedInUser(app, web, "bob");
    const bob = await davClientFor(app, bobWeb, "bob");
    const inv = (await web.post(`${V}/lists/${list.id}/invitations`, { username: "bob", role: "viewer" })).body;
    expect((await bobWeb.post(`${V}/invitations/${inv.id}/accept`)).status).toBe(200);
    const bobList = (await bobWeb.post(`${V}/lists`, { name: "Bob's" })).body;
    expect((await bob.put(`/dav/calendars/bob/${bobList.id}/mine.ics`, vtodo("uid-bob", ["SUMMARY:bob's"]))).status).toBe(201);
    const mv = (c: DavClient, from: string, h: Record<string, string>) => c.request("MOVE", from, undefined, h);
    await unchanged(async () => {
      expect((await mv(dav, `${coll}nope.ics`, { destination: `${ocoll}nope.ics` })).status).toBe(404);
      expect((await mv(dav, `${coll}a.ics`, { destination: `${home}no-such-list/a.ics` })).status).toBe(409);
      expect((await mv(dav, `${coll}a.ics`, { destination: ocoll })).status).toBe(409);
      expect((await mv(dav, `${coll}a.ics`, { destination: `${coll}a.ics` })).status).toBe(403);
      expect((await mv(dav, coll, { destination: `${home}x/` })).status).toBe(403);
      expect((await mv(dav, `${coll}a.ics`, { destination: `/dav/calendars/bob/${bobList.id}/a.ics` })).status).toBe(403);
      expect((await mv(dav, `${coll}a.ics`, { destination: "https://elsewhere.example/remote.php/dav/a.ics" })).status).toBe(403);
      expect((await mv(dav, `${coll}a.ics`, {})).status).toBe(400);
      expect((await mv(dav, `${coll}a.ics`, { destination: `${ocoll}a.ics`, overwrite: "maybe" })).status).toBe(400);
      expect((await mv(dav, `${coll}a.ics`, { destination: `${ocoll}a.ics`, "if-match": '"0-0"' })).status).toBe(412);
      // A viewer's source, or a viewer's list as the destination.
      const [ta] = (await web.get(`${V}/tasks?list_id=${list.id}`)).body.items;
      expect((await mv(bob, `/dav/calendars/bob/${list.id}/a.ics`, { destination: `/dav/calendars/bob/${bobList.id}/a.ics` })).status).toBe(403);
      expect((await mv(bob, `/dav/calendars/bob/${bobList.id}/mine.ics`, { destination: `/dav/calendars/bob/${list.id}/mine.ics` })).status).toBe(403);
      // The PUT fallback into a viewer's list, or from one: still refused.
      expect((await bob.put(`/dav/calendars/bob/${list.id}/mine.ics`, vtodo("uid-bob", ["SUMMARY:bob's"]))).status).toBe(403);
      expect((await bob.put(`/dav/calendars/bob/${bobList.id}/a.ics`, vtodo("uid-a", ["SUMMARY:a"]))).status).toBe(403);
      expect(ta.title).toBe("a");
    });
  });

  test("bad input: malformed XML, a DOCTYPE, non-iCalendar, a VEVENT, a UID-less object → 4xx, nothing stored, never 5xx", async () => {
    await unchanged(async () => {
      expect((await dav.request("PROPFIND", coll, "<d:propfind xmlns:d='DAV:'><d:prop>", { depth: "0" })).status).toBe(400);
      expect((await dav.request("PROPFIND", coll, `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><d:propfind xmlns:d="DAV:"><d:allprop/></d:propfind>`, { depth: "0" })).status).toBe(400);
      expect((await dav.request("REPORT", coll, "<x:unknown-report xmlns:x='urn:x'/>")).status).toBe(403);
      const notIcs = await dav.put(`${coll}bad.ics`, "hello");
      expect(notIcs.status).toBe(403);
      expect(notIcs.text).toContain("valid-calendar-data");
      const ev = await dav.put(`${coll}ev.ics`, "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:e\r\nDTSTART:20261201T090000Z\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n");
      expect(ev.status).toBe(403);
      expect(ev.text).toContain("supported-calendar-component");
      expect((await dav.put(`${coll}nouid.ics`, "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VTODO\r\nSUMMARY:x\r\nEND:VTODO\r\nEND:VCALENDAR\r\n")).status).toBe(403);
      expect((await dav.put(`${coll}long.ics`, vtodo("long", [`SUMMARY:${"x".repeat(600)}`]))).status).toBe(403);
      expect((await dav.request("PROPFIND", "/dav/calendars/owner/%E0%A4%A/", "", { depth: "0" })).status).toBe(404);
      const deep = `<d:propfind xmlns:d="DAV:">${"<d:prop>".repeat(20_000)}${"</d:prop>".repeat(20_000)}</d:propfind>`;
      expect((await dav.request("PROPFIND", coll, deep, { depth: "0" })).status).toBe(400);
      const wide = `<d:propfind xmlns:d="DAV:"><d:prop>${"<d:x/>".repeat(60_000)}</d:prop></d:propfind>`;
      expect((await dav.request("PROPFIND", coll, wide, { depth: "0" })).status).toBe(400);
      expect((await dav.request("PUT", `${coll}big.ics`, "x".repeat(1024 * 1024 + 1))).status).toBe(413);

    });
  });
  test("values that are not of their type (DUE, PRIORITY, COMPLETED, RRULE, TRIGGER) or absurd nesting: refused or kept, never a 5xx, and the collection still lists", async () => {
    const names: string[] = [];
    for (const [i, bad] of [
      vtodo("v1", ["SUMMARY:x", "DUE:not-a-date"]),
      vtodo("v2", ["SUMMARY:x", "PRIORITY:high"]),
      vtodo("v3", ["SUMMARY:x", "COMPLETED:yesterday", "STATUS:COMPLETED"]),
      vtodo("v4", ["SUMMARY:x", "RRULE:FREQ=SOMETIMES"]),
      vtodo("v5", ["SUMMARY:x", "BEGIN:VALARM", "TRIGGER:soon", "END:VALARM"]),
      `BEGIN:VCALENDAR\r\n${"BEGIN:X\r\n".repeat(5000)}${"END:X\r\n".repeat(5000)}END:VCALENDAR\r\n`,
    ].entries()) {
      const r = await dav.put(`${coll}bad-${i}.ics`, bad);
      expect(r.status).toBeLessThan(500);
      if (r.status === 201) names.push(`bad-${i}.ics`);
      else expect(r.status).toBeGreaterThanOrEqual(400);
    }
    const q = await dav.report(coll, QUERY_VTODO("<d:getetag/><c:calendar-data/>"));
    expect(q.status).toBe(207);
    for (const n of names) {
      expect(q.text).toContain(`${coll}${n}`);
      expect((await dav.request("GET", `${coll}${n}`)).status).toBe(200);
    }
  });
});

describe("REPORTs", () => {
  test("calendar-query returns every member (completed, undated, subtasks, repeating) with ETags and data; a VEVENT filter none", async () => {
    const a = (await web.post(`${V}/tasks`, { title: "open undated", list_id: list.id })).body;
    const b = (await web.post(`${V}/tasks`, { title: "done", list_id: list.id, completed: true })).body;
    const s = (await web.post(`${V}/tasks`, { title: "sub", parent_id: a.id })).body;
    const r = (await web.post(`${V}/tasks`, { title: "daily", list_id: list.id, due_at: "2026-12-01" })).body;
    expect((await web.post(`${V}/recurrences`, { task_id: r.id, kind: "rrule", rrule: "FREQ=DAILY" })).status).toBe(201);
    const q = await dav.report(coll, QUERY_VTODO("<d:getetag/><c:calendar-data/>"));
    expect(q.status).toBe(207);
    expect(responseHrefs(q.text).sort()).toEqual([a, b, s, r].map((t) => `${coll}${t.id}.ics`).sort());
    expect(q.text.match(/<d:getetag>/g)!.length).toBe(4);
    expect(q.text).toContain("RRULE:FREQ=DAILY");
    expect(q.text).toContain("DTSTART;VALUE=DATE:20261201");
    const ev = await dav.report(coll, `<c:calendar-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><d:getetag/></d:prop><c:filter><c:comp-filter name="VCALENDAR"><c:comp-filter name="VEVENT"/></c:comp-filter></c:filter></c:calendar-query>`);
    expect(responseHrefs(ev.text)).toEqual([]);
    // python-caldav's "open todos" filter.
    const open = await dav.report(coll, QUERY_VTODO("<d:getetag/>", `<c:prop-filter name="STATUS"><c:text-match negate-condition="yes">COMPLETED</c:text-match></c:prop-filter>`));
    expect(responseHrefs(open.text).sort()).toEqual([a, s, r].map((t) => `${coll}${t.id}.ics`).sort());
  });

  test("calendar-query time-range matches by due (RFC 4791 §9.9)", async () => {
    const inside = (await web.post(`${V}/tasks`, { title: "in", list_id: list.id, due_at: "2026-12-10T12:00:00Z" })).body;
    await web.post(`${V}/tasks`, { title: "out", list_id: list.id, due_at: "2027-01-10T12:00:00Z" });
    const q = await dav.report(coll, QUERY_VTODO("<d:getetag/>", `<c:time-range start="20261201T000000Z" end="20261231T000000Z"/>`));
    expect(responseHrefs(q.text).filter((h) => h !== coll)).toContain(`${coll}${inside.id}.ics`);
    expect(q.text).not.toContain("out");
    expect(responseHrefs(q.text).length).toBe(1);
  });

  test("calendar-multiget: 200 per existing href (absolute or path, encoded or not), 404 per missing one", async () => {
    const t = (await web.post(`${V}/tasks`, { title: "x", list_id: list.id })).body;
    expect((await dav.put(`${coll}with%20space%2Bplus.ics`, vtodo("sp", ["SUMMARY:sp"]))).status).toBe(201);
    const body = `<c:calendar-multiget xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><d:getetag/><c:calendar-data/></d:prop><d:href>${coll}${t.id}.ics</d:href><d:href>http://localhost${coll}with%20space%2Bplus.ics</d:href><d:href>${coll}gone.ics</d:href></c:calendar-multiget>`;
    const r = await dav.report(coll, body);
    expect(r.status).toBe(207);
    expect(r.text.match(/HTTP\/1.1 200 OK/g)!.length).toBe(2);
    expect(r.text).toContain(`<d:response><d:href>${coll}gone.ics</d:href><d:status>HTTP/1.1 404 Not Found</d:status></d:response>`);
    expect(r.text).toContain("SUMMARY:sp");
  });

  test("hrefs keep one canonical percent-encoding (all but RFC 3986 unreserved): a client's %40, %20, %2B, %25, UTF-8 spelling comes back exactly, everywhere", async () => {
    const names = ["abc%40host.ics", "a%20b.ics", "a%2Bb.ics", "100%25.ics", "%C3%A9t%C3%A9%F0%9F%8D%8E.ics", "x~y_z-1.ics"];
    const tok = textOf((await dav.propfind(coll, "<d:sync-token/>")).text, "d:sync-token")!;
    for (const [i, n] of names.entries()) expect((await dav.put(`${coll}${n}`, vtodo(`uid-${i}@host`, [`SUMMARY:n${i}`]))).status).toBe(201);
    // A client that wrote @, +, ( unencoded gets the canonical spelling back (equal once decoded).
    expect((await dav.put(`${coll}raw@x+(1).ics`, vtodo("raw@x", ["SUMMARY:raw"]))).status).toBe(201);
    const want = [...names.map((n) => `${coll}${n}`), `${coll}raw%40x%2B%281%29.ics`].sort();
    const listing = await dav.propfind(coll, "<d:getetag/>", "1");
    expect(responseHrefs(listing.text).filter((h) => h !== coll).sort()).toEqual(want);
    expect(responseHrefs((await dav.report(coll, QUERY_VTODO())).text).sort()).toEqual(want);
    expect(responseHrefs((await dav.report(coll, SYNC(tok))).text).sort()).toEqual(want);
    expect(responseHrefs((await dav.report(coll, SYNC(""))).text).sort()).toEqual(want);
    const mg = await dav.report(coll, `<c:calendar-multiget xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><d:getetag/></d:prop>${want.map((h) => `<d:href>${h}</d:href>`).join("")}</c:calendar-multiget>`);
    expect(responseHrefs(mg.text).sort()).toEqual(want);
    expect(mg.text).not.toContain("404");
    // The resource answers at its spelling and at the decoded one.
    expect((await dav.request("GET", `${coll}abc%40host.ics`)).text).toContain("UID:uid-0@host");
    expect((await dav.request("GET", `${coll}abc@host.ics`)).status).toBe(200);
    // no-uid-conflict names the existing resource in the same spelling.
    const conflict = await dav.put(`${coll}other.ics`, vtodo("uid-0@host", ["SUMMARY:dup"]));
    expect(conflict.text).toContain(`<d:href>${coll}abc%40host.ics</d:href>`);
    // Tombstones too.
    const before = textOf((await dav.propfind(coll, "<d:sync-token/>")).text, "d:sync-token")!;
    for (const n of names) expect((await dav.request("DELETE", `${coll}${n}`)).status).toBe(204);
    const gone = await dav.report(coll, SYNC(before));
    expect(responseHrefs(gone.text).sort()).toEqual(names.map((n) => `${coll}${n}`).sort());
    expect(gone.text.match(/404 Not Found/g)).toHaveLength(names.length);
  });

  test("sync-collection with DAV:limit: at most n answers, a 507 on the collection, and the rest from the token given back", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await web.post(`${V}/tasks`, { title: `t${i}`, list_id: list.id })).body.id);
    const limited = (tok: string) => SYNC(tok).replace("<d:prop>", "<d:limit><d:nresults>2</d:nresults></d:limit><d:prop>");
    const seen: string[] = [];
    let tok = "";
    for (let round = 0; round < 5; round++) {
      const r = await dav.report(coll, limited(tok));
      expect(r.status).toBe(207);
      const got = responseHrefs(r.text).filter((h) => h !== coll);
      expect(got.length).toBeLessThanOrEqual(2);
      seen.push(...got);
      tok = textOf(r.text, "d:sync-token")!;
      if (!r.text.includes("507 Insufficient Storage")) break;
    }
    expect(seen.sort()).toEqual(ids.map((id) => `${coll}${id}.ics`).sort());
    expect((await dav.report(coll, SYNC(tok).replace("<d:prop>", "<d:limit><d:nresults>0</d:nresults></d:limit><d:prop>"))).status).toBe(400);
  });

  test("sync-collection: initial, then only what changed (API create, edit, delete as a tombstone, move out), then nothing; bad tokens are valid-sync-token", async () => {
    const a = (await web.post(`${V}/tasks`, { title: "a", list_id: list.id })).body;
    const s0 = await dav.report(coll, SYNC(""));
    expect(responseHrefs(s0.text)).toEqual([`${coll}${a.id}.ics`]);
    const t1 = textOf(s0.text, "d:sync-token")!;
    const b = (await web.post(`${V}/tasks`, { title: "b", list_id: list.id })).body;
    const s1 = await dav.report(coll, SYNC(t1));
    expect(responseHrefs(s1.text)).toEqual([`${coll}${b.id}.ics`]);
    const t2 = textOf(s1.text, "d:sync-token")!;
    expect(t2).not.toBe(t1);
    expect((await web.delete(`${V}/tasks/${a.id}`)).status).toBe(204);
    const other = (await web.post(`${V}/lists`, { name: "Other" })).body;
    expect((await web.patch(`${V}/tasks/${b.id}`, { version: b.version, list_id: other.id })).status).toBe(200);
    const s2 = await dav.report(coll, SYNC(t2));
    expect(s2.text).toContain(`<d:response><d:href>${coll}${a.id}.ics</d:href><d:status>HTTP/1.1 404 Not Found</d:status></d:response>`);
    expect(s2.text).toContain(`<d:response><d:href>${coll}${b.id}.ics</d:href><d:status>HTTP/1.1 404 Not Found</d:status></d:response>`);
    const t3 = textOf(s2.text, "d:sync-token")!;
    const s3 = await dav.report(coll, SYNC(t3));
    expect(responseHrefs(s3.text)).toEqual([]);
    expect(textOf(s3.text, "d:sync-token")).toBe(t3);
    const otherToken = textOf((await dav.propfind(`${home}${other.id}/`, "<d:sync-token/>")).text, "d:sync-token")!;
    for (const bad of ["garbage", otherToken, t3.replace(/\/(\d+)$/, "/99999999"), "http://radicale.org/ns/sync/abc"]) {
      const r = await dav.report(coll, SYNC(bad));
      expect(r.status).toBe(403);
      expect(r.text).toContain("<d:valid-sync-token/>");
    }
  });
});

describe("repeating tasks complete exactly once", () => {
  const series = (lines: string[]) => vtodo("rep-uid", ["SUMMARY:water plants", "DTSTART;VALUE=DATE:20261201", "RRULE:FREQ=DAILY;COUNT=5", ...lines]);

  test("EXDATE ↔ skipped occurrences both ways (date-only series): a web-app skip is an EXDATE, a client's EXDATE a skip, a dropped one un-skipped; never twice", async () => {
    const href = `${coll}rep.ics`;
    expect((await dav.put(href, series(["DUE;VALUE=DATE:20261201"]))).status).toBe(201);
    const [task] = (await web.get(`${V}/tasks?list_id=${list.id}`)).body.items as { id: string }[];
    const rec = (await web.get(`${V}/tasks/${task!.id}/recurrence`)).body as { id: string };
    const exceptions = async () => ((await web.get(`${V}/recurrences/${rec.id}`)).body as { exceptions: string[] }).exceptions;
    const exdates = (ics: string) => ics.split("\r\n").filter((l) => l.startsWith("EXDATE"));
    // Web app → client.
    expect((await web.post(`${V}/recurrences/${rec.id}/exceptions`, { date: "2026-12-03" })).status).toBe(200);
    let g = await dav.request("GET", href);
    expect(exdates(g.text)).toEqual(["EXDATE;VALUE=DATE:20261203"]);
    const q = await dav.report(coll, QUERY_VTODO("<c:calendar-data/>"));
    expect(q.text.match(/EXDATE;VALUE=DATE:20261203/g)).toHaveLength(1);
    // Client → web app: sent back as it came, nothing changes and it is still there once.
    expect((await dav.put(href, series(["DUE;VALUE=DATE:20261201", "EXDATE;VALUE=DATE:20261203"]))).status).toBe(204);
    expect(await exceptions()).toEqual(["2026-12-03"]);
    expect(exdates((await dav.request("GET", href)).text)).toEqual(["EXDATE;VALUE=DATE:20261203"]);
    // The client skips the 4th and un-skips the 3rd (several values in one property, too).
    expect((await dav.put(href, series(["DUE;VALUE=DATE:20261201", "EXDATE;VALUE=DATE:20261204,20261205"]))).status).toBe(204);
    expect(await exceptions()).toEqual(["2026-12-04", "2026-12-05"]);
    g = await dav.request("GET", href);
    expect(exdates(g.text).sort()).toEqual(["EXDATE;VALUE=DATE:20261204", "EXDATE;VALUE=DATE:20261205"]);
    // Skipping the current occurrence moves the task on, as in the web app.
    expect((await dav.put(href, series(["DUE;VALUE=DATE:20261201", "EXDATE;VALUE=DATE:20261201,20261204,20261205"]))).status).toBe(204);
    expect((await web.get(`${V}/tasks/${task!.id}`)).body.due_at).toBe("2026-12-02");
    expect(await exceptions()).toEqual(["2026-12-01", "2026-12-04", "2026-12-05"]);
    // A date the series cannot skip (no occurrence that day) stays verbatim, once.
    expect((await dav.put(href, series(["DUE;VALUE=DATE:20261202", "EXDATE;VALUE=DATE:20261201,20261204,20261205", "EXDATE;VALUE=DATE:20270101"]))).status).toBe(204);
    expect(await exceptions()).toEqual(["2026-12-01", "2026-12-04", "2026-12-05"]);
    g = await dav.request("GET", href);
    expect(exdates(g.text).sort()).toEqual(["EXDATE;VALUE=DATE:20261201", "EXDATE;VALUE=DATE:20261204", "EXDATE;VALUE=DATE:20261205", "EXDATE;VALUE=DATE:20270101"]);
  });

  test("EXDATE ↔ skipped occurrences (timed series): written with the rule's TZID at the occurrence's time; a client's UTC or TZID EXDATE is a skip", async () => {
    const href = `${coll}timed.ics`;
    const timed = (lines: string[]) => vtodo("timed-uid", ["SUMMARY:standup", "DTSTART;TZID=Europe/Berlin:20261201T090000", "DUE;TZID=Europe/Berlin:20261201T090000", "RRULE:FREQ=DAILY;COUNT=10", ...lines]);
    expect((await web.patch(`${V}/me`, { timezone: "Europe/Berlin" })).status).toBe(200);
    expect((await dav.put(href, timed([]))).status).toBe(201);
    const [task] = (await web.get(`${V}/tasks?list_id=${list.id}`)).body.items as { id: string }[];
    const rec = (await web.get(`${V}/tasks/${task!.id}/recurrence`)).body as { id: string };
    const exceptions = async () => ((await web.get(`${V}/recurrences/${rec.id}`)).body as { exceptions: string[] }).exceptions;
    const exdates = (ics: string) => ics.split("\r\n").filter((l) => l.startsWith("EXDATE"));
    expect((await web.post(`${V}/recurrences/${rec.id}/exceptions`, { date: "2026-12-03" })).status).toBe(200);
    expect(exdates((await dav.request("GET", href)).text)).toEqual(["EXDATE;TZID=Europe/Berlin:20261203T090000"]);
    // Back with the TZID one, plus one in UTC (09:00 Berlin = 08:00Z).
    expect((await dav.put(href, timed(["EXDATE;TZID=Europe/Berlin:20261203T090000", "EXDATE:20261206T080000Z"]))).status).toBe(204);
    expect(await exceptions()).toEqual(["2026-12-03", "2026-12-06"]);
    expect(exdates((await dav.request("GET", href)).text).sort()).toEqual(["EXDATE;TZID=Europe/Berlin:20261203T090000", "EXDATE;TZID=Europe/Berlin:20261206T090000"]);
    // The web app un-skips: the EXDATE goes.
    expect((await web.delete(`${V}/recurrences/${rec.id}/exceptions/2026-12-06`)).status).toBe(204);
    expect(exdates((await dav.request("GET", href)).text)).toEqual(["EXDATE;TZID=Europe/Berlin:20261203T090000"]);
  });

  test("iOS way: STATUS:COMPLETED on the series advances it once; a retry with the old If-Match is 412", async () => {
    const href = `${coll}rep.ics`;
    expect((await dav.put(href, series(["DUE;VALUE=DATE:20261201"]))).status).toBe(201);
    const etag = (await dav.request("GET", href)).headers.get("etag")!;
    const done = series(["DUE;VALUE=DATE:20261201", "STATUS:COMPLETED", "COMPLETED:20261201T080000Z"]);
    expect((await dav.put(href, done, { "if-match": etag })).status).toBe(204);
    // The series moved on once; the occurrence done is kept as a completed copy (the app's recurrence model).
    const open = (await web.get(`${V}/tasks?list_id=${list.id}&completed=false`)).body.items as { due_at: string }[];
    expect(open.map((t) => t.due_at)).toEqual(["2026-12-02"]);
    const closed = (await web.get(`${V}/tasks?list_id=${list.id}&completed=true`)).body.items as { due_at: string }[];
    expect(closed.map((t) => t.due_at)).toEqual(["2026-12-01"]);
    await unchanged(async () => expect((await dav.put(href, done, { "if-match": etag })).status).toBe(412));
    const g = await dav.request("GET", href);
    expect(g.text).toContain("DUE;VALUE=DATE:20261202");
    expect(g.text).toContain("STATUS:NEEDS-ACTION");
  });

  test("a retried completion without If-Match (or from a client that had not seen the series move on) does not advance it again", async () => {
    const href = `${coll}rep.ics`;
    expect((await dav.put(href, series(["DUE;VALUE=DATE:20261201"]))).status).toBe(201);
    const done = series(["DUE;VALUE=DATE:20261201", "STATUS:COMPLETED", "COMPLETED:20261201T080000Z"]);
    expect((await dav.put(href, done)).status).toBe(204);
    expect((await dav.put(href, done)).status).toBe(204);
    const open = (await web.get(`${V}/tasks?list_id=${list.id}&completed=false`)).body.items as { due_at: string }[];
    expect(open.map((t) => t.due_at)).toEqual(["2026-12-02"]);
    const closed = (await web.get(`${V}/tasks?list_id=${list.id}&completed=true`)).body.items as { due_at: string }[];
    expect(closed.map((t) => t.due_at)).toEqual(["2026-12-01"]);
  });

  test("tasks.org way: DUE moved to the next occurrence, not completed → stored as sent, no extra advance", async () => {
    const href = `${coll}rep.ics`;
    expect((await dav.put(href, series(["DUE;VALUE=DATE:20261201"]))).status).toBe(201);
    expect((await dav.put(href, vtodo("rep-uid", ["SUMMARY:water plants", "DTSTART;VALUE=DATE:20261202", "RRULE:FREQ=DAILY;COUNT=4", "DUE;VALUE=DATE:20261202", "STATUS:NEEDS-ACTION"]))).status).toBe(204);
    const items = (await web.get(`${V}/tasks?list_id=${list.id}`)).body.items as { due_at: string; completed: boolean }[];
    expect(items.map((t) => [t.due_at, t.completed])).toEqual([["2026-12-02", false]]);
  });
});
