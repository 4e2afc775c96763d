// Hostile and malformed CalDAV requests, generated (fast-check): any method, path, header and body a
// broken client or an attacker might send to /dav/ with a valid app password. The rules: no answer
// is a 5xx; a refused request (4xx) leaves every stored row as it was (the tokens' last-use
// bookkeeping aside); a 207 is well-formed XML; the server still answers a real client afterwards.
// Bodies are the real clients' requests (test/fixtures/dav, placeholders filled) cut, spliced and
// salted with what parsers trip on, or iCalendar assembled from odd property lines. In process
// (a real listening socket) without APP_EXE; with it, the executable behind the README's nginx and
// Caddy (test/dav/targets.ts), where a proxy could turn an answer into its own 5xx. Replay a
// failure with FUZZ_SEED=<the seed fast-check prints>; explore with FUZZ_SEED=random FUZZ_RUNS=5000.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { XMLValidator } from "fast-xml-parser";
import type { TestClient } from "../helpers/app";
import { QUERY_VTODO, responseHrefs, textOf, vtodo, type DavResponse } from "./helpers";
import { davTargets, signedInUserOn, startDavTarget, type DavTarget } from "./targets";

const V = "/api/v1";
const FIXTURES = join(import.meta.dir, "..", "fixtures", "dav");
/** Rows a refused request may still touch: the audit log, sessions, the tokens' last use, throttling. */
const IGNORE = ["audit_logs", "sessions", "__drizzle_migrations", "api_tokens", "login_throttle"];

let target: DavTarget;
let web: TestClient;
let auth = "";
let coll = "";
let objectHref = "";
let etag = "";
let bodies: string[] = [];
/** The real clients' requests (placeholders filled when sent): replayed with one thing changed, they reach the handlers' deeper paths. */
let fixtures: { method: string; path: string; headers: Record<string, string>; body: string | undefined }[] = [];

