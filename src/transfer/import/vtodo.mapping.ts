import ICAL from "ical.js";
import { instantIso, zoneOrNull } from "./import.dates";
import { mapReminder, type ReminderMapping, type Trigger } from "./reminder.mapping";

// The reminder mapping is shared with TickTick's reader, which must not load ical.js (reminder.mapping.ts).
export { durationSeconds, mapReminder, type PlanReminder, type ReminderMapping, type ReminderTask, type ReminderUser, type Trigger } from "./reminder.mapping";

/**
 * The mapping between an iCalendar VTODO (RFC 5545) and this app's task, in both directions, in
 * one module: the .ics importer uses it now, a CalDAV server can use the same one later so that
 * import and sync agree on priority, status, all-day and zone handling.
 *
 * Why not ical.js's own conversions: its `toJSDate()` puts a DATE at midnight of the *server's*
 * zone, and a TZID is only honoured when that zone was registered with its TimezoneService
 * (kewisch/ical.js#455, #189). So a value is read as its parts (year … second, isDate) and the
 * zone is resolved here: `Z` is UTC, a TZID naming an IANA zone is that zone (the file's
 * VTIMEZONE body is not needed for it), anything else is a wall-clock time read in the user's
 * zone and said so. Every property that has no place in a task is reported, never dropped silently.
 */

/** What a VTODO says about a task, in this app's terms, with what could not be kept. */
export interface VtodoTask {
  uid: string | null;
  title: string;
  description: string;
  /** YYYY-MM-DD (all-day) or a UTC instant with milliseconds. */
  dueAt: string | null;
  /** The IANA zone the due time was given in (or the user's, for UTC and floating times). */
  timezone: string;
  priority: number;
  completed: boolean;
  /** CANCELLED: a won't-do task (this app has no such state: it is completed, and said so). */
  cancelled: boolean;
  completedAt: string | null;
  createdAt: string | null;
  tags: string[];
  /** UID of the parent (RELATED-TO, RELTYPE absent or PARENT). */
  parentUid: string | null;
  /** UIDs this VTODO names as its children (RELATED-TO;RELTYPE=CHILD). */
  childUids: string[];
  /** The RRULE body, validated later against the due date. */
  rrule: string | null;
  /** Each VALARM as this app's reminder (with a change note), or why it is skipped. */
  reminders: ReminderMapping[];
  order: number | null;
  /** What was changed on the way in (a floating time, a cancelled task, …). */
  changes: string[];
  /** What was left out (overrides, alarms, properties with no place in a task). */
  skips: string[];
  /** Properties present that have no place in a task (reported once per file by the caller). */
  ignored: string[];
}

/** RFC 5545 PRIORITY (0 undefined, 1 highest … 9 lowest; 1-4 high, 5 medium, 6-9 low) → 0..3. */
export function priorityFromIcal(p: number): number {
  if (p === 0) return 0;
  if (p <= 4) return 3;
  if (p === 5) return 2;
  return 1;
}

/** This app's 0..3 → RFC 5545 PRIORITY (the middle of each band, as Nextcloud and tasks.org write). */
export function priorityToIcal(p: number): number {
  return p === 3 ? 1 : p === 2 ? 5 : p === 1 ? 9 : 0;
}

/** Properties a task keeps (or the importer reports on its own). */
const MAPPED = new Set([
  "uid",
  "summary",
  "description",
  "due",
  "dtstart",
  "priority",
  "status",
  "completed",
  "percent-complete",
  "categories",
  "related-to",
  "rrule",
  "rdate",
  "exdate",
  "recurrence-id",
  "created",
  "dtstamp",
  "last-modified",
  "sequence",
  "x-apple-sort-order",
]);

/** A date or date-time property's value in this app's form, with the zone it was read in. */
function timeOf(prop: ICAL.Property, userTz: string, changes: string[], what: string): { value: string; tz: string } {
  return timeOfValue(prop.getFirstValue() as ICAL.Time, prop, userTz, changes, what);
}

