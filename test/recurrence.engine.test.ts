// The pure recurrence engine: fixed calendar and DST cases, then property tests.
// Every expectation names its time zone; `bun run test:recurrence-tz` runs this file under
// TZ=UTC and TZ=America/New_York and both must pass unchanged.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import {
  checkedSeries,
  dateOfDue,
  isDateOnly,
  nextAfterCompletion,
  parseRRule,
  seriesFor,
  type Series,
  type Unit,
  yearlyDayMatcher,
} from "../src/features/recurrence/recurrence.engine";

function series(rrule: string, dtstart: string, tz = "UTC"): Series {
  const p = parseRRule(rrule, isDateOnly(dtstart));
  if (!p.ok) throw new Error(`rule rejected: ${p.message}`);
  const c = checkedSeries(p.rule, dtstart, tz);
  if (!c.ok) throw new Error(`series rejected: ${c.message}`);
  return c.series;
}

/** Walks the series by repeated nextAfter, as completing the task n times does. */
function walk(s: Series, n: number, exceptions: ReadonlySet<string> = new Set()): string[] {
  const out = [s.dtstart];
  let cur = s.dtstart;
  while (out.length < n) {
    const next = s.nextAfter(cur, exceptions);
    if (next === null) break;
    out.push(next);
    cur = next;
  }
  return out;
}

/** Wall-clock local time of an instant in a zone, `YYYY-MM-DDTHH:MM`. */
function local(instant: string, tz: string): string {
  return Temporal.Instant.from(instant).toZonedDateTimeISO(tz).toPlainDateTime().toString().slice(0, 16);
}

describe("month ends and leap days (date-only series)", () => {
  test("FREQ=MONTHLY;BYMONTHDAY=31 skips months without a 31st", () => {
    expect(walk(series("FREQ=MONTHLY;BYMONTHDAY=31", "2026-01-31"), 7)).toEqual([
      "2026-01-31",
      "2026-03-31",
      "2026-05-31",
      "2026-07-31",
      "2026-08-31",
      "2026-10-31",
      "2026-12-31",
    ]);
  });

  test("FREQ=MONTHLY from the 31st without BYMONTHDAY also keeps the 31st (RFC 5545 omits invalid dates)", () => {
    expect(walk(series("FREQ=MONTHLY", "2026-01-31"), 3)).toEqual(["2026-01-31", "2026-03-31", "2026-05-31"]);
  });

  test("BYMONTHDAY=-1 is the last day of every month, 29 February in a leap year", () => {
    expect(walk(series("FREQ=MONTHLY;BYMONTHDAY=-1", "2027-12-31"), 5)).toEqual([
      "2027-12-31",
      "2028-01-31",
      "2028-02-29",
      "2028-03-31",
      "2028-04-30",
    ]);
    expect(series("FREQ=MONTHLY;BYMONTHDAY=-1", "2026-01-31").nextAfter("2026-01-31")).toBe("2026-02-28");
  });

  test("FREQ=YEARLY from 29 February recurs on leap years only", () => {
    expect(walk(series("FREQ=YEARLY", "2024-02-29"), 3)).toEqual(["2024-02-29", "2028-02-29", "2032-02-29"]);
    expect(walk(series("FREQ=YEARLY;COUNT=2", "2024-02-29"), 5)).toEqual(["2024-02-29", "2028-02-29"]);
  });

  test("FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=-1 gives the last day of February every year", () => {
    expect(walk(series("FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=-1", "2024-02-29"), 3)).toEqual(["2024-02-29", "2025-02-28", "2026-02-28"]);
  });
});

describe("COUNT, UNTIL and DTSTART", () => {
  test("DTSTART is the first occurrence and counts towards COUNT even when it does not match", () => {
    // 2026-11-24 is a Tuesday; the rule names Mondays and Wednesdays.
    expect(walk(series("FREQ=WEEKLY;BYDAY=MO,WE;COUNT=3", "2026-11-24"), 10)).toEqual(["2026-11-24", "2026-11-25", "2026-11-30"]);
  });

  test("COUNT exhausted: no next occurrence", () => {
    const s = series("FREQ=DAILY;COUNT=2", "2026-11-24");
    expect(s.nextAfter("2026-11-24")).toBe("2026-11-25");
    expect(s.nextAfter("2026-11-25")).toBeNull();
  });

  test("UNTIL as a date is inclusive, for a timed series in its own zone too", () => {
    expect(walk(series("FREQ=DAILY;UNTIL=20261126", "2026-11-24"), 10)).toEqual(["2026-11-24", "2026-11-25", "2026-11-26"]);
    const timed = series("FREQ=DAILY;UNTIL=20261126", "2026-11-24T22:00:00.000Z", "Pacific/Auckland"); // 11:00 NZDT on the 25th
    expect(walk(timed, 10).map((d) => local(d, "Pacific/Auckland"))).toEqual(["2026-11-25T11:00", "2026-11-26T11:00"]);
  });

  test("UNTIL as a UTC date-time ends a date-only series on its date in the series' zone", () => {
    // 2026-11-26T12:00Z is already 27 November in Kiritimati (UTC+14).
    expect(walk(series("FREQ=DAILY;UNTIL=20261126T120000Z", "2026-11-24", "Pacific/Kiritimati"), 10)).toEqual([
      "2026-11-24",
      "2026-11-25",
      "2026-11-26",
      "2026-11-27",
    ]);
    expect(walk(series("FREQ=DAILY;UNTIL=20261126T120000Z", "2026-11-24", "UTC"), 10)).toEqual(["2026-11-24", "2026-11-25", "2026-11-26"]);
  });

  test("a timed series keeps the milliseconds of its DTSTART", () => {
    expect(series("FREQ=DAILY", "2026-11-24T09:00:00.123Z").nextAfter("2026-11-24T09:00:00.123Z")).toBe("2026-11-25T09:00:00.123Z");
  });
});

