/** Day arithmetic for due-date filters: a timed due_at falls on its date in the user's zone. */

const partsFormatters = new Map<string, Intl.DateTimeFormat>();

/** Offset of `tz` from UTC at an instant, in milliseconds (positive east of Greenwich). */
function offsetMs(instant: number, tz: string): number {
  let f = partsFormatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone: tz,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    });
    partsFormatters.set(tz, f);
  }
  const p: Record<string, number> = {};
  for (const part of f.formatToParts(new Date(instant))) if (part.type !== "literal") p[part.type] = Number(part.value);
  const asUtc = Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!, p.second!);
  return asUtc - Math.floor(instant / 1000) * 1000;
}

/** Midnight UTC of a calendar date, as milliseconds (Date.UTC would read years 0-99 as 1900-1999). */
function utcMidnightMs(y: number, m: number, d: number): number {
  const t = new Date(0);
  t.setUTCFullYear(y, m - 1, d);
  return t.getTime();
}

// Stored instants are RFC 3339 strings of years 0000-9999, always 24 characters, compared as
// text. A bound outside those years (due_before=9999-12-31 ends in year 10000; a zone east of UTC
// starts 0000-01-01 in year -1) is written as a string before the first or after the last of
// them: "+010000-…" would sort before "9999-…", and the filter was a RangeError (500) until issue 11.
const FIRST_MS = utcMidnightMs(0, 1, 1);
const END_MS = utcMidnightMs(10000, 1, 1);
const BEFORE_EVERY_INSTANT = "0000-01-01T00:00:00.000Z";
const AFTER_EVERY_INSTANT = "9999-12-31T24:00:00.000Z";
// Zone offsets are read at an instant within the years Intl formats plainly (no eras, 4 digits);
// before and after, zones keep their earliest and latest rules anyway.
const OFFSET_FROM = utcMidnightMs(1, 1, 2);
const OFFSET_UNTIL = utcMidnightMs(9999, 12, 30);
const zoneOffsetMs = (t: number, tz: string) => offsetMs(Math.min(Math.max(t, OFFSET_FROM), OFFSET_UNTIL), tz);

/**
 * The first instant of a local date in `tz` (or of the date `days` later), as RFC 3339 UTC (a
 * skipped midnight gives the first existing instant), clamped to the years instants are stored in.
 */
export function localMidnightUtc(date: string, tz: string, days = 0): string {
  const [y, m, d] = date.split("-").map(Number) as [number, number, number];
  const wall = utcMidnightMs(y, m, d + days);
  let t = wall - zoneOffsetMs(wall, tz);
  t = wall - zoneOffsetMs(t, tz);
  if (t < FIRST_MS) return BEFORE_EVERY_INSTANT;
  if (t >= END_MS) return AFTER_EVERY_INSTANT;
  return new Date(t).toISOString();
}