function timeOfValue(t: ICAL.Time, prop: ICAL.Property, userTz: string, changes: string[], what: string): { value: string; tz: string } {
  if (t.isDate) return { value: `${String(t.year).padStart(4, "0")}-${String(t.month).padStart(2, "0")}-${String(t.day).padStart(2, "0")}`, tz: userTz };
  const parts = { year: t.year, month: t.month, day: t.day, hour: t.hour, minute: t.minute, second: t.second };
  if (t.zone?.tzid === "UTC") return { value: instantIso(Temporal.PlainDateTime.from(parts).toZonedDateTime("UTC").toInstant()), tz: userTz };
  const tzid = prop.getParameter("tzid");
  let tz = typeof tzid === "string" ? zoneOrNull(tzid) : null;
  if (tz === null) {
    changes.push(
      typeof tzid === "string"
        ? `${what}: time zone ${tzid.slice(0, 60)} is not an IANA zone name: read as a wall-clock time in your time zone (${userTz})`
        : `${what}: a floating time (no zone): read in your time zone (${userTz})`,
    );
    tz = userTz;
  }
  return { value: instantIso(Temporal.PlainDateTime.from(parts).toZonedDateTime(tz, { disambiguation: "compatible" }).toInstant()), tz };
}

/** Reads one VTODO. Throws (ical.js's Error) on a value that is not of its type; the caller reports it with the line. */
export function vtodoToTask(c: ICAL.Component, userTz: string, reminderTime = "09:00"): VtodoTask {
  const changes: string[] = [];
  const skips: string[] = [];
  const text = (name: string) => {
    const v = c.getFirstPropertyValue(name);
    return typeof v === "string" ? v : v == null ? "" : String(v);
  };
  const dueProp = c.getFirstProperty("due");
  const startProp = c.getFirstProperty("dtstart");
  let dueAt: string | null = null;
  let timezone = userTz;
  if (dueProp) {
    ({ value: dueAt, tz: timezone } = timeOf(dueProp, userTz, changes, "DUE"));
    if (startProp) {
      const start = timeOf(startProp, userTz, [], "DTSTART");
      if (start.value !== dueAt) changes.push("DTSTART dropped: tasks have a due date only");
    }
  } else if (startProp) {
    ({ value: dueAt, tz: timezone } = timeOf(startProp, userTz, changes, "DTSTART"));
    changes.push("no DUE: its DTSTART is the due date");
  }

  const status = text("status").toUpperCase();
  const completedProp = c.getFirstProperty("completed");
  const percent = Number(c.getFirstPropertyValue("percent-complete") ?? 0);
  let completed = status === "COMPLETED" || status === "CANCELLED";
  if (!status && (completedProp || percent >= 100)) completed = true;
  const cancelled = status === "CANCELLED";
  if (cancelled) changes.push("CANCELLED (won't do): imported as completed (this app has no won't-do state)");
  let completedAt: string | null = null;
  if (completedProp) {
    const t = timeOf(completedProp, userTz, [], "COMPLETED");
    completedAt = t.value.length === 10 ? `${t.value}T00:00:00.000Z` : t.value;
    if (!completed) changes.push(`STATUS ${status} with a COMPLETED time: imported open`);
  }
  const createdProp = c.getFirstProperty("created");
  const createdRaw = createdProp ? timeOf(createdProp, userTz, [], "CREATED").value : null;
  const createdAt = createdRaw === null ? null : createdRaw.length === 10 ? `${createdRaw}T00:00:00.000Z` : createdRaw;

  const tags = c.getAllProperties("categories").flatMap((p) => p.getValues().map((v) => String(v).trim()));

  let parentUid: string | null = null;
  const childUids: string[] = [];
  for (const p of c.getAllProperties("related-to")) {
    const reltype = String(p.getParameter("reltype") ?? "PARENT").toUpperCase();
    const v = String(p.getFirstValue() ?? "").trim();
    if (!v) continue;
    if (reltype === "PARENT") {
      if (parentUid !== null && parentUid !== v) changes.push(`several parents: kept ${parentUid.slice(0, 60)}`);
      else parentUid = v;
    } else if (reltype === "CHILD") childUids.push(v);
    else skips.push(`RELATED-TO;RELTYPE=${reltype.slice(0, 30)} is not a parent link: ignored`);
  }

  const rules = c.getAllProperties("rrule");
  let rrule: string | null = null;
  if (rules.length > 1) skips.push("repeat dropped: several RRULEs (a task repeats by one rule)");
  else if (rules.length === 1) rrule = String(rules[0]!.getFirstValue());
  for (const name of ["rdate", "exdate"]) if (c.hasProperty(name)) skips.push(`${name.toUpperCase()} dropped: single dates added to or removed from a repeat are not imported`);

  const reminders: ReminderMapping[] = c.getAllSubcomponents("valarm").map((a) => {
    const t = triggerOfAlarm(a, dueProp, startProp, userTz);
    if ("skip" in t) return t;
    const m = mapReminder(t.trigger, { dueAt, tz: timezone, repeats: rrule !== null }, { tz: userTz, reminderTime });
    if ("skip" in m || !t.change) return m;
    return { reminder: m.reminder, change: m.change ? `${t.change}; ${m.change}` : t.change };
  });
  const sort = c.getFirstPropertyValue("x-apple-sort-order");
  const order = sort == null || !Number.isFinite(Number(sort)) ? null : Number(sort);
  const ignored = [...new Set(c.getAllProperties().map((p) => p.name).filter((n) => !MAPPED.has(n)))];

  return {
    uid: text("uid").trim() || null,
    title: text("summary"),
    description: text("description"),
    dueAt,
    timezone,
    priority: priorityFromIcal(Number(c.getFirstPropertyValue("priority") ?? 0)),
    completed,
    cancelled,
    completedAt,
    createdAt,
    tags,
    parentUid,
    childUids,
    rrule,
    reminders,
    order,
    changes,
    skips,
    ignored,
  };
}

