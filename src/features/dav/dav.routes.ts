import ICAL from "ical.js";
import { readLimited } from "../../core/body";
import { AppError } from "../../core/errors";
import { davStatus } from "../../core/problem";
import type { AuthUser } from "../../core/auth/principal";
import type { RequestContext } from "../../core/request-context";
import { DavRefusal, FILL_SLICE, type Collection, type DavService, type Resource } from "./dav.service";
import { NS, XmlError, buildXml, buildXmlInParts, child, children, d, el, is, parseXml, type Out, type XmlEl } from "./dav.xml";
import { yieldToRequests } from "../../core/yield";

/**
 * The CalDAV endpoint (RFC 4791, 6578, 6764; spec devices.md): `/.well-known/caldav` → 301
 * `/dav/`; the principal `/dav/principals/<username>/`; the home `/dav/calendars/<username>/`;
 * below it one VTODO collection per visible list, each task a `<name>.ics` resource.
 *
 * WebDAV's methods (PROPFIND, REPORT, MKCALENDAR, …) are not routes Elysia knows, and its bodies
 * are XML and iCalendar, so app.ts hands every request under these paths here from onRequest,
 * after the guard resolved who is calling. This file is the protocol: paths, headers, XML in and
 * out, statuses. What the requests do is DavService's.
 */

const BODY_LIMIT = 1024 * 1024;
const DAV_HEADER = "1, 3, calendar-access, extended-mkcol";
const ALLOW = "OPTIONS, GET, HEAD, PUT, DELETE, MOVE, PROPFIND, PROPPATCH, REPORT, MKCOL, MKCALENDAR";
const CALENDAR_CT = "text/calendar; charset=utf-8";
const XML_CT = "application/xml; charset=utf-8";
const decoder = new TextDecoder("utf-8", { fatal: true });

type Target =
  | { kind: "root" }
  | { kind: "principals" }
  | { kind: "principal"; user: string }
  | { kind: "calendars" }
  | { kind: "home"; user: string }
  | { kind: "collection"; user: string; segment: string }
  | { kind: "resource"; user: string; segment: string; name: string };

/**
 * The one spelling of a path segment in every href: every octet but RFC 3986's unreserved
 * characters (ALPHA, DIGIT, "-", ".", "_", "~") percent-encoded, upper-case hex, as Radicale and
 * Evolution (g_uri_escape_string) write them. A client that named a resource `abc%40host.ics` gets
 * exactly that back (Evolution keys its cache by the href string); one that wrote `@`, `+`, `(`…
 * unencoded gets the encoded (equivalent once decoded) spelling, the same on every answer.
 */
