// Replays the request sequences real CalDAV clients send (test/fixtures/dav/<client>/NN-*.http:
// recorded in public traces, or derived from the clients' sources; each file names its source
// and what the client needs from the answer; docs/research/caldav-fixtures.md has the overview)
// against the server through the whole HTTP stack (guard, Basic auth with an app password,
// dav.routes, real SQLite), and checks each answer for what that client relies on. Placeholders
// ({principal}, {home}, {collection}, …) are filled from the server's previous answers, as the
// client would: a discovery step that stops answering breaks every step after it. In process without
// APP_EXE; with APP_EXE, against the executable behind the README's nginx and Caddy over https
// (test/dav/targets.ts): one server per target, a fresh user with its own app password, list and
// tasks for each test.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { XMLParser, XMLValidator } from "fast-xml-parser";
import ICAL from "ical.js";
import type { TestClient } from "../helpers/app";
import { davTargets, signedInUserOn, startDavTarget, type DavTarget } from "./targets";

const V = "/api/v1";
const FIXTURES = join(import.meta.dir, "..", "fixtures", "dav");
const NS = { dav: "DAV:", cal: "urn:ietf:params:xml:ns:caldav", cs: "http://calendarserver.org/ns/", apple: "http://apple.com/ns/ical/" } as const;

// ---- fixtures ----------------------------------------------------------------------------------

interface Fixture {
  name: string;
  method: string;
  path: string;
  headers: [string, string][];
  body: string | undefined;
}

/** One `.http` file: `#` comment lines, the request line, headers, a blank line, the body (placeholders unfilled). */
function fixture(client: string, name: string): Fixture {
  const lines = readFileSync(join(FIXTURES, client, `${name}.http`), "utf8").split("\n");
  let i = 0;
  while (lines[i]!.startsWith("#")) i++;
  const [method, path] = lines[i++]!.split(" ") as [string, string];
  const headers: [string, string][] = [];
  for (; i < lines.length && lines[i] !== ""; i++) {
    const at = lines[i]!.indexOf(":");
    headers.push([lines[i]!.slice(0, at).trim(), lines[i]!.slice(at + 1).trim()]);
  }
  const body = lines.slice(i + 1).join("\n").replace(/\n+$/, "");
  return { name: `${client}/${name}`, method, path, headers, body: body === "" ? undefined : body };
}

type Vars = Record<string, string>;

function fill(text: string, vars: Vars, where: string): string {
  return text.replace(/\{([a-z]+)\}/g, (_, k: string) => {
    const v = vars[k];
    if (v === undefined) throw new Error(`${where}: no value for {${k}} (an earlier step did not yield it)`);
    return v;
  });
}

const escapeXml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  /** The path the final answer came from (after a followed redirect). */
  path: string;
}

// ---- XML answers, through fast-xml-parser with namespaces resolved -------------------------------

interface El {
  ns: string;
  name: string;
  attrs: Record<string, string>;
  children: El[];
  text: string;
}

type Raw = Record<string, unknown> & { ":@"?: Record<string, string> };
const parser = new XMLParser({ preserveOrder: true, ignoreAttributes: false, attributeNamePrefix: "", parseTagValue: false, parseAttributeValue: false, trimValues: false });

function parseXml(text: string): El {
  expect(XMLValidator.validate(text)).toBe(true);
  const raw = parser.parse(text) as Raw[];
  const root = raw.find((n) => Object.keys(n).some((k) => k !== ":@" && !k.startsWith("?") && !k.startsWith("#")))!;
  return resolve(root, new Map());
}

function resolve(node: Raw, scope: Map<string, string>): El {
  const key = Object.keys(node).find((k) => k !== ":@")!;
  const attrs = node[":@"] ?? {};
  const inner = new Map(scope);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "xmlns") inner.set("", v);
    else if (k.startsWith("xmlns:")) inner.set(k.slice(6), v);
  }
  const colon = key.indexOf(":");
  const prefix = colon < 0 ? "" : key.slice(0, colon);
  const kids = (node[key] as Raw[]) ?? [];
  const children: El[] = [];
  let text = "";
  for (const k of kids) {
    if ("#text" in k) text += String(k["#text"]);
    else if (!Object.keys(k).some((x) => x.startsWith("?") || x === "#comment")) children.push(resolve(k, inner));
  }
  return { ns: inner.get(prefix) ?? "", name: colon < 0 ? key : key.slice(colon + 1), attrs, children, text };
}

const kids = (e: El | undefined, ns: string, name: string) => (e ? e.children.filter((c) => c.ns === ns && c.name === name) : []);
const kid = (e: El | undefined, ns: string, name: string) => kids(e, ns, name)[0];
const statusCode = (s: string | undefined) => Number(/^HTTP\/1\.[01] (\d{3})/.exec((s ?? "").trim())?.[1] ?? NaN);

interface Resp {
  href: string;
  /** A response-level status (sync-collection tombstones, multiget misses). */
  status: number | null;
  /** Every property in a propstat, with that propstat's status. */
  props: { el: El; status: number }[];
}

interface Multistatus {
  responses: Resp[];
  syncToken: string | null;
}

function multistatus(a: Answer, where: string): Multistatus {
  expect(a.status, `${where}: status`).toBe(207);
  const root = parseXml(a.text);
  expect(`${root.ns}${root.name}`, `${where}: root element`).toBe("DAV:multistatus");
  const responses = kids(root, NS.dav, "response").map((r) => {
    const hrefs = kids(r, NS.dav, "href");
    expect(hrefs.length, `${where}: every response has an href`).toBeGreaterThan(0);
    const st = kid(r, NS.dav, "status");
    return {
      href: hrefs[0]!.text.trim(),
      status: st ? statusCode(st.text) : null,
      props: kids(r, NS.dav, "propstat").flatMap((ps) => kids(ps, NS.dav, "prop").flatMap((p) => p.children.map((el) => ({ el, status: statusCode(kid(ps, NS.dav, "status")?.text) })))),
    };
  });
  const tok = kid(root, NS.dav, "sync-token");
  return { responses, syncToken: tok ? tok.text.trim() : null };
}

/** The property with a 200 propstat, or undefined (absent, or a 404/403 propstat). */
function prop(r: Resp | undefined, ns: string, name: string): El | undefined {
  return r?.props.find((p) => p.el.ns === ns && p.el.name === name && p.status >= 200 && p.status < 300)?.el;
}

function hrefOf(r: Resp | undefined, ns: string, name: string): string | undefined {
  return kid(prop(r, ns, name), NS.dav, "href")?.text.trim();
}

function responseFor(ms: Multistatus, href: string): Resp | undefined {
  return ms.responses.find((r) => decodeURIComponent(r.href) === decodeURIComponent(href));
}

/** RFC 7232 strong entity-tag: quoted, not W/. DAVx⁵/tasks.org/Thunderbird send it back verbatim in If-Match. */
function expectStrongEtag(etag: string | undefined, where: string): string {
  expect(etag, `${where}: ETag present`).toBeDefined();
  expect(etag!, `${where}: ETag is strong and quoted`).toMatch(/^"[^"\\]+"$/);
  return etag!;
}

function davTokens(a: Answer): string[] {
  return (a.headers.get("dav") ?? "").split(",").map((s) => s.trim().toLowerCase());
}

