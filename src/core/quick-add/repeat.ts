// Repeat phrases ("every monday", "every 2 weeks", "every month on the last day", "every day after
// completion") → our recurrence request. chrono-node parses dates, not repetition, so this is the
// one grammar written here: a closed list of English phrases mapped to RFC 5545 parts the
// recurrence engine accepts (src/features/recurrence/recurrence.engine.ts parseRRule).
import { addDays, daysInMonthOf, weekdayOf, type Ymd } from "./zone";

export type RepeatUnit = "day" | "week" | "month" | "year";

/** What a repeat phrase means, before a first occurrence is chosen. */
export type RepeatRule =
  | { kind: "rrule"; freq: "DAILY" | "WEEKLY" | "MONTHLY" | "YEARLY"; interval: number; byDay: string[]; byMonthDay: number[] }
  | { kind: "after_completion"; interval: number; unit: RepeatUnit };

export interface RepeatMatch {
  start: number;
  end: number;
  rule: RepeatRule;
}

const DAY_NAMES: Record<string, string> = {
  monday: "MO", mon: "MO", mondays: "MO",
  tuesday: "TU", tue: "TU", tues: "TU", tuesdays: "TU",
  wednesday: "WE", wed: "WE", wednesdays: "WE",
  thursday: "TH", thu: "TH", thur: "TH", thurs: "TH", thursdays: "TH",
  friday: "FR", fri: "FR", fridays: "FR",
  saturday: "SA", sat: "SA", saturdays: "SA",
  sunday: "SU", sun: "SU", sundays: "SU",
};
const DAY = `(?:${Object.keys(DAY_NAMES).sort((a, b) => b.length - a.length).join("|")})`;
const DAY_LIST = `${DAY}(?:\\s*(?:,\\s*(?:and\\s+)?|\\s+and\\s+|\\s*&\\s*)${DAY})*`;
const UNIT_WORDS: Record<string, RepeatUnit> = {
  day: "day", days: "day", week: "week", weeks: "week", month: "month", months: "month", year: "year", years: "year",
};
const FREQ: Record<RepeatUnit, "DAILY" | "WEEKLY" | "MONTHLY" | "YEARLY"> = { day: "DAILY", week: "WEEKLY", month: "MONTHLY", year: "YEARLY" };
const ADVERBS: Record<string, RepeatUnit> = { daily: "day", weekly: "week", monthly: "month", yearly: "year", annually: "year" };
const ORDINALS: Record<string, number> = { first: 1, "1st": 1, second: 2, "2nd": 2, third: 3, "3rd": 3, fourth: 4, "4th": 4, last: -1 };
const ORDINAL = `(?:${Object.keys(ORDINALS).join("|")})`;
const NTH = `(?:(\\d{1,2})(?:st|nd|rd|th)?)`;
const AFTER = `(\\s+after\\s+(?:completion|completing|done|it(?:'s| is) done))?`;

// One alternation per shape; named groups say which. Case-insensitive, on word boundaries.
const PATTERNS: { re: RegExp; build(m: RegExpExecArray): RepeatRule | null }[] = [
  {
    // every weekday / every workday / every weekend
    re: new RegExp(`\\b(?:every|each)\\s+(weekday|workday|weekend)s?\\b`, "gi"),
    build: (m) => ({ kind: "rrule", freq: "WEEKLY", interval: 1, byDay: /weekend/i.test(m[1]!) ? ["SA", "SU"] : ["MO", "TU", "WE", "TH", "FR"], byMonthDay: [] }),
  },
  {
    // every 3rd friday, every last sunday (of the month), every first monday of each month: a day of
    // the month, as Todoist reads them (not every third week: "every 3 fridays" says that)
    re: new RegExp(`\\b(?:every|each)\\s+(${ORDINAL})\\s+(${DAY})(?:\\s+of\\s+(?:the|each|every)\\s+month)?\\b`, "gi"),
    build: (m) => ({ kind: "rrule", freq: "MONTHLY", interval: 1, byDay: [`${ORDINALS[m[1]!.toLowerCase()]}${DAY_NAMES[m[2]!.toLowerCase()]}`], byMonthDay: [] }),
  },
  {
    // every monday, every mon and thu, every other friday, every 2 fridays
    re: new RegExp(`\\b(?:every|each)\\s+(other\\s+|\\d{1,3}\\s+)?(${DAY_LIST})\\b`, "gi"),
    build: (m) => ({ kind: "rrule", freq: "WEEKLY", interval: intervalOf(m[1]), byDay: daysOf(m[2]!), byMonthDay: [] }),
  },
  {
    // every month on the last day / on the 15th / on the first monday
    re: new RegExp(
      `\\b(?:every|each)\\s+(other\\s+|\\d{1,3}\\s+)?(months?)\\s+on\\s+(?:the\\s+)?(?:(last)\\s+day|day\\s+${NTH}|${NTH}(?:\\s+day)?|(${ORDINAL})\\s+(${DAY}))(?:\\s+of\\s+(?:the|each)\\s+month)?\\b`,
      "gi",
    ),
    build: (m) => {
      const interval = intervalOf(m[1]);
      if (m[3]) return { kind: "rrule", freq: "MONTHLY", interval, byDay: [], byMonthDay: [-1] };
      const nth = Number(m[4] ?? m[5] ?? NaN);
      if (!Number.isNaN(nth)) return nth >= 1 && nth <= 31 ? { kind: "rrule", freq: "MONTHLY", interval, byDay: [], byMonthDay: [nth] } : null;
      return { kind: "rrule", freq: "MONTHLY", interval, byDay: [`${ORDINALS[m[6]!.toLowerCase()]}${DAY_NAMES[m[7]!.toLowerCase()]}`], byMonthDay: [] };
    },
  },
  {
    // every week on monday(s) and wednesday(s)
    re: new RegExp(`\\b(?:every|each)\\s+(other\\s+|\\d{1,3}\\s+)?(weeks?)\\s+on\\s+(${DAY_LIST})\\b`, "gi"),
    build: (m) => ({ kind: "rrule", freq: "WEEKLY", interval: intervalOf(m[1]), byDay: daysOf(m[3]!), byMonthDay: [] }),
  },
  {
    // every day, every 2 weeks, every other month, each year … [after completion]
    // Todoist's "every!" (every! 3 days) also means after completion.
    re: new RegExp(`\\b(?:every|each)(!)?\\s+(other\\s+|\\d{1,3}\\s+)?(days?|weeks?|months?|years?)\\b${AFTER}`, "gi"),
    build: (m) => {
      const unit = UNIT_WORDS[m[3]!.toLowerCase()]!;
      const interval = intervalOf(m[2]);
      // "every 2 day" reads wrong but means the same; "every days" without a number: refuse.
      if (m[2] === undefined && /s$/i.test(m[3]!)) return null;
      if (m[1] || m[4]) return { kind: "after_completion", interval, unit };
      return { kind: "rrule", freq: FREQ[unit], interval, byDay: [], byMonthDay: [] };
    },
  },
  {
    // daily, weekly, monthly, yearly, annually [after completion]
    re: new RegExp(`\\b(daily|weekly|monthly|yearly|annually)\\b${AFTER}`, "gi"),
    build: (m) => {
      const unit = ADVERBS[m[1]!.toLowerCase()]!;
      if (m[2]) return { kind: "after_completion", interval: 1, unit };
      return { kind: "rrule", freq: FREQ[unit], interval: 1, byDay: [], byMonthDay: [] };
    },
  },
];

