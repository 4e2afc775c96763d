// Calendar arithmetic for the quick-add parser, on Intl and Date only: the parser runs in the
// browser too, where Temporal is not yet everywhere (core/time.ts is Temporal-only, server side).
// Every function names its zone; the process or browser zone never matters.

/** A calendar date (month 1–12). */
export interface Ymd {
  y: number;
  m: number;
  d: number;
}
export interface WallClock extends Ymd {
  hh: number;
  mi: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** The wall clock (to the minute) of an instant in a zone. */
export function wallClockOf(instant: Date, timeZone: string): WallClock & { ss: number } {
  const parts: Record<string, number> = {};
  for (const p of formatter(timeZone).formatToParts(instant)) if (p.type !== "literal") parts[p.type] = Number(p.value);
  return { y: parts.year!, m: parts.month!, d: parts.day!, hh: parts.hour! % 24, mi: parts.minute!, ss: parts.second! };
}

/** The zone's offset from UTC at an instant, in minutes (Berlin in winter: 60). */
export function offsetMinutes(instant: Date, timeZone: string): number {
  const w = wallClockOf(instant, timeZone);
  const asUtc = Date.UTC(w.y, w.m - 1, w.d, w.hh, w.mi, w.ss);
  return Math.round((asUtc - Math.floor(instant.getTime() / 1000) * 1000) / 60000);
}

/**
 * The instant a wall-clock time names in a zone. Two passes settle the offset; a time inside a
 * DST gap lands one gap later (02:30 on a spring-forward day becomes 03:30), an ambiguous one on
 * the earlier instant, as the recurrence engine does.
 */
export function instantOf(w: WallClock, timeZone: string): Date {
  const naive = Date.UTC(w.y, w.m - 1, w.d, w.hh, w.mi);
  const first = naive - offsetMinutes(new Date(naive), timeZone) * 60000;
  const second = naive - offsetMinutes(new Date(first), timeZone) * 60000;
  if (first === second) {
    // The earlier of two instants with this wall clock (fall-back): an hour before, same wall clock?
    const earlier = first - 3600000;
    const e = wallClockOf(new Date(earlier), timeZone);
    if (e.y === w.y && e.m === w.m && e.d === w.d && e.hh === w.hh && e.mi === w.mi) return new Date(earlier);
    return new Date(first);
  }
  // In a gap, neither candidate shows the asked wall clock; take the later one.
  const s = wallClockOf(new Date(second), timeZone);
  if (s.hh === w.hh && s.mi === w.mi) return new Date(second);
  return new Date(Math.max(first, second));
}

export function ymdString(x: Ymd): string {
  return `${String(x.y).padStart(4, "0")}-${String(x.m).padStart(2, "0")}-${String(x.d).padStart(2, "0")}`;
}

export function addDays(x: Ymd, n: number): Ymd {
  const t = new Date(Date.UTC(x.y, x.m - 1, x.d + n));
  return { y: t.getUTCFullYear(), m: t.getUTCMonth() + 1, d: t.getUTCDate() };
}

/** ISO weekday: 1 = Monday … 7 = Sunday. */
export function weekdayOf(x: Ymd): number {
  const w = new Date(Date.UTC(x.y, x.m - 1, x.d)).getUTCDay();
  return w === 0 ? 7 : w;
}

export function daysInMonthOf(x: { y: number; m: number }): number {
  return new Date(Date.UTC(x.y, x.m, 0)).getUTCDate();
}