function vtodoOf(ics: string): ICAL.Component {
  const cal = new ICAL.Component(ICAL.parse(ics));
  expect(cal.name).toBe("vcalendar");
  const todo = cal.getFirstSubcomponent("vtodo");
  expect(todo, "calendar-data holds a VTODO").not.toBeNull();
  return todo!;
}

// ---- the replaying client ------------------------------------------------------------------------

class Replay {
  readonly vars: Vars = {};
  constructor(
    private readonly target: DavTarget,
    readonly client: string,
    private readonly auth: string,
  ) {}

  /** Sends a fixture (placeholders filled); follows a 301/302/307/308 as the clients' HTTP stacks do (same method, headers, body). */
  async send(name: string, opts: { auth?: boolean; follow?: boolean; vars?: Vars } = {}): Promise<Answer> {
    const fx = fixture(this.client, name);
    const vars = { ...this.vars, ...opts.vars };
    if (fx.body?.includes("{hrefs}") && vars["hrefs"] === undefined) throw new Error(`${fx.name}: no {hrefs}`);
    let path = fill(fx.path, vars, fx.name);
    const headers: Record<string, string> = {};
    for (const [k, v] of fx.headers) headers[k.toLowerCase()] = fill(v, vars, fx.name);
    if (opts.auth !== false) headers["authorization"] = this.auth;
    let body = fx.body === undefined ? undefined : fill(fx.body, vars, fx.name);
    // iCalendar content lines end in CRLF (RFC 5545 §3.1); the fixtures are stored with LF.
    if (body !== undefined && (headers["content-type"] ?? "").startsWith("text/calendar")) body = `${body.replace(/\r?\n/g, "\r\n")}\r\n`;
    for (let hop = 0; ; hop++) {
      const res = await this.target.fetch(`${this.target.base}${path}`, { method: fx.method, headers, body, redirect: "manual" });
      const a: Answer = { status: res.status, headers: res.headers, text: await res.text(), path };
      expect(a.status, `${fx.name} ${fx.method} ${path}: never a 5xx`).toBeLessThan(500);
      const loc = res.headers.get("location");
      if (opts.follow !== false && [301, 302, 307, 308].includes(a.status) && loc && hop < 3) {
        path = new URL(loc, `${this.target.base}${path}`).pathname;
        continue;
      }
      return a;
    }
  }

  /** `{hrefs}` for a multiget, written with the DAV prefix the fixture's body uses for <prop>. */
  setHrefs(name: string, hrefs: string[]) {
    const body = fixture(this.client, name).body ?? "";
    const prefix = /<(\w+:)?prop>/.exec(body)?.[1] ?? "";
    this.vars["hrefs"] = hrefs.map((h) => `<${prefix}href>${escapeXml(h)}</${prefix}href>`).join("");
  }
}

// ---- the fixtures themselves ------------------------------------------------------------------------