/** A request as a CalDAV client sends it: HTTP Basic with the owner's app password. */
async function send(method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<DavResponse> {
  const h: Record<string, string> = { authorization: auth, ...headers };
  if (body !== undefined && !("content-type" in h)) h["content-type"] = body.startsWith("BEGIN:") ? "text/calendar; charset=utf-8" : "application/xml; charset=utf-8";
  const res = await target.fetch(`${target.base}${path}`, { method, headers: h, body, redirect: "manual" });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** Loads the clients' requests (placeholders kept) and starts a target with the owner, another user and the seeded list. */
async function start(spec: Parameters<typeof startDavTarget>[0]): Promise<void> {
  target = await startDavTarget(spec);
  web = target.web;
  await signedInUserOn(target, "other");
  const r = await web.post("/api/v1/tokens", { name: "phone", scopes: ["caldav"] });
  if (r.status !== 201) throw new Error(`token creation failed: ${r.status} ${r.text}`);
  auth = `Basic ${Buffer.from(`owner:${r.body.secret}`).toString("base64")}`;
  generation = 0;
  bodies = [];
  fixtures = [];
  await seed();
  for (const client of readdirSync(FIXTURES, { withFileTypes: true }).filter((d) => d.isDirectory())) {
    for (const f of readdirSync(join(FIXTURES, client.name)).filter((n) => n.endsWith(".http"))) {
      // Placeholders stay: they are filled when a request is sent (the seeded list may have been made again).
      const filled = readFileSync(join(FIXTURES, client.name, f), "utf8");
      const lines = filled.split("\n").filter((l, i, all) => !(l.startsWith("#") && all.slice(0, i).every((x) => x.startsWith("#"))));
      const [method, path] = lines[0]!.split(" ") as [string, string];
      const headers: Record<string, string> = {};
      let i = 1;
      for (; i < lines.length && lines[i] !== ""; i++) headers[lines[i]!.slice(0, lines[i]!.indexOf(":")).trim().toLowerCase()] = lines[i]!.slice(lines[i]!.indexOf(":") + 1).trim();
      const body = lines.slice(i + 1).join("\n").trim();
      fixtures.push({ method, path, headers, body: body || undefined });
      if (body) bodies.push(body);
    }
  }
  expect(bodies.length).toBeGreaterThan(30);
}

/**
 * A list with three tasks put over CalDAV (a date, a repeating timed one, a completed one): the
 * requests' COLL, OBJECT and ETAG. Made again when a replayed client request deleted or moved it.
 */
let generation = 0;
async function seed(): Promise<void> {
  generation++;
  const list = (await web.post(`${V}/lists`, { name: "Groceries" })).body as { id: string };
  coll = `/dav/calendars/owner/${list.id}/`;
  const tasks = [
    ["SUMMARY:milk", "DUE;VALUE=DATE:20261130"],
    ["SUMMARY:bread", "RRULE:FREQ=WEEKLY;COUNT=3", "DUE:20261201T090000Z"],
    ["SUMMARY:done", "STATUS:COMPLETED", "COMPLETED:20261120T100000Z"],
  ];
  for (const [i, lines] of tasks.entries()) {
    const r = await send("PUT", `${coll}seed-${i}.ics`, vtodo(`seed-${generation}-${i}`, lines));
    expect(r.status).toBe(201);
  }
  const q = await send("REPORT", coll, QUERY_VTODO(), { depth: "1" });
  objectHref = responseHrefs(q.text)[0]!;
  etag = textOf(q.text, "d:getetag")!;
}

/** The seeded list still there with its first object (a replayed DELETE or MOVE may have taken either): else a new one. */
async function reseedIfGone(): Promise<void> {
  const r = await send("GET", objectHref);
  if (r.status !== 200) await seed();
}

const METHODS = ["PROPFIND", "REPORT", "PUT", "GET", "HEAD", "DELETE", "MOVE", "COPY", "MKCALENDAR", "MKCOL", "PROPPATCH", "OPTIONS", "POST", "PATCH", "LOCK", "UNLOCK", "ACL", "SEARCH", "BREW", "propfind", "Put"];
const SEGMENTS = ["", "x", "x.ics", "%00", "%2F", "..", "%2e%2e", "../../api/v1/me", "%ZZ", "%", "é", "%C3%A9.ics", "a".repeat(300), "x/y/z.ics", ";x", "?q=1", "#f", ".ics", " ", "%20", "//", "seed-0.ics", "moved.ics", "\u0000"];

const pathArb = fc
  .tuple(
    fc.constantFrom("/dav", "/dav/", "/dav/principals/", "/dav/principals/owner/", "/dav/principals/other/", "/dav/calendars/", "/dav/calendars/owner/", "/dav/calendars/other/", "/dav/calendars/other/x/", "COLL", "OBJECT", "/.well-known/caldav", "/.well-known/caldav/x", "/dav/calendars/OWNER/"),
    // Mostly a real path as it is (so requests reach the handlers), else with odd segments after it.
    fc.oneof({ weight: 3, arbitrary: fc.constant([] as string[]) }, { weight: 2, arbitrary: fc.array(fc.constantFrom(...SEGMENTS), { minLength: 1, maxLength: 3 }) }),
  )
  .map(([head, segs]) => head + segs.join("/"));

/** A header most requests do not carry. */
const opt = <T>(a: fc.Arbitrary<T>) => fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: a });
const headersArb = fc.record({
  depth: opt(fc.constantFrom("0", "1", "infinity", "2", "-1", "", "1,0", " 1 ", "Infinity", "99999999999999999999")),
  "if-match": opt(fc.constantFrom("*", '"x"', "ETAG", "W/ETAG", "garbage", '"', "ETAG, *", "")),
  "if-none-match": opt(fc.constantFrom("*", '"x"', "ETAG", "garbage", "")),
  destination: opt(fc.constantFrom("COLLb.ics", "http://localhost" + "COLLc.ics", "http://evil.example/x.ics", "garbage", "/dav/calendars/other/x/y.ics", "", "%", "COLL", "/dav/calendars/owner/", "OBJECT", "http://localhost:99999/x", "http://[::1/x")),
  overwrite: opt(fc.constantFrom("T", "F", "X", "")),
  "content-type": opt(fc.constantFrom("application/xml", "text/calendar", "text/calendar; charset=latin1", "text/xml; charset=utf-16", "application/json", "multipart/form-data; boundary=x", "", "text/calendar; component=vevent")),
  prefer: opt(fc.constantFrom("return=minimal", "return=representation", "depth-noroot", "garbage")),
  brief: opt(fc.constantFrom("t", "f", "x")),
  "content-length-lie": opt(fc.constant("1")),
});

const SALT = ["<", ">", "&", "&amp;", "&#0;", "&#xD800;", "&unknown;", "<!DOCTYPE x [<!ENTITY a \"aaaa\">]>", "]]>", "<![CDATA[x]]>", "\u0000", "\uFFFE", "\uD800", "\r\n ", "\n", ":", ";", "=", "\\", '"', "xmlns:d=\"\"", "xmlns=\"urn:x\"", "BEGIN:VTODO", "END:VCALENDAR", "RRULE:FREQ=SECONDLY", "DUE:99999999T999999Z", "DTSTART;TZID=Nowhere/Zone:20261101T000000", "𝄞", "a".repeat(5000)];

