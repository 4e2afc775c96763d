import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { nextRunAfter, scheduleProblem } from "../../src/transfer/snapshot/snapshot.schedule";
import { toKeep, toPrune, type Dated } from "../../src/transfer/snapshot/snapshot.retention";

/**
 * The schedule (croner in a zone) and the retention, as pure functions of the time: every run of a
 * year, DST days included, and retention against an independent oracle.
 */

function localOf(d: Date, zone: string) {
  return Temporal.Instant.fromEpochMilliseconds(d.getTime()).toZonedDateTimeISO(zone);
}

/** Every run from `from` to `to`. */
function runsBetween(expr: string, zone: string, from: string, to: string): Date[] {
  const out: Date[] = [];
  let t = new Date(from);
  const end = new Date(to).getTime();
  for (;;) {
    const n = nextRunAfter(expr, zone, t);
    if (!n || n.getTime() > end) return out;
    expect(n.getTime()).toBeGreaterThan(t.getTime());
    out.push(n);
    t = n;
  }
}

describe("schedule", () => {
  test("the default, daily 03:30, runs exactly once on every local day of a year, at 03:30 local, through both DST switches", () => {
    for (const zone of ["Europe/Berlin", "America/New_York", "Australia/Sydney", "UTC"]) {
      const runs = runsBetween("30 3 * * *", zone, "2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z");
      const days = new Map<string, number>();
      for (const r of runs) {
        const l = localOf(r, zone);
        expect(`${l.hour}:${l.minute}`).toBe("3:30");
        days.set(l.toPlainDate().toString(), (days.get(l.toPlainDate().toString()) ?? 0) + 1);
      }
      expect([...days.values()].every((n) => n === 1)).toBe(true);
      expect(days.size).toBeGreaterThanOrEqual(364);
    }
  });

  test("a time in the spring-forward gap runs once that day, at the first instant after the gap", () => {
    // America/New_York, 2026-03-08: 02:00 EST jumps to 03:00 EDT; 02:30 does not exist.
    const runs = runsBetween("30 2 * * *", "America/New_York", "2026-03-06T12:00:00Z", "2026-03-10T12:00:00Z");
    const local = runs.map((r) => localOf(r, "America/New_York").toString({ timeZoneName: "never" }));
    expect(local).toEqual(["2026-03-07T02:30:00-05:00", "2026-03-08T03:00:00-04:00", "2026-03-09T02:30:00-04:00", "2026-03-10T02:30:00-04:00"]);
  });

  test("a time in the repeated fall-back hour runs once that day, not twice", () => {
    // America/New_York, 2026-11-01: 01:00-02:00 happens twice (EDT, then EST).
    const runs = runsBetween("30 1 * * *", "America/New_York", "2026-10-31T12:00:00Z", "2026-11-02T12:00:00Z");
    expect(runs.map((r) => r.toISOString())).toEqual(["2026-11-01T05:30:00.000Z", "2026-11-02T06:30:00.000Z"]);
    // Europe/Berlin, 2026-10-25: 02:00-03:00 twice.
    const berlin = runsBetween("30 2 * * *", "Europe/Berlin", "2026-10-24T12:00:00Z", "2026-10-26T12:00:00Z");
    expect(berlin.map((r) => r.toISOString())).toEqual(["2026-10-25T00:30:00.000Z", "2026-10-26T01:30:00.000Z"]);
  });

  test("bad expressions and zones are named", () => {
    expect(scheduleProblem("30 3 * * *", "Europe/Berlin")).toBeNull();
    expect(scheduleProblem("not cron", "UTC")).toMatch(/not a cron expression/);
    expect(scheduleProblem("61 3 * * *", "UTC")).toMatch(/not a cron expression/);
    expect(scheduleProblem("30 3 * * *", "Mars/Olympus")).toMatch(/unknown time zone/);
    expect(scheduleProblem("30 3 30 2 *", "UTC")).toMatch(/never runs|not a cron/);
  });
});