function intervalOf(s: string | undefined): number {
  if (s === undefined) return 1;
  if (/other/i.test(s)) return 2;
  const n = Number(/\d+/.exec(s)![0]);
  return Math.min(Math.max(n, 1), 1000);
}

function daysOf(list: string): string[] {
  const out: string[] = [];
  for (const w of list.toLowerCase().split(/[^a-z]+/)) {
    const d = DAY_NAMES[w];
    if (d && !out.includes(d)) out.push(d);
  }
  const order = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"];
  return out.sort((a, b) => order.indexOf(a) - order.indexOf(b));
}

/**
 * The first repeat phrase in `text` outside the `masked` ranges, or null. Earlier patterns win
 * at the same position; the longest match at the earliest position is taken.
 */
export function findRepeat(text: string, masked: (i: number, j: number) => boolean): RepeatMatch | null {
  let best: RepeatMatch | null = null;
  for (const p of PATTERNS) {
    p.re.lastIndex = 0;
    for (let m = p.re.exec(text); m; m = p.re.exec(text)) {
      const start = m.index;
      const end = start + m[0].length;
      if (masked(start, end)) continue;
      const rule = p.build(m);
      if (!rule) continue;
      if (!best || start < best.start || (start === best.start && end > best.end)) best = { start, end, rule };
    }
  }
  return best;
}

/** The RRULE body of a rule (FREQ first, then INTERVAL when > 1, then BY parts). */
export function rruleText(r: Extract<RepeatRule, { kind: "rrule" }>): string {
  const parts = [`FREQ=${r.freq}`];
  if (r.interval > 1) parts.push(`INTERVAL=${r.interval}`);
  if (r.byDay.length) parts.push(`BYDAY=${r.byDay.join(",")}`);
  if (r.byMonthDay.length) parts.push(`BYMONTHDAY=${r.byMonthDay.join(",")}`);
  return parts.join(";");
}

/** Whether a day is one the rule's BY parts allow (a rule without BY parts allows every day). */
function dayMatches(r: Extract<RepeatRule, { kind: "rrule" }>, x: Ymd): boolean {
  const dim = daysInMonthOf(x);
  if (r.byMonthDay.length && !r.byMonthDay.some((n) => (n > 0 ? x.d === n : x.d === dim + n + 1))) return false;
  if (r.byDay.length) {
    const wd = weekdayOf(x);
    return r.byDay.some((t) => {
      const m = /^(-?\d)?(MO|TU|WE|TH|FR|SA|SU)$/.exec(t)!;
      if (["MO", "TU", "WE", "TH", "FR", "SA", "SU"].indexOf(m[2]!) + 1 !== wd) return false;
      if (m[1] === undefined) return true;
      const n = Number(m[1]);
      return n > 0 ? Math.ceil(x.d / 7) === n : Math.ceil((dim - x.d + 1) / 7) === -n;
    });
  }
  return true;
}

/**
 * The first day on or after `from` the rule allows: the series' first occurrence (DTSTART, which
 * the server always counts as an occurrence, so it must be one). Every rule built above has a
 * matching day within 62 days (a 5th weekday is not offered; BYMONTHDAY 29–31 meets a long month).
 */
export function firstOccurrence(r: RepeatRule, from: Ymd): Ymd {
  if (r.kind !== "rrule") return from;
  for (let i = 0, x = from; i < 400; i++, x = addDays(x, 1)) if (dayMatches(r, x)) return x;
  return from;
}