/** A task as this app holds it, for taskToVtodo. */
export interface TaskForVtodo {
  id: string;
  title: string;
  description: string;
  dueAt: string | null;
  priority: number;
  completed: boolean;
  completedAt: string | null;
  createdAt: string;
  updatedAt: string;
  tags: string[];
  parentId: string | null;
  rrule: string | null;
  /** The recurrence's zone: a timed due with a repeat is written with its TZID, so the series keeps its wall-clock time. */
  timezone: string | null;
  /** The UID to write (a CalDAV client's own; default the task's id). */
  uid?: string;
  /** The parent's UID (default parentId). */
  parentUid?: string | null;
  /** X-APPLE-SORT-ORDER: the manual order (sortOrderOfRank of the task's rank). */
  sortOrder?: number;
  /** EXDATE: the skipped occurrences of its repeat (deadlines in the due's form: dates, or instants). */
  exdates?: string[];
}

const utcTime = (iso: string) => ICAL.Time.fromJSDate(new Date(iso), true);

/**
 * A date or date-time property for a deadline: a date is a DATE; an instant of a repeating task
 * is written in its recurrence's zone with TZID (the series keeps its wall-clock time), any other
 * instant in UTC.
 */
function addDeadline(c: ICAL.Component, name: string, value: string, t: Pick<TaskForVtodo, "rrule" | "timezone">): void {
  if (value.length === 10) {
    const [y, m, d] = value.split("-").map(Number);
    c.addPropertyWithValue(name, ICAL.Time.fromData({ year: y!, month: m!, day: d!, isDate: true }));
  } else if (t.rrule && t.timezone && t.timezone !== "UTC") {
    const z = Temporal.Instant.from(value).toZonedDateTimeISO(t.timezone);
    const p = c.addPropertyWithValue(name, ICAL.Time.fromData({ year: z.year, month: z.month, day: z.day, hour: z.hour, minute: z.minute, second: z.second, isDate: false }));
    p.setParameter("tzid", t.timezone);
  } else c.addPropertyWithValue(name, utcTime(value));
}