describe("fixtures", () => {
  test("every fixture names its client, its source and kind (recorded / source-derived / modelled) and what the client expects, and parses", () => {
    const known = new Set(["base", "principal", "home", "collection", "resource", "etag", "uid", "synctoken", "hrefs", "newname", "newuid", "newcollection", "target", "name", "parentname", "parentuid", "childname", "childuid", "summary"]);
    const clients = readdirSync(FIXTURES, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);
    expect(clients.sort()).toEqual(["davx5", "evolution", "ios", "tasksorg", "thunderbird"]);
    for (const c of clients) {
      for (const f of readdirSync(join(FIXTURES, c)).filter((x) => x.endsWith(".http"))) {
        const text = readFileSync(join(FIXTURES, c, f), "utf8");
        const comments = text.split("\n").filter((l) => l.startsWith("#")).join("\n");
        expect(comments, `${c}/${f}: # client:`).toMatch(/^# client: /m);
        expect(comments, `${c}/${f}: kind`).toMatch(/recorded|source-derived|modelled/i);
        expect(comments, `${c}/${f}: a source`).toMatch(/https:\/\/github\.com\/|@[0-9a-f]{7,}|RFC \d+/);
        expect(comments, `${c}/${f}: # expects:`).toMatch(/^# expects: /m);
        const fx = fixture(c, f.replace(/\.http$/, ""));
        expect(fx.method, `${c}/${f}: method`).toMatch(/^[A-Z]+$/);
        expect(fx.path.startsWith("/") || fx.path.startsWith("{"), `${c}/${f}: path`).toBe(true);
        for (const [, k] of text.matchAll(/\{([a-z]+)\}/g)) expect(known.has(k!), `${c}/${f}: placeholder {${k}}`).toBe(true);
        if (fx.body?.startsWith("<?xml")) expect(XMLValidator.validate(fx.body.replace(/\{hrefs\}/g, "")), `${c}/${f}: well-formed XML`).toBe(true);
      }
    }
  });
});

// ---- setup: one user, an app password, a list with an open and a completed task ----------------

let target: DavTarget;
let web: TestClient;
/** This test's user (a fresh one for each test, on the target's one server). */
let me: string;
let auth: string;
let list: { id: string };
let milk: { id: string };
let receipt: { id: string };
let users = 0;

async function seed(): Promise<void> {
  me = `user${++users}`;
  web = await signedInUserOn(target, me);
  const tok = await web.post(`${V}/tokens`, { name: "phone", scopes: ["caldav"] });
  expect(tok.status).toBe(201);
  auth = `Basic ${Buffer.from(`${me}:${tok.body.secret}`).toString("base64")}`;
  list = (await web.post(`${V}/lists`, { name: "Groceries", color: "#112233" })).body;
  milk = (await web.post(`${V}/tasks`, { title: "milk", list_id: list.id })).body;
  receipt = (await web.post(`${V}/tasks`, { title: "old receipt", list_id: list.id, completed: true })).body;
  expect((await web.get(`${V}/tasks/${receipt.id}`)).body.completed).toBe(true);
}

const apiTasks = async () => [
  ...((await web.get(`${V}/tasks?list_id=${list.id}&completed=false`)).body.items as { id: string; title: string; completed: boolean }[]),
  ...((await web.get(`${V}/tasks?list_id=${list.id}&completed=true`)).body.items as { id: string; title: string; completed: boolean }[]),
];
const apiLists = async () => (await web.get(`${V}/lists`)).body.items as { id: string; name: string; color: string | null }[];

/** The calendar collections of a home Depth 1 answer that a task client keeps: calendar resourcetype + VTODO. */
function taskCalendars(ms: Multistatus): Resp[] {
  return ms.responses.filter((r) => {
    const rt = prop(r, NS.dav, "resourcetype");
    const comps = kids(prop(r, NS.cal, "supported-calendar-component-set"), NS.cal, "comp").map((c) => (c.attrs["name"] ?? "").toUpperCase());
    return kid(rt, NS.cal, "calendar") !== undefined && comps.includes("VTODO");
  });
}

function privileges(r: Resp | undefined): string[] {
  return kids(prop(r, NS.dav, "current-user-privilege-set"), NS.dav, "privilege").flatMap((p) => p.children.map((c) => c.name));
}

/** bob's list "Bob's shop", shared with this test's user as a viewer: every client must show it read-only. */
async function shareViewerList(): Promise<void> {
  const bob = await signedInUserOn(target, `bob${users}`);
  const shop = (await bob.post(`${V}/lists`, { name: "Bob's shop" })).body as { id: string };
  expect((await bob.post(`${V}/tasks`, { title: "bread", list_id: shop.id })).status).toBe(201);
  const inv = (await bob.post(`${V}/lists/${shop.id}/invitations`, { username: me, role: "viewer" })).body as { id: string };
  expect((await web.post(`${V}/invitations/${inv.id}/accept`)).status).toBe(200);
}

const WRITE_PRIVS = ["write", "write-content", "all"];

/** Checks shared by every client's home listing for the seeded list, and returns its href. */
function expectGroceriesCalendar(ms: Multistatus, where: string): Resp {
  const cal = taskCalendars(ms).find((r) => prop(r, NS.dav, "displayname")?.text === "Groceries");
  expect(cal, `${where}: the list is a calendar collection with VTODO in supported-calendar-component-set`).toBeDefined();
  expect(kid(prop(cal, NS.dav, "resourcetype"), NS.dav, "collection"), `${where}: resourcetype has DAV:collection`).toBeDefined();
  return cal!;
}

// ---- the suites, once per target ---------------------------------------------------------------------

for (const spec of davTargets("client-replay.test.ts")) {
  describe.skipIf(spec.missing !== null)(`client replay: ${spec.name}`, () => {
    beforeAll(async () => {
      target = await startDavTarget(spec);
    });
    afterAll(async () => {
      await target?.stop();
    });
    beforeEach(seed);
    replaySuites();
  });
}

// The suites below are this function's body, left at the top level's indentation so that the file's
// history (and a merge with other branches' edits to them) stays readable.
function replaySuites(): void {
// ---- iOS / macOS -----------------------------------------------------------------------------------

describe("iOS Reminders / macOS Calendar (dataaccessd, CalendarAgent)", () => {
  test("account setup, listing, ctag + sync-collection + multiget, edit with If-Match, delta sync, MKCALENDAR at an upper-case UUID, PROPPATCH", async () => {
    const ios = new Replay(target, "ios", auth);

    // 01: Apple asks without credentials first: 401 with a Basic challenge (never 403 or a login page).
    const anon = await ios.send("01-wellknown-propfind", { auth: false, follow: false });
    expect(anon.status).toBe(401);
    expect(anon.headers.get("www-authenticate") ?? "").toMatch(/^Basic /i);
    // 01 again with credentials: 301 followed (or 207 in place) → current-user-principal.
    const wk = multistatus(await ios.send("01-wellknown-propfind"), "01");
    const principal = hrefOf(wk.responses[0], NS.dav, "current-user-principal");
    expect(principal, "01: current-user-principal").toBeDefined();
    ios.vars["principal"] = principal!;

    // 02: OPTIONS on the principal must advertise calendar-access, or Apple refuses the account.
    const opt = await ios.send("02-options-principal");
    expect(opt.status).toBeGreaterThanOrEqual(200);
    expect(opt.status).toBeLessThan(300);
    expect(davTokens(opt)).toContain("calendar-access");
    expect((opt.headers.get("allow") ?? "").toUpperCase()).toContain("PROPFIND");
    expect((opt.headers.get("allow") ?? "").toUpperCase()).toContain("REPORT");

    // 03: the principal with Apple's full prop list.
    const pr = multistatus(await ios.send("03-principal-propfind"), "03");
    expect(pr.responses).toHaveLength(1);
    expect(hrefOf(pr.responses[0], NS.dav, "current-user-principal")).toBe(principal);
    const home = hrefOf(pr.responses[0], NS.cal, "calendar-home-set");
    expect(home, "03: calendar-home-set").toBeDefined();
    ios.vars["home"] = home!;
    // Prefer: return=minimal: props the server does not have are left out rather than 404'd (RFC 8144 §2).
    expect(pr.responses[0]!.props.every((p) => p.status === 200)).toBe(true);

    // 04: the home listing with ~40 Apple props.
    const hm = multistatus(await ios.send("04-home-propfind"), "04");
    const groceries = expectGroceriesCalendar(hm, "04");
    expect(prop(groceries, NS.cs, "getctag")?.text.trim()).toBeTruthy();
    expect(prop(groceries, NS.dav, "sync-token")?.text.trim()).toBeTruthy();
    expect(prop(groceries, NS.apple, "calendar-color")?.text.trim()).toMatch(/^#[0-9A-Fa-f]{6}([0-9A-Fa-f]{2})?$/);
    expect(privileges(groceries)).toContain("write");
    const reports = kids(prop(groceries, NS.dav, "supported-report-set"), NS.dav, "supported-report").flatMap((s) => kid(s, NS.dav, "report")?.children ?? []);
    expect(reports.map((r) => `${r.ns}${r.name}`)).toEqual(expect.arrayContaining([`${NS.dav}sync-collection`, `${NS.cal}calendar-multiget`]));
    ios.vars["collection"] = groceries.href;

    // 05: the change check.
    const ct0 = multistatus(await ios.send("05-collection-ctag"), "05");
    const ctag0 = prop(ct0.responses[0], NS.cs, "getctag")?.text.trim();
    const token0 = prop(ct0.responses[0], NS.dav, "sync-token")?.text.trim();
    expect(ctag0).toBeTruthy();
    expect(token0).toBeTruthy();

    // 06: initial sync-collection: every member with a strong ETag, and a token.
    const s0 = multistatus(await ios.send("06-sync-collection-initial"), "06");
    expect(s0.syncToken).toBeTruthy();
    const members = s0.responses.filter((r) => r.href !== groceries.href);
    expect(members).toHaveLength(2);
    for (const m of members) expectStrongEtag(prop(m, NS.dav, "getetag")?.text.trim(), "06");
    ios.vars["synctoken"] = s0.syncToken!;

    // 07: multiget both; find "milk" by its calendar-data.
    ios.setHrefs("07-multiget", members.map((m) => m.href));
    const mg = multistatus(await ios.send("07-multiget"), "07");
    expect(mg.responses).toHaveLength(2);
    let milkHref = "";
    for (const r of mg.responses) {
      const etag = expectStrongEtag(prop(r, NS.dav, "getetag")?.text.trim(), "07");
      expect(etag).toBe(prop(responseFor(s0, r.href), NS.dav, "getetag")!.text.trim());
      const todo = vtodoOf(prop(r, NS.cal, "calendar-data")!.text);
      if (todo.getFirstPropertyValue("summary") === "milk") {
        milkHref = r.href;
        ios.vars["uid"] = String(todo.getFirstPropertyValue("uid"));
        ios.vars["etag"] = etag;
      }
    }
    expect(milkHref).not.toBe("");
    ios.vars["resource"] = milkHref;

    // 08: edit with If-Match; a stale If-Match afterwards is 412 and changes nothing.
    const put = await ios.send("08-put-if-match");
    expect([200, 201, 204]).toContain(put.status);
    expect((await web.get(`${V}/tasks/${milk.id}`)).body.title).toBe("milk and bread");
    const before = target.dump(["audit_logs", "sessions", "__drizzle_migrations", "api_tokens", "login_throttle"]);
    expect((await ios.send("08-put-if-match")).status).toBe(412);
    expect(target.dump(["audit_logs", "sessions", "__drizzle_migrations", "api_tokens", "login_throttle"])).toEqual(before);

    // 05 again: ctag and sync-token moved.
    const ct1 = multistatus(await ios.send("05-collection-ctag"), "05'");
    expect(prop(ct1.responses[0], NS.cs, "getctag")?.text.trim()).not.toBe(ctag0);
    expect(prop(ct1.responses[0], NS.dav, "sync-token")?.text.trim()).not.toBe(token0);

    // 09: the delta lists the edited reminder with a new ETag, and a new token.
    const s1 = multistatus(await ios.send("09-sync-collection-delta"), "09");
    expect(s1.syncToken).toBeTruthy();
    expect(s1.syncToken).not.toBe(s0.syncToken);
    const changed = responseFor(s1, milkHref);
    expect(changed, "09: the edited resource is in the delta").toBeDefined();
    expect(expectStrongEtag(prop(changed, NS.dav, "getetag")?.text.trim(), "09")).not.toBe(ios.vars["etag"]);

    // 10: MKCALENDAR at an upper-case UUID the client chose; the list lives at exactly that path.
    expect((await ios.send("10-mkcalendar-uuid")).status).toBe(201);
    const hm2 = multistatus(await ios.send("04-home-propfind"), "04'");
    const created = responseFor(hm2, `${home}E6948AA3-86CC-40A1-874D-3B0A02FAA781/`);
    expect(created, "10: the new list is listed at the client's path").toBeDefined();
    expect(prop(created, NS.dav, "displayname")?.text).toBe("Reminders");
    expect(taskCalendars(hm2)).toContain(created!);
    expect((await apiLists()).some((l) => l.name === "Reminders")).toBe(true);

    // 11: PROPPATCH colour + order: 207 with a per-property status, the colour stored.
    const pp = multistatus(await ios.send("11-proppatch-order-color"), "11");
    const color = pp.responses[0]!.props.find((p) => p.el.name === "calendar-color");
    const order = pp.responses[0]!.props.find((p) => p.el.name === "calendar-order");
    expect(color?.status).toBe(200);
    expect(order?.status).toBeGreaterThanOrEqual(200);
    expect(order?.status).toBeLessThan(500);
    expect((await apiLists()).find((l) => l.id === list.id)?.color).toBe("#FF2968");
  });
});

/** iOS discovery (steps 01, 03, 04) for the tests that start after it; returns the home listing. */
async function iosDiscover(ios: Replay): Promise<Multistatus> {
  ios.vars["principal"] = hrefOf(multistatus(await ios.send("01-wellknown-propfind"), "01").responses[0], NS.dav, "current-user-principal")!;
  ios.vars["home"] = hrefOf(multistatus(await ios.send("03-principal-propfind"), "03").responses[0], NS.cal, "calendar-home-set")!;
  return multistatus(await ios.send("04-home-propfind"), "04");
}

describe("iOS: moving a reminder to another list", () => {
  // iOS moves an item with MOVE (owncloud/core#23829), and when MOVE fails, PUTs the same UID into the target
  // list. Both must leave the task in the target list once (same task), gone from the source: a tombstone in the
  // source's sync-collection and a member in the target's.
  async function prepare() {
    const errands = (await web.post(`${V}/lists`, { name: "Errands" })).body as { id: string };
    const ios = new Replay(target, "ios", auth);
    const hm = await iosDiscover(ios);
    const from = expectGroceriesCalendar(hm, "04");
    const to = taskCalendars(hm).find((r) => prop(r, NS.dav, "displayname")?.text === "Errands");
    expect(to).toBeDefined();
    ios.vars["collection"] = from.href;
    ios.vars["target"] = to!.href;
    const s0 = multistatus(await ios.send("06-sync-collection-initial"), "06");
    ios.vars["collection"] = to!.href;
    const t0 = multistatus(await ios.send("06-sync-collection-initial"), "06");
    ios.vars["collection"] = from.href;
    ios.setHrefs("07-multiget", s0.responses.filter((r) => r.href !== from.href).map((r) => r.href));
    const mg = multistatus(await ios.send("07-multiget"), "07");
    const m = mg.responses.find((r) => vtodoOf(prop(r, NS.cal, "calendar-data")!.text).getFirstPropertyValue("summary") === "milk")!;
    ios.vars["resource"] = m.href;
    ios.vars["name"] = m.href.slice(from.href.length);
    ios.vars["uid"] = String(vtodoOf(prop(m, NS.cal, "calendar-data")!.text).getFirstPropertyValue("uid"));
    const milkId = (await apiTasks()).find((t) => t.title === "milk")!.id;
    return { errands, ios, from, to: to!, s0, t0, m, milkId };
  }

  async function expectMoved(p: Awaited<ReturnType<typeof prepare>>) {
    const { errands, ios, from, to, s0, t0, m, milkId } = p;
    const inErrands = (await web.get(`${V}/tasks?list_id=${errands.id}&completed=false`)).body.items as { id: string; title: string }[];
    expect(inErrands).toHaveLength(1);
    expect(inErrands[0]!.id).toBe(milkId);
    expect((await apiTasks()).some((t) => t.title.startsWith("milk"))).toBe(false);
    ios.vars["synctoken"] = s0.syncToken!;
    expect(responseFor(multistatus(await ios.send("09-sync-collection-delta"), "09"), m.href)?.status).toBe(404);
    ios.vars["collection"] = to.href;
    ios.vars["synctoken"] = t0.syncToken!;
    const added = responseFor(multistatus(await ios.send("09-sync-collection-delta"), "09"), `${to.href}${ios.vars["name"]}`);
    expect(added).toBeDefined();
    expect(added!.status).toBeNull();
    expect(added!.props.some((x) => x.status === 200)).toBe(true);
    ios.vars["collection"] = from.href;
  }

  test("MOVE to another list's collection moves the task (same task, same UID): 201, in the target once, a tombstone in the source", async () => {
    const p = await prepare();
    const mv = await p.ios.send("12-move-between-lists");
    expect(mv.status).toBe(201);
    await expectMoved(p);
    const got = await p.ios.send("07-multiget");
    expect(got.status).toBe(207);
  });

  test("the PUT iOS falls back to (same UID and name into another list it may edit) moves the task there instead of no-uid-conflict", async () => {
    const p = await prepare();
    expect((await p.ios.send("13-put-into-other-list")).status).toBe(201);
    await expectMoved(p);
    expect((await apiTasks()).some((t) => t.title === "milk and bread")).toBe(false);
    const moved = (await web.get(`${V}/tasks/${p.milkId}`)).body as { title: string; list_id: string };
    expect(moved).toMatchObject({ title: "milk and bread", list_id: p.errands.id });
  });
});

// ---- DAVx⁵ -----------------------------------------------------------------------------------------

describe("DAVx⁵ (with OpenTasks / jtx / tasks.org as the task app)", () => {
  test("discovery from the server root, OPTIONS calendar-access, home-sets, collections, capabilities, calendar-query + multiget, PUT If-None-Match / If-Match, DELETE", async () => {
    await shareViewerList();
    const dx = new Replay(target, "davx5", auth);
    dx.vars["base"] = "/";

    // 01: the user typed the server root. Whatever it answers, DAVx⁵ falls back to /.well-known/caldav; only a 5xx would hurt.
    const base = await dx.send("01-base-propfind");
    let principal: string | undefined;
    if (base.status === 207) principal = hrefOf(multistatus(base, "01").responses[0], NS.dav, "current-user-principal");
    if (!principal) {
      const wk = multistatus(await dx.send("02-wellknown-principal"), "02");
      principal = hrefOf(wk.responses[0], NS.dav, "current-user-principal");
    }
    expect(principal, "01/02: a principal was found").toBeDefined();
    dx.vars["principal"] = principal!;

    // 03: providesService(): the DAV header of OPTIONS on the principal must contain calendar-access.
    const opt = await dx.send("03-options-principal");
    expect(opt.status).toBeGreaterThanOrEqual(200);
    expect(opt.status).toBeLessThan(300);
    expect(davTokens(opt)).toContain("calendar-access");

    // 04, 05: the principal's address set (may be 404) and home-sets.
    multistatus(await dx.send("04-principal-address-set"), "04");
    const hs = multistatus(await dx.send("05-principal-homesets"), "05");
    const homes = kids(prop(hs.responses[0], NS.cal, "calendar-home-set"), NS.dav, "href").map((h) => h.text.trim());
    expect(homes).toHaveLength(1);
    dx.vars["home"] = homes[0]!;

    // 06: collections of the home.
    const cols = multistatus(await dx.send("06-home-collections"), "06");
    const groceries = expectGroceriesCalendar(cols, "06");
    expect(privileges(groceries), "06: an owned list is writable (else DAVx⁵ makes it read-only)").toContain("write");
    for (const c of taskCalendars(cols)) expect(prop(c, NS.dav, "current-user-privilege-set"), "06: every list says what the user may do").toBeDefined();
    const shared = taskCalendars(cols).find((r) => prop(r, NS.dav, "displayname")?.text === "Bob's shop");
    expect(shared, "06: the list shared with the user is listed").toBeDefined();
    expect(privileges(shared).filter((p) => WRITE_PRIVS.includes(p)), "06: a viewer's list is read-only in DAVx⁵").toEqual([]);
    expect(privileges(shared)).toContain("read");
    dx.vars["collection"] = groceries.href;

    // 07: capabilities / sync state.
    const cap0 = multistatus(await dx.send("07-capabilities"), "07");
    const state0 = prop(cap0.responses[0], NS.dav, "sync-token")?.text.trim() ?? prop(cap0.responses[0], NS.cs, "getctag")?.text.trim();
    expect(state0, "07: a sync state (sync-token or getctag)").toBeTruthy();

    // 08: calendar-query VTODO: every task, completed ones included, each with a strong ETag.
    const q0 = multistatus(await dx.send("08-calendar-query-vtodo"), "08");
    expect(q0.responses).toHaveLength(2);
    const etags0 = new Map(q0.responses.map((r) => [r.href, expectStrongEtag(prop(r, NS.dav, "getetag")?.text.trim(), "08")]));

    // 09: multiget of all: ETag + calendar-data per href.
    dx.setHrefs("09-multiget", [...etags0.keys()]);
    const mg = multistatus(await dx.send("09-multiget"), "09");
    expect(mg.responses.map((r) => r.href).sort()).toEqual([...etags0.keys()].sort());
    const summaries: string[] = [];
    for (const r of mg.responses) {
      expect(prop(r, NS.dav, "getetag")?.text.trim()).toBe(etags0.get(r.href));
      summaries.push(String(vtodoOf(prop(r, NS.cal, "calendar-data")!.text).getFirstPropertyValue("summary")));
    }
    expect(summaries.sort()).toEqual(["milk", "old receipt"]);

    // 10: create with If-None-Match: *; the same again is 412.
    const uid = crypto.randomUUID();
    dx.vars["newuid"] = uid;
    dx.vars["newname"] = `${uid}.ics`;
    expect((await dx.send("10-put-new")).status).toBe(201);
    expect((await dx.send("10-put-new")).status).toBe(412);
    expect((await apiTasks()).some((t) => t.title === "call the plumber")).toBe(true);

    // 08 again: the new member is listed with an ETag.
    const q1 = multistatus(await dx.send("08-calendar-query-vtodo"), "08'");
    const mine = responseFor(q1, `${groceries.href}${uid}.ics`);
    expect(mine, "08': the uploaded task is listed under the name DAVx⁵ chose").toBeDefined();
    const etag1 = expectStrongEtag(prop(mine, NS.dav, "getetag")?.text.trim(), "08'");

    // 11: update with a stale If-Match is 412 (nothing changes); with the current one it completes the task.
    const before = target.dump(["audit_logs", "sessions", "__drizzle_migrations", "api_tokens", "login_throttle"]);
    expect((await dx.send("11-put-update", { vars: { etag: '"stale"' } })).status).toBe(412);
    expect(target.dump(["audit_logs", "sessions", "__drizzle_migrations", "api_tokens", "login_throttle"])).toEqual(before);
    dx.vars["etag"] = etag1;
    expect([200, 204]).toContain((await dx.send("11-put-update")).status);
    expect((await apiTasks()).find((t) => t.title === "call the plumber")?.completed).toBe(true);

    // 07 again: the sync state moved (DAVx⁵ syncs only if it differs).
    const cap1 = multistatus(await dx.send("07-capabilities"), "07'");
    expect(prop(cap1.responses[0], NS.dav, "sync-token")?.text.trim() ?? prop(cap1.responses[0], NS.cs, "getctag")?.text.trim()).not.toBe(state0);

    // 12: delete with the current If-Match; gone from calendar-query afterwards.
    const q2 = multistatus(await dx.send("08-calendar-query-vtodo"), "08''");
    dx.vars["etag"] = expectStrongEtag(prop(responseFor(q2, `${groceries.href}${uid}.ics`), NS.dav, "getetag")?.text.trim(), "08''");
    expect([200, 204]).toContain((await dx.send("12-delete")).status);
    const q3 = multistatus(await dx.send("08-calendar-query-vtodo"), "08'''");
    expect(responseFor(q3, `${groceries.href}${uid}.ics`)).toBeUndefined();
    expect(q3.responses).toHaveLength(2);
  });
});

// ---- tasks.org -------------------------------------------------------------------------------------

describe("tasks.org (its own CalDAV account)", () => {
  test("principal from the root / well-known, home-set, list filter, ctag/sync-token, calendar-query + multiget, PUT/DELETE without preconditions, Extended MKCOL, PROPPATCH, list DELETE", async () => {
    await shareViewerList();
    const to = new Replay(target, "tasksorg", auth);
    to.vars["base"] = "/";

    // 01/02: principalOrNull("") then principalOrNull("/.well-known/caldav").
    const base = await to.send("01-base-principal");
    let principal: string | undefined;
    if (base.status === 207) principal = hrefOf(multistatus(base, "01").responses[0], NS.dav, "current-user-principal");
    if (!principal) principal = hrefOf(multistatus(await to.send("02-wellknown-principal"), "02").responses[0], NS.dav, "current-user-principal");
    expect(principal, "01/02: a principal").toBeTruthy();
    to.vars["principal"] = principal!;

    // 03: the first calendar-home-set href, non-blank.
    const hs = multistatus(await to.send("03-homeset"), "03");
    const home = hrefOf(hs.responses[0], NS.cal, "calendar-home-set");
    expect(home).toBeTruthy();
    to.vars["home"] = home!;

    // 04: tasks.org keeps a member only if it is a calendar AND lists VTODO; the seeded list must survive the filter.
    const ls = multistatus(await to.send("04-home-calendars"), "04");
    const kept = taskCalendars(ls).filter((r) => decodeURIComponent(r.href) !== decodeURIComponent(home!));
    expect(kept.length).toBe((await apiLists()).length);
    // CaldavSynchronizer reads `resource[DisplayName]!!` on every kept list: a missing displayname crashes the sync.
    for (const k of kept) expect(prop(k, NS.dav, "displayname")?.text, `04: displayname on ${k.href}`).toBeTruthy();
    // accessLevel: no share-access / OC owner-principal here, so CurrentUserPrivilegeSet.mayWriteContent decides.
    const shared = kept.find((r) => prop(r, NS.dav, "displayname")?.text === "Bob's shop");
    expect(shared, "04: the shared list is kept").toBeDefined();
    expect(privileges(shared).some((p) => WRITE_PRIVS.includes(p)), "04: the viewer's list is read-only in tasks.org").toBe(false);
    const groceries = expectGroceriesCalendar(ls, "04");
    expect(privileges(groceries).some((p) => WRITE_PRIVS.includes(p)), "04: an owned list is writable").toBe(true);
    const ctag0 = prop(groceries, NS.dav, "sync-token")?.text.trim() ?? prop(groceries, NS.cs, "getctag")?.text.trim();
    expect(ctag0, "04: Response.ctag = sync-token ?: getctag").toBeTruthy();
    to.vars["collection"] = groceries.href;

    // 05: calendar-query: every task with a non-blank ETag (tasks.org deletes on the phone what is not listed).
    const q0 = multistatus(await to.send("05-calendar-query-vtodo"), "05");
    expect(q0.responses).toHaveLength(2);
    for (const r of q0.responses) expectStrongEtag(prop(r, NS.dav, "getetag")?.text.trim(), "05");

    // 06: multiget: non-blank ETag and calendar-data for each (either missing throws in CaldavSynchronizer).
    to.setHrefs("06-multiget", q0.responses.map((r) => r.href));
    const mg = multistatus(await to.send("06-multiget"), "06");
    expect(mg.responses).toHaveLength(2);
    for (const r of mg.responses) {
      expectStrongEtag(prop(r, NS.dav, "getetag")?.text.trim(), "06");
      expect(prop(r, NS.cal, "calendar-data")?.text.trim()).toBeTruthy();
      vtodoOf(prop(r, NS.cal, "calendar-data")!.text);
    }

    // 07/08: PUT without preconditions, create then update (last writer wins).
    const uid = crypto.randomUUID();
    to.vars["newuid"] = uid;
    to.vars["newname"] = `${uid}.ics`;
    expect([201, 204]).toContain((await to.send("07-put-new")).status);
    expect([200, 204]).toContain((await to.send("08-put-update")).status);
    expect((await apiTasks()).some((t) => t.title === "water the plants (balcony)")).toBe(true);
    const ls1 = multistatus(await to.send("04-home-calendars"), "04'");
    const g1 = expectGroceriesCalendar(ls1, "04'");
    expect(prop(g1, NS.dav, "sync-token")?.text.trim() ?? prop(g1, NS.cs, "getctag")?.text.trim(), "04': the ctag moved after a change").not.toBe(ctag0);

    // 09: DELETE without If-Match; again → 404 (tasks.org counts it as done), never 5xx.
    expect([200, 204]).toContain((await to.send("09-delete")).status);
    expect((await to.send("09-delete")).status).toBe(404);
    expect((await apiTasks()).some((t) => t.title.startsWith("water the plants"))).toBe(false);

    // 10: a new list by Extended MKCOL at a UUID path.
    const coll = crypto.randomUUID();
    to.vars["newcollection"] = coll;
    expect((await to.send("10-mkcol-list")).status).toBe(201);
    const ls2 = multistatus(await to.send("04-home-calendars"), "04''");
    const garden = taskCalendars(ls2).find((r) => decodeURIComponent(r.href) === `${home}${coll}/`);
    expect(garden, "10: the new list is a VTODO calendar at the client's path").toBeDefined();
    expect(prop(garden, NS.dav, "displayname")?.text).toBe("Garden");
    expect(prop(garden, NS.apple, "calendar-color")?.text.trim().slice(0, 7).toUpperCase()).toBe("#4CAF50");

    // 11–13: one PROPPATCH per property; displayname and colour 200; the icon may be refused per property.
    const rn = multistatus(await to.send("11-proppatch-displayname"), "11");
    expect(rn.responses[0]!.props.find((p) => p.el.name === "displayname")?.status).toBe(200);
    const rc = multistatus(await to.send("12-proppatch-color"), "12");
    expect(rc.responses[0]!.props.find((p) => p.el.name === "calendar-color")?.status).toBe(200);
    const ic = multistatus(await to.send("13-proppatch-icon"), "13");
    expect(ic.responses[0]!.props.find((p) => p.el.name === "x-calendar-icon")?.status).toBeLessThan(500);
    const gl = (await apiLists()).find((l) => l.name === "Garden & balcony");
    expect(gl?.color).toBe("#FF9800");

    // 14: delete the list: the collection is gone.
    expect([200, 204]).toContain((await to.send("14-delete-list")).status);
    const ls3 = multistatus(await to.send("04-home-calendars"), "04'''");
    expect(ls3.responses.some((r) => decodeURIComponent(r.href) === `${home}${coll}/`)).toBe(false);
    expect((await apiLists()).some((l) => l.id === gl!.id)).toBe(false);
  });
});

/** tasks.org discovery (steps 02, 03, 04) for the tests that start after it; returns the seeded list's href. */
async function tasksorgDiscover(to: Replay): Promise<string> {
  to.vars["principal"] = hrefOf(multistatus(await to.send("02-wellknown-principal"), "02").responses[0], NS.dav, "current-user-principal")!;
  to.vars["home"] = hrefOf(multistatus(await to.send("03-homeset"), "03").responses[0], NS.cal, "calendar-home-set")!;
  const href = expectGroceriesCalendar(multistatus(await to.send("04-home-calendars"), "04"), "04").href;
  to.vars["collection"] = href;
  return href;
}

/**
 * tasks.org subtasks (15/16): a child carries a plain RELATED-TO:<parent uid>; the parent carries none and is
 * re-sent without one on every edit. Returns the parent's subtasks as the API shows them, and the child's link
 * as GET/multiget shows it.
 */
async function tasksorgSubtasks(order: "parent-first" | "child-first"): Promise<{ subtasks: string[] | undefined; link: unknown; parentUid: string }> {
  const to = new Replay(target, "tasksorg", auth);
  const coll = await tasksorgDiscover(to);
  const parentUid = crypto.randomUUID();
  const childUid = crypto.randomUUID();
  Object.assign(to.vars, { parentuid: parentUid, childuid: childUid, parentname: `${parentUid}.ics`, childname: `${childUid}.ics`, summary: "garden" });
  const steps = order === "parent-first" ? ["16-put-parent", "15-put-subtask-first"] : ["15-put-subtask-first", "16-put-parent"];
  for (const st of steps) expect([201, 204]).toContain((await to.send(st)).status);
  to.vars["summary"] = "garden (spring)";
  expect([200, 204]).toContain((await to.send("16-put-parent")).status);
  to.setHrefs("06-multiget", [`${coll}${childUid}.ics`]);
  const child = multistatus(await to.send("06-multiget"), "06").responses[0];
  const link = vtodoOf(prop(child, NS.cal, "calendar-data")!.text).getFirstPropertyValue("related-to");
  const open = (await web.get(`${V}/tasks?list_id=${list.id}&completed=false`)).body.items as { title: string; subtasks: { title: string }[] }[];
  return { subtasks: open.find((t) => t.title === "garden (spring)")?.subtasks.map((x) => x.title), link, parentUid };
}

describe("tasks.org subtasks (plain RELATED-TO on the child, none on the parent)", () => {
  test("parent pushed first, then the child, then the parent re-sent: the child stays its subtask", async () => {
    const r = await tasksorgSubtasks("parent-first");
    expect(r.subtasks).toEqual(["buy seeds"]);
    expect(r.link).toBe(r.parentUid);
  });

  // A child PUT before its parent (docs/research/caldav-clients.md M1; Vikunja client_compat_test.go "children
  // arrive before parent") is linked when the parent arrives (fixed on s23-caldav after this replay found it).
  test("child pushed before its parent, then the parent, then the parent re-sent: the child is its subtask", async () => {
    const r = await tasksorgSubtasks("child-first");
    expect(r.link).toBe(r.parentUid);
    expect(r.subtasks).toEqual(["buy seeds"]);
  });
});

// ---- Thunderbird -------------------------------------------------------------------------------------

describe("Thunderbird (source-derived sequence, not a wire capture)", () => {
  test("detection via /.well-known, home listing, calendar check, OPTIONS home, webdav sync + multiget, PUT If-None-Match / If-Match, delta and tombstone, stale token", async () => {
    await shareViewerList();
    const tb = new Replay(target, "thunderbird", auth);

    // 01: detectCollection(/.well-known/caldav), redirect followed; the first response has a home-set or a principal.
    const det = multistatus(await tb.send("01-detect-wellknown"), "01");
    const first = det.responses[0];
    const home = hrefOf(first, NS.cal, "calendar-home-set");
    expect(home ?? hrefOf(first, NS.dav, "current-user-principal"), "01: calendar-home-set or current-user-principal").toBeTruthy();
    expect(home, "01: the DAV root gives the home-set directly").toBeTruthy();
    tb.vars["home"] = home!;

    // 02: handleHomeSet: EVERY response has a resourcetype (Thunderbird reads it unguarded).
    const hm = multistatus(await tb.send("02-detect-homeset"), "02");
    for (const r of hm.responses) expect(prop(r, NS.dav, "resourcetype"), `02: resourcetype on ${r.href}`).toBeDefined();
    const groceries = hm.responses.find((r) => kid(prop(r, NS.dav, "resourcetype"), NS.cal, "calendar") && prop(r, NS.dav, "displayname")?.text === "Groceries");
    expect(groceries, "02: the list is found as a calendar").toBeDefined();
    expect(privileges(groceries).some((p) => ["write", "write-content", "write-properties", "all"].includes(p)), "02: not read-only").toBe(true);
    const shared = hm.responses.find((r) => prop(r, NS.dav, "displayname")?.text === "Bob's shop");
    expect(kid(prop(shared, NS.dav, "resourcetype"), NS.cal, "calendar"), "02: the shared list is found as a calendar").toBeDefined();
    expect(privileges(shared).some((p) => ["write", "write-content", "write-properties", "all"].includes(p)), "02: the viewer's list is read-only").toBe(false);
    tb.vars["collection"] = groceries!.href;

    // 03: checkDavResourceType on the calendar.
    const ck = multistatus(await tb.send("03-calendar-check"), "03");
    const c0 = ck.responses[0];
    expect(kid(prop(c0, NS.dav, "resourcetype"), NS.cal, "calendar")).toBeDefined();
    const reports = kids(prop(c0, NS.dav, "supported-report-set"), NS.dav, "supported-report").flatMap((s) => kid(s, NS.dav, "report")?.children ?? []);
    expect(reports.some((r) => r.ns === NS.dav && r.name === "sync-collection"), "03: sync-collection advertised (webdav sync)").toBe(true);
    expect(kids(prop(c0, NS.cal, "supported-calendar-component-set"), NS.cal, "comp").map((c) => c.attrs["name"])).toContain("VTODO");

    // 04: OPTIONS on the calendar's parent.
    const opt = await tb.send("04-options-home");
    expect(opt.status).toBeGreaterThanOrEqual(200);
    expect(opt.status).toBeLessThan(300);

    // 05: initial webdav sync: each member .ics with text/calendar content type and an ETag; a token.
    const s0 = multistatus(await tb.send("05-sync-initial"), "05");
    expect(s0.syncToken).toBeTruthy();
    const members = s0.responses.filter((r) => r.href.endsWith(".ics"));
    expect(members).toHaveLength(2);
    for (const m of members) {
      const ct = prop(m, NS.dav, "getcontenttype")?.text.trim();
      if (ct !== undefined) expect(ct.startsWith("text/calendar"), "05: getcontenttype text/calendar").toBe(true);
      expectStrongEtag(prop(m, NS.dav, "getetag")?.text.trim(), "05");
    }
    // Responses that are neither .ics members nor 404s would count as "unhandled errors" unless they are 200 on a "/" href.
    for (const r of s0.responses.filter((x) => !x.href.endsWith(".ics"))) expect(r.href.endsWith("/") || r.status === 404).toBe(true);

    // 06: multiget.
    tb.setHrefs("06-multiget", members.map((m) => m.href));
    const mg = multistatus(await tb.send("06-multiget"), "06");
    for (const r of mg.responses) {
      expectStrongEtag(prop(r, NS.dav, "getetag")?.text.trim(), "06");
      vtodoOf(prop(r, NS.cal, "calendar-data")!.text);
    }

    // 07/08: new task with If-None-Match: *, then the single-href multiget Thunderbird does after any write.
    const uid = `${crypto.randomUUID()}@thunderbird.example`;
    tb.vars["newuid"] = uid;
    tb.vars["newname"] = `${uid.replace(/[^a-zA-Z0-9_\-.]/g, "_")}.ics`;
    expect([200, 201, 204]).toContain((await tb.send("07-put-new")).status);
    const href = `${groceries!.href}${tb.vars["newname"]}`;
    tb.setHrefs("08-multiget-one", [href]);
    const one = multistatus(await tb.send("08-multiget-one"), "08");
    expect(one.responses).toHaveLength(1);
    const etag = expectStrongEtag(prop(one.responses[0], NS.dav, "getetag")?.text.trim(), "08");
    expect(String(vtodoOf(prop(one.responses[0], NS.cal, "calendar-data")!.text).getFirstPropertyValue("uid"))).toBe(uid);

    // 09: modify with a stale ETag → 412 (conflict prompt), with the current one → ok.
    expect((await tb.send("09-put-modify", { vars: { etag: '"stale"' } })).status).toBe(412);
    tb.vars["etag"] = etag;
    expect([200, 201, 204]).toContain((await tb.send("09-put-modify")).status);
    expect((await apiTasks()).find((t) => t.title === "renew the passport")?.completed).toBe(true);

    // 10: delta since 05: the new item listed, a new token.
    tb.vars["synctoken"] = s0.syncToken!;
    const s1 = multistatus(await tb.send("10-sync-delta"), "10");
    expect(s1.syncToken).toBeTruthy();
    expect(s1.syncToken).not.toBe(s0.syncToken);
    const listed = responseFor(s1, href);
    expect(listed, "10: the new item is in the delta").toBeDefined();
    const etag2 = expectStrongEtag(prop(listed, NS.dav, "getetag")?.text.trim(), "10");
    expect(etag2).not.toBe(etag);

    // 11: delete with If-Match; 12: the delta shows a 404 tombstone for it.
    tb.vars["etag"] = etag2;
    expect([200, 204]).toContain((await tb.send("11-delete")).status);
    tb.vars["synctoken"] = s1.syncToken!;
    const s2 = multistatus(await tb.send("12-sync-after-delete"), "12");
    expect(responseFor(s2, href)?.status, "12: a 404 response for the deleted href").toBe(404);

    // 13: a token the server does not know: a 4xx (Thunderbird then resyncs from scratch), never 5xx.
    const bad = await tb.send("13-sync-bad-token");
    expect(bad.status).toBeGreaterThanOrEqual(400);
    expect(bad.status).toBeLessThan(500);
    // A 403 whose body is exactly an empty DAV:error is read as a rate limit: the token is then never reset.
    expect(bad.status === 403 && bad.text.includes(`<D:error xmlns:D="DAV:"/>`)).toBe(false);
  });
});

// ---- GNOME Evolution ---------------------------------------------------------------------------------

describe("GNOME Evolution / evolution-data-server (source-derived sequence, not a wire capture)", () => {
  test("discovery from the root via /.well-known, home listing, OPTIONS calendar-access on the list, privileges, sync-collection at Depth 0, multiget, PUT with a quoted charset, GET back, If-Match, tombstone, stale token", async () => {
    await shareViewerList();
    const ev = new Replay(target, "evolution", auth);
    ev.vars["base"] = "/";

    // 01/02: the root finds nothing (no 5xx); /.well-known/caldav gives the home-set.
    const base = await ev.send("01-discover-base");
    let home: string | undefined;
    if (base.status === 207) home = hrefOf(multistatus(base, "01").responses[0], NS.cal, "calendar-home-set");
    if (!home) home = hrefOf(multistatus(await ev.send("02-discover-wellknown"), "02").responses[0], NS.cal, "calendar-home-set");
    expect(home, "01/02: calendar-home-set").toBeTruthy();
    ev.vars["home"] = home!;

    // 03: the home's children: kind from resourcetype, task support from supported-calendar-component-set.
    const hm = multistatus(await ev.send("03-list-home"), "03");
    const groceries = expectGroceriesCalendar(hm, "03");
    expect(prop(groceries, NS.apple, "calendar-color")?.text.trim()).toMatch(/^#[0-9A-Fa-f]{6}/);
    ev.vars["collection"] = groceries.href;

    // 04: OPTIONS on the list itself must say calendar-access, or Evolution refuses the URL.
    const opt = await ev.send("04-options-collection");
    expect(opt.status).toBeGreaterThanOrEqual(200);
    expect(opt.status).toBeLessThan(300);
    expect(davTokens(opt)).toContain("calendar-access");

    // 05: writable iff write / write-content / all; the viewer's shared list is not.
    const pv = multistatus(await ev.send("05-privileges"), "05");
    expect(privileges(pv.responses[0]).some((p) => WRITE_PRIVS.includes(p))).toBe(true);
    const shared = taskCalendars(hm).find((r) => prop(r, NS.dav, "displayname")?.text === "Bob's shop")!;
    const pvShared = multistatus(await ev.send("05-privileges", { vars: { collection: shared.href } }), "05'");
    expect(privileges(pvShared.responses[0]).some((p) => WRITE_PRIVS.includes(p)), "05': the viewer's list is read-only").toBe(false);

    // 06: sync-collection advertised.
    const cp = multistatus(await ev.send("06-collection-props"), "06");
    const reports = kids(prop(cp.responses[0], NS.dav, "supported-report-set"), NS.dav, "supported-report").flatMap((x) => kid(x, NS.dav, "report")?.children ?? []);
    expect(reports.some((r) => r.ns === NS.dav && r.name === "sync-collection")).toBe(true);

    // 07: sync-collection sent with Depth: 0; XML media type; a token Evolution keeps (contains ':' or '/').
    const a0 = await ev.send("07-sync-initial");
    expect((a0.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase()).toMatch(/^(application|text)\/xml$/);
    const s0 = multistatus(a0, "07");
    expect(s0.syncToken, "07: a non-empty sync-token").toBeTruthy();
    expect(/[:/]/.test(s0.syncToken!), "07: a token without ':' or '/' is dropped as a ctag (full resync every time)").toBe(true);
    // Evolution skips a response for the collection itself (href ending in the request path); the rest are members.
    const members = s0.responses.filter((r) => r.href.replace(/\/$/, "") !== groceries.href.replace(/\/$/, ""));
    expect(members).toHaveLength(2);
    for (const m of members) expectStrongEtag(prop(m, NS.dav, "getetag")?.text.trim(), "07");

    // 08: multiget.
    ev.setHrefs("08-multiget", members.map((m) => m.href));
    const mg = multistatus(await ev.send("08-multiget"), "08");
    expect(mg.responses).toHaveLength(2);
    for (const r of mg.responses) vtodoOf(prop(r, NS.cal, "calendar-data")!.text);

    // 09: new task; the name is the escaped UID + .ics ('@' → %40); Content-Type with a quoted charset.
    const uid = `${crypto.randomUUID()}@evolution.example`;
    ev.vars["newuid"] = uid;
    ev.vars["newname"] = encodeURIComponent(`${uid}.ics`);
    expect([200, 201, 204]).toContain((await ev.send("09-put-new")).status);
    expect((await apiTasks()).some((t) => t.title === "fix the bike")).toBe(true);

    // 10: read back: 200, text/calendar, strong ETag header, the VTODO with its UID.
    const g = await ev.send("10-get");
    expect(g.status).toBe(200);
    expect(g.headers.get("content-type") ?? "").toContain("text/calendar");
    const etag = expectStrongEtag(g.headers.get("etag") ?? undefined, "10");
    expect(String(vtodoOf(g.text).getFirstPropertyValue("uid"))).toBe(uid);

    // 11: stale If-Match → 412 (out of sync); current → 2xx.
    expect((await ev.send("11-put-modify", { vars: { etag: '"stale"' } })).status).toBe(412);
    ev.vars["etag"] = etag;
    expect([200, 201, 204]).toContain((await ev.send("11-put-modify")).status);
    expect((await apiTasks()).some((t) => t.title === "fix the bike (rear brake)")).toBe(true);

    // 12: the delta lists it with a new ETag and a new token.
    ev.vars["synctoken"] = s0.syncToken!;
    const s1 = multistatus(await ev.send("12-sync-delta"), "12");
    expect(s1.syncToken).not.toBe(s0.syncToken);
    const href = `${groceries.href}${ev.vars["newname"]}`;
    const changed = responseFor(s1, href);
    expect(changed, "12: the edited task is in the delta").toBeDefined();
    const etag2 = expectStrongEtag(prop(changed, NS.dav, "getetag")?.text.trim(), "12");
    expect(etag2).not.toBe(etag);

    // 13/14: DELETE with If-Match and Schedule-Reply: F; the delta has a response-level 404 for it.
    ev.vars["etag"] = etag2;
    expect([200, 204]).toContain((await ev.send("13-delete")).status);
    ev.vars["synctoken"] = s1.syncToken!;
    expect(responseFor(multistatus(await ev.send("14-sync-after-delete"), "14"), href)?.status).toBe(404);

    // 15: an unknown token: 412, or 403 naming valid-sync-token (Evolution then starts over), never 5xx.
    const bad = await ev.send("15-sync-bad-token");
    expect([403, 412]).toContain(bad.status);
    if (bad.status === 403) {
      const err = parseXml(bad.text);
      expect(`${err.ns}${err.name}`).toBe("DAV:error");
      expect(kid(err, NS.dav, "valid-sync-token"), "15: the precondition Evolution looks for").toBeDefined();
    }
  });
});
}
