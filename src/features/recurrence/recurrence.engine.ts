/**
 * The pure recurrence engine: no database, no HTTP, no clock of its own.
 *
 * A deadline (`due_at`) is either a calendar date (`2026-12-01`) or an instant
 * (`2026-12-01T09:00:00.000Z`). An RRULE series keeps the form of its first occurrence
 * (DTSTART):
 * - a date-only series recurs as plain dates (no time zone can move them);
 * - a timed series recurs at DTSTART's wall-clock time in the series' IANA zone, so a 09:00
 *   task stays at 09:00 local across DST changes. Following RFC 5545 §3.3.10, an occurrence
 *   whose local time does not exist (inside a DST gap) is omitted and does not count towards
 *   COUNT; an ambiguous local time (DST fall-back) is the earlier of the two instants.
 *
 * Occurrences are expanded by `rrule-temporal` on the runtime's native Temporal; every
 * computation names its time zone explicitly, so the process TZ never matters.
 * The RRULE text is validated here first, strictly: the library is lenient (it ignores
 * unknown parts, accepts COUNT with UNTIL, …) and a typo must never pass silently.
 */
import { RRuleTemporal } from "rrule-temporal";
import { dateOfDue, isDateOnly, isoOf } from "../../core/time";

export type Unit = "day" | "week" | "month" | "year";
export const UNITS: readonly Unit[] = ["day", "week", "month", "year"];

/** Upper bounds: a COUNT-bounded series is expanded from its start, so COUNT stays modest. */
export const MAX_COUNT = 1000;
export const MAX_INTERVAL = 1000;
export const MAX_RRULE_LENGTH = 500;

// The deadline forms and their zone arithmetic live in core/time.ts (one time module); re-exported
// for the engine's callers.
export { dateOfDue, isDateOnly };

// ---------------------------------------------------------------------------------------------
// RRULE validation
// ---------------------------------------------------------------------------------------------

const WEEKDAYS = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"];
const SUPPORTED_FREQ = ["DAILY", "WEEKLY", "MONTHLY", "YEARLY"];
const SUB_DAILY_FREQ = ["HOURLY", "MINUTELY", "SECONDLY"];

export type Freq = "DAILY" | "WEEKLY" | "MONTHLY" | "YEARLY";

/** A validated RRULE: its canonical text and the parts the engine needs to look at. */
export interface ParsedRule {
  /** Upper-case `NAME=VALUE;…` in the order given, without an `RRULE:` prefix. */
  text: string;
  freq: Freq;
  count: number | null;
  /** UNTIL as written: `YYYYMMDD` or `YYYYMMDDTHHMMSSZ`. */
  until: string | null;
  hasTimeParts: boolean;
}

export type RuleCheck = { ok: true; rule: ParsedRule } | { ok: false; message: string };

function intIn(s: string, min: number, max: number, allowNegative = false): boolean {
  const m = /^([+-]?)(\d{1,4})$/.exec(s);
  if (!m) return false;
  if (m[1] === "-" && !allowNegative) return false;
  if (m[1] === "+" && !allowNegative) return false;
  const n = Number(m[2]);
  if (n === 0) return min === 0 && m[1] === "";
  return n >= Math.max(min, 1) && n <= max;
}

function validUntil(v: string): boolean {
  const m = /^(\d{4})(\d{2})(\d{2})(?:T(\d{2})(\d{2})(\d{2})Z)?$/.exec(v);
  if (!m) return false;
  try {
    Temporal.PlainDate.from({ year: Number(m[1]), month: Number(m[2]), day: Number(m[3]) }, { overflow: "reject" });
  } catch {
    return false;
  }
  if (m[4] !== undefined && (Number(m[4]) > 23 || Number(m[5]) > 59 || Number(m[6]) > 59)) return false;
  return true;
}

/**
 * Validates an RFC 5545 RRULE body (`FREQ=WEEKLY;BYDAY=MO,WE`). Case-insensitive; an `RRULE:`
 * prefix is tolerated. Sub-daily frequencies are refused (a task is due on a day or at a time,
 * not every few minutes). `dateOnly` series may not name a time of day.
 */