describe("DST: a timed series keeps its wall-clock time", () => {
  test("Europe/Berlin 09:00 daily across the spring and autumn changes", () => {
    const spring = walk(series("FREQ=DAILY", "2026-03-28T08:00:00.000Z", "Europe/Berlin"), 3);
    expect(spring).toEqual(["2026-03-28T08:00:00.000Z", "2026-03-29T07:00:00.000Z", "2026-03-30T07:00:00.000Z"]);
    const autumn = walk(series("FREQ=DAILY", "2026-10-24T07:00:00.000Z", "Europe/Berlin"), 3);
    expect(autumn).toEqual(["2026-10-24T07:00:00.000Z", "2026-10-25T08:00:00.000Z", "2026-10-26T08:00:00.000Z"]);
    expect([...spring, ...autumn].map((d) => local(d, "Europe/Berlin").slice(11))).toEqual(Array(6).fill("09:00"));
  });

  test("Europe/Berlin 02:30 daily: the nonexistent 29 March is omitted, the doubled 25 October is the earlier one", () => {
    expect(walk(series("FREQ=DAILY", "2026-03-28T01:30:00.000Z", "Europe/Berlin"), 3).map((d) => local(d, "Europe/Berlin"))).toEqual([
      "2026-03-28T02:30",
      "2026-03-30T02:30",
      "2026-03-31T02:30",
    ]);
    expect(walk(series("FREQ=DAILY", "2026-10-24T00:30:00.000Z", "Europe/Berlin"), 3)).toEqual([
      "2026-10-24T00:30:00.000Z", // 02:30 CEST
      "2026-10-25T00:30:00.000Z", // 02:30 CEST, the first of the two
      "2026-10-26T01:30:00.000Z", // 02:30 CET
    ]);
  });

  test("America/New_York 09:00 and 02:30 daily across both changes", () => {
    const nine = walk(series("FREQ=DAILY", "2026-03-07T14:00:00.000Z", "America/New_York"), 3);
    expect(nine).toEqual(["2026-03-07T14:00:00.000Z", "2026-03-08T13:00:00.000Z", "2026-03-09T13:00:00.000Z"]);
    const nineFall = walk(series("FREQ=DAILY", "2026-10-31T13:00:00.000Z", "America/New_York"), 3);
    expect(nineFall).toEqual(["2026-10-31T13:00:00.000Z", "2026-11-01T14:00:00.000Z", "2026-11-02T14:00:00.000Z"]);
    // 8 March 2026 has no 02:30 in New York.
    expect(walk(series("FREQ=DAILY", "2026-03-07T07:30:00.000Z", "America/New_York"), 3).map((d) => local(d, "America/New_York"))).toEqual([
      "2026-03-07T02:30",
      "2026-03-09T02:30",
      "2026-03-10T02:30",
    ]);
    // 1 November 2026 has two 01:30s; the earlier (EDT) is taken.
    expect(walk(series("FREQ=DAILY", "2026-10-31T05:30:00.000Z", "America/New_York"), 3)).toEqual([
      "2026-10-31T05:30:00.000Z",
      "2026-11-01T05:30:00.000Z",
      "2026-11-02T06:30:00.000Z",
    ]);
  });

  test("COUNT does not count the omitted DST-gap occurrence", () => {
    expect(walk(series("FREQ=DAILY;COUNT=3", "2026-03-07T07:30:00.000Z", "America/New_York"), 10).length).toBe(3);
  });

  test("a weekly rule in the user's zone uses local weekdays (Kiritimati is UTC+14)", () => {
    // 2026-11-24T10:00Z is Wednesday 25 November 00:00 in Kiritimati.
    const s = series("FREQ=WEEKLY;BYDAY=WE,FR", "2026-11-24T10:00:00.000Z", "Pacific/Kiritimati");
    expect(walk(s, 3).map((d) => local(d, "Pacific/Kiritimati"))).toEqual(["2026-11-25T00:00", "2026-11-27T00:00", "2026-12-02T00:00"]);
  });
});

