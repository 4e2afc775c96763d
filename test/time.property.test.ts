import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { localMidnightUtc, zoneOffsetMs } from "../src/core/time";

// core/time.ts reads zone offsets from Temporal. The oracle here is the independent way the
// due-date filters read them before (src/features/tasks/tasks.dates.ts until issue 13): format the
// instant's wall clock in the zone with Intl, read it back as UTC, subtract. Offsets must agree
// everywhere, and above all at the zones' transitions (DST gaps and overlaps, LMT → standard time);
// localMidnightUtc must give what the old filter arithmetic gave on every date in every zone.
// (The old code read its Intl parts back with Date.UTC, which takes years 0-99 for 1900-1999, so in
// years 0000-0099 its bounds were wrong, e.g. due_before=0050-06-01 ended at 0000-01-01; the oracle
// uses setUTCFullYear, and the last test pins the right answer there.)

const ZONES = Intl.supportedValuesOf("timeZone");
const formatters = new Map<string, Intl.DateTimeFormat>();

/** Epoch milliseconds of a UTC wall clock; setUTCFullYear, because Date.UTC reads years 0-99 as 1900-1999. */
function utcMs(y: number, mo: number, d: number, h = 0, mi = 0, s = 0): number {
  const t = new Date(0);
  t.setUTCFullYear(y, mo - 1, d);
  t.setUTCHours(h, mi, s, 0);
  return t.getTime();
}

/** The oracle: the offset of `tz` at an instant from Intl's wall clock, in milliseconds. */
function intlOffsetMs(instant: number, tz: string): number {
  let f = formatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", { timeZone: tz, hourCycle: "h23", year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit" });
    formatters.set(tz, f);
  }
  const p: Record<string, number> = {};
  for (const part of f.formatToParts(new Date(instant))) if (part.type !== "literal") p[part.type] = Number(part.value);
  return utcMs(p.year!, p.month!, p.day!, p.hour!, p.minute!, p.second!) - Math.floor(instant / 1000) * 1000;
}

// The old localMidnightUtc, on the oracle's offsets (read within the years Intl writes plainly).
const OFFSET_FROM = utcMs(1, 1, 2);
const OFFSET_UNTIL = utcMs(9999, 12, 30);
function oldLocalMidnightUtc(date: string, tz: string, days = 0): string {
  const [y, m, d] = date.split("-").map(Number) as [number, number, number];
  const off = (t: number) => intlOffsetMs(Math.min(Math.max(t, OFFSET_FROM), OFFSET_UNTIL), tz);
  const wall = utcMs(y, m, d + days);
  let t = wall - off(wall);
  t = wall - off(t);
  if (t < utcMs(0, 1, 1)) return "0000-01-01T00:00:00.000Z";
  if (t >= utcMs(10000, 1, 1)) return "9999-12-31T24:00:00.000Z";
  return new Date(t).toISOString();
}

const zone = fc.constantFrom(...ZONES);
// Instants of years 1-9999 (the years instants are stored in, past year 0's first day).
const instant = fc.integer({ min: OFFSET_FROM, max: OFFSET_UNTIL });

/** A zone's first transition (offset change) after 1 January of `year`, as epoch milliseconds, if any. */
function transitionAfter(tz: string, year: number): number | null {
  const start = Temporal.PlainDate.from({ year, month: 1, day: 1 }).toZonedDateTime({ timeZone: tz });
  const next = start.getTimeZoneTransition("next");
  return next ? next.epochMilliseconds : null;
}

// Instants next to a zone's transitions: the gap or overlap itself and its edges.
const nearTransition = fc
  .record({ tz: zone, year: fc.integer({ min: 1850, max: 2040 }), shift: fc.constantFrom(0, -1, 1, -1000, 1000, -1_800_000, 1_800_000, -3_600_000, 3_600_000, -86_400_000, 86_400_000) })
  .map(({ tz, year, shift }) => ({ tz, t: (transitionAfter(tz, year) ?? utcMs(year, 6, 1)) + shift }));

/** YYYY-MM-DD of epoch milliseconds, for years 0-9999. */
const dateOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

describe("zone offsets (Temporal) agree with Intl's wall clock", () => {
  test("at random instants of years 1-9999 in random zones", () => {
    fc.assert(
      fc.property(zone, instant, (tz, t) => {
        expect(zoneOffsetMs(t, tz)).toBe(intlOffsetMs(t, tz));
      }),
      { numRuns: 3000 },
    );
  });

  test("around every kind of transition: DST gaps and overlaps, LMT to standard time", () => {
    fc.assert(
      fc.property(nearTransition, ({ tz, t }) => {
        expect(zoneOffsetMs(t, tz)).toBe(intlOffsetMs(t, tz));
      }),
      { numRuns: 3000 },
    );
  });
});

describe("localMidnightUtc gives what the due-date filters always gave", () => {
  test("random dates of years 0-9999 in random zones, and the day after", () => {
    fc.assert(
      fc.property(zone, fc.integer({ min: utcMs(0, 1, 1), max: utcMs(9999, 12, 31) }), fc.constantFrom(0, 1), (tz, t, days) => {
        const date = dateOf(t);
        expect(localMidnightUtc(date, tz, days)).toBe(oldLocalMidnightUtc(date, tz, days));
      }),
      { numRuns: 2000 },
    );
  });

  test("the local dates on both sides of a transition (a midnight skipped or repeated included)", () => {
    fc.assert(
      fc.property(nearTransition, fc.constantFrom(0, 1), ({ tz, t }, days) => {
        const local = Temporal.Instant.fromEpochMilliseconds(t).toZonedDateTimeISO(tz).toPlainDate().toString();
        expect(localMidnightUtc(local, tz, days)).toBe(oldLocalMidnightUtc(local, tz, days));
      }),
      { numRuns: 3000 },
    );
  });

  test("known midnights that do not exist or exist twice, and the ends of the calendar", () => {
    const cases: [string, string][] = [
      ["2018-11-04", "America/Sao_Paulo"], // 00:00 → 01:00
      ["2018-02-17", "America/Sao_Paulo"], // 00:00 → 23:00 the day before
      ["1912-01-01", "Africa/Abidjan"], // LMT → GMT at midnight
      ["2011-12-30", "Pacific/Apia"], // a whole day skipped
      ["1939-11-19", "Africa/Algiers"],
      ["0000-01-01", "Pacific/Kiritimati"],
      ["0000-01-01", "Pacific/Pago_Pago"],
      ["9999-12-31", "Pacific/Kiritimati"],
      ["9999-12-31", "Pacific/Pago_Pago"],
      ["0050-06-01", "UTC"],
    ];
    for (const [date, tz] of cases) for (const days of [0, 1]) expect(localMidnightUtc(date, tz, days)).toBe(oldLocalMidnightUtc(date, tz, days));
  });

  test("years 0000-0099 are years, not 1900-1999", () => {
    expect(localMidnightUtc("0050-06-01", "UTC", 1)).toBe("0050-06-02T00:00:00.000Z");
    expect(localMidnightUtc("0099-12-31", "Europe/Paris")).toBe("0099-12-30T23:50:39.000Z"); // Paris mean time, +00:09:21
    expect(localMidnightUtc("0000-01-01", "America/New_York")).toBe("0000-01-01T04:56:02.000Z"); // New York mean time, -04:56:02
  });
});