const enc = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`);
const principalHref = (u: string) => `/dav/principals/${enc(u)}/`;
const homeHref = (u: string) => `/dav/calendars/${enc(u)}/`;
const collectionHref = (u: string, seg: string) => `${homeHref(u)}${enc(seg)}/`;
const resourceHref = (u: string, seg: string, name: string) => `${collectionHref(u, seg)}${enc(name)}`;

function parseTarget(path: string): Target | null {
  const parts = path.slice(4).split("/").filter((p, i, a) => p !== "" || i < a.length - 1).filter((p) => p !== "");
  let seg: string[];
  try {
    seg = parts.map((p) => decodeURIComponent(p));
  } catch {
    return null;
  }
  if (seg.length === 0) return { kind: "root" };
  const [top, user, coll, name, ...rest] = seg;
  if (rest.length) return null;
  if (top === "principals") {
    if (user === undefined) return { kind: "principals" };
    return coll === undefined ? { kind: "principal", user } : null;
  }
  if (top === "calendars") {
    if (user === undefined) return { kind: "calendars" };
    if (coll === undefined) return { kind: "home", user };
    if (name === undefined) return { kind: "collection", user, segment: coll };
    return { kind: "resource", user, segment: coll, name };
  }
  return null;
}

function xmlResponse(status: number, body: Out, headers: Record<string, string> = {}): Response {
  return new Response(buildXml(body), { status, headers: { "content-type": XML_CT, ...headers } });
}

const errorBody = (condition: Out) => d("error", [condition]);

function refusalResponse(r: DavRefusal, username: string): Response {
  switch (r.kind) {
    case "not-found":
      return davStatus(404);
    case "precondition-failed":
      return davStatus(412);
    case "forbidden":
      return xmlResponse(403, errorBody(d("need-privileges")), { "x-dav-error": r.message.slice(0, 200).replace(/[^\x20-\x7e]/g, "?") });
    case "conflict":
      return davStatus(409);
    case "valid-sync-token":
      return xmlResponse(403, errorBody(d("valid-sync-token")));
    case "number-of-matches-within-limits":
      return xmlResponse(507, errorBody(d("number-of-matches-within-limits")));
    case "no-uid-conflict":
      return xmlResponse(403, errorBody(el(NS.caldav, "no-uid-conflict", r.href ? [d("href", resourceHref(username, r.href.segment, r.href.name))] : [])));
    default:
      return xmlResponse(403, errorBody(el(NS.caldav, r.kind, [])), { "x-dav-error": r.message.slice(0, 200).replace(/[^\x20-\x7e]/g, "?") });
  }
}

/** The ETags an If-Match header names (strong comparison: a weak one never matches); null without the header. */
function ifMatch(h: string | null): string[] | null {
  if (h === null) return null;
  return h.split(",").map((s) => s.trim()).filter((s) => s && !s.startsWith("W/"));
}

interface Ctx {
  user: AuthUser;
  req: Request;
  minimal: boolean;
}

export function davHandler(dav: DavService) {
  return async function handle(request: Request, ctx: RequestContext, path: string): Promise<Response> {
    const method = request.method.toUpperCase();
    if (method === "OPTIONS") return new Response(null, { status: 200, headers: { dav: DAV_HEADER, allow: ALLOW, "content-length": "0" } });
    if (path.startsWith("/.well-known/")) return new Response(null, { status: 301, headers: { location: "/dav/" } });
    const principal = ctx.principal;
    if (!principal) return new Response("authentication required\n", { status: 401, headers: { "www-authenticate": 'Basic realm="app", charset="UTF-8"', "content-type": "text/plain" } });
    const target = parseTarget(path);
    if (!target) return davStatus(404);
    const user = principal.user;
    if ("user" in target && target.user.toLowerCase() !== user.username.toLowerCase()) return davStatus(404);
    const prefer = `${request.headers.get("prefer") ?? ""}`.toLowerCase();
    const c: Ctx = { user, req: request, minimal: prefer.includes("return=minimal") || request.headers.get("brief")?.toLowerCase() === "t" };
    try {
      switch (method) {
        case "PROPFIND":
          return await propfind(dav, c, target);
        case "REPORT":
          return await report(dav, c, target);
        case "GET":
        case "HEAD":
          return await get(dav, c, target, method === "HEAD");
        case "PUT":
          return await put(dav, c, target);
        case "DELETE":
          return del(dav, c, target);
        case "MOVE":
          return move(dav, c, target);
        case "MKCALENDAR":
        case "MKCOL":
          return await mkcol(dav, c, target, method);
        case "PROPPATCH":
          return await proppatch(dav, c, target);
        default:
          return davStatus(405, { allow: ALLOW });
      }
    } catch (e) {
      if (e instanceof DavRefusal) return refusalResponse(e, user.username);
      if (e instanceof XmlError) return new Response(`${e.message}\n`, { status: 400, headers: { "content-type": "text/plain" } });
      if (e instanceof AppError && e.code === "payload_too_large") return davStatus(413);
      throw e;
    }
  };
}

async function bodyText(req: Request): Promise<string> {
  const bytes = await readLimited(req, BODY_LIMIT);
  try {
    return decoder.decode(bytes);
  } catch {
    throw new XmlError("the body is not valid UTF-8");
  }
}

async function xmlBody(req: Request): Promise<XmlEl | null> {
  const text = await bodyText(req);
  return text.trim() ? parseXml(text) : null;
}

// ---- PROPFIND ------------------------------------------------------------------------------------

type PropValue = Out[] | string | null;
/** A property's value on a resource, or undefined when the resource does not have it (404 propstat). */
type PropSource = (ns: string, name: string) => PropValue | undefined;

interface PropRequest {
  mode: "prop" | "allprop" | "propname";
  props: { ns: string; name: string }[];
}

function readPropRequest(root: XmlEl | null): PropRequest {
  if (root === null) return { mode: "allprop", props: [] };
  if (child(root, NS.dav, "propname")) return { mode: "propname", props: [] };
  const prop = child(root, NS.dav, "prop");
  if (prop) return { mode: "prop", props: prop.children.map((p) => ({ ns: p.ns, name: p.name })) };
  return { mode: "allprop", props: [] };
}

/** The properties allprop/propname list for a kind of resource. */
const LIVE: Record<string, [string, string][]> = {
  root: [[NS.dav, "resourcetype"], [NS.dav, "current-user-principal"], [NS.caldav, "calendar-home-set"], [NS.dav, "principal-collection-set"]],
  principal: [[NS.dav, "resourcetype"], [NS.dav, "displayname"], [NS.dav, "current-user-principal"], [NS.dav, "principal-URL"], [NS.caldav, "calendar-home-set"], [NS.dav, "principal-collection-set"]],
  home: [[NS.dav, "resourcetype"], [NS.dav, "displayname"], [NS.dav, "current-user-principal"], [NS.caldav, "calendar-home-set"], [NS.dav, "owner"], [NS.dav, "current-user-privilege-set"]],
  collection: [
    [NS.dav, "resourcetype"],
    [NS.dav, "displayname"],
    [NS.apple, "calendar-color"],
    [NS.cs, "getctag"],
    [NS.dav, "sync-token"],
    [NS.caldav, "supported-calendar-component-set"],
    [NS.dav, "supported-report-set"],
    [NS.dav, "current-user-privilege-set"],
    [NS.dav, "owner"],
  ],
  resource: [[NS.dav, "resourcetype"], [NS.dav, "getetag"], [NS.dav, "getcontenttype"]],
};

function propstats(href: string, req: PropRequest, kind: keyof typeof LIVE, source: PropSource, minimal: boolean): Out {
  const wanted = req.mode === "prop" ? req.props : LIVE[kind]!.map(([ns, name]) => ({ ns, name }));
  const found: Out[] = [];
  const missing: Out[] = [];
  for (const p of wanted) {
    const v = req.mode === "propname" ? null : source(p.ns, p.name);
    if (v === undefined) missing.push(el(p.ns, p.name));
    else found.push(el(p.ns, p.name, v ?? undefined));
  }
  const parts: Out[] = [d("href", href)];
  if (found.length || (missing.length === 0) || minimal) parts.push(d("propstat", [d("prop", found), d("status", "HTTP/1.1 200 OK")]));
  if (missing.length && !minimal) parts.push(d("propstat", [d("prop", missing), d("status", "HTTP/1.1 404 Not Found")]));
  return d("response", parts);
}

const hrefs = (...h: string[]): Out[] => h.map((x) => d("href", x));
const privileges = (names: string[]): Out[] => names.map((n) => d("privilege", [d(n)]));
const READ_ONLY = ["read", "read-current-user-privilege-set"];
const READ_WRITE = ["read", "write", "write-properties", "write-content", "bind", "unbind", "read-current-user-privilege-set"];

function commonProps(u: AuthUser): PropSource {
  return (ns, name) => {
    if (ns === NS.dav && name === "current-user-principal") return hrefs(principalHref(u.username));
    if (ns === NS.caldav && name === "calendar-home-set") return hrefs(homeHref(u.username));
    if (ns === NS.dav && name === "principal-collection-set") return hrefs("/dav/principals/");
    return undefined;
  };
}

function rootProps(u: AuthUser): PropSource {
  const common = commonProps(u);
  return (ns, name) => (ns === NS.dav && name === "resourcetype" ? [d("collection")] : common(ns, name));
}

function principalProps(u: AuthUser): PropSource {
  const common = commonProps(u);
  return (ns, name) => {
    if (ns === NS.dav && name === "resourcetype") return [d("collection"), d("principal")];
    if (ns === NS.dav && name === "displayname") return u.displayName || u.username;
    if (ns === NS.dav && name === "principal-URL") return hrefs(principalHref(u.username));
    if (ns === NS.dav && name === "supported-report-set") return [];
    return common(ns, name);
  };
}

function homeProps(u: AuthUser): PropSource {
  const common = commonProps(u);
  return (ns, name) => {
    if (ns === NS.dav && name === "resourcetype") return [d("collection")];
    if (ns === NS.dav && name === "displayname") return u.displayName || u.username;
    if (ns === NS.dav && name === "owner") return hrefs(principalHref(u.username));
    if (ns === NS.dav && name === "current-user-privilege-set") return privileges(READ_WRITE);
    if (ns === NS.dav && name === "supported-report-set") return [];
    return common(ns, name);
  };
}

const REPORTS: [string, string][] = [
  [NS.caldav, "calendar-query"],
  [NS.caldav, "calendar-multiget"],
  [NS.dav, "sync-collection"],
];

function collectionProps(u: AuthUser, col: Collection): PropSource {
  const common = commonProps(u);
  return (ns, name) => {
    if (ns === NS.dav) {
      switch (name) {
        case "resourcetype":
          return [d("collection"), el(NS.caldav, "calendar")];
        case "displayname":
          return col.name;
        case "sync-token":
          return col.token;
        case "supported-report-set":
          return REPORTS.map(([rns, r]) => d("supported-report", [d("report", [el(rns, r)])]));
        case "current-user-privilege-set":
          return privileges(col.role === "viewer" ? READ_ONLY : READ_WRITE);
        case "owner":
          return hrefs(principalHref(col.ownerUsername));
      }
    }
    if (ns === NS.cs && name === "getctag") return col.token;
    if (ns === NS.apple && name === "calendar-color") return col.color ? `${col.color}FF` : undefined;
    if (ns === NS.caldav && name === "supported-calendar-component-set") return [el(NS.caldav, "comp", undefined, { name: "VTODO" })];
    // RFC 7809: the zone floating times are read in (DAVx⁵ reads it); instants are sent in UTC.
    if (ns === NS.caldav && name === "calendar-timezone-id") return u.timezone;
    if (ns === NS.caldav && name === "supported-calendar-data") return [el(NS.caldav, "calendar-data", undefined, { "content-type": "text/calendar", version: "2.0" })];
    return common(ns, name);
  };
}

function resourceProps(r: Resource): PropSource {
  return (ns, name) => {
    if (ns === NS.dav && name === "resourcetype") return [];
    if (ns === NS.dav && name === "getetag") return r.etag;
    if (ns === NS.dav && name === "getcontenttype") return `${CALENDAR_CT}; component=vtodo`;
    if (ns === NS.caldav && name === "calendar-data") return r.ics;
    return undefined;
  };
}

const wantsData = (req: PropRequest) => req.props.some((p) => p.ns === NS.caldav && p.name === "calendar-data");


/** `f` of each item, other requests getting their turn every FILL_SLICE items (answers about thousands of tasks). */
async function inSlices<T, U>(xs: T[], f: (x: T) => U): Promise<U[]> {
  const out: U[] = [];
  for (const [i, x] of xs.entries()) {
    if (i > 0 && i % FILL_SLICE === 0) await yieldToRequests();
    out.push(f(x));
  }
  return out;
}

/** A 207 multistatus, written a slice of responses at a time (other requests run in between). */
async function multistatus(responses: Out[], extra: Out[] = []): Promise<Response> {
  const body = await buildXmlInParts({ ns: NS.dav, name: "multistatus" }, [...responses, ...extra], FILL_SLICE, yieldToRequests);
  return new Response(body, { status: 207, headers: { "content-type": XML_CT } });
}

async function propfind(dav: DavService, c: Ctx, t: Target): Promise<Response> {
  const body = await xmlBody(c.req);
  if (body && !is(body, NS.dav, "propfind")) throw new XmlError("a PROPFIND body is a DAV:propfind element");
  const req = readPropRequest(body);
  const depth = (c.req.headers.get("depth") ?? "infinity").trim().toLowerCase();
  const deep = depth !== "0";
  const u = c.user;
  const out: Out[] = [];
  switch (t.kind) {
    case "root":
    case "principals":
    case "calendars": {
      const href = t.kind === "root" ? "/dav/" : t.kind === "principals" ? "/dav/principals/" : "/dav/calendars/";
      out.push(propstats(href, req, "root", rootProps(u), c.minimal));
      if (deep && t.kind === "principals") out.push(propstats(principalHref(u.username), req, "principal", principalProps(u), c.minimal));
      if (deep && t.kind === "calendars") out.push(propstats(homeHref(u.username), req, "home", homeProps(u), c.minimal));
      break;
    }
    case "principal":
      out.push(propstats(principalHref(u.username), req, "principal", principalProps(u), c.minimal));
      break;
    case "home":
      out.push(propstats(homeHref(u.username), req, "home", homeProps(u), c.minimal));
      if (deep) for (const col of dav.collections(u)) out.push(propstats(collectionHref(u.username, col.segment), req, "collection", collectionProps(u, col), c.minimal));
      break;
    case "collection": {
      const col = dav.collection(u, t.segment);
      out.push(propstats(collectionHref(u.username, col.segment), req, "collection", collectionProps(u, col), c.minimal));
      if (deep) out.push(...(await inSlices(await dav.fill(dav.members(u, t.segment, wantsData(req))), (r) => propstats(resourceHref(u.username, col.segment, r.name), req, "resource", resourceProps(r), c.minimal))));
      break;
    }
    case "resource": {
      const r = dav.membersByName(u, t.segment, [t.name], wantsData(req)).get(t.name);
      if (!r) throw new DavRefusal("not-found", "no such resource");
      await dav.fill([r]);
      const col = dav.collection(u, t.segment);
      out.push(propstats(resourceHref(u.username, col.segment, r.name), req, "resource", resourceProps(r), c.minimal));
      break;
    }
  }
  return await multistatus(out);
}

// ---- REPORT ----------------------------------------------------------------------------------------

async function report(dav: DavService, c: Ctx, t: Target): Promise<Response> {
  const body = await xmlBody(c.req);
  if (!body) throw new XmlError("a REPORT needs a body");
  const supported = REPORTS.some(([ns, n]) => is(body, ns, n));
  if (!supported || (t.kind !== "collection" && t.kind !== "resource")) return xmlResponse(403, errorBody(d("supported-report")));
  const segment = t.segment;
  const req = readPropRequest(body);
  const withData = wantsData(req);
  const u = c.user;
  const col = dav.collection(u, segment);
  const href = (name: string) => resourceHref(u.username, col.segment, name);

  if (is(body, NS.caldav, "calendar-multiget")) {
    const names = children(body, NS.dav, "href").map((h) => nameOfHref(h.text.trim(), u.username, col.segment));
    const found = dav.membersByName(u, segment, names.filter((n): n is string => n !== null), withData);
    await dav.fill(found.values());
    const out = children(body, NS.dav, "href").map((h, i) => {
      const n = names[i];
      const r = n ? found.get(n) : undefined;
      if (!r) return d("response", [d("href", h.text.trim()), d("status", "HTTP/1.1 404 Not Found")]);
      return propstats(href(r.name), req, "resource", resourceProps(r), c.minimal);
    });
    return await multistatus(out);
  }

  if (is(body, NS.dav, "sync-collection")) {
    const token = child(body, NS.dav, "sync-token")?.text.trim() ?? "";
    const nresults = child(body, NS.dav, "limit") ? child(child(body, NS.dav, "limit")!, NS.dav, "nresults")?.text.trim() : undefined;
    const limit = nresults === undefined ? null : /^\d{1,9}$/.test(nresults) && Number(nresults) > 0 ? Number(nresults) : NaN;
    if (Number.isNaN(limit)) throw new XmlError("DAV:limit needs a positive DAV:nresults");
    const s = dav.sync(u, segment, token, withData, limit);
    await dav.fill(s.changed);
    const out = await inSlices(s.changed, (r) => propstats(href(r.name), req, "resource", resourceProps(r), c.minimal));
    for (const name of s.removed) out.push(d("response", [d("href", href(name)), d("status", "HTTP/1.1 404 Not Found")]));
    // Truncated (RFC 6578 §3.6): the collection itself answers 507, the client asks again from the token.
    if (s.truncated) out.push(d("response", [d("href", collectionHref(u.username, col.segment)), d("status", "HTTP/1.1 507 Insufficient Storage"), d("error", [d("number-of-matches-within-limits")])]));
    return await multistatus(out, [d("sync-token", s.token)]);
  }

  // calendar-query
  const filter = child(body, NS.caldav, "filter");
  const test = compileFilter(filter);
  const members = await dav.fill(dav.members(u, segment, withData || test.needsData, test.needsInstances));
  // A filter on properties parses each object: other requests get their turn between slices too.
  const out: Out[] = [];
  for (const [i, r] of members.entries()) {
    if (i > 0 && i % FILL_SLICE === 0) await yieldToRequests();
    if (test.match(r)) out.push(propstats(href(r.name), req, "resource", resourceProps(r), c.minimal));
  }
  return await multistatus(out);
}

/** A multiget href (absolute URL or path, percent-encoded or not) → the resource name in this collection, or null. */
function nameOfHref(h: string, username: string, segment: string): string | null {
  let path = h;
  try {
    if (/^https?:\/\//i.test(h)) path = new URL(h).pathname;
  } catch {
    return null;
  }
  const t = parseTarget(path.startsWith("/dav") ? path : `/dav${path}`);
  if (!t || t.kind !== "resource" || t.user.toLowerCase() !== username.toLowerCase() || t.segment !== segment) return null;
  return t.name;
}

interface CompiledFilter {
  needsData: boolean;
  /** A time-range on VTODO: repeating tasks are tested on their instances (Resource.later). */
  needsInstances?: boolean;
  match(r: Resource): boolean;
}

/**
 * calendar-query's filter (RFC 4791 §9.7): VCALENDAR > VTODO, with time-range (§9.9's VTODO table;
 * a repeating task matches when its current due or a later instance does: dav.instances.ts), prop-filter
 * (is-not-defined, text-match with negate-condition, time-range) and nested comp-filter on
 * VALARM. Another component (VEVENT) matches nothing: collections hold VTODOs only.
 */
function compileFilter(filter: XmlEl | undefined): CompiledFilter {
  const cal = filter ? child(filter, NS.caldav, "comp-filter") : undefined;
  if (!cal) return { needsData: false, match: () => true };
  if ((cal.attrs["name"] ?? "").toUpperCase() !== "VCALENDAR") return { needsData: false, match: () => false };
  if (child(cal, NS.caldav, "is-not-defined")) return { needsData: false, match: () => false };
  const comps = children(cal, NS.caldav, "comp-filter");
  if (comps.length === 0) return { needsData: false, match: () => true };
  if (comps.some((cf) => (cf.attrs["name"] ?? "").toUpperCase() !== "VTODO")) {
    // A VEVENT (or other) filter: none here; `is-not-defined` on it is true of everything.
    const onlyAbsent = comps.every((cf) => (cf.attrs["name"] ?? "").toUpperCase() === "VTODO" || child(cf, NS.caldav, "is-not-defined"));
    if (!onlyAbsent) return { needsData: false, match: () => false };
  }
  const todo = comps.find((cf) => (cf.attrs["name"] ?? "").toUpperCase() === "VTODO");
  if (!todo) return { needsData: false, match: () => true };
  if (child(todo, NS.caldav, "is-not-defined")) return { needsData: false, match: () => false };
  const range = child(todo, NS.caldav, "time-range");
  const propFilters = children(todo, NS.caldav, "prop-filter");
  const subFilters = children(todo, NS.caldav, "comp-filter");
  const needsData = propFilters.length > 0 || subFilters.length > 0;
  return {
    needsData,
    needsInstances: range !== undefined,
    match: (r) => {
      if (range && !todoInRange(r, range)) return false;
      if (!needsData) return true;
      const comp = vtodoOf(r);
      if (!comp) return false;
      return propFilters.every((pf) => propFilterMatches(comp, pf)) && subFilters.every((sf) => subFilterMatches(comp, sf));
    },
  };
}

function vtodoOf(r: Resource): ICAL.Component | null {
  if (!r.ics) return null;
  const cal = new ICAL.Component(ICAL.parse(r.ics));
  return cal.getAllSubcomponents("vtodo").find((t) => !t.hasProperty("recurrence-id")) ?? null;
}

/** time-range attributes are UTC date-times `YYYYMMDDTHHMMSSZ`; either may be absent (open). */
function rangeOf(el: XmlEl): { start: number; end: number } {
  const parse = (s: string | undefined, dflt: number) => {
    if (!s) return dflt;
    const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/i.exec(s.trim());
    if (!m) throw new XmlError(`time-range: ${s.slice(0, 40)} is not a UTC date-time`);
    return Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!);
  };
  return { start: parse(el.attrs["start"], -Infinity), end: parse(el.attrs["end"], Infinity) };
}

const instantOf = (v: string) => Date.parse(v.length === 10 ? `${v}T00:00:00Z` : v);

/**
 * RFC 4791 §9.9 for a VTODO with DUE only / COMPLETED and CREATED / none (no DTSTART is stored on
 * tasks). A repeating task matches when any instance does: its current due, else (only when that
 * due lies before the start: later instances lie later still) the first later one from the start.
 */
function todoInRange(r: Resource, range: XmlEl): boolean {
  const { start, end } = rangeOf(range);
  if (r.dueAt !== null) {
    const dueIn = (v: string) => {
      const due = instantOf(v);
      return start <= due && end > due - (v.length === 10 ? 86_400_000 : 0) && (start < due || end >= due);
    };
    if (dueIn(r.dueAt)) return true;
    if (!r.later || instantOf(r.dueAt) >= start) return false;
    const next = r.later.firstFrom(start, end);
    return next !== null && dueIn(next);
  }
  const created = Date.parse(r.createdAt);
  if (r.completedAt !== null) {
    const done = Date.parse(r.completedAt);
    return (start <= created || start <= done) && (end >= created || end >= done);
  }
  return end > created;
}

function propFilterMatches(comp: ICAL.Component, pf: XmlEl): boolean {
  const name = (pf.attrs["name"] ?? "").toLowerCase();
  const props = comp.getAllProperties(name);
  if (child(pf, NS.caldav, "is-not-defined")) return props.length === 0;
  if (props.length === 0) return false;
  const tm = child(pf, NS.caldav, "text-match");
  if (tm) {
    const needle = tm.text.toLowerCase();
    const negate = (tm.attrs["negate-condition"] ?? "no").toLowerCase() === "yes";
    const hit = props.some((p) => p.getValues().some((v) => String(v).toLowerCase().includes(needle)));
    return negate ? !hit : hit;
  }
  return true;
}

function subFilterMatches(comp: ICAL.Component, cf: XmlEl): boolean {
  const subs = comp.getAllSubcomponents((cf.attrs["name"] ?? "").toLowerCase());
  if (child(cf, NS.caldav, "is-not-defined")) return subs.length === 0;
  return subs.length > 0;
}

// ---- GET / PUT / DELETE --------------------------------------------------------------------------

async function get(dav: DavService, c: Ctx, t: Target, head: boolean): Promise<Response> {
  if (t.kind !== "resource") return new Response(head ? null : "CalDAV: use a CalDAV client (see the README)\n", { status: 200, headers: { "content-type": "text/plain; charset=utf-8" } });
  const r = await dav.member(c.user, t.segment, t.name);
  const none = c.req.headers.get("if-none-match");
  if (none !== null && none.split(",").map((s) => s.trim()).some((e) => e === "*" || e === r.etag)) return new Response(null, { status: 304, headers: { etag: r.etag } });
  return new Response(head ? null : r.ics!, { status: 200, headers: { "content-type": CALENDAR_CT, etag: r.etag } });
}

async function put(dav: DavService, c: Ctx, t: Target): Promise<Response> {
  if (t.kind !== "resource") return davStatus(405, { allow: ALLOW });
  const body = await bodyText(c.req);
  const none = c.req.headers.get("if-none-match");
  const res = await dav.put(c.user, t.segment, t.name, body, { ifMatch: ifMatch(c.req.headers.get("if-match")), ifNoneMatchAny: none !== null && none.trim() === "*" });
  // The stored object is rebuilt from the task, not the bytes sent: no ETag (RFC 4791 §5.3.4), so the client fetches it.
  return new Response(null, { status: res.created ? 201 : 204 });
}

/**
 * MOVE (RFC 4918 §9.9) of a resource into another of the user's collections, or to another name
 * (in its own collection or another). Destination is an absolute URL (its scheme and host are not
 * checked: a reverse proxy's public name differs from ours) or an absolute path. 201 when nothing
 * was at the destination, 204 when Overwrite: T (the default) replaced a resource, 412 with
 * Overwrite: F; 409 when the destination collection does not exist; 403 for a viewer's source or
 * destination, another user's collection, the resource itself as its destination, or a
 * destination outside this server's /dav/ tree. A collection cannot be moved (403).
 */
function move(dav: DavService, c: Ctx, t: Target): Response {
  if (t.kind !== "resource") return xmlResponse(403, errorBody(d("need-privileges")), { "x-dav-error": "only a task resource can be moved" });
  const header = c.req.headers.get("destination")?.trim();
  if (!header) return new Response("MOVE needs a Destination header\n", { status: 400, headers: { "content-type": "text/plain" } });
  let path: string;
  try {
    path = /^[a-z][a-z0-9+.-]*:/i.test(header) ? new URL(header).pathname : header;
  } catch {
    return new Response("the Destination header is not a URL\n", { status: 400, headers: { "content-type": "text/plain" } });
  }
  const dest = path.startsWith("/dav/") ? parseTarget(path) : null;
  // Another server or a path outside /dav/ (RFC 4918 §9.9.4 allows 502 there; no input is answered
  // with a 5xx here, so it is refused as a move this server will not make).
  if (!dest) return xmlResponse(403, errorBody(d("need-privileges")), { "x-dav-error": "the destination is not a collection of this server" });
  if (!("user" in dest) || dest.user.toLowerCase() !== c.user.username.toLowerCase()) return xmlResponse(403, errorBody(d("need-privileges")));
  if (dest.kind !== "resource") return davStatus(409);
  const overwrite = (c.req.headers.get("overwrite") ?? "T").trim().toUpperCase();
  if (overwrite !== "T" && overwrite !== "F") return new Response("Overwrite is T or F\n", { status: 400, headers: { "content-type": "text/plain" } });
  const res = dav.move(c.user, { segment: t.segment, name: t.name }, { segment: dest.segment, name: dest.name }, { ifMatch: ifMatch(c.req.headers.get("if-match")), overwrite: overwrite === "T" });
  if (!res.created) return new Response(null, { status: 204 });
  return new Response(null, { status: 201, headers: { location: resourceHref(c.user.username, dest.segment, dest.name) } });
}

function del(dav: DavService, c: Ctx, t: Target): Response {
  if (t.kind === "resource") dav.remove(c.user, t.segment, t.name, ifMatch(c.req.headers.get("if-match")));
  else if (t.kind === "collection") dav.deleteCollection(c.user, t.segment);
  else return davStatus(403);
  return new Response(null, { status: 204 });
}

// ---- MKCALENDAR / MKCOL / PROPPATCH -----------------------------------------------------------------

async function mkcol(dav: DavService, c: Ctx, t: Target, method: string): Promise<Response> {
  if (t.kind !== "collection") return new Response(null, { status: t.kind === "resource" ? 409 : 405, headers: { allow: ALLOW } });
  const body = await xmlBody(c.req);
  const props = body ? children(body, NS.dav, "set").flatMap((s) => child(s, NS.dav, "prop")?.children ?? []) : [];
  const find = (ns: string, name: string) => props.find((p) => p.ns === ns && p.name === name);
  if (method === "MKCOL") {
    const rt = find(NS.dav, "resourcetype");
    if (!rt || !child(rt, NS.caldav, "calendar")) return xmlResponse(403, errorBody(d("valid-resourcetype")));
  }
  const comps = find(NS.caldav, "supported-calendar-component-set");
  if (comps && !children(comps, NS.caldav, "comp").some((x) => (x.attrs["name"] ?? "").toUpperCase() === "VTODO")) {
    return xmlResponse(403, errorBody(el(NS.caldav, "supported-calendar-component", [])));
  }
  try {
    dav.createCollection(c.user, t.segment, { displayName: find(NS.dav, "displayname")?.text ?? null, color: find(NS.apple, "calendar-color")?.text ?? null });
  } catch (e) {
    if (e instanceof DavRefusal && e.kind === "precondition-failed") return davStatus(405, { allow: ALLOW });
    throw e;
  }
  return new Response(null, { status: 201, headers: { location: collectionHref(c.user.username, t.segment) } });
}

async function proppatch(dav: DavService, c: Ctx, t: Target): Promise<Response> {
  const body = await xmlBody(c.req);
  if (!body || !is(body, NS.dav, "propertyupdate")) throw new XmlError("a PROPPATCH body is a DAV:propertyupdate element");
  const ops = body.children.filter((x) => x.ns === NS.dav && (x.name === "set" || x.name === "remove"));
  const props = ops.flatMap((op) => (child(op, NS.dav, "prop")?.children ?? []).map((p) => ({ op: op.name, p })));
  const href = t.kind === "collection" ? collectionHref(c.user.username, dav.collection(c.user, t.segment).segment) : c.req.url ? new URL(c.req.url).pathname : "/dav/";
  const ok: Out[] = [];
  const refused: Out[] = [];
  const patch: { displayName?: string; color?: string | null } = {};
  for (const { op, p } of props) {
    const known = t.kind === "collection" && ((p.ns === NS.dav && p.name === "displayname") || (p.ns === NS.apple && p.name === "calendar-color"));
    if (!known) {
      refused.push(el(p.ns, p.name));
      continue;
    }
    if (p.name === "displayname") {
      if (op === "set") patch.displayName = p.text;
    } else patch.color = op === "set" ? p.text : null;
    ok.push(el(p.ns, p.name));
  }
  let okStatus = "HTTP/1.1 200 OK";
  if (t.kind === "collection" && ok.length) {
    try {
      dav.updateCollection(c.user, t.segment, patch);
    } catch (e) {
      if (!(e instanceof DavRefusal) || e.kind !== "forbidden") throw e;
      okStatus = "HTTP/1.1 403 Forbidden";
    }
  }
  const parts: Out[] = [d("href", href)];
  if (ok.length) parts.push(d("propstat", [d("prop", ok), d("status", okStatus)]));
  if (refused.length) parts.push(d("propstat", [d("prop", refused), d("status", "HTTP/1.1 403 Forbidden")]));
  return await multistatus([d("response", parts)]);
}
