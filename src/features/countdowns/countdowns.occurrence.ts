import { dateOfDay, dayNumber } from "../../core/days";
import { daysInMonth } from "../../core/time";
import { lazy } from "../../core/lazy";

/** The lunar calendar module (lunar-calendar.ts and lunar-typescript under it). */
export type LunarCalendar = typeof import("./lunar-calendar");

/**
 * The lunar calendar, loaded on first need: lunar-typescript holds ~1.2 MiB of objects once
 * imported, which a server whose countdowns are all Gregorian never needs.
 */
export const loadLunar: () => Promise<LunarCalendar> = lazy(() => import("./lunar-calendar"));

/** Whether computing this rule's occurrences needs the lunar calendar. */
export const needsLunar = (rule: { calendar: "gregorian" | "lunar" }) => rule.calendar === "lunar";

function loaded(lunar: LunarCalendar | null): LunarCalendar {
  if (!lunar) throw new Error("a lunar countdown's occurrence needs the lunar calendar (await loadLunar())");
  return lunar;
}

/**
 * When a countdown next happens, as of the user's today. Rules (also in the OpenAPI text):
 * - `none`: the date itself; null once it is past.
 * - `weekly`: every 7 days from the date (the same for both calendars).
 * - `monthly` (Gregorian): the date's day of month; in a shorter month its last day (31st → 30th, 28th/29th).
 * - `yearly` (Gregorian): the date's month and day; 29 February falls on 28 February in common years.
 * - lunar `monthly`: the lunar day in every lunar month (leap months included); lunar `yearly`:
 *   the lunar month and day; a leap month in a year without it uses the ordinary month; day 30
 *   in a 29-day month falls on day 29.
 * Occurrences never precede the original date.
 */
export interface CountdownRule {
  date: string;
  repeat: "none" | "weekly" | "monthly" | "yearly";
  calendar: "gregorian" | "lunar";
  type: "countdown" | "anniversary" | "birthday";
  lunar: { month: number; day: number; leap: boolean } | null;
}

/** What a countdown's row holds of its rule (countdowns.repo's CountdownRow, or any row with these columns). */
export interface CountdownRuleColumns {
  date: string;
  repeat: CountdownRule["repeat"];
  calendar: CountdownRule["calendar"];
  type: CountdownRule["type"];
  lunarMonth: number | null;
  lunarDay: number | null;
  lunarLeap: boolean | null;
}

/** The rule of a countdown's row (a lunar one with its lunar month and day; null for a Gregorian one). */
export function countdownRule(row: CountdownRuleColumns): CountdownRule {
  return {
    date: row.date,
    repeat: row.repeat,
    calendar: row.calendar,
    type: row.type,
    lunar: row.calendar === "lunar" && row.lunarMonth !== null && row.lunarDay !== null ? { month: row.lunarMonth, day: row.lunarDay, leap: row.lunarLeap === true } : null,
  };
}

export interface Occurrence {
  next_date: string | null;
  days_until: number;
  count: number | null;
}

const yearOf = (s: string) => Number(s.slice(0, 4));
const monthOf = (s: string) => Number(s.slice(5, 7));
const dayOf = (s: string) => Number(s.slice(8, 10));
const ymd = (y: number, m: number, d: number) => `${String(y).padStart(4, "0")}-${m < 10 ? "0" : ""}${m}-${d < 10 ? "0" : ""}${d}`;

/** Next occurrence day number on or after `from` (which is ≥ the original date). */
function nextOn(rule: CountdownRule, origin: number, from: number, lunar: LunarCalendar | null): number | null {
  const date = rule.date;
  switch (rule.repeat) {
    case "none":
      return origin >= from ? origin : null;
    case "weekly":
      return origin + Math.ceil((from - origin) / 7) * 7;
    case "monthly": {
      if (rule.calendar === "lunar" && rule.lunar) return loaded(lunar).nextMonthlyOccurrence(from, yearOf(dateOfDay(from)), rule.lunar.day);
      const fromStr = dateOfDay(from);
      let y = yearOf(fromStr);
      let m = monthOf(fromStr);
      for (let i = 0; i < 2; i++) {
        const d = dayNumber(ymd(y, m, Math.min(dayOf(date), daysInMonth(y, m))));
        if (d >= from) return d;
        m = m === 12 ? 1 : m + 1;
        if (m === 1) y++;
      }
      return null;
    }
    case "yearly": {
      if (rule.calendar === "lunar" && rule.lunar) {
        const cal = loaded(lunar);
        const l = cal.toLunar(from, yearOf(dateOfDay(from)));
        if (!l) return null;
        for (let y = l.year; y <= l.year + 1; y++) {
          const d = cal.occurrenceInYear(y, rule.lunar.month, rule.lunar.leap, rule.lunar.day);
          if (d === null) return null;
          if (d >= from) return d;
        }
        return null;
      }
      for (let y = yearOf(dateOfDay(from)); ; y++) {
        const m = monthOf(date);
        const d = dayNumber(ymd(y, m, Math.min(dayOf(date), daysInMonth(y, m))));
        if (d >= from) return d;
      }
    }
  }
}

/** Years at `next` (a birthday's age): the occurrence number for yearly repeats, else whole years elapsed. */
function yearsAt(rule: CountdownRule, origin: number, next: number, lunar: LunarCalendar | null): number {
  const nextStr = dateOfDay(next);
  if (rule.repeat === "yearly") {
    if (rule.calendar === "lunar") {
      const cal = loaded(lunar);
      const a = cal.toLunar(origin, yearOf(rule.date));
      const b = cal.toLunar(next, yearOf(nextStr));
      if (a && b) return b.year - a.year;
    }
    return yearOf(nextStr) - yearOf(rule.date);
  }
  let years = yearOf(nextStr) - yearOf(rule.date);
  if (nextStr.slice(5) < rule.date.slice(5)) years--;
  return years;
}

/** `lunar` is the loaded lunar calendar (loadLunar()); it may be null for a Gregorian rule (needsLunar). */
export function occurrence(rule: CountdownRule, today: number, lunar: LunarCalendar | null): Occurrence {
  const origin = dayNumber(rule.date);
  const next = nextOn(rule, origin, Math.max(origin, today), lunar);
  if (next === null) return { next_date: null, days_until: origin - today, count: null };
  const count = rule.type === "countdown" ? null : yearsAt(rule, origin, next, lunar);
  return { next_date: dateOfDay(next), days_until: next - today, count };
}
