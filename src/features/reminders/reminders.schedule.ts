import { dateOfDay, dayNumber, isoWeekday, mondayOf } from "../../core/days";
import { instantOfLocal, isDateOnly, localDate } from "../../core/time";
import type { Frequency, PauseSpan } from "../habits/habits.schedule";
import { isPaused } from "../habits/habits.schedule";
import { occurrence, type CountdownRule, type LunarCalendar } from "../countdowns/countdowns.occurrence";

/**
 * When a reminder fires next: pure functions of the reminder, its target's state and the user's
 * zone, so the API (next_fire_at), the hooks that re-arm and the scheduler's check at fire time
 * share one definition. `notBefore`: the earliest instant that may be answered (arming: now; the
 * scheduler's check: the stored fire time). `fired`: the last occurrence already handed to the
 * delivery ledger, never answered again.
 *
 * Occurrence keys: a task's due_at as stored (a date or an instant), an `at` instant, a habit's
 * or a countdown's local date (YYYY-MM-DD).
 */
export interface Armed {
  fireAt: Date;
  occurrence: string;
}

export interface ReminderRule {
  kind: "before_due" | "at" | "daily" | "days_before";
  minutesBefore: number | null;
  at: string | null;
  time: string | null;
  daysBefore: number | null;
}

export interface UserClock {
  tz: string;
  /** HH:MM: a date-only task's reminders count from this local time. */
  reminderTime: string;
}

/** A task as reminders see it: active = visible, not completed. */
export interface TaskState {
  type: "task";
  active: boolean;
  dueAt: string | null;
}

export interface HabitState {
  type: "habit";
  active: boolean;
  frequency: Frequency;
  goal: number;
  startDate: string;
  pauses: PauseSpan[];
  /** Logged values by day number (the days around now are enough). */
  values: Map<number, number>;
}

export interface CountdownState {
  type: "countdown";
  active: boolean;
  rule: CountdownRule;
}

export type TargetState = TaskState | HabitState | CountdownState;

/** The instant a task's occurrence is due: an instant as such, a date at the user's reminder time. */
export function dueInstant(dueAt: string, user: UserClock): Date {
  return isDateOnly(dueAt) ? instantOfLocal(dueAt, user.reminderTime, user.tz) : new Date(dueAt);
}

/** How far ahead a habit's or countdown's next day is looked for (a weekly habit paused for a year is not armed). */
const HORIZON_DAYS = 400;

export function nextFire(r: ReminderRule, t: TargetState, user: UserClock, notBefore: Date, fired: string | null, lunar: LunarCalendar | null): Armed | null {
  if (!t.active) return null;
  const nb = notBefore.getTime();
  switch (r.kind) {
    case "before_due": {
      if (t.type !== "task" || t.dueAt === null || t.dueAt === fired) return null;
      const fireAt = new Date(dueInstant(t.dueAt, user).getTime() - (r.minutesBefore ?? 0) * 60_000);
      return fireAt.getTime() >= nb ? { fireAt, occurrence: t.dueAt } : null;
    }
    case "at": {
      if (r.at === null || r.at === fired) return null;
      const fireAt = new Date(r.at);
      return fireAt.getTime() >= nb ? { fireAt, occurrence: r.at } : null;
    }
    case "daily": {
      if (t.type !== "habit" || r.time === null) return null;
      const first = Math.max(dayNumber(localDate(notBefore, user.tz)), dayNumber(t.startDate));
      for (let d = first; d < first + HORIZON_DAYS; d++) {
        const date = dateOfDay(d);
        if (fired !== null && date <= fired) continue;
        if (!habitDueOn(t, d)) continue;
        const fireAt = instantOfLocal(date, r.time, user.tz);
        if (fireAt.getTime() >= nb) return { fireAt, occurrence: date };
      }
      return null;
    }
    case "days_before": {
      if (t.type !== "countdown" || r.time === null || r.daysBefore === null) return null;
      if (t.rule.calendar === "lunar" && lunar === null) throw new NeedsLunar();
      // The earliest occurrence whose reminder day is not before notBefore's local date.
      let from = dayNumber(localDate(notBefore, user.tz)) + r.daysBefore;
      for (let i = 0; i < 8; i++) {
        const o = occurrence(t.rule, from, lunar);
        if (o.next_date === null) return null;
        const occDay = dayNumber(o.next_date);
        const fireAt = instantOfLocal(dateOfDay(occDay - r.daysBefore), r.time, user.tz);
        if ((fired === null || o.next_date > fired) && fireAt.getTime() >= nb) return { fireAt, occurrence: o.next_date };
        from = occDay + 1;
      }
      return null;
    }
  }
}

/** Thrown when a lunar countdown's occurrence is asked before the lunar calendar is loaded. */
export class NeedsLunar extends Error {
  constructor() {
    super("the lunar calendar is not loaded");
  }
}

/**
 * Whether a habit reminder fires on day `d`: a scheduled day (its weekday for daily/weekdays;
 * any day of a times_per_week week not yet met), on or after the start, not paused, not done.
 */
export function habitDueOn(h: HabitState, d: number): boolean {
  if (d < dayNumber(h.startDate) || isPaused(h.pauses, d)) return false;
  if ((h.values.get(d) ?? 0) >= h.goal) return false;
  const f = h.frequency;
  if (f.type === "weekdays") return f.days.includes(isoWeekday(d));
  if (f.type === "times_per_week") {
    const monday = mondayOf(d);
    let done = 0;
    for (let x = monday; x < monday + 7; x++) if ((h.values.get(x) ?? 0) >= h.goal) done++;
    return done < f.count;
  }
  return true;
}

/** Whether an instant falls inside the quiet hours (local HH:MM, end before start spans midnight); if so, when they end. */
export function quietUntil(at: Date, quiet: { start: string; end: string } | null, tz: string): Date | null {
  if (!quiet) return null;
  const local = Temporal.Instant.fromEpochMilliseconds(at.getTime()).toZonedDateTimeISO(tz);
  const hm = `${String(local.hour).padStart(2, "0")}:${String(local.minute).padStart(2, "0")}`;
  const date = local.toPlainDate().toString();
  const { start, end } = quiet;
  if (start < end) {
    if (hm >= start && hm < end) return instantOfLocal(date, end, tz);
    return null;
  }
  // Spans midnight: [start, 24:00) today ends tomorrow at `end`; [00:00, end) ends today.
  if (hm >= start) return instantOfLocal(dateOfDay(dayNumber(date) + 1), end, tz);
  if (hm < end) return instantOfLocal(date, end, tz);
  return null;
}
