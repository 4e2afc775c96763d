import { LunarYear } from "lunar-typescript";

/**
 * The Chinese lunar calendar as published by the Purple Mountain Observatory, computed by
 * lunar-typescript (never ICU's `chinese` calendar, which differs in some months). Each lunar
 * year's months are read once from the library and cached: the library takes ~0.5 ms per
 * conversion, too slow to call per countdown on a list page.
 */
export interface LunarDate {
  year: number;
  month: number;
  leap: boolean;
  day: number;
}

interface MonthInfo {
  month: number;
  leap: boolean;
  /** day number (days since 1970-01-01) of the month's first day */
  first: number;
  days: number;
}

/** Lunar years whose dates are accepted as the origin of a lunar countdown. */
export const LUNAR_MIN_YEAR = 1900;
export const LUNAR_MAX_YEAR = 2100;
/** Occurrences are computed a little further, so a countdown created in 2100 still repeats. */
const COMPUTE_MAX_YEAR = 2200;

// Julian day number of 1970-01-01 (the library's Julian days are whole at the day's start).
const JD_EPOCH = 2440588;

const years = new Map<number, MonthInfo[]>();

function monthsOf(year: number): MonthInfo[] | null {
  if (year < LUNAR_MIN_YEAR - 1 || year > COMPUTE_MAX_YEAR) return null;
  let months = years.get(year);
  if (!months) {
    months = LunarYear.fromYear(year)
      .getMonthsInYear()
      .map((m) => ({ month: Math.abs(m.getMonth()), leap: m.getMonth() < 0, first: Math.round(m.getFirstJulianDay()) - JD_EPOCH, days: m.getDayCount() }));
    years.set(year, months);
  }
  return months;
}

/** The lunar date of a Gregorian day number; null outside the computable range. */
export function toLunar(day: number, gregorianYear: number): LunarDate | null {
  for (const y of [gregorianYear, gregorianYear - 1]) {
    const months = monthsOf(y);
    if (!months) continue;
    if (day < months[0]!.first) continue;
    for (const m of months) {
      if (day < m.first + m.days) return { year: y, month: m.month, leap: m.leap, day: day - m.first + 1 };
    }
  }
  return null;
}

/** True when the day's lunar year is in the accepted range. */
export function inLunarRange(l: LunarDate | null): l is LunarDate {
  return l !== null && l.year >= LUNAR_MIN_YEAR && l.year <= LUNAR_MAX_YEAR;
}

/**
 * The day of lunar month/day in lunar year `year`: the leap month when asked for and present,
 * else the ordinary month; a day past the month's end (30 in a 29-day month) falls on its last day.
 */
export function occurrenceInYear(year: number, month: number, leap: boolean, day: number): number | null {
  const months = monthsOf(year);
  if (!months) return null;
  const m = (leap ? months.find((x) => x.month === month && x.leap) : undefined) ?? months.find((x) => x.month === month && !x.leap);
  if (!m) return null;
  return m.first + Math.min(day, m.days) - 1;
}

/**
 * The first day on or after `from` that is lunar day `day` of some lunar month (leap months
 * included), with the same fallback to the month's last day.
 */
export function nextMonthlyOccurrence(from: number, fromGregorianYear: number, day: number): number | null {
  const start = toLunar(from, fromGregorianYear);
  if (!start) return null;
  for (let y = start.year; y <= start.year + 1; y++) {
    const months = monthsOf(y);
    if (!months) return null;
    for (const m of months) {
      if (m.first + m.days <= from) continue;
      const d = m.first + Math.min(day, m.days) - 1;
      if (d >= from) return d;
    }
  }
  return null;
}
