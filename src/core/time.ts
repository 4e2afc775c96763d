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

/** RFC 3339 UTC with milliseconds: 2026-11-25T22:08:03.123Z. */
export function isoInstant(d: Date): string {
  return d.toISOString();
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