describe("exceptions and the series' granularity", () => {
  test("an excepted date is passed over", () => {
    const s = series("FREQ=DAILY", "2026-11-24");
    expect(s.nextAfter("2026-11-24", new Set(["2026-11-25", "2026-11-26"]))).toBe("2026-11-27");
  });

  test("an exception date covers every occurrence of that local day", () => {
    const s = series("FREQ=DAILY;BYHOUR=9,17;BYMINUTE=0;BYSECOND=0", "2026-11-24T08:00:00.000Z", "Europe/Berlin");
    expect(s.occurrencesOn("2026-11-25")).toEqual(["2026-11-25T08:00:00.000Z", "2026-11-25T16:00:00.000Z"]);
    expect(s.nextAfter("2026-11-24T08:00:00.000Z", new Set(["2026-11-24", "2026-11-25"]))).toBe("2026-11-26T08:00:00.000Z");
  });

  test("exceptions are local dates in the series' zone", () => {
    // 09:00 in Auckland on 25 November is still 24 November in UTC.
    const s = series("FREQ=DAILY", "2026-11-23T20:00:00.000Z", "Pacific/Auckland");
    expect(s.dateKey("2026-11-24T20:00:00.000Z")).toBe("2026-11-25");
    expect(s.nextAfter("2026-11-23T20:00:00.000Z", new Set(["2026-11-25"]))).toBe("2026-11-25T20:00:00.000Z");
  });

  test("a deadline of the other form is compared at the series' granularity", () => {
    const timed = series("FREQ=DAILY", "2026-11-24T09:00:00.000Z");
    expect(timed.nextAfter("2026-11-26")).toBe("2026-11-27T09:00:00.000Z");
    const dated = series("FREQ=DAILY", "2026-11-24", "Pacific/Kiritimati");
    expect(dated.nextAfter("2026-11-25T23:00:00.000Z")).toBe("2026-11-27"); // 26 Nov in Kiritimati
  });

  test("a deadline moved off the pattern goes to the next pattern occurrence", () => {
    const s = series("FREQ=WEEKLY;BYDAY=MO", "2026-11-23");
    expect(s.nextAfter("2026-11-26")).toBe("2026-11-30");
  });

  test("the last occurrence has no next even with exceptions before it", () => {
    const s = series("FREQ=DAILY;COUNT=3", "2026-11-24");
    expect(s.nextAfter("2026-11-24", new Set(["2026-11-25", "2026-11-26"]))).toBeNull();
  });
});

describe("RRULE validation", () => {
  const bad: [string, RegExp][] = [
    ["FREQ=SECONDLY", /not supported/],
    ["FREQ=MINUTELY", /not supported/],
    ["FREQ=HOURLY", /not supported/],
    ["FREQ=FORTNIGHTLY", /not a frequency/],
    ["BYDAY=MO", /FREQ is required/],
    ["", /empty/],
    ["FREQ=DAILY;INTERVAL=0", /INTERVAL/],
    ["FREQ=DAILY;INTERVAL=-1", /INTERVAL/],
    ["FREQ=DAILY;INTERVAL=1.5", /INTERVAL/],
    ["FREQ=DAILY;INTERVAL=1001", /INTERVAL/],
    ["FREQ=DAILY;COUNT=0", /COUNT/],
    ["FREQ=DAILY;COUNT=1001", /COUNT/],
    ["FREQ=DAILY;UNTIL=20260230", /UNTIL/],
    ["FREQ=DAILY;UNTIL=2026-12-01", /UNTIL/],
    ["FREQ=DAILY;UNTIL=20261201T250000Z", /UNTIL/],
    ["FREQ=DAILY;UNTIL=20261201T090000", /UNTIL/],
    ["FREQ=DAILY;COUNT=3;UNTIL=20261201", /both/],
    ["FREQ=DAILY;FREQ=WEEKLY", /twice/],
    ["FREQ=DAILY;X-FOO=1", /not a supported/],
    ["FREQ=DAILY;RSCALE=CHINESE", /not a supported/],
    ["FREQ=DAILY;BYDAY=XX", /weekday/],
    ["FREQ=WEEKLY;BYDAY=2MO", /ordinal/],
    ["FREQ=MONTHLY;BYDAY=0MO", /ordinal/],
    ["FREQ=MONTHLY;BYMONTHDAY=32", /BYMONTHDAY/],
    ["FREQ=MONTHLY;BYMONTHDAY=0", /BYMONTHDAY/],
    ["FREQ=WEEKLY;BYMONTHDAY=1", /WEEKLY/],
    ["FREQ=MONTHLY;BYYEARDAY=1", /YEARLY/],
    ["FREQ=MONTHLY;BYWEEKNO=1", /YEARLY/],
    ["FREQ=YEARLY;BYMONTH=13", /BYMONTH/],
    ["FREQ=DAILY;BYSETPOS=1", /BYSETPOS/],
    ["FREQ=DAILY;WKST=XX", /WKST/],
    ["FREQ=DAILY;;COUNT=2", /NAME=VALUE/],
    ["FREQ=DAILY;COUNT=", /NAME=VALUE/],
    ["DTSTART:20261124T090000Z\nRRULE:FREQ=DAILY", /line breaks/],
    ["FREQ=DAILY; COUNT=2", /spaces/],
    [`FREQ=DAILY;${"BYMONTH=1;".repeat(60)}`, /at most 500/],
  ];
  for (const [rule, why] of bad) {
    test(`rejects ${JSON.stringify(rule.slice(0, 40))}`, () => {
      const p = parseRRule(rule, false);
      expect(p.ok).toBe(false);
      if (!p.ok) expect(p.message).toMatch(why);
    });
  }

  test("time-of-day parts need a timed series", () => {
    expect(parseRRule("FREQ=DAILY;BYHOUR=9", true).ok).toBe(false);
    expect(parseRRule("FREQ=DAILY;BYHOUR=9", false).ok).toBe(true);
  });

  test("case-insensitive, RRULE: prefix tolerated, canonical text upper-case", () => {
    const p = parseRRule("rrule:freq=weekly;byday=mo,we", true);
    expect(p.ok && p.rule.text).toBe("FREQ=WEEKLY;BYDAY=MO,WE");
  });

  test("impossible rules and an UNTIL before DTSTART are refused by checkedSeries", () => {
    const check = (rule: string, dtstart: string, tz = "UTC") => {
      const p = parseRRule(rule, isDateOnly(dtstart));
      if (!p.ok) throw new Error(p.message);
      return checkedSeries(p.rule, dtstart, tz);
    };
    expect(check("FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30", "2026-11-24")).toMatchObject({ ok: false, message: "the rule matches no date" });
    expect(check("FREQ=MONTHLY;BYMONTH=4;BYMONTHDAY=31;COUNT=3", "2026-11-24")).toMatchObject({ ok: false });
    expect(check("FREQ=DAILY;UNTIL=20261123", "2026-11-24")).toMatchObject({ ok: false });
    expect(check("FREQ=DAILY;UNTIL=20261124T085959Z", "2026-11-24T09:00:00.000Z")).toMatchObject({ ok: false });
    expect(check("FREQ=DAILY;UNTIL=20261124T090000Z", "2026-11-24T09:00:00.000Z")).toMatchObject({ ok: true });
    expect(check("FREQ=DAILY;COUNT=1", "2026-11-24")).toMatchObject({ ok: true });
  });
});

