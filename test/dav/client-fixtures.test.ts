// Request sequences as iOS/macOS, DAVx⁵ and tasks.org send them (bodies after the traces and the
// clients' sources cited in docs/research/caldav-clients.md §1, §2, §5: Apple's prop lists from
// owncloud/core#21550 and #25351, DAVx⁵'s DavResourceFinder/ServiceDetectionUtils, tasks.org's
// CaldavClient), replayed against the server; every answer is checked the way that client reads it.
// No Thunderbird or Evolution trace was found (research §7): not replayed.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { makeTestApp, setupAdmin, type TestApp, type TestClient } from "../helpers/app";
import { DavClient, davClientFor, responseHrefs, textOf, vtodo } from "./helpers";

const V = "/api/v1";
const NS = `xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav" xmlns:CS="http://calendarserver.org/ns/" xmlns:A="http://apple.com/ns/ical/" xmlns:ME="http://me.com/_namespace/" xmlns:P="https://bitfire.at/webdav-push" xmlns:OC="http://owncloud.org/ns" xmlns:TK="http://tasks.org/ns"`;
const propfind = (props: string) => `<?xml version="1.0" encoding="UTF-8"?>\n<D:propfind ${NS}><D:prop>${props}</D:prop></D:propfind>`;

/** Apple's principal PROPFIND (accountsd / dataaccessd). */
const APPLE_PRINCIPAL = propfind(
  "<C:calendar-home-set/><C:calendar-user-address-set/><D:current-user-principal/><D:displayname/><CS:dropbox-home-URL/><CS:email-address-set/><CS:notification-URL/><D:principal-collection-set/><D:principal-URL/><D:resource-id/><C:schedule-inbox-URL/><C:schedule-outbox-URL/><D:supported-report-set/>",
);
/** Apple's home Depth 1 PROPFIND (~40 properties). */
const APPLE_HOME = propfind(
  "<D:add-member/><CS:allowed-sharing-modes/><CS:autoprovisioned/><ME:bulk-requests/><C:calendar-alarm/><A:calendar-color/><C:calendar-description/><C:calendar-free-busy-set/><A:calendar-order/><C:calendar-timezone/><D:current-user-privilege-set/><C:default-alarm-vevent-date/><C:default-alarm-vevent-datetime/><D:displayname/><CS:getctag/><A:language-code/><A:location-code/><D:owner/><CS:pre-publish-url/><CS:publish-url/><CS:push-transports/><CS:pushkey/><D:quota-available-bytes/><D:quota-used-bytes/><A:refreshrate/><D:resource-id/><D:resourcetype/><C:schedule-calendar-transp/><C:schedule-default-calendar-URL/><CS:source/><CS:subscribed-strip-alarms/><CS:subscribed-strip-attachments/><CS:subscribed-strip-todos/><C:supported-calendar-component-set/><C:supported-calendar-component-sets/><D:supported-report-set/><D:sync-token/>",
);
/** DAVx⁵: the first PROPFIND on the URL the user typed, then its collection query (collectionQueryProperties). */
const DAVX5_START = propfind("<D:resourcetype/><D:displayname/><D:current-user-principal/><D:current-user-privilege-set/><C:calendar-home-set/><C:supported-calendar-component-set/><A:calendar-color/>");
const DAVX5_PRINCIPAL = propfind("<C:calendar-user-address-set/><C:calendar-home-set/><CS:calendar-proxy-read-for/><CS:calendar-proxy-write-for/><D:group-membership/><D:displayname/>");
const DAVX5_HOME = propfind(
  "<D:current-user-privilege-set/><D:displayname/><D:owner/><D:resourcetype/><P:push-transports/><P:topic/><A:calendar-color/><C:calendar-description/><C:calendar-timezone/><C:calendar-timezone-id/><C:supported-calendar-component-set/><CS:source/>",
);
const DAVX5_CAPS = propfind("<D:supported-report-set/><D:sync-token/><CS:getctag/>");
/** tasks.org's home Depth 1 PROPFIND. */
const TASKS_ORG_HOME = propfind(
  "<D:resourcetype/><D:displayname/><C:supported-calendar-component-set/><CS:getctag/><A:calendar-color/><D:sync-token/><CS:share-access/><CS:invite/><OC:owner-principal/><D:current-user-privilege-set/><D:current-user-principal/><TK:x-calendar-icon/>",
);
const QUERY = `<?xml version="1.0" encoding="UTF-8"?>\n<C:calendar-query ${NS}><D:prop><D:getetag/></D:prop><C:filter><C:comp-filter name="VCALENDAR"><C:comp-filter name="VTODO"/></C:comp-filter></C:filter></C:calendar-query>`;
const MULTIGET = (hrefs: string[]) => `<?xml version="1.0" encoding="UTF-8"?>\n<C:calendar-multiget ${NS}><D:prop><D:getetag/><C:calendar-data/></D:prop>${hrefs.map((h) => `<D:href>${h}</D:href>`).join("")}</C:calendar-multiget>`;
const SYNC = (tok: string) => `<?xml version="1.0" encoding="UTF-8"?>\n<D:sync-collection xmlns:D="DAV:"><D:sync-token>${tok}</D:sync-token><D:sync-level>1</D:sync-level><D:prop><D:getetag/></D:prop></D:sync-collection>`;

