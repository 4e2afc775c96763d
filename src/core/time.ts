// Dates and time zones, on the runtime's native Temporal: the recurrence engine
// (src/features/recurrence/recurrence.engine.ts) and the tasks' due-date filters
// (src/features/tasks/tasks.service.ts) both take their zone arithmetic from here. Every function
// names its time zone explicitly, so the process TZ never matters.

/** Source of "now". Rules never call `new Date()` themselves, so tests can pin the date. */
export interface Clock {
  now(): Date;
}
export const systemClock: Clock = { now: () => new Date() };

/** A clock tests can move. */
export class FixedClock implements Clock {
  constructor(private current: Date) {}
  now(): Date {
    return new Date(this.current.getTime());
  }
  set(d: Date | string): void {
    this.current = typeof d === "string" ? new Date(d) : d;
  }
  advance(ms: number): void {
    this.current = new Date(this.current.getTime() + ms);
  }
}

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** True for a real calendar date written YYYY-MM-DD (2026-02-30 is false). */
export function isCalendarDate(s: string): boolean {
  const m = DATE_RE.exec(s);
  if (!m) return false;
  const y = Number(m[1]);
  const mo = Number(m[2]);
  const d = Number(m[3]);
  if (mo < 1 || mo > 12 || d < 1) return false;
  return d <= daysInMonth(y, mo);
}

export function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

// RFC 3339 date-time with Z or an offset; seconds and fraction optional.
const INSTANT_RE = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;

/** Parses an RFC 3339 instant strictly (no 2026-13-01T00:00Z, no 25:00). Returns null if invalid. */
export function parseInstant(s: string): Date | null {
  const m = INSTANT_RE.exec(s);
  if (!m) return null;
  if (!isCalendarDate(m[1]!)) return null;
  const hh = Number(m[2]);
  const mm = Number(m[3]);
  const ss = m[4] ? Number(m[4]) : 0;
  if (hh > 23 || mm > 59 || ss > 59) return null;
  const off = m[6]!.toUpperCase();
  if (off !== "Z") {
    const oh = Number(off.slice(1, 3));
    const om = Number(off.slice(4, 6));
    if (oh > 23 || om > 59) return null;
  }
  const d = new Date(s);
  return Number.isNaN(d.getTime()) ? null : d;
}

/** True when `tz` is an IANA zone this runtime knows. */
export function isTimeZone(tz: string): boolean {
  // Intl also takes UTC offsets ("+01:00"); they are not IANA zones (no DST rules), so refuse them.
  if (!tz || tz.length > 64 || /^[+\-\d]/.test(tz)) return false;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** The zone as the runtime spells it ("europe/paris" → "Europe/Paris"); call after isTimeZone. */
export function canonicalTimeZone(tz: string): string {
  return new Intl.DateTimeFormat("en-US", { timeZone: tz }).resolvedOptions().timeZone;
}

const dateFormatters = new Map<string, Intl.DateTimeFormat>();

/** The calendar date (YYYY-MM-DD) of an instant in a time zone. */
export function localDate(instant: Date, tz: string): string {
  let f = dateFormatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat("en-CA", { timeZone: tz, year: "numeric", month: "2-digit", day: "2-digit" });
    dateFormatters.set(tz, f);
  }
  return f.format(instant);
}

/** The user's today. */
export function today(clock: Clock, tz: string): string {
  return localDate(clock.now(), tz);
}

const DATE_ONLY_RE = /^\d{4}-\d{2}-\d{2}$/;

/** True for a date-only deadline (`YYYY-MM-DD`); false for an instant. */
export function isDateOnly(due: string): boolean {
  return DATE_ONLY_RE.test(due);
}

/** RFC 3339 UTC with milliseconds, the one form instants are stored and returned in. */
export function isoOf(zdt: Temporal.ZonedDateTime): string {
  return new Date(zdt.epochMilliseconds).toISOString();
}

/** The calendar date of a deadline in a zone (a date-only deadline is its own date). */
export function dateOfDue(due: string, tz: string): string {
  if (isDateOnly(due)) return due;
  return Temporal.Instant.from(due).toZonedDateTimeISO(tz).toPlainDate().toString();
}

/** Offset of `tz` from UTC at an instant (epoch milliseconds), in milliseconds; positive east of Greenwich. */
export function zoneOffsetMs(epochMs: number, tz: string): number {
  return Temporal.Instant.fromEpochMilliseconds(epochMs).toZonedDateTimeISO(tz).offsetNanoseconds / 1e6;
}

/** Midnight UTC of a calendar date `days` after `date` (YYYY-MM-DD), in epoch milliseconds. */
function utcMidnightMs(date: string, days: number): number {
  return Temporal.PlainDate.from(date).add({ days }).toZonedDateTime("UTC").epochMilliseconds;
}

// Stored instants are RFC 3339 strings of years 0000-9999, always 24 characters, compared as
// text. A bound outside those years (due_before=9999-12-31 ends in year 10000; a zone east of UTC
// starts 0000-01-01 in year -1) is written as a string before the first or after the last of
// them: "+010000-…" would sort before "9999-…", and the filter was a RangeError (500) until issue 11.
const FIRST_MS = utcMidnightMs("0000-01-01", 0);
const END_MS = utcMidnightMs("9999-12-31", 1);
const BEFORE_EVERY_INSTANT = "0000-01-01T00:00:00.000Z";
const AFTER_EVERY_INSTANT = "9999-12-31T24:00:00.000Z";

/**
 * The first instant of a local date in `tz` (or of the date `days` later), as RFC 3339 UTC,
 * clamped to the years instants are stored in: the local midnight read as UTC, moved by the zone's
 * offset there and once more by the offset at that first guess. Where the offset changes at
 * midnight this keeps the answer the due-date filters always gave (it can differ from Temporal's
 * startOfDay(), which the filters never used).
 */
export function localMidnightUtc(date: string, tz: string, days = 0): string {
  const wall = utcMidnightMs(date, days);
  let t = wall - zoneOffsetMs(wall, tz);
  t = wall - zoneOffsetMs(t, tz);
  if (t < FIRST_MS) return BEFORE_EVERY_INSTANT;
  if (t >= END_MS) return AFTER_EVERY_INSTANT;
  return new Date(t).toISOString();
}

const LOCAL_TIME_RE = /^([01]\d|2[0-3]):[0-5]\d$/;

/** True for a wall-clock time written HH:MM (00:00 to 23:59). */
export function isLocalTime(s: string): boolean {
  return LOCAL_TIME_RE.test(s);
}

/**
 * The instant a local date and time names in a zone. A time skipped by a DST jump moves forward
 * by the jump (02:30 on a spring-forward day is 03:30); a repeated time takes its first
 * occurrence (Temporal's "compatible" disambiguation, as RFC 5545 asks of calendar clients).
 */
export function instantOfLocal(date: string, time: string, tz: string): Date {
  const zdt = Temporal.PlainDateTime.from(`${date}T${time}`).toZonedDateTime(tz, { disambiguation: "compatible" });
  return new Date(zdt.epochMilliseconds);
}