describe("FREQ=YEARLY against python-dateutil (test/fixtures/rrule-yearly-dateutil.json)", () => {
  // Written by scripts/rrule-dateutil-fixtures.py: rules, a DTSTART and dateutil's occurrences
  // after it (at most `take`, within `horizon_years`). rrule-temporal alone fails many of them
  // (53rd weekdays spilling into the next year, BYYEARDAY/BYMONTHDAY added instead of limited).
  interface Case {
    rule: string;
    dtstart: string;
    count: boolean;
    after: string[];
  }
  const fixture = JSON.parse(readFileSync(join(import.meta.dir, "fixtures/rrule-yearly-dateutil.json"), "utf8")) as { take: number; horizon_years: number; cases: Case[] };

  /** The series' occurrences after DTSTART within the fixture's horizon, at most `take`. */
  function within(s: Series, c: Case, dates: (due: string) => string = (d) => d): string[] {
    const limit = Number(c.dtstart.slice(0, 4)) + fixture.horizon_years;
    return s
      .first(fixture.take + 1)
      .slice(1)
      .map(dates)
      .filter((d) => Number(d.slice(0, 4)) <= limit);
  }

  test("the reported cases: 53WE from 2020-12-30 is next on 2025-12-31; -53WE, 53MO and -53MO likewise stay in their year", () => {
    expect(walk(series("FREQ=YEARLY;BYDAY=53WE", "2020-12-30"), 3)).toEqual(["2020-12-30", "2025-12-31", "2031-12-31"]);
    expect(walk(series("FREQ=YEARLY;BYDAY=-53WE", "2020-01-01"), 3)).toEqual(["2020-01-01", "2025-01-01", "2031-01-01"]);
    expect(walk(series("FREQ=YEARLY;BYDAY=53MO", "2018-12-31"), 3)).toEqual(["2018-12-31", "2024-12-30", "2029-12-31"]);
    expect(walk(series("FREQ=YEARLY;BYDAY=-53MO", "2018-01-01"), 3)).toEqual(["2018-01-01", "2024-01-01", "2029-01-01"]);
    // COUNT counts the kept occurrences only.
    expect(series("FREQ=YEARLY;BYDAY=53TH;COUNT=3", "2020-12-31").first(10)).toEqual(["2020-12-31", "2026-12-31", "2032-12-30"]);
    // A day that is both a spilled 53rd and the year's own 1st weekday comes once, in order.
    expect(walk(series("FREQ=YEARLY;BYDAY=53WE,1WE", "2020-12-30"), 4)).toEqual(["2020-12-30", "2021-01-06", "2022-01-05", "2023-01-04"]);
  });

  test("DTSTART is the first occurrence even on a BYDAY weekday that is not the ordinal, and counts towards COUNT", () => {
    // 1 May 2005 is a Sunday, not the first of the year: rrule-temporal leaves it out.
    const s = series("FREQ=YEARLY;BYDAY=1SU;COUNT=3", "2005-05-01");
    expect(s.first(10)).toEqual(["2005-05-01", "2006-01-01", "2007-01-07"]);
    expect(s.occurrencesOn("2005-05-01")).toEqual(["2005-05-01"]);
    expect(s.nextAfter("2007-01-07")).toBeNull();
    expect(series("FREQ=YEARLY;BYDAY=1SU", "2005-05-01").occurrencesOn("2005-05-01")).toEqual(["2005-05-01"]);
  });

  test("a repeated BYDAY value is accepted and means the same as once", () => {
    const p = parseRRule("FREQ=YEARLY;BYDAY=1SA,1SA", true);
    expect(p.ok && p.rule.text).toBe("FREQ=YEARLY;BYDAY=1SA");
    expect(walk(series("FREQ=YEARLY;BYDAY=1SA,1SA", "2026-01-03"), 3)).toEqual(["2026-01-03", "2027-01-02", "2028-01-01"]);
    expect(parseRRule("FREQ=WEEKLY;BYDAY=MO,MO,WE;BYMONTH=1,1", true)).toMatchObject({ ok: true, rule: { text: "FREQ=WEEKLY;BYDAY=MO,WE;BYMONTH=1" } });
  });

  test("every fixture case agrees with dateutil: listed, walked, and as a 09:00 America/New_York series", () => {
    expect(fixture.cases.length).toBeGreaterThan(300);
    const wrong: string[] = [];
    fixture.cases.forEach((c, i) => {
      const p = parseRRule(c.rule, false);
      if (!p.ok) return void wrong.push(`${c.rule}: refused (${p.message})`);
      const checked = checkedSeries(p.rule, c.dtstart, "UTC");
      // Refused as matching nothing: dateutil must find nothing within its horizon either.
      if (!checked.ok) return void (c.after.length && wrong.push(`${c.rule} from ${c.dtstart}: refused (${checked.message}), dateutil ${c.after.slice(0, 3)}`));
      const s = checked.series;
      const got = within(s, c);
      if (JSON.stringify(got) !== JSON.stringify(c.after)) wrong.push(`${c.rule} from ${c.dtstart}: ${got.slice(0, 4)} ≠ dateutil ${c.after.slice(0, 4)}`);
      // Completing walks the same way (nextAfter), and a finished COUNT has no next.
      const walked = walk(s, Math.min(4, c.after.length + 1)).slice(1);
      if (JSON.stringify(walked) !== JSON.stringify(c.after.slice(0, walked.length))) wrong.push(`${c.rule} from ${c.dtstart}: walked ${walked}`);
      const listed = s.first(fixture.take + 1);
      if (c.count && listed.length <= fixture.take && s.nextAfter(listed.at(-1)!) !== null) wrong.push(`${c.rule}: past COUNT`);
      // The same rule at 09:00 local in New York lands on the same local dates (a sample, for time).
      if (i % 4 !== 0) return;
      const start = Temporal.PlainDate.from(c.dtstart).toZonedDateTime({ timeZone: "America/New_York", plainTime: "09:00" });
      const timed = checkedSeries(p.rule, new Date(start.epochMilliseconds).toISOString(), "America/New_York");
      if (!timed.ok) return void wrong.push(`${c.rule} from ${c.dtstart} 09:00 New York: refused (${timed.message})`);
      const local = within(timed.series, c, (due) => dateOfDue(due, "America/New_York"));
      if (JSON.stringify(local) !== JSON.stringify(c.after)) wrong.push(`${c.rule} from ${c.dtstart} 09:00 New York: ${local.slice(0, 4)}`);
    });
    expect(wrong).toEqual([]);
    // ~400 cases, some of which scan 400 years to prove they match nothing: seconds on a loaded machine.
  }, 60_000);

  test("yearlyDayMatcher against day-by-day counting", () => {
    // The 53rd Wednesday of 2025 is 31 December; 2024 has none (its last is the 52nd, 25 December).
    const m = yearlyDayMatcher("FREQ=YEARLY;BYDAY=53WE");
    expect(m(Temporal.PlainDate.from("2025-12-31"))).toBe(true);
    expect(m(Temporal.PlainDate.from("2024-12-25"))).toBe(false);
    expect(m(Temporal.PlainDate.from("2025-01-01"))).toBe(false);
    // With BYMONTH the ordinal counts within the month: the last Friday of March.
    const march = yearlyDayMatcher("FREQ=YEARLY;BYMONTH=3;BYDAY=-1FR");
    expect(["2026-03-27", "2026-03-20", "2026-04-24"].map((d) => march(Temporal.PlainDate.from(d)))).toEqual([true, false, false]);
    // Limits: the 71st day of the year when it is a Tuesday.
    const limited = yearlyDayMatcher("FREQ=YEARLY;BYDAY=TU;BYYEARDAY=71");
    expect(limited(Temporal.PlainDate.from("2030-03-12"))).toBe(true);
    expect(limited(Temporal.PlainDate.from("2031-03-12"))).toBe(false);
  });

  test("BYSETPOS in a corrected shape is refused for new rules", () => {
    for (const rule of ["FREQ=YEARLY;BYDAY=53MO,1MO;BYSETPOS=1", "FREQ=YEARLY;BYDAY=TU;BYYEARDAY=71,72;BYSETPOS=1"]) {
      const p = parseRRule(rule, true);
      if (!p.ok) throw new Error(p.message);
      expect(checkedSeries(p.rule, "2026-01-05", "UTC")).toMatchObject({ ok: false, message: expect.stringContaining("BYSETPOS is not supported") });
    }
    // Ordinals up to 52 need no correction: BYSETPOS stays available there.
    const p = parseRRule("FREQ=YEARLY;BYDAY=1MO,-1MO;BYSETPOS=-1", true);
    expect(p.ok && checkedSeries(p.rule, "2026-01-05", "UTC").ok).toBe(true);
  });
});