let app: TestApp;
let web: TestClient;
let dav: DavClient;
let listId: string;
let taskId: string;

beforeEach(async () => {
  app = makeTestApp();
  web = await setupAdmin(app);
  dav = await davClientFor(app, web, "owner");
  listId = (await web.post(`${V}/lists`, { name: "Errands", color: "#336699" })).body.id;
  taskId = (await web.post(`${V}/tasks`, { title: "post office", list_id: listId })).body.id;
  await web.post(`${V}/tasks`, { title: "done one", list_id: listId, completed: true });
});
afterEach(() => app.close());

const home = "/dav/calendars/owner/";
const coll = () => `${home}${listId}/`;

/** The answer for one href of a multistatus. */
const responseOf = (xml: string, href: string) => {
  const i = xml.indexOf(`<d:href>${href}</d:href>`);
  return i < 0 ? "" : xml.slice(i, xml.indexOf("</d:response>", i));
};

describe("iOS / macOS", () => {
  test("discovery, home listing, sync, multiget, edit, new list", async () => {
    const h = { prefer: "return=minimal", brief: "t" };
    const wk = await dav.request("PROPFIND", "/.well-known/caldav", propfind("<D:current-user-principal/><D:principal-URL/><D:resourcetype/>"), { depth: "0", ...h });
    expect(wk.status).toBe(301);
    const root = await dav.request("PROPFIND", wk.headers.get("location")!, propfind("<D:current-user-principal/><D:principal-URL/><D:resourcetype/>"), { depth: "0", ...h });
    expect(root.status).toBe(207);
    const principal = /<d:current-user-principal><d:href>([^<]+)</.exec(root.text)![1]!;
    expect((await dav.request("OPTIONS", principal)).headers.get("dav")).toContain("calendar-access");
    const p = await dav.request("PROPFIND", principal, APPLE_PRINCIPAL, { depth: "0", ...h });
    expect(p.status).toBe(207);
    const homeHref = /<cal:calendar-home-set><d:href>([^<]+)</.exec(p.text)![1]!;
    expect(homeHref).toBe(home);
    const hl = await dav.request("PROPFIND", homeHref, APPLE_HOME, { depth: "1", ...h });
    expect(hl.status).toBe(207);
    expect(hl.text).not.toContain("404 Not Found");
    const mine = responseOf(hl.text, coll());
    expect(mine).toContain("<cs:getctag>");
    expect(mine).toContain('<cal:comp name="VTODO"/>');
    expect(mine).toContain("<ical:calendar-color>#336699FF</ical:calendar-color>");
    const tags = await dav.request("PROPFIND", coll(), propfind("<CS:getctag/><D:sync-token/>"), { depth: "0" });
    const token = textOf(tags.text, "d:sync-token")!;
    const s = await dav.request("REPORT", coll(), SYNC(""), { depth: "1" });
    expect(s.status).toBe(207);
    const hrefs = responseHrefs(s.text);
    expect(hrefs.length).toBe(2);
    expect(textOf(s.text, "d:sync-token")).toBe(token);
    const mg = await dav.request("REPORT", coll(), MULTIGET(hrefs), { depth: "1" });
    expect(mg.text.match(/BEGIN:VTODO/g)!.length).toBe(2);
    const href = `${coll()}${taskId}.ics`;
    const g = await dav.request("GET", href);
    expect((await dav.put(href, g.text.replace("SUMMARY:post office", "SUMMARY:post office (parcel)"), { "if-match": g.headers.get("etag")! })).status).toBe(204);
    expect((await web.get(`${V}/tasks/${taskId}`)).body.title).toBe("post office (parcel)");
    const inc = await dav.request("REPORT", coll(), SYNC(token), { depth: "1" });
    expect(responseHrefs(inc.text)).toEqual([href]);
    const mk = await dav.request("MKCALENDAR", `${home}4D7C8A50-1B6E-4F0A-9C3D-2E5F6A7B8C9D/`, `<?xml version="1.0" encoding="UTF-8"?>\n<C:mkcalendar ${NS}><D:set><D:prop><D:displayname>Reminders</D:displayname><A:calendar-order>2</A:calendar-order><C:supported-calendar-component-set><C:comp name="VTODO"/></C:supported-calendar-component-set></D:prop></D:set></C:mkcalendar>`);
    expect(mk.status).toBe(201);
    const pp = await dav.request("PROPPATCH", coll(), `<?xml version="1.0" encoding="UTF-8"?>\n<D:propertyupdate ${NS}><D:set><D:prop><A:calendar-order>1</A:calendar-order></D:prop></D:set></D:propertyupdate>`);
    expect(pp.status).toBe(207);
  });
});

