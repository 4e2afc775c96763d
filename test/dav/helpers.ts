import type { TestApp, TestClient } from "../helpers/app";

export interface DavResponse {
  status: number;
  headers: Headers;
  text: string;
}

/** A CalDAV client as the phone's apps are: HTTP Basic with the username and an app password (no cookie). */
export class DavClient {
  constructor(
    private readonly app: TestApp,
    readonly username: string,
    readonly secret: string,
  ) {}

  get auth(): string {
    return `Basic ${Buffer.from(`${this.username}:${this.secret}`).toString("base64")}`;
  }

  async request(method: string, path: string, body?: string, headers: Record<string, string> = {}, auth: string | null = this.auth): Promise<DavResponse> {
    const h: Record<string, string> = { ...headers };
    if (auth !== null) h["authorization"] = auth;
    if (body !== undefined && !("content-type" in h)) h["content-type"] = body.startsWith("BEGIN:") ? "text/calendar; charset=utf-8" : "application/xml; charset=utf-8";
    const res = await this.app.handle.fetch(new Request(`http://localhost${path}`, { method, headers: h, body }), { requestIP: () => ({ address: "127.0.0.1" }) });
    return { status: res.status, headers: res.headers, text: await res.text() };
  }

  propfind(path: string, props: string, depth: "0" | "1" = "0", headers: Record<string, string> = {}) {
    return this.request("PROPFIND", path, `<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav" xmlns:cs="http://calendarserver.org/ns/" xmlns:a="http://apple.com/ns/ical/"><d:prop>${props}</d:prop></d:propfind>`, { depth, ...headers });
  }

  report(path: string, body: string, depth: "0" | "1" = "1") {
    return this.request("REPORT", path, body, { depth });
  }

  put(path: string, ics: string, headers: Record<string, string> = {}) {
    return this.request("PUT", path, ics, headers);
  }
}

/** Creates an app password (a token with the caldav scope) through the API with the user's session. */
export async function davClientFor(app: TestApp, session: TestClient, username: string): Promise<DavClient> {
  const r = await session.post("/api/v1/tokens", { name: "phone", scopes: ["caldav"] });
  if (r.status !== 201) throw new Error(`token creation failed: ${r.status} ${r.text}`);
  return new DavClient(app, username, r.body.secret);
}

export function vtodo(uid: string, lines: string[] = [], extra = ""): string {
  return ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//test//EN", extra, "BEGIN:VTODO", `UID:${uid}`, "DTSTAMP:20261101T000000Z", ...lines, "END:VTODO", "END:VCALENDAR", ""].filter((l) => l !== "").join("\r\n") + "\r\n";
}

/** Every `<d:href>` inside a response element of a multistatus, in order. */
export function responseHrefs(xml: string): string[] {
  return [...xml.matchAll(/<d:response><d:href>([^<]*)<\/d:href>/g)].map((m) => m[1]!);
}

/** The text of the first element with this qualified name (as this server writes prefixes). */
export function textOf(xml: string, qname: string): string | null {
  const m = new RegExp(`<${qname}>([^<]*)</${qname}>`).exec(xml);
  return m ? m[1]!.replace(/&quot;/g, '"').replace(/&amp;/g, "&") : null;
}

export const QUERY_VTODO = (props = "<d:getetag/>", inner = "") =>
  `<c:calendar-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop>${props}</d:prop><c:filter><c:comp-filter name="VCALENDAR"><c:comp-filter name="VTODO">${inner}</c:comp-filter></c:comp-filter></c:filter></c:calendar-query>`;

export const SYNC = (token: string, props = "<d:getetag/>") =>
  `<d:sync-collection xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:sync-token>${token}</d:sync-token><d:sync-level>1</d:sync-level><d:prop>${props}</d:prop></d:sync-collection>`;