describe("repeat after completion", () => {
  const at = (s: string) => new Date(s);

  test("the user's local completion date plus the interval", () => {
    expect(nextAfterCompletion("2026-11-01", at("2026-11-25T10:00:00Z"), "UTC", 3, "day")).toBe("2026-11-28");
    expect(nextAfterCompletion(null, at("2026-11-25T10:00:00Z"), "UTC", 2, "week")).toBe("2026-12-09");
  });

  test("month and year steps clamp to the month's last day", () => {
    expect(nextAfterCompletion(null, at("2026-01-31T12:00:00Z"), "UTC", 1, "month")).toBe("2026-02-28");
    expect(nextAfterCompletion(null, at("2024-01-31T12:00:00Z"), "UTC", 1, "month")).toBe("2024-02-29");
    expect(nextAfterCompletion(null, at("2026-03-31T12:00:00Z"), "UTC", 1, "month")).toBe("2026-04-30");
    expect(nextAfterCompletion(null, at("2024-02-29T12:00:00Z"), "UTC", 1, "year")).toBe("2025-02-28");
    expect(nextAfterCompletion(null, at("2024-02-29T12:00:00Z"), "UTC", 4, "year")).toBe("2028-02-29");
  });

  test("Pacific/Auckland and Pacific/Kiritimati users completing near midnight UTC", () => {
    // 10:30Z is 23:30 on the 25th in Auckland (NZDT, +13) and 00:30 on the 26th in Kiritimati (+14).
    expect(nextAfterCompletion(null, at("2026-11-25T10:30:00Z"), "Pacific/Auckland", 1, "day")).toBe("2026-11-26");
    expect(nextAfterCompletion(null, at("2026-11-25T10:30:00Z"), "Pacific/Kiritimati", 1, "day")).toBe("2026-11-27");
    expect(nextAfterCompletion(null, at("2026-11-25T11:30:00Z"), "Pacific/Auckland", 1, "day")).toBe("2026-11-27");
    expect(nextAfterCompletion(null, at("2026-11-25T09:59:59.999Z"), "Pacific/Kiritimati", 1, "day")).toBe("2026-11-26");
    expect(nextAfterCompletion(null, at("2026-11-25T10:30:00Z"), "UTC", 1, "day")).toBe("2026-11-26");
    // Late on the 25th in Honolulu is already the 26th in UTC.
    expect(nextAfterCompletion(null, at("2026-11-26T09:00:00Z"), "Pacific/Honolulu", 1, "day")).toBe("2026-11-26");
  });

  test("a timed deadline keeps its local time of day in the zone", () => {
    // 09:00 NZDT on 21 November; completed 00:30 NZDT on 26 November → 09:00 NZDT on 27 November.
    const next = nextAfterCompletion("2026-11-20T20:00:00.000Z", at("2026-11-25T11:30:00Z"), "Pacific/Auckland", 1, "day");
    expect(next).toBe("2026-11-26T20:00:00.000Z");
    expect(local(next, "Pacific/Auckland")).toBe("2026-11-27T09:00");
  });

  test("across a DST change the local time stays; a time in the gap moves forward by the gap", () => {
    // 09:00 EST deadline, completed on 7 March → 8 March 09:00 EDT.
    expect(nextAfterCompletion("2026-03-01T14:00:00.000Z", at("2026-03-07T20:00:00Z"), "America/New_York", 1, "day")).toBe("2026-03-08T13:00:00.000Z");
    // 02:30 does not exist on 8 March in New York: 03:30 EDT.
    const gap = nextAfterCompletion("2026-03-01T07:30:00.000Z", at("2026-03-07T20:00:00Z"), "America/New_York", 1, "day");
    expect(local(gap, "America/New_York")).toBe("2026-03-08T03:30");
  });
});