describe("DAVx⁵ (tasks through OpenTasks / tasks.org / jtx)", () => {
  test("service detection, collection query, capabilities, calendar-query listing, multiget, upload", async () => {
    const first = await dav.request("PROPFIND", "/", DAVX5_START, { depth: "0" });
    // The root of the site is the web app: DAVx⁵ then tries /.well-known/caldav.
    expect(first.status).not.toBe(207);
    const wk = await dav.request("PROPFIND", "/.well-known/caldav", propfind("<D:current-user-principal/>"), { depth: "0" });
    expect(wk.status).toBe(301);
    const base = await dav.request("PROPFIND", "/dav/", DAVX5_START, { depth: "0" });
    const principal = /<d:current-user-principal><d:href>([^<]+)</.exec(base.text)![1]!;
    expect((await dav.request("OPTIONS", principal)).headers.get("dav")).toContain("calendar-access");
    const p = await dav.request("PROPFIND", principal, DAVX5_PRINCIPAL, { depth: "0" });
    expect(p.status).toBe(207);
    expect(p.text).toContain(`<cal:calendar-home-set><d:href>${home}</d:href>`);
    const hl = await dav.request("PROPFIND", home, DAVX5_HOME, { depth: "1" });
    const mine = responseOf(hl.text, coll());
    expect(mine).toContain("<d:write/>");
    expect(mine).toContain("<cal:calendar/>");
    expect(mine).toContain("<cal:calendar-timezone-id>UTC</cal:calendar-timezone-id>");
    const caps = await dav.request("PROPFIND", coll(), DAVX5_CAPS, { depth: "0" });
    expect(caps.text).toContain("<cal:calendar-query/>");
    expect(caps.text).toContain("<cs:getctag>");
    const q = await dav.request("REPORT", coll(), QUERY, { depth: "1" });
    const hrefs = responseHrefs(q.text);
    expect(hrefs.length).toBe(2);
    // Every listed member has an ETag (DAVx⁵ aborts on one without).
    expect(q.text.match(/<d:getetag>/g)!.length).toBe(2);
    const mg = await dav.request("REPORT", coll(), MULTIGET(hrefs), { depth: "1" });
    expect(mg.text.match(/<cal:calendar-data>/g)!.length).toBe(2);
    const up = await dav.put(`${coll()}6f1c1b52-davx5.ics`, vtodo("6f1c1b52-davx5", ["SUMMARY:from OpenTasks", "STATUS:NEEDS-ACTION"]), { "if-none-match": "*" });
    expect(up.status).toBe(201);
  });
});