/** The oracle: group by period, take the newest of each of the most recent `n` periods. */
function oracle(all: Dated[], p: { daily: number; weekly: number; monthly: number }, zone: string): Set<string> {
  const keep = new Set<string>();
  const newest = [...all].sort((a, b) => b.at.getTime() - a.at.getTime())[0];
  if (newest) keep.add(newest.name);
  const period = {
    daily: (d: Date) => localOf(d, zone).toPlainDate().toString(),
    weekly: (d: Date) => {
      const l = localOf(d, zone);
      return `${l.yearOfWeek}-${String(l.weekOfYear).padStart(2, "0")}`;
    },
    monthly: (d: Date) => localOf(d, zone).toPlainDate().toString().slice(0, 7),
  };
  for (const kind of ["daily", "weekly", "monthly"] as const) {
    const groups = new Map<string, Dated>();
    for (const s of all) {
      const k = period[kind](s.at);
      const best = groups.get(k);
      if (!best || s.at.getTime() > best.at.getTime()) groups.set(k, s);
    }
    const newestFirst = [...groups.values()].sort((a, b) => b.at.getTime() - a.at.getTime());
    for (const s of newestFirst.slice(0, p[kind])) keep.add(s.name);
  }
  return keep;
}

describe("retention", () => {
  test("matches the oracle on random histories (distinct instants), and always keeps the newest", () => {
    const zone = fc.constantFrom("UTC", "America/New_York", "Europe/Berlin", "Pacific/Chatham");
    const instants = fc.uniqueArray(fc.integer({ min: Date.parse("2025-01-01"), max: Date.parse("2027-12-31") }), { maxLength: 60 });
    const policy = fc.record({ daily: fc.integer({ min: 0, max: 10 }), weekly: fc.integer({ min: 0, max: 6 }), monthly: fc.integer({ min: 0, max: 8 }) });
    fc.assert(
      fc.property(instants, policy, zone, (ts, p, z) => {
        const all = ts.map((t, i) => ({ name: `s${i}`, at: new Date(t) }));
        const kept = toKeep(all, p, z);
        expect([...kept].sort()).toEqual([...oracle(all, p, z)].sort());
        if (all.length) {
          const newest = all.reduce((a, b) => (b.at > a.at ? b : a));
          expect(kept.has(newest.name)).toBe(true);
        }
        expect(toPrune(all, p, z).length + kept.size).toBe(all.length);
      }),
      { numRuns: 300 },
    );
  });

  test("the defaults (7/4/6) over a year of daily snapshots keep 7 days, 4 weeks, 6 months", () => {
    const all: Dated[] = [];
    for (let d = 0; d < 365; d++) all.push({ name: `d${d}`, at: new Date(Date.parse("2026-01-01T02:30:00Z") + d * 86400_000) });
    const kept = toKeep(all, { daily: 7, weekly: 4, monthly: 6 }, "UTC");
    // 7 newest days; weeks and months add their newest snapshot where it is not among those.
    expect(kept.size).toBeGreaterThanOrEqual(7 + 3 + 5 - 3);
    expect(kept.size).toBeLessThanOrEqual(7 + 4 + 6);
    for (let d = 358; d < 365; d++) expect(kept.has(`d${d}`)).toBe(true);
  });

  test("two snapshots in the repeated hour of a fall-back day are one day", () => {
    const zone = "America/New_York";
    const all = [
      { name: "edt", at: new Date("2026-11-01T05:30:00Z") }, // 01:30 EDT
      { name: "est", at: new Date("2026-11-01T06:30:00Z") }, // 01:30 EST, same local date
      { name: "before", at: new Date("2026-10-31T07:30:00Z") },
    ];
    expect([...toKeep(all, { daily: 2, weekly: 0, monthly: 0 }, zone)].sort()).toEqual(["before", "est"]);
  });

  test("a policy of zeros still keeps the newest snapshot", () => {
    const all = [
      { name: "a", at: new Date("2026-01-01T00:00:00Z") },
      { name: "b", at: new Date("2026-01-02T00:00:00Z") },
    ];
    expect([...toKeep(all, { daily: 0, weekly: 0, monthly: 0 }, "UTC")]).toEqual(["b"]);
  });
});