/** A real client's body cut, spliced and salted. */
const mutatedArb = fc
  .tuple(fc.nat(), fc.array(fc.tuple(fc.constantFrom("cut", "insert", "dup", "drop", "swap"), fc.nat(), fc.nat(), fc.constantFrom(...SALT)), { minLength: 1, maxLength: 4 }))
  .map(([pick, edits]) => {
    let s = bodies[pick % bodies.length]!;
    for (const [kind, a, b, salt] of edits) {
      const i = s.length ? a % s.length : 0;
      const j = s.length ? b % s.length : 0;
      const [lo, hi] = i < j ? [i, j] : [j, i];
      if (kind === "cut") s = s.slice(0, i);
      else if (kind === "insert") s = s.slice(0, i) + salt + s.slice(i);
      else if (kind === "dup") s = s.slice(0, hi) + s.slice(lo, hi) + s.slice(hi);
      else if (kind === "drop") s = s.slice(0, lo) + s.slice(hi);
      else s = s.replace(/<(\/?)([a-z]+):([a-z-]+)/, `<$1$2:${salt.replace(/[^a-z-]/g, "") || "x"}`);
    }
    return s;
  });

const ICS_LINES = ["SUMMARY:x", "SUMMARY;LANGUAGE=en:x", "DUE:20261201", "DUE;VALUE=DATE:2026", "DUE:garbage", "DTSTART:20261201T000000Z", "DTSTART;TZID=Europe/Berlin:20261201T090000", "DTSTART;TZID=Nowhere:20261201T090000", "RRULE:FREQ=DAILY", "RRULE:FREQ=DAILY;UNTIL=garbage", "RRULE:FREQ=YEARLY;BYMONTH=13", "RRULE:", "RRULE:FREQ=MINUTELY;INTERVAL=0", "EXDATE:20261202T000000Z", "EXDATE:x", "RECURRENCE-ID:20261202T000000Z", "STATUS:COMPLETED", "STATUS:WHAT", "COMPLETED:x", "PRIORITY:11", "PRIORITY:-1", "PRIORITY:x", "PERCENT-COMPLETE:500", "RELATED-TO:seed-0", "RELATED-TO;RELTYPE=CHILD:self", "RELATED-TO:nonexistent", "CATEGORIES:a,b,,", "CATEGORIES:" + "t,".repeat(500), "X-APPLE-SORT-ORDER:x", "BEGIN:VALARM", "END:VALARM", "TRIGGER:-PT15M", "TRIGGER:garbage", "ACTION:DISPLAY", "BEGIN:VEVENT", "END:VEVENT", "UID:", "UID:seed-1", "DESCRIPTION:" + "d".repeat(20000), "ATTACH:http://x", "GEO:1;2", " folded-continuation", "NOCOLON", ":novalue", "SEQUENCE:99999999999999999999"];

const icsArb = fc
  .tuple(fc.constantFrom("seed-0", "seed-2", "fresh-uid", "", "seed 0/../x"), fc.array(fc.constantFrom(...ICS_LINES), { maxLength: 8 }), fc.boolean(), fc.boolean())
  .map(([uid, lines, wrap, second]) => {
    const todo = ["BEGIN:VTODO", `UID:${uid}`, "DTSTAMP:20261101T000000Z", ...lines, "END:VTODO"];
    const parts = wrap ? ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//fuzz//EN", ...todo, ...(second ? ["BEGIN:VTODO", "UID:other", "END:VTODO"] : []), "END:VCALENDAR"] : todo;
    return parts.join("\r\n") + "\r\n";
  });

const bodyArb = fc.oneof(
  { weight: 1, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: fc.constant("") },
  { weight: 4, arbitrary: mutatedArb },
  { weight: 3, arbitrary: icsArb },
  { weight: 1, arbitrary: fc.string({ maxLength: 200 }) },
  { weight: 1, arbitrary: fc.constantFrom(...SALT) },
);