/** The other direction: a VTODO for a task (UID = the task's id). */
export function taskToVtodo(t: TaskForVtodo): ICAL.Component {
  const c = new ICAL.Component("vtodo");
  c.addPropertyWithValue("uid", t.uid ?? t.id);
  c.addPropertyWithValue("dtstamp", utcTime(t.updatedAt));
  c.addPropertyWithValue("created", utcTime(t.createdAt));
  c.addPropertyWithValue("last-modified", utcTime(t.updatedAt));
  c.addPropertyWithValue("summary", t.title);
  if (t.description) c.addPropertyWithValue("description", t.description);
  if (t.dueAt !== null) addDeadline(c, "due", t.dueAt, t);
  const prio = priorityToIcal(t.priority);
  if (prio) c.addPropertyWithValue("priority", prio);
  c.addPropertyWithValue("status", t.completed ? "COMPLETED" : "NEEDS-ACTION");
  if (t.completed && t.completedAt) c.addPropertyWithValue("completed", utcTime(t.completedAt));
  if (t.tags.length) {
    const p = new ICAL.Property("categories", c);
    p.setValues(t.tags);
    c.addProperty(p);
  }
  const parentUid = t.parentUid !== undefined ? t.parentUid : t.parentId;
  if (parentUid) c.addPropertyWithValue("related-to", parentUid);
  if (t.rrule) c.addPropertyWithValue("rrule", ICAL.Recur.fromString(t.rrule));
  // Skipped occurrences in DTSTART's (the due's) form, as RFC 5545 §3.8.5.1 wants.
  if (t.rrule) for (const x of t.exdates ?? []) addDeadline(c, "exdate", x, t);
  if (t.sortOrder !== undefined) c.addPropertyWithValue("x-apple-sort-order", String(t.sortOrder));
  return c;
}

/**
 * X-APPLE-SORT-ORDER (an integer; iOS Reminders and tasks.org order manual lists by it) from a
 * manual-order key (tasks.rank.ts: fractional-indexing, compared as bytes): the key's first six
 * characters read as base-76 digits (a missing one is 0, so a prefix sorts first). Order-preserving
 * and a function of the task's own key only, so another task's move changes no other resource;
 * keys that share their first six characters get the same number (their clients then tie).
 */
export function sortOrderOfRank(rank: string): number {
  let n = 0;
  for (let i = 0; i < 6; i++) n = n * 76 + (i < rank.length ? Math.max(0, Math.min(75, rank.charCodeAt(i) - 47)) : 0);
  return n;
}

// ---- reminders (VALARM TRIGGER, TickTick's Reminder cell) ----------------------------------------

/** A VALARM's TRIGGER as a Trigger, or why it cannot be read (RFC 5545 §3.8.6.3). */
export function triggerOfAlarm(alarm: ICAL.Component, dueProp: ICAL.Property | null, startProp: ICAL.Property | null, userTz: string): { trigger: Trigger; change?: string } | { skip: string } {
  const prop = alarm.getFirstProperty("trigger");
  if (!prop) return { skip: "a VALARM without TRIGGER" };
  const v = prop.getFirstValue() as unknown;
  if (v instanceof ICAL.Time) {
    if (v.isDate) return { skip: "a VALARM whose TRIGGER is a date without a time" };
    // Apple's "no alarm" placeholder (tasks.org skips it too, IGNORE_ALARM): never a reminder.
    if (v.year === 1976 && v.month === 4 && v.day === 1 && v.hour === 0 && v.minute === 55 && v.second === 45) return { skip: "Apple's placeholder alarm (19760401T005545Z)" };
    return { trigger: { kind: "absolute", at: timeOf(prop, userTz, [], "TRIGGER").value } };
  }
  if (!(v instanceof ICAL.Duration)) return { skip: "a VALARM whose TRIGGER is not a duration or a date-time" };
  const seconds = v.toSeconds();
  const related = String(prop.getParameter("related") ?? "START").toUpperCase();
  if (related === "END" || !startProp) {
    return related === "END" || !dueProp ? { trigger: { kind: "offset", seconds } } : { trigger: { kind: "offset", seconds }, change: "a VALARM relative to the start, which the task does not have: read relative to DUE" };
  }
  // Relative to DTSTART (the default): counted from it, then expressed against the due.
  return { trigger: { kind: "offset", seconds, anchor: timeOf(startProp, userTz, [], "DTSTART").value } };
}