// ---------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------

const ZONES = ["UTC", "Europe/Berlin", "America/New_York", "Pacific/Auckland", "Pacific/Kiritimati", "Asia/Kolkata", "Australia/Lord_Howe", "America/St_Johns"];
const DAYS = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"];

const ruleArb = fc
  .record({
    freq: fc.constantFrom("DAILY", "WEEKLY", "MONTHLY", "YEARLY"),
    interval: fc.integer({ min: 1, max: 3 }),
    byday: fc.subarray(DAYS, { minLength: 0, maxLength: 3 }),
    bymonthday: fc.subarray([1, 15, 28, 29, 30, 31, -1], { minLength: 0, maxLength: 2 }),
    count: fc.option(fc.integer({ min: 1, max: 25 }), { nil: null }),
  })
  .map(({ freq, interval, byday, bymonthday, count }) => {
    const parts = [`FREQ=${freq}`];
    if (interval > 1) parts.push(`INTERVAL=${interval}`);
    if (byday.length && (freq === "DAILY" || freq === "WEEKLY")) parts.push(`BYDAY=${byday.join(",")}`);
    if (bymonthday.length && (freq === "MONTHLY" || freq === "YEARLY")) parts.push(`BYMONTHDAY=${bymonthday.join(",")}`);
    if (count !== null) parts.push(`COUNT=${count}`);
    return parts.join(";");
  });

