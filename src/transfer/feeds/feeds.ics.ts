import ICAL from "ical.js";
import { taskToVtodo } from "../import/vtodo.mapping";
import type { FeedContent, FeedTask } from "../../features/feeds/feeds.types";
import { yieldToRequests } from "../../core/yield";

/**
 * A feed's content as an iCalendar document (RFC 5545), built with ical.js: escaping and line
 * folding are the library's, never string concatenation of properties here.
 *
 * - Every time is a DATE or a UTC DATE-TIME, so the document needs no VTIMEZONE (X-WR-TIMEZONE
 *   only tells apps which zone to show it in).
 * - UIDs are stable (the task's, countdown's or reminder's id, and the day for items that recur),
 *   and DTSTAMP is the item's last change rather than the fetch time: the same data gives the same
 *   bytes, so the ETag holds until something changes and subscribers never see duplicates.
 * - A to-do is the importer's own mapping (vtodo.mapping.ts taskToVtodo), so the feed, the .ics
 *   import and CalDAV agree on priority, status and all-day handling.
 */
const PRODID = "-//app//Calendar feed//EN";
/** What subscribers are asked to wait between fetches (RFC 7986 REFRESH-INTERVAL; Outlook's X-PUBLISHED-TTL). */
const REFRESH = "PT1H";

const utc = (iso: string) => ICAL.Time.fromJSDate(new Date(iso), true);

/**
 * A text as an iCalendar TEXT value may hold it: ical.js escapes `\n`, `;`, `,` and `\` but
 * writes other control characters as they are, and RFC 5545 allows none (but HTAB) in TEXT. A raw
 * CR is the dangerous one: a reader that breaks lines on it would read what follows as a property
 * of its own. So CR LF and CR become LF (escaped by ical.js), the other control characters go.
 */
export function icalText(s: string): string {
  // eslint-disable-next-line no-control-regex -- the control characters are what is removed
  return s.replace(/\r\n?/g, "\n").replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, "");
}

function dateOf(ymd: string, plusDays = 0): ICAL.Time {
  const [y, m, d] = ymd.split("-").map(Number);
  const t = ICAL.Time.fromData({ year: y!, month: m!, day: d!, isDate: true });
  if (plusDays) t.adjust(plusDays, 0, 0, 0);
  return t;
}

function event(uid: string, stamp: string, summary: string): ICAL.Component {
  const e = new ICAL.Component("vevent");
  e.addPropertyWithValue("uid", uid);
  e.addPropertyWithValue("dtstamp", utc(stamp));
  e.addPropertyWithValue("summary", icalText(summary));
  // A deadline or an anniversary does not make the subscriber busy.
  e.addPropertyWithValue("transp", "TRANSPARENT");
  return e;
}

/** All day for a date (DTEND the next day, exclusive); a point in time for an instant (no DTEND: RFC 5545 §3.6.1). */
function setWhen(e: ICAL.Component, due: string): void {
  if (due.length === 10) {
    e.addPropertyWithValue("dtstart", dateOf(due));
    e.addPropertyWithValue("dtend", dateOf(due, 1));
  } else e.addPropertyWithValue("dtstart", utc(due));
}

function taskEvent(t: FeedTask): ICAL.Component {
  // A later occurrence is its own event: the day keeps its UID stable (the series' rule is the
  // app's, expanded by its recurrence engine, not handed to each client as an RRULE).
  const e = event(t.occurrence ? `task-${t.id}-${t.dueAt}` : `task-${t.id}`, t.updatedAt, t.title);
  e.addPropertyWithValue("created", utc(t.createdAt));
  e.addPropertyWithValue("last-modified", utc(t.updatedAt));
  setWhen(e, t.dueAt);
  if (t.description) e.addPropertyWithValue("description", icalText(t.description));
  categories(e, [t.listName, ...t.tags]);
  return e;
}

function taskTodo(t: FeedTask): ICAL.Component {
  const c = taskToVtodo({ ...t, title: icalText(t.title), description: icalText(t.description), parentId: null, rrule: null, timezone: null, tags: t.tags.map(icalText).filter((n) => n !== "") });
  categories(c, [t.listName]);
  return c;
}

function categories(c: ICAL.Component, names: string[]): void {
  const values = names.map(icalText).filter((n) => n !== "");
  if (!values.length) return;
  const p = new ICAL.Property("categories", c);
  p.setValues(values);
  c.addProperty(p);
}

/**
 * An X- property as TEXT. ical.js writes a property it has no type for as it is, unescaped: a list
 * named "a\nEND:VCALENDAR" would end the document there. As TEXT it is escaped (and says VALUE=TEXT).
 */
function textProperty(c: ICAL.Component, name: string, value: string): void {
  const p = new ICAL.Property(name, c);
  p.resetType("text");
  p.setValue(icalText(value));
  c.addProperty(p);
}

/** Components written between two yields to other requests (~15 ms of work on a quiet machine). */
const SLICE = 250;

/**
 * The document is written one component at a time: each VEVENT/VTODO is built, serialised by
 * ical.js and dropped, and the texts are joined between the calendar's own BEGIN/END lines (also
 * ical.js's). A tree of 5,000 components serialised whole took 2-4 times as long (ical.js grows one
 * string over the whole tree) and held every component until the end (bench/feeds.ts). Every SLICE
 * components other requests get their turn: a big feed takes a few hundred milliseconds to write,
 * which would otherwise be that long without an answer for everyone else.
 */
export async function renderFeed(content: FeedContent): Promise<string> {
  const cal = new ICAL.Component("vcalendar");
  cal.addPropertyWithValue("version", "2.0");
  cal.addPropertyWithValue("prodid", PRODID);
  cal.addPropertyWithValue("calscale", "GREGORIAN");
  cal.addPropertyWithValue("method", "PUBLISH");
  textProperty(cal, "x-wr-calname", content.name);
  textProperty(cal, "x-wr-timezone", content.timezone);
  const refresh = new ICAL.Property("refresh-interval", cal);
  refresh.setValue(ICAL.Duration.fromString(REFRESH));
  cal.addProperty(refresh);
  textProperty(cal, "x-published-ttl", REFRESH);
  // "BEGIN:VCALENDAR … END:VCALENDAR" with no component yet: the components go before its last line.
  const envelope = cal.toString();
  const end = envelope.lastIndexOf("\r\nEND:VCALENDAR");
  if (end < 0) throw new Error("ical.js wrote a calendar without END:VCALENDAR");
  const parts: string[] = [envelope.slice(0, end)];
  const add = async (c: ICAL.Component) => {
    parts.push(c.toString());
    if (parts.length % SLICE === 0) await yieldToRequests();
  };

  for (const t of content.tasks) await add(content.taskFormat === "todos" ? taskTodo(t) : taskEvent(t));
  for (const d of content.countdowns) {
    const summary = d.count !== null && d.type !== "countdown" ? `${d.name} (${d.count})` : d.name;
    const e = event(`countdown-${d.countdownId}-${d.date}`, d.updatedAt, summary);
    setWhen(e, d.date);
    await add(e);
  }
  for (const h of content.habits) {
    const e = event(`habit-${h.reminderId}-${h.date}`, h.updatedAt, h.name);
    setWhen(e, h.at);
    await add(e);
  }
  // ical.js ends lines with CRLF and folds them at 75 octets; the last line needs its CRLF too.
  parts.push("END:VCALENDAR\r\n");
  return parts.join("\r\n");
}
