import { canonicalTimeZone, isCalendarDate, isTimeZone } from "../../core/time";

// Dates of the sources, read in an explicit zone (never the server's TZ): Temporal throughout.

/** A date-time of a source file: an instant, or a bare calendar date. */
export type SourceTime = { instant: Temporal.Instant } | { date: string };

const DATE_TIME = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/**
 * TickTick's forms: `2022-10-09T15:09:48+0000` (offset without a colon), with milliseconds, with
 * `Z`, `2026-02-20 10:00:00` (no offset: UTC, as the API stores every time; Vikunja's importer
 * reads it so too) and a bare `2026-06-18`. Undefined for an empty cell, null for a malformed one.
 */
export function parseSourceTime(s: string): SourceTime | null | undefined {
  const v = s.trim();
  if (!v) return undefined;
  if (isCalendarDate(v)) return { date: v };
  const m = DATE_TIME.exec(v);
  if (!m || !isCalendarDate(m[1]!)) return null;
  const [hh, mm, ss] = [Number(m[2]), Number(m[3]), Number(m[4] ?? 0)];
  if (hh > 23 || mm > 59 || ss > 59) return null;
  let off = (m[6] ?? "Z").toUpperCase();
  if (off !== "Z" && !off.includes(":")) off = `${off.slice(0, 3)}:${off.slice(3)}`;
  try {
    return { instant: Temporal.Instant.from(`${m[1]}T${m[2]}:${m[3]}:${m[4] ?? "00"}${m[5] ?? ""}${off}`) };
  } catch {
    return null;
  }
}

/** RFC 3339 UTC with milliseconds, the form tasks store instants in. */
export const instantIso = (i: Temporal.Instant): string => new Date(i.epochMilliseconds).toISOString();

/** A due date-time as tasks store it: the calendar date in `tz` for an all-day task, else the instant. */
export function dueOf(t: SourceTime, allDay: boolean, tz: string): string {
  if ("date" in t) return t.date;
  return allDay ? t.instant.toZonedDateTimeISO(tz).toPlainDate().toString() : instantIso(t.instant);
}

/** An instant for a created/completed time (a bare date is its midnight in `tz`). */
export function instantOf(t: SourceTime, tz: string): string {
  if ("date" in t) return instantIso(Temporal.PlainDate.from(t.date).toZonedDateTime({ timeZone: tz }).toInstant());
  return instantIso(t.instant);
}

/** Zone names already looked up: Intl's lookup costs ~0.2 ms, and a 20k-row file names a few zones 20k times. */
const zoneCache = new Map<string, string | null>();
const ZONE_CACHE_MAX = 1000;

/** The IANA zone as the runtime spells it, or null when the name is none (empty, unknown, an offset). */
export function zoneOrNull(tz: string): string | null {
  const v = tz.trim();
  if (!v) return null;
  let z = zoneCache.get(v);
  if (z === undefined) {
    z = isTimeZone(v) ? canonicalTimeZone(v) : null;
    if (zoneCache.size < ZONE_CACHE_MAX) zoneCache.set(v, z);
  }
  return z;
}