const startArb = fc.record({
  day: fc.integer({ min: 0, max: 3650 }),
  minuteOfDay: fc.option(fc.integer({ min: 0, max: 1439 }), { nil: null }),
  zone: fc.constantFrom(...ZONES),
});

function dtstartOf(s: { day: number; minuteOfDay: number | null; zone: string }): string {
  const date = Temporal.PlainDate.from("2020-01-01").add({ days: s.day });
  if (s.minuteOfDay === null) return date.toString();
  const zdt = date.toZonedDateTime({ timeZone: s.zone, plainTime: Temporal.PlainTime.from({ hour: Math.floor(s.minuteOfDay / 60), minute: s.minuteOfDay % 60 }) });
  return new Date(zdt.epochMilliseconds).toISOString();
}

function trySeries(rule: string, dtstart: string, zone: string): Series | null {
  const p = parseRRule(rule, isDateOnly(dtstart));
  if (!p.ok) throw new Error(`generator made an invalid rule ${rule}: ${p.message}`);
  const c = checkedSeries(p.rule, dtstart, zone);
  return c.ok ? c.series : null; // e.g. FREQ=YEARLY;BYMONTHDAY=31 from a date whose month has 30 days can still match; rare misses are skipped
}

test("seriesFor shares one immutable series per rule, start and zone", () => {
  const p = parseRRule("FREQ=DAILY;COUNT=5", true);
  if (!p.ok) throw new Error(p.message);
  const a = seriesFor(p.rule, "2026-11-24", "UTC");
  expect(seriesFor(p.rule, "2026-11-24", "UTC")).toBe(a);
  expect(seriesFor(p.rule, "2026-11-25", "UTC")).not.toBe(a);
  expect(walk(a, 10)).toEqual(["2026-11-24", "2026-11-25", "2026-11-26", "2026-11-27", "2026-11-28"]);
  expect(walk(seriesFor(p.rule, "2026-11-24", "UTC"), 10)).toEqual(walk(a, 10));
});

