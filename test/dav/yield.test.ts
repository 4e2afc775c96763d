// A REPORT or PROPFIND that returns many objects' data builds them in slices (DavService.fill) and
// lets other requests run between slices: checked by order, not by time — a request sent while the
// big answer is being built is answered before it.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { makeTestApp, setupAdmin, type TestApp, type TestClient } from "../helpers/app";
import { DavClient, davClientFor, responseHrefs } from "./helpers";
import { FILL_SLICE } from "../../src/features/dav/dav.service";
import { buildXml, buildXmlInParts, d, el, NS } from "../../src/features/dav/dav.xml";

const V = "/api/v1";
const N = FILL_SLICE * 6;
let app: TestApp;
let web: TestClient;
let dav: DavClient;
let coll: string;

beforeEach(async () => {
  app = makeTestApp();
  web = await setupAdmin(app);
  dav = await davClientFor(app, web, "owner");
  const list = (await web.post(`${V}/lists`, { name: "Big" })).body as { id: string };
  for (let i = 0; i < N; i++) expect((await web.post(`${V}/tasks`, { title: `task ${i}`, list_id: list.id, due_at: "2026-12-01" })).status).toBe(201);
  coll = `/dav/calendars/owner/${list.id}/`;
});
afterEach(() => app.close());

/** Runs `big`, and once it has started, a GET /api/v1/me: the order in which they finish. */
async function order(big: () => Promise<{ status: number; text: string }>): Promise<{ first: string; text: string }> {
  // Once before, so nothing is loaded on first use (modules imported lazily) during the measured one.
  expect((await big()).status).toBe(207);
  const done: string[] = [];
  const b = big().then((r) => {
    done.push("big");
    return r;
  });
  // Sent after the big request was handed to the server (its body read, its handler running).
  await new Promise<void>((resolve) => setImmediate(resolve));
  const me = web.get(`${V}/me`).then((r) => {
    expect(r.status).toBe(200);
    done.push("me");
  });
  const [r] = await Promise.all([b, me]);
  expect(r.status).toBe(207);
  return { first: done[0]!, text: r.text };
}

/** The event loop's turns (setImmediate callbacks run) while `run` is handled, after a first run to warm up. */
async function turnsDuring(run: () => Promise<{ status: number; text: string }>): Promise<{ turns: number; text: string }> {
  expect((await run()).status).toBe(207);
  let turns = 0;
  let going = true;
  const tick = () => {
    if (!going) return;
    turns++;
    setImmediate(tick);
  };
  setImmediate(tick);
  const r = await run();
  going = false;
  expect(r.status).toBe(207);
  return { turns, text: r.text };
}

const allData = `<c:calendar-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><d:getetag/><c:calendar-data/></d:prop><c:filter><c:comp-filter name="VCALENDAR"><c:comp-filter name="VTODO"/></c:comp-filter></c:filter></c:calendar-query>`;
const byText = `<c:calendar-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><d:getetag/></d:prop><c:filter><c:comp-filter name="VCALENDAR"><c:comp-filter name="VTODO"><c:prop-filter name="SUMMARY"><c:text-match collation="i;unicode-casemap">task 1</c:text-match></c:prop-filter></c:comp-filter></c:comp-filter></c:filter></c:calendar-query>`;

describe("big answers let other requests through", () => {
  test("calendar-query with every object's data", async () => {
    const { first, text } = await order(() => dav.report(coll, allData));
    expect(first).toBe("me");
    expect(responseHrefs(text).length).toBe(N);
    expect(text.split("BEGIN:VTODO").length - 1).toBe(N);
  });

  test("the multistatus is written in slices, and the objects built in slices (turns of the event loop)", async () => {
    const etags = `<c:calendar-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><d:getetag/></d:prop><c:filter><c:comp-filter name="VCALENDAR"><c:comp-filter name="VTODO"/></c:comp-filter></c:filter></c:calendar-query>`;
    // Turns of the event loop while a request is handled: the awaits any request makes, plus one
    // per slice written. A collection of one task is the baseline.
    const one = (await web.post(`${V}/lists`, { name: "One" })).body as { id: string };
    await web.post(`${V}/tasks`, { title: "only", list_id: one.id });
    const small = await turnsDuring(() => dav.report(`/dav/calendars/owner/${one.id}/`, etags));
    const big = await turnsDuring(() => dav.report(coll, etags));
    expect(responseHrefs(big.text).length).toBe(N);
    expect(big.turns - small.turns).toBeGreaterThanOrEqual(N / FILL_SLICE - 1);
    // With every object's data: as many turns again while the objects are built (DavService.fill).
    const withData = await turnsDuring(() => dav.report(coll, allData));
    expect(withData.text.split("BEGIN:VTODO").length - 1).toBe(N);
    expect(withData.turns - big.turns).toBeGreaterThanOrEqual(N / FILL_SLICE - 1);
  });

  test("calendar-query filtering on a property (each object parsed)", async () => {
    const { first, text } = await order(() => dav.report(coll, byText));
    expect(first).toBe("me");
    // "task 1", "task 10".."task 19", "task 100".."task 199" (N = 300).
    expect(responseHrefs(text).length).toBe(1 + 10 + 100);
  });

  test("sync-collection and PROPFIND depth 1 with data, calendar-multiget", async () => {
    const sync = `<d:sync-collection xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:sync-token/><d:sync-level>1</d:sync-level><d:prop><d:getetag/><c:calendar-data/></d:prop></d:sync-collection>`;
    const s = await order(() => dav.report(coll, sync));
    expect(s.first).toBe("me");
    const hrefs = responseHrefs(s.text);
    expect(hrefs.length).toBe(N);
    const p = await order(() => dav.propfind(coll, "<d:getetag/><c:calendar-data/>", "1"));
    expect(p.first).toBe("me");
    expect(p.text.split("BEGIN:VTODO").length - 1).toBe(N);
    const mget = `<c:calendar-multiget xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><d:getetag/><c:calendar-data/></d:prop>${hrefs.map((h) => `<d:href>${h}</d:href>`).join("")}</c:calendar-multiget>`;
    const m = await order(() => dav.report(coll, mget));
    expect(m.first).toBe("me");
    expect(m.text.split("BEGIN:VTODO").length - 1).toBe(N);
  });
});

test("a multistatus written in slices is the same document as written whole", async () => {
  const parts = Array.from({ length: FILL_SLICE * 2 + 7 }, (_, i) =>
    d("response", [d("href", `/dav/x/${i}&<.ics`), d("propstat", [d("prop", [d("getetag", `"${i}"`), el("urn:example:other", "thing", "a & b")]), d("status", "HTTP/1.1 200 OK")])]),
  );
  const extra = [d("sync-token", "urn:x:1")];
  let pauses = 0;
  const sliced = await buildXmlInParts({ ns: NS.dav, name: "multistatus" }, [...parts, ...extra], FILL_SLICE, async () => {
    pauses++;
  });
  expect(sliced).toBe(buildXml(d("multistatus", [...parts, ...extra])));
  expect(pauses).toBe(2);
  expect(await buildXmlInParts({ ns: NS.dav, name: "multistatus" }, [], FILL_SLICE, async () => {})).toBe(buildXml(d("multistatus")));
});
