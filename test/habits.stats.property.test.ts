import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { dayNumber } from "../src/core/days";
import { dayStatus, habitStats, type Frequency, type HabitFacts, type HabitStats } from "../src/features/habits/habits.schedule";

/**
 * A brute-force reference written independently of habits.schedule.ts: it walks calendar dates
 * with Date objects, one day at a time, builds the list of judged units (days, or ISO weeks for
 * times_per_week) and reads streaks and rates off that list.
 */
interface RefInput {
  frequency: Frequency;
  goal: number;
  start: string;
  today: string;
  pauses: { start: string; end: string | null }[];
  logs: Record<string, number>;
}

const iso = (d: Date) => d.toISOString().slice(0, 10);
const plus = (s: string, n: number) => {
  const d = new Date(`${s}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + n);
  return iso(d);
};
const weekdayOf = (s: string) => {
  const w = new Date(`${s}T00:00:00Z`).getUTCDay();
  return w === 0 ? 7 : w;
};
const mondayOf = (s: string) => plus(s, 1 - weekdayOf(s));

function reference(x: RefInput): HabitStats {
  const paused = (s: string) => x.pauses.some((p) => p.start <= s && (p.end === null || s <= p.end));
  const done = (s: string) => (x.logs[s] ?? 0) >= x.goal;
  const win7 = plus(x.today, -6);
  const win30 = plus(x.today, -29);
  const rate = (units: { from: string; to: string; ok: boolean }[], windowStart: string) => {
    const inWindow = units.filter((u) => u.to >= windowStart && u.to >= x.start);
    return inWindow.length === 0 ? null : inWindow.filter((u) => u.ok).length / inWindow.length;
  };
  const streaks = (units: { ok: boolean }[]) => {
    let longest = 0;
    let run = 0;
    for (const u of units) {
      run = u.ok ? run + 1 : 0;
      longest = Math.max(longest, run);
    }
    let current = 0;
    for (let i = units.length - 1; i >= 0 && units[i]!.ok; i--) current++;
    return { current, longest };
  };
  if (x.start > x.today) {
    return { current_streak: 0, longest_streak: 0, total_done: 0, completion_rate_7d: null, completion_rate_30d: null, completion_rate_all: null };
  }
  if (x.frequency.type !== "times_per_week") {
    const f = x.frequency;
    const units: { from: string; to: string; ok: boolean }[] = [];
    for (let s = x.start; s <= x.today; s = plus(s, 1)) {
      const scheduled = !paused(s) && (f.type === "daily" || f.days.includes(weekdayOf(s)));
      if (!scheduled) continue;
      if (s === x.today && !done(s)) continue;
      units.push({ from: s, to: s, ok: done(s) });
    }
    const { current, longest } = streaks(units);
    return {
      current_streak: current,
      longest_streak: longest,
      total_done: units.filter((u) => u.ok).length,
      completion_rate_7d: rate(units, win7),
      completion_rate_30d: rate(units, win30),
      completion_rate_all: rate(units, x.start),
    };
  }
  const count = x.frequency.count;
  const units: { from: string; to: string; ok: boolean }[] = [];
  let total = 0;
  for (let m = mondayOf(x.start); m <= x.today; m = plus(m, 7)) {
    let eligible = 0;
    let doneDays = 0;
    for (let i = 0; i < 7; i++) {
      const s = plus(m, i);
      if (s < x.start || paused(s)) continue;
      eligible++;
      if (done(s) && s <= x.today) doneDays++;
    }
    total += doneDays;
    if (eligible === 0) continue;
    const ok = doneDays >= Math.min(count, eligible);
    const current = plus(m, 6) >= x.today;
    if (current && !ok) continue;
    units.push({ from: m, to: plus(m, 6), ok });
  }
  const { current, longest } = streaks(units);
  return {
    current_streak: current,
    longest_streak: longest,
    total_done: total,
    completion_rate_7d: rate(units, win7),
    completion_rate_30d: rate(units, win30),
    completion_rate_all: rate(units, x.start),
  };
}

const dateArb = (from: string, spanDays: number) => fc.integer({ min: 0, max: spanDays }).map((n) => plus(from, n));
const frequencyArb: fc.Arbitrary<Frequency> = fc.oneof(
  fc.constant({ type: "daily" as const }),
  fc.uniqueArray(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 7 }).map((days) => ({ type: "weekdays" as const, days: days.sort() })),
  fc.integer({ min: 1, max: 7 }).map((count) => ({ type: "times_per_week" as const, count })),
);

const inputArb: fc.Arbitrary<RefInput> = fc
  .record({
    frequency: frequencyArb,
    goal: fc.constantFrom(1, 2, 0.5),
    start: dateArb("2026-01-01", 120),
    today: dateArb("2026-01-01", 160),
    pauses: fc.array(fc.record({ start: dateArb("2025-12-20", 180), len: fc.option(fc.integer({ min: 0, max: 20 }), { nil: null }) }), { maxLength: 3 }),
    logs: fc.dictionary(dateArb("2025-12-20", 180), fc.constantFrom(0, 0.5, 1, 2, 3), { maxKeys: 150 }),
  })
  .map((r) => ({
    frequency: r.frequency,
    goal: r.goal,
    start: r.start,
    today: r.today,
    pauses: r.pauses.map((p) => ({ start: p.start, end: p.len === null ? null : plus(p.start, p.len) })),
    // Logs never lie after today (the API refuses them).
    logs: Object.fromEntries(Object.entries(r.logs).filter(([d]) => d <= r.today)),
  }));

function facts(x: RefInput): HabitFacts {
  return {
    frequency: x.frequency,
    goal: x.goal,
    startDay: dayNumber(x.start),
    pauses: x.pauses.map((p) => ({ start: dayNumber(p.start), end: p.end === null ? null : dayNumber(p.end) })),
    values: new Map(Object.entries(x.logs).map(([d, v]) => [dayNumber(d), v])),
  };
}

describe("habit statistics against a day-by-day reference", () => {
  test("streaks, totals and rates agree for every frequency", () => {
    fc.assert(
      fc.property(inputArb, (x) => {
        const got = habitStats(facts(x), dayNumber(x.today));
        const want = reference(x);
        expect(got.current_streak).toBe(want.current_streak);
        expect(got.longest_streak).toBe(want.longest_streak);
        expect(got.total_done).toBe(want.total_done);
        for (const k of ["completion_rate_7d", "completion_rate_30d", "completion_rate_all"] as const) {
          if (want[k] === null) expect(got[k]).toBeNull();
          else expect(got[k]).toBeCloseTo(want[k]!, 12);
        }
      }),
      { numRuns: 1500 },
    );
  });

  test("an open today never breaks the streak: doing it adds exactly one", () => {
    fc.assert(
      fc.property(inputArb, (x) => {
        const scheduledToday =
          x.start <= x.today &&
          !x.pauses.some((p) => p.start <= x.today && (p.end === null || x.today <= p.end)) &&
          (x.frequency.type === "daily" || (x.frequency.type === "weekdays" && x.frequency.days.includes(weekdayOf(x.today))));
        fc.pre(scheduledToday);
        const open = { ...x, logs: { ...x.logs } };
        delete open.logs[x.today];
        const doneToday = { ...x, logs: { ...x.logs, [x.today]: x.goal } };
        const a = habitStats(facts(open), dayNumber(x.today)).current_streak;
        const b = habitStats(facts(doneToday), dayNumber(x.today)).current_streak;
        expect(b).toBe(a + 1);
      }),
      { numRuns: 500 },
    );
  });

  test("grid statuses agree with the stats' notion of done and scheduled", () => {
    fc.assert(
      fc.property(inputArb, dateArb("2025-12-20", 180), (x, day) => {
        const status = dayStatus(facts(x), dayNumber(day), dayNumber(x.today));
        const paused = x.pauses.some((p) => p.start <= day && (p.end === null || day <= p.end));
        const v = x.logs[day] ?? 0;
        // One precedence (docs/spec/contract.md §12): future, then not scheduled (even paused), then paused.
        if (day > x.today) expect(status).toBe("future");
        else if (day < x.start) expect(status).toBe("not_scheduled");
        else if (x.frequency.type === "weekdays" && !x.frequency.days.includes(weekdayOf(day))) expect(status).toBe("not_scheduled");
        else if (paused) expect(status).toBe("paused");
        else if (v >= x.goal) expect(status).toBe("done");
        else if (v > 0) expect(status).toBe("partial");
        else if (x.frequency.type === "times_per_week") expect(["missed", "not_scheduled"]).toContain(status);
        else expect(status).toBe("missed");
      }),
      { numRuns: 1000 },
    );
  });
});