describe("properties", () => {
  test("completing N times walks exactly the rule's expansion, strictly increasing", () => {
    fc.assert(
      fc.property(ruleArb, startArb, (rule, start) => {
        const dtstart = dtstartOf(start);
        const s = trySeries(rule, dtstart, start.zone);
        if (!s) return;
        const expanded = s.first(30);
        const walked = walk(s, 30);
        expect(walked).toEqual(expanded);
        for (let i = 1; i < walked.length; i++) expect(s.compare(walked[i - 1]!, walked[i]!)).toBeLessThan(0);
        if (expanded.length < 30) expect(s.nextAfter(expanded[expanded.length - 1]!)).toBeNull();
        // A COUNT-bounded series is listed once and searched: it must agree with the library's
        // own next() on the same rule without COUNT, walked as far.
        if (/COUNT=/.test(rule)) {
          const unbounded = trySeries(rule.replace(/;COUNT=\d+/, ""), dtstart, start.zone)!;
          expect(walk(unbounded, expanded.length)).toEqual(expanded);
        }
      }),
      { numRuns: 150 },
    );
  });

  test("the next occurrence after any point is strictly after it, in the set, and none is skipped", () => {
    fc.assert(
      fc.property(ruleArb, startArb, fc.integer({ min: 0, max: 400 * 24 * 60 }), (rule, start, offsetMinutes) => {
        const dtstart = dtstartOf(start);
        const s = trySeries(rule, dtstart, start.zone);
        if (!s) return;
        const set = s.first(200);
        const base = isDateOnly(dtstart) ? Temporal.PlainDate.from(dtstart).toZonedDateTime({ timeZone: "UTC" }).toInstant() : Temporal.Instant.from(dtstart);
        const pointInstant = base.add({ minutes: offsetMinutes });
        const point = isDateOnly(dtstart) ? pointInstant.toZonedDateTimeISO("UTC").toPlainDate().toString() : new Date(pointInstant.epochMilliseconds).toISOString();
        const last = set[set.length - 1]!;
        if (set.length === 200 && s.compare(point, last) >= 0) return; // beyond what we expanded
        const next = s.nextAfter(point);
        const expected = set.find((o) => s.compare(o, point) > 0) ?? null;
        expect(next).toBe(expected);
        if (next !== null) expect(s.compare(next, point)).toBeGreaterThan(0);
      }),
      { numRuns: 150 },
    );
  });

  test("with exceptions, the walk is the expansion minus the excepted dates", () => {
    fc.assert(
      fc.property(ruleArb, startArb, fc.array(fc.nat(40), { maxLength: 8 }), (rule, start, picks) => {
        const dtstart = dtstartOf(start);
        const s = trySeries(rule, dtstart, start.zone);
        if (!s) return;
        const expanded = s.first(40);
        const exceptions = new Set(picks.filter((i) => i > 0 && i < expanded.length).map((i) => s.dateKey(expanded[i]!)));
        const expected = expanded.filter((o, i) => i === 0 || !exceptions.has(s.dateKey(o)));
        expect(walk(s, expected.length + 1, exceptions).slice(0, expected.length)).toEqual(expected);
      }),
      { numRuns: 100 },
    );
  });

  test("independent oracle: date-only DAILY;INTERVAL=k and WEEKLY;BYDAY sets by plain date arithmetic", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 3650 }), fc.integer({ min: 1, max: 10 }), fc.subarray([1, 2, 3, 4, 5, 6, 7], { minLength: 1 }), (day, k, isoDays) => {
        const start = Temporal.PlainDate.from("2020-01-01").add({ days: day });
        const daily = walk(series(`FREQ=DAILY;INTERVAL=${k}`, start.toString()), 20);
        expect(daily).toEqual(Array.from({ length: 20 }, (_, i) => start.add({ days: i * k }).toString()));
        // Weekly from a Monday-started week: every day of the listed weekdays, from DTSTART on.
        const monday = start.subtract({ days: start.dayOfWeek - 1 });
        const rule = `FREQ=WEEKLY;BYDAY=${isoDays.map((d) => DAYS[d - 1]).join(",")}`;
        const weekly = walk(series(rule, monday.toString()), 15);
        const expected: string[] = [monday.toString()];
        for (let d = monday.add({ days: 1 }); expected.length < 15; d = d.add({ days: 1 })) if (isoDays.includes(d.dayOfWeek)) expected.push(d.toString());
        expect(weekly).toEqual(expected);
      }),
      { numRuns: 100 },
    );
  });

  test("after completion: the local completion date plus the interval, time of day kept", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 3650 * 24 * 60 }),
        fc.constantFrom(...ZONES),
        fc.integer({ min: 1, max: 30 }),
        fc.constantFrom<Unit>("day", "week", "month", "year"),
        fc.option(fc.integer({ min: 0, max: 1439 }), { nil: null }),
        (minutes, zone, interval, unit, dueMinute) => {
          const completedAt = new Date(Date.UTC(2020, 0, 1) + minutes * 60_000);
          const dueAt = dueMinute === null ? null : new Date(Date.UTC(2019, 11, 1) + dueMinute * 60_000).toISOString();
          const next = nextAfterCompletion(dueAt, completedAt, zone, interval, unit);
          const completedOn = Temporal.PlainDate.from(dateOfDue(completedAt.toISOString(), zone));
          const nextDate = Temporal.PlainDate.from(dateOfDue(next, zone));
          expect(isDateOnly(next)).toBe(dueAt === null);
          if (unit === "day") expect(completedOn.until(nextDate, { largestUnit: "days" }).days).toBe(interval);
          if (unit === "week") expect(completedOn.until(nextDate, { largestUnit: "days" }).days).toBe(7 * interval);
          if (unit === "month" || unit === "year") {
            const months = unit === "month" ? interval : 12 * interval;
            expect((nextDate.year - completedOn.year) * 12 + nextDate.month - completedOn.month).toBe(months);
            expect(nextDate.day).toBe(Math.min(completedOn.day, nextDate.daysInMonth));
          }
          if (dueAt !== null) {
            const want = Temporal.Instant.from(dueAt).toZonedDateTimeISO(zone).toPlainTime();
            const got = Temporal.Instant.from(next).toZonedDateTimeISO(zone).toPlainTime();
            // Equal unless the wanted time fell into a DST gap on that date (then it moved forward).
            if (!got.equals(want)) expect(Temporal.PlainTime.compare(got, want)).toBeGreaterThan(0);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