const anyArb = fc.record({ method: fc.constantFrom(...METHODS), path: pathArb, headers: headersArb, body: bodyArb });
/** A real client's request with one thing changed: its method, its path, a header, or its body. */
const replayArb = fc.tuple(fc.nat(), fc.constantFrom("method", "path", "header", "body", "none"), anyArb).map(([pick, what, other]) => {
  const f = fixtures[pick % fixtures.length]!;
  const headers: Record<string, string | undefined> = { ...f.headers };
  if (what === "header") Object.assign(headers, Object.fromEntries(Object.entries(other.headers).filter(([, v]) => v !== undefined)));
  return {
    method: what === "method" ? other.method : f.method,
    path: what === "path" ? other.path : f.path,
    headers,
    body: what === "body" ? other.body : f.body,
  };
});
/** A PUT of odd iCalendar where a client would put a task: a new name, or over a seeded one. */
const putArb = fc.tuple(fc.constantFrom("new.ics", "seed-0.ics", "seed-1.ics", "x%20y.ics", "a.ics"), icsArb, opt(fc.constantFrom("*", "ETAG"))).map(([name, body, ifMatch]) => ({
  method: "PUT",
  path: `COLL${name}`,
  headers: { "content-type": "text/calendar; charset=utf-8", ...(ifMatch ? { "if-match": ifMatch } : {}) } as Record<string, string | undefined>,
  body,
}));
const requestArb = fc.oneof({ weight: 3, arbitrary: anyArb }, { weight: 2, arbitrary: replayArb }, { weight: 2, arbitrary: putArb });

/** The fixtures' placeholders ({collection}, …) and the generator's (COLL, OBJECT, ETAG), from the current seed. */
function fill(v: string): string {
  const vars: Record<string, string> = {
    base: "",
    principal: "/dav/principals/owner/",
    home: "/dav/calendars/owner/",
    collection: coll,
    newcollection: "/dav/calendars/owner/new-one/",
    resource: objectHref,
    target: `${coll}moved.ics`,
    name: "x.ics",
    newname: "n.ics",
    childname: "c.ics",
    parentname: "p.ics",
    uid: `seed-${generation}-0`,
    newuid: "n-uid",
    childuid: "c-uid",
    parentuid: `seed-${generation}-0`,
    etag,
    synctoken: "http://localhost/ns/sync/1",
    hrefs: `<d:href>${objectHref}</d:href>`,
    summary: "fuzz",
  };
  return v
    .replace(/\{([a-z]+)\}/g, (_, k: string) => vars[k] ?? k)
    .replace("ETAG", etag)
    .replace("COLL", coll)
    .replace("OBJECT", objectHref);
}

