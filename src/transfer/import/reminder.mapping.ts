import { instantIso } from "./import.dates";

/**
 * Source reminders (an iCalendar VALARM's TRIGGER, TickTick's Reminder cell) as this app's
 * reminders (spec reminders.md: `before_due` minutes before the due time, or before your reminder
 * time on a date-only task's day; `at` a fixed instant). Re-exported by vtodo.mapping.ts, so a
 * CalDAV server maps VALARMs as the .ics import does; kept apart from it so that the TickTick
 * reader does not load ical.js.
 */

/** A reminder the import creates, in this app's kinds (spec reminders.md). */
export type PlanReminder = { kind: "before_due"; minutesBefore: number } | { kind: "at"; at: string };

/**
 * When a source reminder fires: a fixed instant, or a signed offset (seconds) from an anchor. The
 * anchor is the task's due (or another instant/date, e.g. an .ics DTSTART); an offset from a date
 * counts from that day's 00:00 in the task's zone, in wall-clock time (TickTick's all-day form,
 * `P0DT9H0M0S` = 09:00 that day, `-P0DT15H0M0S` = 09:00 the day before).
 */
export type Trigger = { kind: "absolute"; at: string } | { kind: "offset"; seconds: number; anchor?: string };

export interface ReminderTask {
  /** YYYY-MM-DD or a UTC instant, as tasks store it. */
  dueAt: string | null;
  /** The zone the task's dates were read in. */
  tz: string;
  repeats: boolean;
}

export interface ReminderUser {
  tz: string;
  /** HH:MM: when a date-only task's before_due reminders count from. */
  reminderTime: string;
}

export type ReminderMapping = { reminder: PlanReminder; change?: string } | { skip: string };

/** Seconds of an RFC 5545 DURATION (`-P1DT15H0M0S`, `PT0S`, `-PT30M`, `P1W`), or null. */
export function durationSeconds(text: string): number | null {
  const m = /^([+-])?P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$/i.exec(text.trim());
  if (!m || text.trim().replace(/^[+-]?P/i, "").replace(/T$/i, "") === "") return null;
  const n = (i: number) => Number(m[i] ?? 0);
  const s = ((n(2) * 7 + n(3)) * 24 * 3600 + n(4) * 3600 + n(5) * 60 + n(6)) * (m[1] === "-" ? -1 : 1);
  return Number.isSafeInteger(s) ? s : null;
}

const isDate = (s: string) => s.length === 10;
const fmtMinutes = (m: number) => (m % 60 === 0 ? `${m / 60} h` : `${m} min`);

/**
 * One source reminder as this app's reminder, or why not. Timed task: a trigger at or before the
 * due time is `before_due`; after it is skipped. Date-only task: the trigger's instant in the
 * task's zone is `at` (fires once, as the source's would for a task that does not repeat); for a
 * repeating one it is `before_due` counted from your reminder time when that is exact, otherwise
 * the nearest `before_due` and a change note saying so. An absolute trigger is `at`.
 */
export function mapReminder(tr: Trigger, task: ReminderTask, user: ReminderUser): ReminderMapping {
  if (tr.kind === "absolute") return { reminder: { kind: "at", at: tr.at } };
  if (task.dueAt === null) return { skip: "the task has no due date to remind before" };
  const anchor = tr.anchor ?? task.dueAt;
  if (!isDate(task.dueAt)) {
    const anchorMs = isDate(anchor) ? Temporal.PlainDate.from(anchor).toZonedDateTime({ timeZone: task.tz }).epochMilliseconds : Date.parse(anchor);
    const fire = anchorMs + tr.seconds * 1000;
    const beforeMs = Date.parse(task.dueAt) - fire;
    if (beforeMs < 0) return { skip: `fires ${fmtMinutes(Math.ceil(-beforeMs / 60000))} after the due time (reminders here fire at or before it)` };
    const minutes = Math.floor(beforeMs / 60000);
    return beforeMs % 60000 === 0 ? { reminder: { kind: "before_due", minutesBefore: minutes } } : { reminder: { kind: "before_due", minutesBefore: minutes }, change: `reminder rounded to whole minutes: ${minutes} min before the due time` };
  }
  // A date-only task: the trigger as a wall-clock time around the anchor day, in the task's zone.
  const anchorDay = isDate(anchor) ? Temporal.PlainDate.from(anchor) : Temporal.Instant.from(anchor).toZonedDateTimeISO(task.tz).toPlainDate();
  const fireWall = anchorDay.toPlainDateTime({ hour: 0 }).add({ seconds: tr.seconds });
  if (!task.repeats) {
    const at = instantIso(fireWall.toZonedDateTime(task.tz, { disambiguation: "compatible" }).toInstant());
    return { reminder: { kind: "at", at } };
  }
  const [h, mi] = user.reminderTime.split(":").map(Number);
  const base = Temporal.PlainDate.from(task.dueAt).toPlainDateTime({ hour: h!, minute: mi! });
  const beforeMs = base.since(fireWall, { largestUnit: "hours" }).total("milliseconds");
  const when = `${fireWall.toString().slice(0, 16).replace("T", " ")}`;
  if (beforeMs < 0) {
    return { reminder: { kind: "before_due", minutesBefore: 0 }, change: `a reminder at ${when} on a repeating all-day task fires after your reminder time (${user.reminderTime}): imported as at your reminder time on each occurrence's day` };
  }
  const minutes = Math.floor(beforeMs / 60000);
  const notes: string[] = [];
  if (beforeMs % 60000 !== 0) notes.push("rounded to whole minutes");
  // Exact when both zones are at the same offset then (Europe/Berlin and Europe/Vienna are).
  const offsetIn = (tz: string) => fireWall.toZonedDateTime(tz, { disambiguation: "compatible" }).offsetNanoseconds;
  if (task.tz !== user.tz && offsetIn(task.tz) !== offsetIn(user.tz)) notes.push(`counted in your time zone (${user.tz}) instead of ${task.tz}`);
  const reminder: PlanReminder = { kind: "before_due", minutesBefore: minutes };
  return notes.length ? { reminder, change: `reminder ${fmtMinutes(minutes)} before your reminder time on each occurrence's day: ${notes.join(", ")}` } : { reminder };
}