export function parseRRule(input: string, dateOnly: boolean): RuleCheck {
  const fail = (message: string): RuleCheck => ({ ok: false, message });
  if (input.length > MAX_RRULE_LENGTH) return fail(`at most ${MAX_RRULE_LENGTH} characters`);
  let body = input.trim().toUpperCase();
  if (body.startsWith("RRULE:")) body = body.slice(6);
  if (body === "") return fail("the rule is empty");
  if (/[\s\r\n]/.test(body)) return fail("the rule must be one RRULE body without spaces or line breaks (no DTSTART)");
  const parts = new Map<string, string>();
  for (const part of body.split(";")) {
    const eq = part.indexOf("=");
    if (eq <= 0 || eq === part.length - 1) return fail(`"${part}" is not NAME=VALUE`);
    const name = part.slice(0, eq);
    const value = part.slice(eq + 1);
    if (parts.has(name)) return fail(`${name} is given twice`);
    parts.set(name, value);
  }
  const freq = parts.get("FREQ");
  if (freq === undefined) return fail("FREQ is required");
  if (SUB_DAILY_FREQ.includes(freq)) return fail(`FREQ=${freq} is not supported (use DAILY, WEEKLY, MONTHLY or YEARLY)`);
  if (!SUPPORTED_FREQ.includes(freq)) return fail(`FREQ=${freq} is not a frequency (use DAILY, WEEKLY, MONTHLY or YEARLY)`);
  const list = (v: string) => v.split(",");
  let hasBy = false;
  let hasTimeParts = false;
  for (const [name, value] of parts) {
    switch (name) {
      case "FREQ":
        break;
      case "INTERVAL":
        if (!intIn(value, 1, MAX_INTERVAL)) return fail(`INTERVAL must be an integer from 1 to ${MAX_INTERVAL}`);
        break;
      case "COUNT":
        if (!intIn(value, 1, MAX_COUNT)) return fail(`COUNT must be an integer from 1 to ${MAX_COUNT}`);
        break;
      case "UNTIL":
        if (!validUntil(value)) return fail("UNTIL must be a real date YYYYMMDD or a UTC date-time YYYYMMDDTHHMMSSZ");
        break;
      case "BYSECOND":
      case "BYMINUTE":
      case "BYHOUR": {
        const max = name === "BYHOUR" ? 23 : 59;
        if (!list(value).every((x) => intIn(x, 0, max))) return fail(`${name} values must be integers from 0 to ${max}`);
        if (dateOnly) return fail(`${name} needs a task whose due_at has a time of day; this one is date-only`);
        hasBy = true;
        hasTimeParts = true;
        break;
      }
      case "BYDAY":
        for (const x of list(value)) {
          const m = /^([+-]?\d{1,2})?(MO|TU|WE|TH|FR|SA|SU)$/.exec(x);
          if (!m) return fail(`BYDAY value "${x}" is not a weekday (MO..SU, optionally with an ordinal like 1MO or -1FR)`);
          if (m[1] !== undefined) {
            if (!intIn(m[1], 1, 53, true)) return fail(`BYDAY ordinal in "${x}" must be 1..53 or -53..-1`);
            if (freq !== "MONTHLY" && freq !== "YEARLY") return fail("an ordinal BYDAY (like 1MO) needs FREQ=MONTHLY or YEARLY");
            if (freq === "YEARLY" && parts.has("BYWEEKNO")) return fail("an ordinal BYDAY cannot be combined with BYWEEKNO");
          }
        }
        hasBy = true;
        break;
      case "BYMONTHDAY":
        if (!list(value).every((x) => intIn(x, 1, 31, true))) return fail("BYMONTHDAY values must be 1..31 or -31..-1");
        if (freq === "WEEKLY") return fail("BYMONTHDAY cannot be used with FREQ=WEEKLY");
        hasBy = true;
        break;
      case "BYYEARDAY":
        if (!list(value).every((x) => intIn(x, 1, 366, true))) return fail("BYYEARDAY values must be 1..366 or -366..-1");
        if (freq !== "YEARLY") return fail("BYYEARDAY needs FREQ=YEARLY");
        hasBy = true;
        break;
      case "BYWEEKNO":
        if (!list(value).every((x) => intIn(x, 1, 53, true))) return fail("BYWEEKNO values must be 1..53 or -53..-1");
        if (freq !== "YEARLY") return fail("BYWEEKNO needs FREQ=YEARLY");
        hasBy = true;
        break;
      case "BYMONTH":
        if (!list(value).every((x) => intIn(x, 1, 12))) return fail("BYMONTH values must be 1..12");
        hasBy = true;
        break;
      case "BYSETPOS":
        if (!list(value).every((x) => intIn(x, 1, 366, true))) return fail("BYSETPOS values must be 1..366 or -366..-1");
        break;
      case "WKST":
        if (!WEEKDAYS.includes(value)) return fail("WKST must be one of MO, TU, WE, TH, FR, SA, SU");
        break;
      default:
        return fail(`${name} is not a supported RRULE part`);
    }
  }
  if (parts.has("COUNT") && parts.has("UNTIL")) return fail("COUNT and UNTIL cannot both be given");
  if (parts.has("BYSETPOS") && !hasBy) return fail("BYSETPOS needs another BYxxx part");
  // RFC 5545's grammar allows a value to repeat in a BYxxx list (BYDAY=1SA,1SA); it means the
  // same as once, so the canonical text keeps its first appearance only.
  for (const [name, value] of parts) {
    if (name.startsWith("BY")) parts.set(name, [...new Set(list(value))].join(","));
  }
  return {
    ok: true,
    rule: {
      text: [...parts].map(([k, v]) => `${k}=${v}`).join(";"),
      freq: freq as Freq,
      count: parts.has("COUNT") ? Number(parts.get("COUNT")) : null,
      until: parts.get("UNTIL") ?? null,
      hasTimeParts,
    },
  };
}

