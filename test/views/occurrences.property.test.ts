// The calendar's window read of a series (Series.occurrencesThrough: one library window query)
// against the engine's own step-by-step answer (nextAfter, repeated): the same occurrences, for
// date-only and timed series in several zones, with skipped dates, COUNT and UNTIL.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { parseRRule, Series } from "../../src/features/recurrence/recurrence.engine";

const RULES = [
  "FREQ=DAILY",
  "FREQ=DAILY;INTERVAL=3",
  "FREQ=WEEKLY;BYDAY=MO,WE,FR",
  "FREQ=WEEKLY;INTERVAL=2;BYDAY=TU",
  "FREQ=MONTHLY;BYMONTHDAY=31",
  "FREQ=MONTHLY;BYDAY=-1FR",
  "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29",
  "FREQ=DAILY;COUNT=20",
  "FREQ=WEEKLY;UNTIL=20270301",
  "FREQ=DAILY;BYHOUR=9,17",
];
const ZONES = ["UTC", "America/New_York", "Europe/Berlin", "Asia/Kolkata", "Pacific/Auckland"];

const addDays = (d: string, n: number) => Temporal.PlainDate.from(d).add({ days: n }).toString();

describe("occurrencesThrough", () => {
  test("equals repeated nextAfter", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...RULES),
        fc.constantFrom(...ZONES),
        fc.boolean(),
        fc.integer({ min: 0, max: 900 }),
        fc.integer({ min: 0, max: 400 }),
        fc.integer({ min: 1, max: 62 }),
        fc.array(fc.integer({ min: 0, max: 120 }), { maxLength: 5 }),
        (rule, zone, dateOnly, startOffset, afterOffset, span, skips) => {
          if (dateOnly && rule.includes("BYHOUR")) return;
          const startDate = addDays("2025-01-01", startOffset);
          const dtstart = dateOnly ? startDate : Temporal.PlainDate.from(startDate).toZonedDateTime({ timeZone: zone, plainTime: "08:15" }).toInstant().toString({ smallestUnit: "millisecond" });
          const parsed = parseRRule(rule, dateOnly);
          if (!parsed.ok) throw new Error(parsed.message);
          const series = new Series(parsed.rule, dtstart, zone);
          const first = series.first(1)[0]!;
          const after = afterOffset % 3 === 0 ? first : addDays(startDate, afterOffset);
          const through = addDays(startDate, afterOffset + span);
          const exceptions = new Set(skips.map((n) => addDays(startDate, afterOffset + n)));
          const expected: string[] = [];
          let cur = after;
          for (let i = 0; i < 500; i++) {
            const next = series.nextAfter(cur, exceptions);
            if (next === null || series.dateKey(next) > through) break;
            expected.push(next);
            cur = next;
          }
          expect(series.occurrencesThrough(after, through, exceptions, 500)).toEqual(expected);
        },
      ),
      { numRuns: 300 },
    );
  });
});
