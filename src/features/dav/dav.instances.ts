/**
 * The later instances of a repeating task, for calendar-query's time-range (RFC 4791 §9.9: a
 * component with an RRULE matches when any of its recurrence instances overlaps the range), from
 * the recurrence engine (its series, exceptions and COUNT/UNTIL: no second RRULE expander).
 *
 * What is expanded is the object we serve: its DTSTART is the task's current due (vtodo.mapping
 * writes DTSTART = DUE for a repeating task), so its instances are the current due and the
 * occurrences after it; an occurrence before it was done (its completed copy is a resource of its
 * own, with its own due) or skipped, and a skipped date (EXDATE) is no instance.
 *
 * Bounded: only the first instance at or after the range's start is looked for (instances come in
 * order and §9.9's test for one due is monotone, so that one decides), one instance per engine
 * call, in windows starting at the range's start that double while empty (7, 14, 28 … days),
 * through the range's end and never past 9999-12-31 (the engine's last year). So a range a year
 * or a century ahead costs a few engine calls, whatever the rule's frequency. At most
 * MAX_WINDOWS windows per task (they reach past 9999 long before): a task whose search reaches
 * that cap, or whose rule the engine cannot expand (SeriesError), is decided by its current due
 * only, as the calendar view shows such a task.
 */
import { isDateOnly, parseRRule, seriesFor, SeriesError, type Series } from "../recurrence/recurrence.engine";

export const MAX_WINDOWS = 24;
const FIRST_WINDOW_DAYS = 7;
const LAST_DATE = "9999-12-31";
const DAY_MS = 86_400_000;

export interface LaterInstances {
  /**
   * The first due after the task's current one, on a date that is not an exception, whose instant
   * (a date's: its UTC midnight, as the time-range test reads a date) is at or after `startMs`;
   * null when there is none through `endMs` (plus a day) or the search was cut (see above).
   */
  firstFrom(startMs: number, endMs: number): string | null;
}

/** For a stored rrule recurrence (null when it is not one the engine can use). */
export function laterInstances(rec: { kind: string; rrule: string | null; dtstart: string | null; timezone: string }, currentDue: string, exceptions: string[]): LaterInstances | null {
  if (rec.kind !== "rrule" || !rec.rrule || !rec.dtstart) return null;
  const parsed = parseRRule(rec.rrule, isDateOnly(rec.dtstart));
  if (!parsed.ok) return null;
  let series: Series;
  try {
    series = seriesFor(parsed.rule, rec.dtstart, rec.timezone);
  } catch {
    return null;
  }
  const skipped = new Set(exceptions);
  return { firstFrom: (startMs, endMs) => firstFrom(series, currentDue, skipped, startMs, endMs) };
}

const utcDate = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const addDays = (date: string, n: number) => {
  const ms = Date.parse(`${date}T00:00:00Z`) + n * DAY_MS;
  return ms >= Date.parse(`${LAST_DATE}T00:00:00Z`) ? LAST_DATE : utcDate(ms);
};
const instantOf = (v: string) => Date.parse(isDateOnly(v) ? `${v}T00:00:00Z` : v);

function firstFrom(series: Series, currentDue: string, exceptions: ReadonlySet<string>, startMs: number, endMs: number): string | null {
  if (!Number.isFinite(startMs) || startMs > Date.parse(`${LAST_DATE}T00:00:00Z`)) return null;
  // The engine answers occurrences strictly after a deadline: just before the start, in the series' form.
  let after = series.dateOnly ? addDays(utcDate(startMs + DAY_MS - 1), -1) : new Date(startMs - 1).toISOString();
  if (instantOf(after) <= instantOf(currentDue)) after = currentDue;
  // Through the end's UTC date and a day more (the series' zone may be a day apart; the caller tests exactly).
  const last = Number.isFinite(endMs) && endMs < Date.parse(`${LAST_DATE}T00:00:00Z`) ? addDays(utcDate(endMs), 1) : LAST_DATE;
  let span = FIRST_WINDOW_DAYS;
  try {
    for (let i = 0; i < MAX_WINDOWS; i++) {
      let through = addDays(utcDate(instantOf(after)), span);
      if (through > last) through = last;
      const got = series.occurrencesThrough(after, through, exceptions, 1);
      if (got.length) return got[0]!;
      if (through >= last) return null;
      after = through;
      span *= 2;
    }
  } catch (e) {
    if (e instanceof SeriesError) return null;
    throw e;
  }
  return null;
}
