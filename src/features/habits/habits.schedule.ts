import { isoWeekday, mondayOf } from "../../core/days";

/**
 * The habit rules, as pure functions of day numbers (see core/days.ts), so the service, the
 * weekly grid and the property tests share one definition.
 *
 * Definitions (also in the OpenAPI descriptions):
 * - A day is *eligible* when it is on or after the habit's start_date and inside no pause.
 * - daily / weekdays: an eligible day is *scheduled* when the frequency names its ISO weekday
 *   (every day for daily). A scheduled day is *done* when its logged value reaches `goal`.
 *   Streaks count consecutive done scheduled days; unscheduled and paused days are skipped
 *   (they neither count nor break). Today, while not done, is left out (it does not break the
 *   streak and is not in any rate's denominator).
 * - times_per_week: the unit is the ISO week (Monday to Sunday). A week *requires*
 *   min(count, eligible days of that week) done days; a week with no eligible day is skipped.
 *   The current week, while it has not met its requirement, is still open and skipped too.
 *   Streaks count consecutive met weeks; rates are met weeks / judged weeks among the weeks
 *   that overlap the window.
 *   The current week's days after today are eligible too (they can still be done), so its
 *   requirement is known from Monday on; until it is met or over the week stays open.
 * - Rates are fractions from 0 to 1, null when the window holds nothing to judge yet. The
 *   windows end today: 7d and 30d start 6 and 29 days before today (never before start_date),
 *   `all` starts at start_date.
 * - Weekly grid, one precedence (contract §12): `future` (after today), else `not_scheduled`
 *   (before start_date, or a weekday a `weekdays` habit skips; even inside a pause), else
 *   `paused`, else done / partial / missed (times_per_week: see dayStatus).
 */
export type Frequency = { type: "daily" } | { type: "weekdays"; days: number[] } | { type: "times_per_week"; count: number };

export interface PauseSpan {
  start: number;
  /** null = open-ended */
  end: number | null;
}

export interface HabitFacts {
  frequency: Frequency;
  goal: number;
  startDay: number;
  pauses: PauseSpan[];
  /** logged value per day number */
  values: Map<number, number>;
}

export type DayStatus = "done" | "partial" | "missed" | "paused" | "not_scheduled" | "future";

export interface HabitStats {
  current_streak: number;
  longest_streak: number;
  total_done: number;
  completion_rate_7d: number | null;
  completion_rate_30d: number | null;
  completion_rate_all: number | null;
}

export function isPaused(pauses: PauseSpan[], day: number): boolean {
  for (const p of pauses) if (p.start <= day && (p.end === null || day <= p.end)) return true;
  return false;
}

function weekdayMask(f: Frequency): boolean[] {
  const mask = Array<boolean>(8).fill(f.type !== "weekdays");
  if (f.type === "weekdays") for (const d of f.days) mask[d] = true;
  return mask;
}

/** Per-week bookkeeping for times_per_week habits. */
interface WeekTally {
  eligible: number;
  done: number;
}

function weekTallies(h: HabitFacts, firstMonday: number, lastMonday: number): Map<number, WeekTally> {
  const out = new Map<number, WeekTally>();
  for (let m = firstMonday; m <= lastMonday; m += 7) {
    const t: WeekTally = { eligible: 0, done: 0 };
    for (let d = m; d < m + 7; d++) {
      if (d < h.startDay || isPaused(h.pauses, d)) continue;
      t.eligible++;
      if ((h.values.get(d) ?? 0) >= h.goal) t.done++;
    }
    out.set(m, t);
  }
  return out;
}

type WeekOutcome = "met" | "unmet" | "skipped";

function weekOutcome(t: WeekTally, count: number, isCurrent: boolean): WeekOutcome {
  if (t.eligible === 0) return "skipped";
  const met = t.done >= Math.min(count, t.eligible);
  if (met) return "met";
  return isCurrent ? "skipped" : "unmet";
}

/** Status of one day in the weekly grid; the precedence is the one in the header above. */
export function dayStatus(h: HabitFacts, day: number, today: number, weekTally?: (monday: number) => WeekTally): DayStatus {
  if (day > today) return "future";
  // A day the habit does not schedule says so, paused or not: a pause can only suspend a scheduled day.
  if (day < h.startDay || !weekdayMask(h.frequency)[isoWeekday(day)]) return "not_scheduled";
  if (isPaused(h.pauses, day)) return "paused";
  const value = h.values.get(day) ?? 0;
  if (h.frequency.type === "times_per_week") {
    if (value >= h.goal) return "done";
    if (value > 0) return "partial";
    // A day without a log is only "missed" once its week is over without meeting the count.
    const monday = mondayOf(day);
    if (monday + 6 >= today) return "not_scheduled";
    const t = weekTally ? weekTally(monday) : weekTallies(h, monday, monday).get(monday)!;
    return weekOutcome(t, h.frequency.count, false) === "unmet" ? "missed" : "not_scheduled";
  }
  if (value >= h.goal) return "done";
  return value > 0 ? "partial" : "missed";
}

