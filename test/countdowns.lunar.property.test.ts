import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { Lunar, LunarMonth, LunarYear, Solar } from "lunar-typescript";
import { dateOfDay, dayNumber } from "../src/core/days";
import { occurrence } from "../src/features/countdowns/countdowns.occurrence";
import * as lunarCalendar from "../src/features/countdowns/lunar-calendar";

const { toLunar } = lunarCalendar;

/** Lunar month/day of a Gregorian date straight from the library (no cache). */
function libLunar(date: string) {
  const l = Solar.fromYmd(Number(date.slice(0, 4)), Number(date.slice(5, 7)), Number(date.slice(8, 10))).getLunar();
  return { year: l.getYear(), month: Math.abs(l.getMonth()), leap: l.getMonth() < 0, day: l.getDay() };
}

/** The documented yearly rule, built from the library's own API for one lunar year. */
function libOccurrence(year: number, month: number, leap: boolean, day: number): string {
  const useLeap = leap && Math.abs(LunarYear.fromYear(year).getLeapMonth()) === month;
  const m = useLeap ? -month : month;
  const days = LunarMonth.fromYm(year, m)!.getDayCount();
  return Lunar.fromYmd(year, m, Math.min(day, days)).getSolar().toYmd();
}

const dateArb = (from: string, span: number) => fc.integer({ min: 0, max: span }).map((n) => dateOfDay(dayNumber(from) + n));

describe("lunar countdowns", () => {
  test("the cached conversion agrees with the library", () => {
    fc.assert(
      fc.property(dateArb("1900-02-01", 200 * 365), (d) => {
        const mine = toLunar(dayNumber(d), Number(d.slice(0, 4)));
        expect(mine).toEqual(libLunar(d));
      }),
      { numRuns: 300 },
    );
  });

  test("yearly: next occurrence is on or after today, the first one, and the same lunar month/day (or the documented fallback)", () => {
    fc.assert(
      fc.property(dateArb("1901-01-01", 125 * 365), dateArb("2020-01-01", 30 * 365), (origin, today) => {
        const l = libLunar(origin);
        const o = occurrence({ date: origin, repeat: "yearly", calendar: "lunar", type: "birthday", lunar: { month: l.month, day: l.day, leap: l.leap } }, dayNumber(today), lunarCalendar);
        expect(o.next_date).not.toBeNull();
        const next = o.next_date!;
        expect(next >= today).toBe(true);
        expect(next >= origin).toBe(true);
        expect(o.days_until).toBe(dayNumber(next) - dayNumber(today));
        const back = libLunar(next);
        expect(back.month).toBe(l.month);
        // Leap only when the origin was leap and that year has the leap month.
        if (!l.leap) expect(back.leap).toBe(false);
        if (back.day !== l.day) {
          expect(l.day).toBe(30);
          expect(back.day).toBe(29);
          expect(LunarMonth.fromYm(back.year, back.leap ? -back.month : back.month)!.getDayCount()).toBe(29);
        }
        // First: the occurrence of the lunar year before is earlier than today (or the origin).
        const prevYear = back.year - 1;
        if (prevYear >= l.year) {
          const prev = libOccurrence(prevYear, l.month, l.leap, l.day);
          expect(prev < today || prev < origin).toBe(true);
        }
        expect(next).toBe(libOccurrence(back.year, l.month, l.leap, l.day));
        expect(o.count).toBe(back.year - l.year);
      }),
      { numRuns: 200 },
    );
  });

  test("monthly: next occurrence is on or after today, on the same lunar day or the month's last day", () => {
    fc.assert(
      fc.property(dateArb("1950-01-01", 70 * 365), dateArb("2020-01-01", 30 * 365), (origin, today) => {
        const l = libLunar(origin);
        const o = occurrence({ date: origin, repeat: "monthly", calendar: "lunar", type: "countdown", lunar: { month: l.month, day: l.day, leap: l.leap } }, dayNumber(today), lunarCalendar);
        const next = o.next_date!;
        expect(next >= today && next >= origin).toBe(true);
        const back = libLunar(next);
        const days = LunarMonth.fromYm(back.year, back.leap ? -back.month : back.month)!.getDayCount();
        expect(back.day).toBe(Math.min(l.day, days));
        // Nothing in between: no day from max(today, origin) to the day before `next` is an occurrence.
        for (let d = dayNumber(today > origin ? today : origin); d < dayNumber(next); d++) {
          const p = libLunar(dateOfDay(d));
          const pDays = LunarMonth.fromYm(p.year, p.leap ? -p.month : p.month)!.getDayCount();
          expect(p.day === Math.min(l.day, pDays)).toBe(false);
        }
        expect(o.count).toBeNull();
      }),
      { numRuns: 100 },
    );
  });
});
