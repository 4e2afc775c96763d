import { dayNumber } from "../../core/days";
import type { LunarCalendar } from "./countdowns.occurrence";

/**
 * Rules on a countdown's stored fields that hold however it is written: by the API
 * (countdowns.service.ts) or by a restore (backup, legacy). One copy, called by all.
 */

export interface LunarFields {
  month: number;
  day: number;
  leap: boolean;
}

export type LunarFieldsResult = { ok: true; lunar: LunarFields | null } | { ok: false; message: string };

/**
 * The stored lunar month/day of a countdown: for the lunar calendar, the lunar date of `date` (so
 * it always names a month and day that exist); null for the Gregorian one. Refused outside the
 * supported lunar years. `lunar` must be loaded when `calendar` is lunar.
 */
export function lunarFieldsOf(date: string, calendar: "gregorian" | "lunar", lunar: LunarCalendar | null): LunarFieldsResult {
  if (calendar === "gregorian") return { ok: true, lunar: null };
  if (!lunar) throw new Error("a lunar countdown needs the lunar calendar (await loadLunar())");
  const l = lunar.toLunar(dayNumber(date), Number(date.slice(0, 4)));
  if (!lunar.inLunarRange(l)) return { ok: false, message: `a lunar countdown needs a date in the lunar years ${lunar.LUNAR_MIN_YEAR} to ${lunar.LUNAR_MAX_YEAR}` };
  return { ok: true, lunar: { month: l.month, day: l.day, leap: l.leap } };
}

/** Why stored lunar fields disagree with `date`, or null when they are exactly lunarFieldsOf(date). */
export function lunarFieldsProblem(date: string, calendar: "gregorian" | "lunar", stored: LunarFields | null, lunar: LunarCalendar | null): string | null {
  const want = lunarFieldsOf(date, calendar, lunar);
  if (!want.ok) return want.message;
  const w = want.lunar;
  if (w === null) return stored === null ? null : "a Gregorian countdown has no lunar month and day";
  if (stored === null || stored.month !== w.month || stored.day !== w.day || stored.leap !== w.leap) {
    return `the lunar month and day of ${date} are ${w.leap ? "leap " : ""}month ${w.month}, day ${w.day}`;
  }
  return null;
}

/** Only an active countdown can be pinned (pinning an archived one is 404; archiving unpins). */
export function pinnedWhileArchived(pinned: boolean, archived: boolean): string | null {
  return pinned && archived ? "an archived countdown cannot be pinned (archiving unpins)" : null;
}

// What a restore or an export (src/transfer/) reads of the occurrence rules: the next date, and the lunar calendar it may need (loaded on first use).
export { loadLunar, needsLunar, occurrence, type CountdownRule } from "./countdowns.occurrence";
export type { LunarCalendar } from "./countdowns.occurrence";