/** Seven days from `start` for one habit; week tallies are computed once per ISO week. */
export function weekDays(h: HabitFacts, start: number, today: number): { day: number; status: DayStatus; value: number }[] {
  const tallies = new Map<number, WeekTally>();
  const tally = (m: number) => {
    let t = tallies.get(m);
    if (!t) {
      t = weekTallies(h, m, m).get(m)!;
      tallies.set(m, t);
    }
    return t;
  };
  const out = [];
  for (let d = start; d < start + 7; d++) out.push({ day: d, status: dayStatus(h, d, today, tally), value: h.values.get(d) ?? 0 });
  return out;
}

function ratio(num: number, den: number): number | null {
  return den === 0 ? null : num / den;
}

/** Streaks, total and rates as of `today` (see the definitions above). */
export function habitStats(h: HabitFacts, today: number): HabitStats {
  const empty: HabitStats = {
    current_streak: 0,
    longest_streak: 0,
    total_done: 0,
    completion_rate_7d: null,
    completion_rate_30d: null,
    completion_rate_all: null,
  };
  if (h.startDay > today) return empty;
  const from7 = Math.max(h.startDay, today - 6);
  const from30 = Math.max(h.startDay, today - 29);
  const f = h.frequency;

  if (f.type === "times_per_week") {
    const first = mondayOf(h.startDay);
    const current = mondayOf(today);
    const tallies = weekTallies(h, first, current);
    let total = 0;
    for (const [m, t] of tallies) {
      // done days up to today only (logs are never in the future, but be exact)
      if (m === current) {
        for (let d = m; d <= today; d++) if (d >= h.startDay && !isPaused(h.pauses, d) && (h.values.get(d) ?? 0) >= h.goal) total++;
      } else total += t.done;
    }
    const outcomes: { monday: number; outcome: WeekOutcome }[] = [];
    for (let m = first; m <= current; m += 7) outcomes.push({ monday: m, outcome: weekOutcome(tallies.get(m)!, f.count, m === current) });
    let run = 0;
    let longest = 0;
    for (const o of outcomes) {
      if (o.outcome === "met") longest = Math.max(longest, ++run);
      else if (o.outcome === "unmet") run = 0;
    }
    let currentStreak = 0;
    for (let i = outcomes.length - 1; i >= 0; i--) {
      const o = outcomes[i]!.outcome;
      if (o === "met") currentStreak++;
      else if (o === "unmet") break;
    }
    const rate = (from: number) => {
      let met = 0;
      let judged = 0;
      for (const o of outcomes) {
        if (o.monday + 6 < from) continue;
        if (o.outcome === "skipped") continue;
        judged++;
        if (o.outcome === "met") met++;
      }
      return ratio(met, judged);
    };
    return {
      current_streak: currentStreak,
      longest_streak: longest,
      total_done: total,
      completion_rate_7d: rate(from7),
      completion_rate_30d: rate(from30),
      completion_rate_all: rate(h.startDay),
    };
  }

  const mask = weekdayMask(f);
  // Walk once from start_date to today; pauses are few, so test them per day.
  let run = 0;
  let longest = 0;
  let total = 0;
  let done7 = 0;
  let den7 = 0;
  let done30 = 0;
  let den30 = 0;
  let denAll = 0;
  // `run` is the run of done scheduled days ending at the last scheduled day judged: the current streak.
  let wd = isoWeekday(h.startDay);
  for (let d = h.startDay; d <= today; d++, wd = wd === 7 ? 1 : wd + 1) {
    if (!mask[wd] || isPaused(h.pauses, d)) continue;
    const done = (h.values.get(d) ?? 0) >= h.goal;
    if (d === today && !done) continue; // an open today neither counts nor breaks
    if (done) {
      total++;
      longest = Math.max(longest, ++run);
    } else run = 0;
    denAll++;
    if (d >= from30) {
      den30++;
      if (done) done30++;
    }
    if (d >= from7) {
      den7++;
      if (done) done7++;
    }
  }
  return {
    current_streak: run,
    longest_streak: longest,
    total_done: total,
    completion_rate_7d: ratio(done7, den7),
    completion_rate_30d: ratio(done30, den30),
    completion_rate_all: ratio(total, denAll),
  };
}