// ---- CalDAV: one resource both ways, nothing a client wrote lost ------------------------------

/**
 * Properties of a VTODO that CalDAV sync keeps verbatim, beside those the task maps: what
 * vtodoToTask reports as having no place in a task, DTSTART (a task has a due only), EXDATE and
 * RDATE (single dates of a client's series; CalDAV drops the EXDATEs its recurrence then holds as
 * exceptions, dropKeptExdates), every VALARM, and the client's own PRIORITY value
 * (written back while the task's priority band is unchanged, so PRIORITY 2 stays 2 instead of
 * becoming the band's 1). X-APPLE-SORT-ORDER is the task's manual order (sortOrderOfRank).
 */
const KEPT_MAPPED = new Set(["dtstart", "exdate", "rdate", "priority"]);

/** A client's iCalendar object split into the master VTODO and everything else it carries. */
export interface CalendarObject {
  master: ICAL.Component;
  uid: string;
  /** The object with the master's mapped properties removed: stored, and merged back on output. */
  kept: string;
}

/** Parses a CalDAV PUT body: one VCALENDAR whose VTODOs share one UID (a master, and overrides with RECURRENCE-ID). */
export function readCalendarObject(text: string): CalendarObject | { refuse: "not-icalendar" | "not-vtodo" | "uid" ; detail: string } {
  let root: ICAL.Component;
  try {
    root = new ICAL.Component(ICAL.parse(text));
  } catch (e) {
    return { refuse: "not-icalendar", detail: `not iCalendar: ${String((e as Error).message).slice(0, 120)}` };
  }
  if (root.name !== "vcalendar") return { refuse: "not-icalendar", detail: "the body is not a VCALENDAR" };
  const todos = root.getAllSubcomponents("vtodo");
  const others = root.getAllSubcomponents().filter((c) => c.name !== "vtodo" && c.name !== "vtimezone");
  if (todos.length === 0 || others.length > 0) return { refuse: "not-vtodo", detail: "a task list holds VTODO components only" };
  const uids = new Set(todos.map((t) => String(t.getFirstPropertyValue("uid") ?? "").trim()));
  const uid = [...uids][0] ?? "";
  if (uids.size !== 1 || !uid) return { refuse: "uid", detail: "every VTODO of one resource needs the same non-empty UID" };
  const master = todos.find((t) => !t.hasProperty("recurrence-id")) ?? todos[0]!;
  const kept = new ICAL.Component(ICAL.parse(text));
  const keptMaster = kept.getAllSubcomponents("vtodo").find((t) => !t.hasProperty("recurrence-id")) ?? kept.getAllSubcomponents("vtodo")[0]!;
  for (const p of [...keptMaster.getAllProperties()]) {
    if (MAPPED.has(p.name) && !KEPT_MAPPED.has(p.name)) keptMaster.removeProperty(p);
  }
  return { master, uid, kept: kept.toString() };
}

/** Kept RRULE: a client's rule the recurrence feature refused stays in the object verbatim (never lost, never half-applied). */
export function keepRrule(kept: string, master: ICAL.Component): string {
  const k = new ICAL.Component(ICAL.parse(kept));
  const m = k.getAllSubcomponents("vtodo").find((t) => !t.hasProperty("recurrence-id"));
  for (const p of master.getAllProperties("rrule")) m?.addProperty(ICAL.Property.fromString(p.toICALString()));
  return k.toString();
}

/**
 * The resource for a task: the mapped VTODO, with what the client kept merged back (its own
 * PRIORITY while the band is the same, DTSTART unless it now falls after DUE, its RRULE when the
 * task has no rule of ours, VALARMs, unknown and X- properties), the overrides and time zones it
 * sent, in a VCALENDAR.
 */