// ---------------------------------------------------------------------------------------------
// RRULE series
// ---------------------------------------------------------------------------------------------

/** Date-only series are expanded in UTC at midnight: a plain calendar, no DST, no offsets. */
const DATE_ZONE = "UTC";

// ---------------------------------------------------------------------------------------------
// FREQ=YEARLY shapes rrule-temporal 2.2.8 gets wrong
//
// Compared with python-dateutil (test/fixtures/rrule-yearly-dateutil.json, test/recurrence.engine.test.ts):
// - an ordinal BYDAY without BYMONTH (53WE, -53MO) is placed by counting weeks from 1 January
//   (31 December) without checking the year, so a year with only 52 Wednesdays gets a "53rd"
//   one in January of the next year (-53: in December of the year before);
// - BYYEARDAY is added to the BYDAY and BYMONTHDAY days, and BYMONTHDAY to ordinal BYDAY days,
//   where RFC 5545 §3.3.10 (table, note 2) has BYDAY and BYMONTHDAY limit them.
// In these shapes the library's occurrences include every right one, so the series drops the
// days that fail the rule (yearlyDayMatcher) and counts COUNT itself. BYSETPOS would pick from
// the library's wrong set, so it is refused in these shapes (checkedSeries).
// ---------------------------------------------------------------------------------------------

type Parts = ReadonlyMap<string, string>;

function partsOf(text: string): Parts {
  return new Map(text.split(";").map((p) => p.split("=") as [string, string]));
}

/** Whether the library needs yearlyDayMatcher's correction for this rule (see above). */
function yearlyShapeNeedsFilter(parts: Parts): boolean {
  if (parts.get("FREQ") !== "YEARLY" || parts.has("BYWEEKNO")) return false;
  const ordinals = (parts.get("BYDAY") ?? "").split(",").filter((t) => /\d/.test(t));
  // Ordinals up to 52 always fall inside the year; only a 53rd can spill.
  const yearOrdinals = ordinals.length > 0 && !parts.has("BYMONTH");
  const spills = yearOrdinals && ordinals.some((t) => /^[+-]?53/.test(t));
  return spills || (yearOrdinals && (parts.has("BYMONTHDAY") || parts.has("BYYEARDAY"))) || (parts.has("BYYEARDAY") && (parts.has("BYDAY") || parts.has("BYMONTHDAY")));
}

/** What yearlyDayMatcher looks at; a Temporal.PlainDate is one. */
interface DayFacts {
  readonly month: number;
  readonly day: number;
  readonly dayOfYear: number;
  readonly daysInYear: number;
  readonly daysInMonth: number;
  /** ISO: 1 = Monday */
  readonly dayOfWeek: number;
}

/**
 * Whether a day belongs to a FREQ=YEARLY rule without BYWEEKNO, by RFC 5545 §3.3.10: every BYxxx
 * part present must hold; an ordinal BYDAY (1MO, -53WE) counts that weekday within the month
 * when BYMONTH is given, else within the year (a year without a 53rd such day has none).
 */