describe("tasks.org (its own CalDAV account)", () => {
  test("principal, home, ctag compare, query, multiget, unconditional PUT/DELETE, MKCOL, PROPPATCH", async () => {
    const base = await dav.request("PROPFIND", "/dav/", propfind("<D:current-user-principal/>"), { depth: "0" });
    const principal = /<d:current-user-principal><d:href>([^<]+)</.exec(base.text)![1]!;
    const p = await dav.request("PROPFIND", principal, propfind("<C:calendar-home-set/>"), { depth: "0" });
    expect(p.text).toContain(home);
    const hl = await dav.request("PROPFIND", home, TASKS_ORG_HOME, { depth: "1" });
    const mine = responseOf(hl.text, coll());
    // tasks.org keeps a collection only with resourcetype calendar and VTODO in the component set.
    expect(mine).toContain("<cal:calendar/>");
    expect(mine).toContain('<cal:comp name="VTODO"/>');
    const token = textOf(mine, "d:sync-token");
    const q = await dav.request("REPORT", coll(), QUERY, { depth: "1" });
    const mg = await dav.request("REPORT", coll(), MULTIGET(responseHrefs(q.text)), { depth: "1" });
    expect(mg.text.match(/<d:getetag>/g)!.length).toBe(2);
    // PUT without preconditions (last writer wins) and DELETE without: both accepted.
    expect((await dav.put(`${coll()}tasks-org-1.ics`, vtodo("tasks-org-1", ["SUMMARY:from tasks.org", "X-APPLE-SORT-ORDER:123456"]))).status).toBe(201);
    expect((await dav.put(`${coll()}tasks-org-1.ics`, vtodo("tasks-org-1", ["SUMMARY:from tasks.org, edited", "X-APPLE-SORT-ORDER:123456"]))).status).toBe(204);
    const hl2 = await dav.request("PROPFIND", home, TASKS_ORG_HOME, { depth: "1" });
    expect(textOf(responseOf(hl2.text, coll()), "d:sync-token")).not.toBe(token);
    expect((await dav.request("DELETE", `${coll()}tasks-org-1.ics`)).status).toBe(204);
    expect((await dav.request("DELETE", `${coll()}tasks-org-1.ics`)).status).toBe(404);
    const mk = await dav.request(
      "MKCOL",
      `${home}0b5a9c7e-2f7d-4c1e-9a33-6a1d2b3c4d5e/`,
      `<?xml version="1.0" encoding="UTF-8"?>\n<D:mkcol ${NS}><D:set><D:prop><D:resourcetype><D:collection/><C:calendar/></D:resourcetype><D:displayname>Shopping</D:displayname><C:supported-calendar-component-set><C:comp name="VTODO"/></C:supported-calendar-component-set><A:calendar-color>#FF5722</A:calendar-color></D:prop></D:set></D:mkcol>`,
    );
    expect(mk.status).toBe(201);
    const pp = await dav.request("PROPPATCH", `${home}0b5a9c7e-2f7d-4c1e-9a33-6a1d2b3c4d5e/`, `<?xml version="1.0" encoding="UTF-8"?>\n<D:propertyupdate ${NS}><D:set><D:prop><D:displayname>Groceries</D:displayname><A:calendar-color>#4CAF50</A:calendar-color></D:prop></D:set></D:propertyupdate>`);
    expect(pp.status).toBe(207);
    expect(pp.text).not.toContain("403");
    const names = ((await web.get(`${V}/lists`)).body.items as { name: string; color: string }[]).map((l) => `${l.name} ${l.color}`);
    expect(names).toContain("Groceries #4CAF50");
  });
});