export function taskToCalendarObject(t: TaskForVtodo, kept: string, alarms: { reminders: ReminderForVtodo[]; reminderTime: string } | null = null): string {
  const cal = new ICAL.Component("vcalendar");
  cal.addPropertyWithValue("version", "2.0");
  cal.addPropertyWithValue("prodid", "-//app//CalDAV//EN");
  const todo = taskToVtodo(t);
  if (alarms) addReminderAlarms(todo, alarms.reminders, t.dueAt, t.title, alarms.reminderTime);
  if (kept) {
    const k = new ICAL.Component(ICAL.parse(kept));
    const subs = k.getAllSubcomponents();
    const km = subs.find((s) => s.name === "vtodo" && !s.hasProperty("recurrence-id"));
    for (const s of subs) if (s !== km) cal.addSubcomponent(s);
    if (km) {
      for (const p of [...km.getAllProperties()]) {
        if (p.name === "priority") {
          const v = Number(p.getFirstValue());
          if (Number.isInteger(v) && v >= 0 && v <= 9 && priorityFromIcal(v) === t.priority) {
            todo.removeAllProperties("priority");
            if (v !== 0) todo.addProperty(p);
          }
          continue;
        }
        if (p.name === "rrule" && todo.hasProperty("rrule")) continue;
        if (p.name === "exdate" && todo.getAllProperties("exdate").some((x) => x.toICALString() === p.toICALString())) continue;
        if (p.name === "dtstart" && startsAfterDue(p, todo)) continue;
        todo.addProperty(p);
      }
      for (const a of [...km.getAllSubcomponents()]) todo.addSubcomponent(a);
    }
  }
  // A repeating VTODO is expanded from DTSTART by most clients (ical4j, DAVx⁵): give it one.
  if (todo.hasProperty("rrule") && !todo.hasProperty("dtstart")) {
    const due = todo.getFirstProperty("due");
    if (due) {
      const p = new ICAL.Property("dtstart", todo);
      p.setValue(due.getFirstValue() as ICAL.Time);
      const tz = due.getParameter("tzid");
      if (typeof tz === "string") p.setParameter("tzid", tz);
      todo.addProperty(p);
    }
  }
  cal.addSubcomponent(todo);
  return cal.toString().replace(/\r?\n/g, "\r\n") + "\r\n";
}

function startsAfterDue(start: ICAL.Property, todo: ICAL.Component): boolean {
  const due = todo.getFirstProperty("due");
  if (!due) return false;
  const a = start.getFirstValue() as ICAL.Time;
  const b = due.getFirstValue() as ICAL.Time;
  if (!(a instanceof ICAL.Time) || !(b instanceof ICAL.Time)) return true;
  if (a.isDate !== b.isDate) return true;
  return a.toUnixTime() > b.toUnixTime();
}

// ---- CalDAV: reminders as VALARMs --------------------------------------------------------------

/** The property that ties a VALARM to the reminder it was written from (a client that keeps it sends it back). */
export const REMINDER_MARK = "x-app-reminder";

/** A task reminder as this app stores it (before_due minutes, or a fixed instant). */
export interface ReminderForVtodo {
  id: string;
  kind: "before_due" | "at";
  minutesBefore: number | null;
  at: string | null;
}

/**
 * The TRIGGER of a reminder (RFC 5545 §3.8.6.3), as text: `at` is an absolute UTC time; before_due is
 * relative to DUE (RELATED=END, VTODO's end), on a date-only due counted from the user's reminder time
 * that day (a DATE DUE starts the day at 00:00).
 */
export function reminderTrigger(r: ReminderForVtodo, dueAt: string | null, reminderTime: string): string | null {
  if (r.kind === "at" && r.at) return `TRIGGER;VALUE=DATE-TIME:${utcTime(r.at).toString().replace(/[-:]/g, "")}`;
  if (r.kind !== "before_due" || r.minutesBefore === null || dueAt === null) return null;
  let seconds = -r.minutesBefore * 60;
  if (dueAt.length === 10) {
    const [h, m] = reminderTime.split(":").map(Number);
    seconds += (h! * 60 + m!) * 60;
  }
  return `TRIGGER;RELATED=END:${ICAL.Duration.fromSeconds(seconds).toString()}`;
}