export function yearlyDayMatcher(text: string): (d: DayFacts) => boolean {
  const parts = partsOf(text);
  const nums = (name: string) => (parts.get(name)?.split(",") ?? []).map(Number);
  const months = new Set(nums("BYMONTH"));
  const yearDays = nums("BYYEARDAY");
  const monthDays = nums("BYMONTHDAY");
  const byMonth = parts.has("BYMONTH");
  const days = (parts.get("BYDAY")?.split(",") ?? []).map((t) => {
    const m = /^([+-]?\d{1,2})?(MO|TU|WE|TH|FR|SA|SU)$/.exec(t)!;
    return { n: m[1] === undefined ? 0 : Number(m[1]), weekday: WEEKDAYS.indexOf(m[2]!) + 1 };
  });
  const matches = (values: number[], pos: number, len: number) => values.some((v) => (v > 0 ? pos === v : pos === len + v + 1));
  return (d) => {
    if (byMonth && !months.has(d.month)) return false;
    if (yearDays.length && !matches(yearDays, d.dayOfYear, d.daysInYear)) return false;
    if (monthDays.length && !matches(monthDays, d.day, d.daysInMonth)) return false;
    if (days.length === 0) return true;
    const [pos, len] = byMonth ? [d.day, d.daysInMonth] : [d.dayOfYear, d.daysInYear];
    return days.some((t) => t.weekday === d.dayOfWeek && (t.n === 0 || (t.n > 0 ? Math.ceil(pos / 7) === t.n : Math.ceil((len - pos + 1) / 7) === -t.n)));
  };
}

/**
 * A filtered series scans for the next kept day at most this many periods past the last one: the
 * Gregorian calendar repeats every 400 years, so a rule that keeps nothing in 400 of its periods
 * keeps nothing ever. Dates past year 9999 are beyond what a YYYY-MM-DD deadline can say.
 */
const CALENDAR_CYCLE_YEARS = 400;
const LAST_YEAR = 9999;

/**
 * Whether a corrected-shape rule matches any day in its years (from `firstYear`, every
 * `interval` years), by plain day arithmetic: a rule that matches nothing is refused in a few
 * milliseconds instead of letting the library expand 400 years of candidates (measured: ~1 s for
 * 53 ordinals, BYMONTHDAY and BYYEARDAY that never meet). A day matched in the first year comes
 * back in a later one of the same 400-year cycle.
 */
