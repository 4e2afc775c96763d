// The Chinese lunar calendar for the countdown form, computed by lunar-typescript as the server does
// (never Intl's `chinese` calendar, which differs in some months). Loaded only when the form shows a
// lunar date (import("./lunar")): the library is ~100 KB gzipped and the first page must stay small.
import { LunarMonth, Solar } from "lunar-typescript";

export interface LunarParts {
  year: number;
  month: number;
  leap: boolean;
  day: number;
}

export type GregorianResult = { ok: true; date: string } | { ok: false; reason: "range" } | { ok: false; reason: "no_leap" } | { ok: false; reason: "short_month"; days: number };

/** Lunar years the server accepts as the origin of a lunar countdown. */
export const LUNAR_MIN_YEAR = 1900;
export const LUNAR_MAX_YEAR = 2100;

/** The Gregorian date (YYYY-MM-DD) of a lunar date, or why there is none. */
export function gregorianOf(l: LunarParts): GregorianResult {
  if (!Number.isInteger(l.year) || l.year < LUNAR_MIN_YEAR || l.year > LUNAR_MAX_YEAR) return { ok: false, reason: "range" };
  const month = LunarMonth.fromYm(l.year, l.leap ? -l.month : l.month);
  if (!month) return { ok: false, reason: "no_leap" };
  if (l.day > month.getDayCount()) return { ok: false, reason: "short_month", days: month.getDayCount() };
  return { ok: true, date: Solar.fromJulianDay(Math.round(month.getFirstJulianDay()) + l.day - 1).toYmd() };
}

/** The lunar date of a Gregorian YYYY-MM-DD, or null outside the supported years. */
export function lunarOf(date: string): LunarParts | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  if (!m) return null;
  const l = Solar.fromYmd(Number(m[1]), Number(m[2]), Number(m[3])).getLunar();
  if (l.getYear() < LUNAR_MIN_YEAR || l.getYear() > LUNAR_MAX_YEAR) return null;
  return { year: l.getYear(), month: Math.abs(l.getMonth()), leap: l.getMonth() < 0, day: l.getDay() };
}