/** VALARMs for the task's reminders (ACTION:DISPLAY with the title, as RFC 5545 requires for DISPLAY), each marked with its reminder id. */
export function addReminderAlarms(todo: ICAL.Component, reminders: ReminderForVtodo[], dueAt: string | null, title: string, reminderTime: string): void {
  for (const r of reminders) {
    const trigger = reminderTrigger(r, dueAt, reminderTime);
    if (trigger === null) continue;
    const a = new ICAL.Component("valarm");
    a.addPropertyWithValue("action", "DISPLAY");
    a.addPropertyWithValue("description", title);
    a.addProperty(ICAL.Property.fromString(trigger));
    a.addPropertyWithValue(REMINDER_MARK, r.id);
    todo.addSubcomponent(a);
  }
}

/** Removes the VALARMs at these positions (of the master VTODO) from a kept object: they live on as reminders. */
export function dropKeptAlarms(kept: string, positions: Set<number>): string {
  if (positions.size === 0) return kept;
  const k = new ICAL.Component(ICAL.parse(kept));
  const m = k.getAllSubcomponents("vtodo").find((t) => !t.hasProperty("recurrence-id"));
  if (!m) return kept;
  m.getAllSubcomponents("valarm").forEach((a, i) => {
    if (positions.has(i)) m.removeSubcomponent(a);
  });
  return k.toString();
}

/** Whether a kept object's master names `uid` as its parent (RELATED-TO with RELTYPE absent or PARENT). */
export function keptParentIs(kept: string, uid: string): boolean {
  const m = new ICAL.Component(ICAL.parse(kept)).getAllSubcomponents("vtodo").find((t) => !t.hasProperty("recurrence-id"));
  return !!m?.getAllProperties("related-to").some((p) => String(p.getParameter("reltype") ?? "PARENT").toUpperCase() === "PARENT" && String(p.getFirstValue()).trim() === uid);
}

/** The kept object without its parent link (now held by the task itself). */
export function dropKeptParent(kept: string, uid: string): string {
  const k = new ICAL.Component(ICAL.parse(kept));
  const m = k.getAllSubcomponents("vtodo").find((t) => !t.hasProperty("recurrence-id"));
  for (const p of [...(m?.getAllProperties("related-to") ?? [])]) {
    if (String(p.getParameter("reltype") ?? "PARENT").toUpperCase() === "PARENT" && String(p.getFirstValue()).trim() === uid) m!.removeProperty(p);
  }
  return k.toString();
}

// ---- CalDAV: EXDATE ↔ skipped occurrences --------------------------------------------------------

/** Every EXDATE value of a VTODO as a deadline (a date, or an instant; a floating or unknown-zone time read in the user's zone). */
export function exdatesOf(master: ICAL.Component, userTz: string): string[] {
  return master.getAllProperties("exdate").flatMap((p) => p.getValues().filter((v): v is ICAL.Time => v instanceof ICAL.Time).map((v) => timeOfValue(v, p, userTz, [], "EXDATE").value));
}

/**
 * The kept object without the EXDATE values `applied` says are held by the recurrence now (its
 * exceptions write them back); the others (a date the recurrence refused to skip) stay verbatim.
 */
export function dropKeptExdates(kept: string, applied: (deadline: string) => boolean, userTz: string): string {
  const k = new ICAL.Component(ICAL.parse(kept));
  const m = k.getAllSubcomponents("vtodo").find((t) => !t.hasProperty("recurrence-id"));
  if (!m || !m.hasProperty("exdate")) return kept;
  for (const p of [...m.getAllProperties("exdate")]) {
    const values = p.getValues();
    const rest = values.filter((v) => !(v instanceof ICAL.Time) || !applied(timeOfValue(v, p, userTz, [], "EXDATE").value));
    if (rest.length === values.length) continue;
    if (rest.length === 0) m.removeProperty(p);
    else p.setValues(rest);
  }
  return k.toString();
}