function yearlyPatternMatchesSomeDay(text: string, firstYear: number, interval: number): boolean {
  const match = yearlyDayMatcher(text);
  const facts = { month: 0, day: 0, dayOfYear: 0, daysInYear: 0, daysInMonth: 0, dayOfWeek: 0 };
  for (let i = 0; i < CALENDAR_CYCLE_YEARS; i++) {
    const year = firstYear + i * interval;
    if (year > LAST_YEAR) break;
    const jan1 = Temporal.PlainDate.from({ year, month: 1, day: 1 });
    facts.daysInYear = jan1.daysInYear;
    facts.dayOfWeek = jan1.dayOfWeek;
    facts.dayOfYear = 0;
    for (let month = 1; month <= 12; month++) {
      facts.month = month;
      facts.daysInMonth = month === 2 ? (jan1.inLeapYear ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;
      for (let day = 1; day <= facts.daysInMonth; day++) {
        facts.day = day;
        facts.dayOfYear++;
        if (match(facts)) return true;
        facts.dayOfWeek = facts.dayOfWeek === 7 ? 1 : facts.dayOfWeek + 1;
      }
    }
  }
  return false;
}

export class SeriesError extends Error {}

/**
 * One RRULE series: the rule, its first occurrence (DTSTART, a date or an instant) and its
 * time zone. DTSTART is always an occurrence (RFC 5545: it counts as the first one), even when
 * it does not match the rule's pattern.
 */
export class Series {
  readonly dateOnly: boolean;
  private readonly rule: RRuleTemporal;
  private readonly zone: string;
  /** The days kept of the library's occurrences, for the shapes it gets wrong; null otherwise. */
  private readonly keep: ((d: Temporal.PlainDate) => boolean) | null;
  private readonly start: Temporal.ZonedDateTime;
  private readonly startNs: bigint;
  private readonly periodYears: number;

  constructor(
    readonly parsed: ParsedRule,
    readonly dtstart: string,
    readonly timezone: string,
  ) {
    this.dateOnly = isDateOnly(dtstart);
    this.zone = this.dateOnly ? DATE_ZONE : timezone;
    const start = this.dateOnly
      ? Temporal.PlainDate.from(dtstart).toZonedDateTime({ timeZone: DATE_ZONE })
      : Temporal.Instant.from(dtstart).toZonedDateTimeISO(timezone);
    let text = parsed.text;
    if (this.dateOnly && parsed.until && parsed.until.includes("T")) {
      // A date-only series ends on the date UNTIL falls on in the series' zone.
      const untilDate = Temporal.Instant.from(untilIso(parsed.until)).toZonedDateTimeISO(timezone).toPlainDate();
      text = text.replace(/UNTIL=[^;]+/, `UNTIL=${untilDate.toString().replaceAll("-", "")}`);
    }
    const parts = partsOf(text);
    // Stored rules from before the correction with BYSETPOS in such a shape keep the library's answer.
    this.keep = yearlyShapeNeedsFilter(parts) && !parts.has("BYSETPOS") ? yearlyDayMatcher(text) : null;
    // COUNT counts kept occurrences, so the library must not apply it.
    if (this.keep && parsed.count !== null) {
      text = [...parts]
        .filter(([name]) => name !== "COUNT")
        .map(([name, value]) => `${name}=${value}`)
        .join(";");
    }
    this.start = start;
    this.startNs = start.epochNanoseconds;
    this.periodYears = Number(parts.get("INTERVAL") ?? 1);
    this.rule = new RRuleTemporal({ rruleString: text, dtstart: start, includeDtstart: true, tzid: this.zone });
  }

  /**
   * The kept occurrences from DTSTART in order, each once, while `visit` answers true. DTSTART
   * is always kept (RFC 5545: it is the first occurrence); other days must match the rule and
   * lie in a year of the series (INTERVAL). A 53rd weekday the library spills into the next
   * year arrives before that year's own earlier days, so days are held until the library has
   * moved two years past them, then passed on sorted. Stops after COUNT, when
   * CALENDAR_CYCLE_YEARS periods pass without a kept day, or past LAST_YEAR.
   */
  private scanKept(visit: (z: Temporal.ZonedDateTime) => boolean): void {
    const keep = this.keep!;
    const count = this.parsed.count;
    const firstYear = this.start.year;
    let kept = 0;
    let lastNs = this.startNs - 1n;
    let lastYear = firstYear;
    let year = firstYear;
    let stopped = false;
    const held = new Map<bigint, Temporal.ZonedDateTime>([[this.startNs, this.start]]);
    const release = (beforeYear: number) => {
      const ready = [...held.values()].filter((z) => z.year < beforeYear).sort(Temporal.ZonedDateTime.compare);
      for (const z of ready) {
        held.delete(z.epochNanoseconds);
        if (stopped || z.epochNanoseconds <= lastNs) continue;
        lastNs = z.epochNanoseconds;
        lastYear = z.year;
        if ((count !== null && ++kept > count) || !visit(z)) stopped = true;
      }
    };
    this.rule.all((z) => {
      if (z.year > year) {
        year = z.year;
        release(year - 1);
      }
      if (stopped || z.year > LAST_YEAR || z.year > lastYear + CALENDAR_CYCLE_YEARS * this.periodYears) return false;
      const ns = z.epochNanoseconds;
      if (ns === this.startNs || (ns > this.startNs && (z.year - firstYear) % this.periodYears === 0 && keep(z.toPlainDate()))) held.set(ns, z);
      return true;
    });
    release(Infinity);
  }

  /** The point of the series a deadline stands for, as a ZonedDateTime in the series' zone. */
  private pointOf(due: string): Temporal.ZonedDateTime {
    if (this.dateOnly) {
      const date = isDateOnly(due) ? due : dateOfDue(due, this.timezone);
      return Temporal.PlainDate.from(date).toZonedDateTime({ timeZone: DATE_ZONE });
    }
    if (isDateOnly(due)) return Temporal.PlainDate.from(due).toZonedDateTime({ timeZone: this.timezone });
    return Temporal.Instant.from(due).toZonedDateTimeISO(this.timezone);
  }

  private dueOf(zdt: Temporal.ZonedDateTime): string {
    return this.dateOnly ? zdt.toPlainDate().toString() : isoOf(zdt);
  }

  /** The local calendar date of an occurrence (the key exceptions are written in). */
  private dateOf(zdt: Temporal.ZonedDateTime): string {
    return zdt.toPlainDate().toString();
  }

  /**
   * A COUNT-bounded series is expanded from DTSTART on every query (COUNT counts from there), so
   * it is listed once (at most MAX_COUNT occurrences) and searched; see `seriesFor` for reuse.
   */
  private listed: { zdts: Temporal.ZonedDateTime[]; ns: bigint[] } | null = null;

  /**
   * The library's list with DTSTART first: rrule-temporal 2.2.8 leaves DTSTART out when it falls
   * on a BYDAY weekday without being its year ordinal (FREQ=YEARLY;BYDAY=1SU from Sunday 1 May
   * 2005), and then also counts one occurrence too many.
   */
  private withStart(zdts: Temporal.ZonedDateTime[], max: number | null): Temporal.ZonedDateTime[] {
    if (zdts[0]?.epochNanoseconds === this.startNs) return zdts;
    const out = [this.start, ...zdts];
    return max === null ? out : out.slice(0, max);
  }

  private next(after: Temporal.ZonedDateTime, inclusive: boolean): Temporal.ZonedDateTime | null {
    // Nothing comes before DTSTART, and DTSTART always is an occurrence (see withStart).
    const a = after.epochNanoseconds;
    if (a < this.startNs || (inclusive && a === this.startNs)) return this.start;
    try {
      if (this.parsed.count !== null) {
        if (!this.listed) {
          let zdts: Temporal.ZonedDateTime[];
          if (this.keep) {
            zdts = [];
            this.scanKept((z) => (zdts.push(z), true));
          } else {
            zdts = this.withStart(this.rule.all(), this.parsed.count);
          }
          this.listed = { zdts, ns: zdts.map((z) => z.epochNanoseconds) };
        }
        const { zdts, ns } = this.listed;
        let lo = 0;
        let hi = ns.length;
        while (lo < hi) {
          const mid = (lo + hi) >> 1;
          if (inclusive ? ns[mid]! < a : ns[mid]! <= a) lo = mid + 1;
          else hi = mid;
        }
        return zdts[lo] ?? null;
      }
      if (this.keep) {
        // The library's next() walks from DTSTART on every call; one scan to the answer is cheaper
        // than calling it once per dropped day.
        let found: Temporal.ZonedDateTime | null = null;
        this.scanKept((z) => {
          if (inclusive ? z.epochNanoseconds < a : z.epochNanoseconds <= a) return true;
          found = z;
          return false;
        });
        return found;
      }
      return this.rule.next(after, inclusive);
    } catch (e) {
      throw new SeriesError(`cannot expand the rule: ${(e as Error).message}`);
    }
  }

  /**
   * The first occurrence strictly after the deadline `due` whose date is not an exception, as a
   * deadline of the series' form; null when COUNT/UNTIL leave none. A `due` of the other form is
   * compared at the series' granularity: a date-only `due` in a timed series means "after that
   * whole local day", a timed `due` in a date-only series means "after its local date".
   */
  nextAfter(due: string, exceptions: ReadonlySet<string> = new Set()): string | null {
    let cursor = this.pointOf(due);
    let inclusive = false;
    if (!this.dateOnly && isDateOnly(due)) {
      cursor = Temporal.PlainDate.from(due).add({ days: 1 }).toZonedDateTime({ timeZone: this.timezone });
      inclusive = true;
    }
    // Each round either answers or passes one occurrence on an excepted date; exceptions are
    // finite, so this ends. The cap is a guard against a pathological rule, not a limit.
    for (let i = 0; i < 100_000; i++) {
      const occ = this.next(cursor, inclusive);
      if (!occ) return null;
      if (!exceptions.has(this.dateOf(occ))) return this.dueOf(occ);
      cursor = occ;
      inclusive = false;
    }
    throw new SeriesError("too many excepted occurrences in a row");
  }

  /**
   * The occurrences after the deadline `after` (as nextAfter reads it) whose local date in the
   * series' zone is at most `through`, skipping excepted dates, at most `max`, as deadlines (the
   * calendar's read). A plain rule is asked once for the window: the library's next() walks from
   * DTSTART on every call (~1 ms a call for a series a few weeks old). COUNT-bounded and corrected
   * yearly shapes go through nextAfter (a listed series, or one scan).
   */
  occurrencesThrough(after: string, through: string, exceptions: ReadonlySet<string>, max: number): string[] {
    const out: string[] = [];
    const end = Temporal.PlainDate.from(through).add({ days: 1 }).toZonedDateTime({ timeZone: this.zone });
    if (this.parsed.count !== null || this.keep) {
      let cur = after;
      while (out.length < max) {
        const next = this.nextAfter(cur, exceptions);
        if (next === null || Temporal.ZonedDateTime.compare(this.pointOf(next), end) >= 0) break;
        out.push(next);
        cur = next;
      }
      return out;
    }
    let from = this.pointOf(after);
    if (!this.dateOnly && isDateOnly(after)) from = Temporal.PlainDate.from(after).add({ days: 1 }).toZonedDateTime({ timeZone: this.timezone }).subtract({ nanoseconds: 1 });
    if (Temporal.ZonedDateTime.compare(from, end) >= 0) return out;
    let zdts: Temporal.ZonedDateTime[];
    try {
      zdts = this.rule.between(from, end, false);
    } catch (e) {
      throw new SeriesError(`cannot expand the rule: ${(e as Error).message}`);
    }
    // DTSTART is always an occurrence (withStart), whether or not the library's window has it.
    if (this.startNs > from.epochNanoseconds && Temporal.ZonedDateTime.compare(this.start, end) < 0 && zdts[0]?.epochNanoseconds !== this.startNs) zdts = [this.start, ...zdts];
    for (const z of zdts) {
      if (z.epochNanoseconds <= from.epochNanoseconds || Temporal.ZonedDateTime.compare(z, end) >= 0) continue;
      if (exceptions.has(this.dateOf(z))) continue;
      out.push(this.dueOf(z));
      if (out.length >= max) break;
    }
    return out;
  }

  /** The occurrences on a local date, as deadlines (empty when the series has none that day). */
  occurrencesOn(date: string): string[] {
    const start = Temporal.PlainDate.from(date).toZonedDateTime({ timeZone: this.zone });
    const end = Temporal.PlainDate.from(date).add({ days: 1 }).toZonedDateTime({ timeZone: this.zone });
    const out: string[] = [];
    let occ = this.next(start, true);
    while (occ && Temporal.ZonedDateTime.compare(occ, end) < 0) {
      out.push(this.dueOf(occ));
      occ = this.next(occ, false);
    }
    return out;
  }

  /** Orders two deadlines at the series' granularity: negative, zero or positive. */
  compare(a: string, b: string): number {
    return Temporal.ZonedDateTime.compare(this.pointOf(a), this.pointOf(b));
  }

  /** The local date (in the series' zone) of a deadline: the key an exception is written in. */
  dateKey(due: string): string {
    return this.dateOf(this.pointOf(due));
  }

  /** The first `n` occurrences, from DTSTART (for tests and checks). */
  first(n: number): string[] {
    try {
      if (this.keep) {
        const out: string[] = [];
        if (n > 0) this.scanKept((z) => out.push(this.dueOf(z)) < n);
        return out;
      }
      const max = this.parsed.count === null ? n : Math.min(n, this.parsed.count);
      return this.withStart(this.rule.all((_d, i) => i < n), max).map((z) => this.dueOf(z));
    } catch (e) {
      throw new SeriesError(`cannot expand the rule: ${(e as Error).message}`);
    }
  }
}

const seriesCache = new Map<string, Series>();
const SERIES_CACHE_SIZE = 128;

/**
 * A series for a stored, already validated rule, shared between requests: a Series never
 * changes, and reusing it keeps the expansion of a COUNT-bounded rule from being redone on
 * every completion. Least recently used entries are dropped beyond a small bound.
 */
export function seriesFor(parsed: ParsedRule, dtstart: string, timezone: string): Series {
  const key = `${parsed.text}\u0000${dtstart}\u0000${timezone}`;
  let s = seriesCache.get(key);
  if (s) {
    seriesCache.delete(key);
  } else {
    s = new Series(parsed, dtstart, timezone);
    if (seriesCache.size >= SERIES_CACHE_SIZE) seriesCache.delete(seriesCache.keys().next().value!);
  }
  seriesCache.set(key, s);
  return s;
}

/** `YYYYMMDD[THHMMSSZ]` → an RFC 3339 string Temporal reads. */
function untilIso(until: string): string {
  const d = `${until.slice(0, 4)}-${until.slice(4, 6)}-${until.slice(6, 8)}`;
  return until.includes("T") ? `${d}T${until.slice(9, 11)}:${until.slice(11, 13)}:${until.slice(13, 15)}Z` : d;
}

/**
 * Builds a series for a new or changed rule and checks that it can ever produce something:
 * the pattern must match some date (FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30 matches none) and UNTIL
 * may not lie before DTSTART. Returns the problem as a message, or the series.
 */
export function checkedSeries(parsed: ParsedRule, dtstart: string, timezone: string): { ok: true; series: Series } | { ok: false; message: string } {
  const parts = partsOf(parsed.text);
  if (parts.has("BYSETPOS") && yearlyShapeNeedsFilter(parts)) {
    return {
      ok: false,
      message: "BYSETPOS is not supported in a FREQ=YEARLY rule with an ordinal BYDAY and no BYMONTH, or with BYYEARDAY and BYDAY or BYMONTHDAY",
    };
  }
  let series: Series;
  try {
    series = new Series(parsed, dtstart, timezone);
  } catch (e) {
    return { ok: false, message: `the rule cannot be used: ${(e as Error).message}` };
  }
  if (parsed.until) {
    const untilDue = untilIso(parsed.until);
    const before = !parsed.until.includes("T")
      ? untilDue < series.dateKey(dtstart)
      : series.dateOnly
        ? dateOfDue(untilDue, timezone) < dtstart
        : Temporal.Instant.compare(Temporal.Instant.from(untilDue), Temporal.Instant.from(dtstart)) < 0;
    if (before) return { ok: false, message: "UNTIL is before the first occurrence (the task's due_at)" };
  }
  // The pattern alone (no COUNT/UNTIL, DTSTART not forced in) must match some date.
  if (yearlyShapeNeedsFilter(parts)) {
    const firstYear = Number(series.dateKey(dtstart).slice(0, 4));
    return yearlyPatternMatchesSomeDay(parsed.text, firstYear, Number(parts.get("INTERVAL") ?? 1)) ? { ok: true, series } : { ok: false, message: "the rule matches no date" };
  }
  const bare = parsed.text
    .split(";")
    .filter((p) => !p.startsWith("COUNT=") && !p.startsWith("UNTIL="))
    .join(";");
  try {
    const probe = new Series({ ...parsed, text: bare, count: null, until: null }, dtstart, timezone);
    if (probe.nextAfter(dtstart) === null) return { ok: false, message: "the rule matches no date" };
  } catch {
    return { ok: false, message: "the rule matches no date" };
  }
  return { ok: true, series };
}

// ---------------------------------------------------------------------------------------------
// Repeat after completion
// ---------------------------------------------------------------------------------------------

/**
 * The next deadline of a repeat-after-completion task: the local completion date (in `tz`) plus
 * `interval` units. Month and year steps clamp to the month's last day (31 Jan + 1 month =
 * 28/29 Feb). A timed deadline keeps its local time of day in `tz`; should that time not exist
 * on the new date (a DST gap) it moves forward by the gap's length (Temporal's "compatible"), as
 * there is no occurrence to omit here. A date-only or missing deadline gives a date.
 */
export function nextAfterCompletion(currentDue: string | null, completedAt: Date, tz: string, interval: number, unit: Unit): string {
  const completedOn = Temporal.Instant.fromEpochMilliseconds(completedAt.getTime()).toZonedDateTimeISO(tz).toPlainDate();
  const next = completedOn.add(
    unit === "day" ? { days: interval } : unit === "week" ? { weeks: interval } : unit === "month" ? { months: interval } : { years: interval },
    { overflow: "constrain" },
  );
  if (currentDue === null || isDateOnly(currentDue)) return next.toString();
  const time = Temporal.Instant.from(currentDue).toZonedDateTimeISO(tz).toPlainTime();
  return isoOf(next.toZonedDateTime({ timeZone: tz, plainTime: time }));
}