for (const spec of davTargets("hostile.property.test.ts")) {
  describe.skipIf(spec.missing !== null)(`hostile CalDAV requests (generated): ${spec.name}`, () => {
    beforeAll(() => start(spec), 120_000);
    afterAll(async () => {
      await target?.stop();
    });

    test("no 5xx; a refused request changes no stored row; a 207 is well-formed XML", async () => {
      const seen = new Map<number, number>();
      await fc.assert(
        fc.asyncProperty(requestArb, async ({ method, path, headers, body }) => {
          await reseedIfGone();
          const h: Record<string, string> = { authorization: auth };
          for (const [k, v] of Object.entries(headers)) if (v !== undefined && k !== "content-length-lie") h[k] = fill(v);
          // GET and HEAD cannot carry a body in a Request.
          const withBody = method.toUpperCase() === "GET" || method.toUpperCase() === "HEAD" ? undefined : body;
          const sent = withBody === undefined ? undefined : fill(withBody);
          let req: Request;
          try {
            req = new Request(`${target.base}${fill(path).replace(/[\u0000 #]/g, (c) => encodeURIComponent(c))}`, { method, headers: h, body: sent, redirect: "manual" });
          } catch {
            return; // not a request an HTTP client can send (a header value Request refuses)
          }
          const before = target.dump(IGNORE);
          let res: Response;
          try {
            res = await target.fetch(req);
          } catch (e) {
            // Bun's fetch sends a method it does not know (BREW, "Put") as GET, and then refuses the body.
            if (String(e).includes("cannot have body")) return;
            throw e;
          }
          const text = await res.text();
          seen.set(res.status, (seen.get(res.status) ?? 0) + 1);
          if (process.env.FUZZ_TRACE) console.log(res.status, method, path, JSON.stringify(h), JSON.stringify(sent?.slice(0, 80)));
          const where = `${method} ${path} ${JSON.stringify(h)} body=${JSON.stringify(sent?.slice(0, 300))}`;
          if (res.status >= 500) throw new Error(`${res.status} for ${where}: ${text.slice(0, 300)}`);
          if (res.status >= 400) expect({ where, rows: target.dump(IGNORE) }).toEqual({ where, rows: before });
          if (res.status === 207) expect({ where, valid: XMLValidator.validate(text) }).toEqual({ where, valid: true });
        }),
        // A fixed seed by default, so that CI runs the same 600 requests each time (a failure is
        // reproducible, never a coin toss); FUZZ_SEED=<n> (or "random") and FUZZ_RUNS explore further.
        // Session 25 ran 8 random seeds × 2,000 requests besides: no failure.
        { numRuns: Number(process.env.FUZZ_RUNS ?? 600), seed: process.env.FUZZ_SEED === "random" ? undefined : Number(process.env.FUZZ_SEED ?? 25) },
      );
      // The generator reaches the server's refusals and its successes, not only the guard's.
      const statuses = [...seen.keys()];
      expect(statuses.some((s) => s >= 200 && s < 300)).toBe(true);
      expect(statuses.filter((s) => s >= 400).length).toBeGreaterThanOrEqual(4);
      console.log(`hostile CalDAV (${spec.name}): statuses seen ${JSON.stringify(Object.fromEntries([...seen].sort((a, b) => a[0] - b[0])))}`);
    }, 300_000);

    test("an element name that is XML but not namespace-well-formed is refused (400), since an unknown property's name is written back", async () => {
      const propfind = (prop: string, ns = "") => send("PROPFIND", "/dav/", `<propfind xmlns="DAV:"${ns}><prop>${prop}</prop></propfind>`, { depth: "0" });
      // Found by the generated requests: the property `DUE:99999999T…` came back as an element named
      // `99999999T…`, and the 207 was not XML a client could read.
      for (const [prop, ns] of [["<DUE:9abc/>", ' xmlns:DUE="urn:x"'], ["<DUE:abc/>", ""], ["<a:b:c/>", ' xmlns:a="urn:x"'], ["<x:-y/>", ' xmlns:x="urn:x"']] as const) {
        const before = target.dump(IGNORE);
        const r = await propfind(prop, ns);
        expect({ prop, status: r.status }).toEqual({ prop, status: 400 });
        expect(target.dump(IGNORE)).toEqual(before);
      }
      // Unknown but well-formed names, in any namespace, are answered 404 in a 207 that is XML.
      for (const [prop, ns] of [["<X:é-prop.1/>", ' xmlns:X="urn:x"'], ["<_a/>", ""], ["<q:getctag/>", ' xmlns:q="http://calendarserver.org/ns/"']] as const) {
        const r = await propfind(prop, ns);
        expect({ prop, status: r.status, valid: XMLValidator.validate(r.text) }).toEqual({ prop, status: 207, valid: true });
      }
    });

    test("afterwards a real client's sync still works and the web API still lists the tasks", async () => {
      // The replayed fixtures may have deleted or moved the seeded collection (a client may): a new one.
      const list = (await web.post(`${V}/lists`, { name: "After" })).body as { id: string };
      const after = `/dav/calendars/owner/${list.id}/`;
      expect((await send("PUT", `${after}a.ics`, vtodo("after-1", ["SUMMARY:after"]))).status).toBe(201);
      // Every collection of the home is listed, each answers a calendar-query, and every object in it is iCalendar.
      const homeListing = await send("PROPFIND", "/dav/calendars/owner/", `<d:propfind xmlns:d="DAV:"><d:prop><d:resourcetype/></d:prop></d:propfind>`, { depth: "1" });
      expect(homeListing.status).toBe(207);
      const collections = responseHrefs(homeListing.text).filter((h) => h !== "/dav/calendars/owner/");
      expect(collections).toContain(after);
      let objects = 0;
      for (const c of collections) {
        const q = await send("REPORT", c, QUERY_VTODO(), { depth: "1" });
        expect({ c, status: q.status }).toEqual({ c, status: 207 });
        expect(XMLValidator.validate(q.text)).toBe(true);
        for (const href of responseHrefs(q.text)) {
          const g = await send("GET", href);
          expect({ href, status: g.status }).toEqual({ href, status: 200 });
          expect(g.text).toStartWith("BEGIN:VCALENDAR");
          objects++;
        }
      }
      expect(objects).toBeGreaterThanOrEqual(1);
      expect((await web.get(`${V}/me`)).status).toBe(200);
      const tasks = await web.get(`${V}/tasks`);
      expect(tasks.status).toBe(200);
      expect((tasks.body.items as { title: string }[]).map((t) => t.title)).toContain("after");
    });
  });
}
