/**
 * Quick add: a sentence ("Call Bob tomorrow at 3pm #work !high") → the structured fields of a
 * task-create request plus a recurrence request. Pure (no I/O, no clock: `now` is an argument)
 * and browser-safe (Intl and Date only), so the web app's quick-add box and the importers share it.
 *
 * - Dates and times are chrono-node's: the first date it finds. A time of day makes an instant
 *   (the wall clock in `timeZone`); without one the deadline is a calendar date. chrono's other
 *   locales are used when `locale` names one (English is the default).
 * - Repeats are a closed list of English phrases (./repeat.ts): "every monday", "every 2 weeks",
 *   "every month on the last day", "daily", "every day after completion" (or Todoist's "every!").
 *   A repeat without a date starts today, at its first matching day (the server counts the first
 *   `due_at` as an occurrence, so it must be one).
 * - `#tag`: an existing tag by name (longest match, any case) or a new tag name; `#12` alone is
 *   text (an issue number), unless a tag is called "12".
 * - `~list`: an existing list by name (longest match, any case); an unknown name stays text.
 * - `!1`, `!2`, `!3` (low, medium, high: the API's 1–3), `!low`, `!medium`/`!med`, `!high`, `!0`/`!none`.
 * Only the first date, repeat, list and priority are read; every `#tag` is. Tokens are exact
 * slices of the input; the title is the input without them (whitespace at the joins collapsed),
 * or the input unchanged when nothing was recognised. When the tokens are all there is, the title
 * keeps the whole sentence (a title may not be blank). `ignore` keeps a recognised token as text
 * (the quick-add box's undo).
 */
import * as chrono from "chrono-node";
import { findRepeat, firstOccurrence, rruleText, type RepeatRule } from "./repeat";
import { instantOf, offsetMinutes, wallClockOf, ymdString, type Ymd } from "./zone";

export type TokenKind = "date" | "repeat" | "tag" | "list" | "priority";
export interface Token {
  /** UTF-16 offsets into the input: `text === input.slice(start, end)`. */
  start: number;
  end: number;
  kind: TokenKind;
  text: string;
}

/** The body of POST /api/v1/recurrences without `task_id` (src/features/recurrence/recurrence.schemas.ts). */
export type RecurrenceRequest =
  | { kind: "rrule"; rrule: string; timezone: string }
  | { kind: "after_completion"; interval: number; unit: "day" | "week" | "month" | "year" };

export interface Named {
  id: string;
  name: string;
}

/** chrono-node's locales; "en" is the default. */
export const LOCALES = ["en", "de", "fr", "es", "it", "ja", "nl", "pt", "ru", "sv", "uk", "zh", "fi", "vi"] as const;
export type Locale = (typeof LOCALES)[number];

export interface DateContext {
  now: Date;
  /** IANA zone the sentence is read in: "tomorrow at 3pm" is 15:00 there. */
  timeZone: string;
  locale?: Locale;
  /** Tokens to keep as text, by kind and exact text (every occurrence of that text). */
  ignore?: readonly { kind: TokenKind; text: string }[];
}
export interface QuickAddContext extends DateContext {
  lists?: readonly Named[];
  tags?: readonly Named[];
}

export interface DateAndRepeat {
  /** As the API's `due_at`: `YYYY-MM-DD` (a day) or a UTC instant `YYYY-MM-DDTHH:MM:SS.sssZ`; null: none. */
  due_at: string | null;
  recurrence: RecurrenceRequest | null;
  tokens: Token[];
}

export interface QuickAdd extends DateAndRepeat {
  title: string;
  /** In order of appearance, each name once (any case); `id` null: a tag to create. */
  tags: { name: string; id: string | null }[];
  list: Named | null;
  /** 0 none … 3 high; null: not said. */
  priority: number | null;
}

const PRIORITY_WORDS: Record<string, number> = { "0": 0, none: 0, "1": 1, low: 1, "2": 2, medium: 2, med: 2, "3": 3, high: 3 };
/** Tag names are at most 64 characters (src/features/tags/tags.schemas.ts TAG_NAME_MAX). */
const TAG_NAME_MAX = 64;

const isBoundary = (text: string, i: number) => i >= text.length || /\s/.test(text[i]!);
const startsWord = (text: string, i: number) => i === 0 || /\s/.test(text[i - 1]!);

/** Ranges already taken; a later finder skips anything overlapping them. */
class Taken {
  readonly ranges: [number, number][] = [];
  add(s: number, e: number) {
    this.ranges.push([s, e]);
  }
  overlaps = (s: number, e: number) => this.ranges.some(([a, b]) => s < b && a < e);
  /** The text with taken ranges blanked (same length, so chrono's offsets stay ours). */
  blank(text: string): string {
    let out = text;
    for (const [a, b] of this.ranges) out = out.slice(0, a) + " ".repeat(b - a) + out.slice(b);
    return out;
  }
}

/** The longest existing name (any case) right at `i`, ending at a word boundary. */
function longestName<T extends Named>(text: string, i: number, items: readonly T[]): T | null {
  let best: T | null = null;
  for (const it of items) {
    const len = it.name.length;
    if (len === 0 || (best && len <= best.name.length)) continue;
    if (text.slice(i, i + len).toLowerCase() === it.name.toLowerCase() && isBoundary(text, i + len)) best = it;
  }
  return best;
}

interface Found {
  tokens: Token[];
  tags: QuickAdd["tags"];
  list: Named | null;
  priority: number | null;
  chronoResult: chrono.ParsedResult | null;
  repeat: RepeatRule | null;
}

function find(text: string, ctx: QuickAddContext, withMarks: boolean, skip: Taken): Found {
  const taken = new Taken();
  for (const r of skip.ranges) taken.add(r[0], r[1]);
  const tokens: Token[] = [];
  const push = (start: number, end: number, kind: TokenKind) => {
    tokens.push({ start, end, kind, text: text.slice(start, end) });
    taken.add(start, end);
  };
  const out: Found = { tokens, tags: [], list: null, priority: null, chronoResult: null, repeat: null };
  if (withMarks) {
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if ((c !== "!" && c !== "#" && c !== "~") || !startsWord(text, i) || taken.overlaps(i, i + 1)) continue;
      if (c === "!" && out.priority === null) {
        const m = /^!(0|1|2|3|none|low|medium|med|high)/i.exec(text.slice(i));
        if (m && isBoundary(text, i + m[0].length) && !taken.overlaps(i, i + m[0].length)) {
          out.priority = PRIORITY_WORDS[m[1]!.toLowerCase()]!;
          push(i, i + m[0].length, "priority");
        }
      } else if (c === "~" && out.list === null) {
        const l = longestName(text, i + 1, ctx.lists ?? []);
        if (l && !taken.overlaps(i, i + 1 + l.name.length)) {
          out.list = { id: l.id, name: l.name };
          push(i, i + 1 + l.name.length, "list");
        }
      } else if (c === "#") {
        const existing = longestName(text, i + 1, ctx.tags ?? []);
        let name: string | null = null;
        let id: string | null = null;
        if (existing) {
          name = existing.name;
          id = existing.id;
        } else {
          // A new tag: up to the next space, without trailing punctuation; never a bare number.
          const m = /^[^\s#\u0000-\u001f\u007f]+/.exec(text.slice(i + 1));
          const raw = m ? m[0].replace(/[.,;:!?)\]}"']+$/, "") : "";
          if (raw && !/^\d+$/.test(raw) && [...raw].length <= TAG_NAME_MAX && raw.trim() === raw) name = raw;
        }
        if (name !== null && !taken.overlaps(i, i + 1 + name.length)) {
          const text2 = text.slice(i + 1, i + 1 + name.length);
          push(i, i + 1 + name.length, "tag");
          if (!out.tags.some((t) => t.name.toLowerCase() === text2.toLowerCase())) out.tags.push({ name: id ? name : text2, id });
        }
      }
    }
  }
  const rep = findRepeat(text, taken.overlaps);
  if (rep) {
    out.repeat = rep.rule;
    push(rep.start, rep.end, "repeat");
  }
  const blanked = taken.blank(text);
  const parser = ctx.locale && ctx.locale !== "en" ? chrono[ctx.locale] : chrono;
  const results = parser.parse(blanked, { instant: ctx.now, timezone: offsetMinutes(ctx.now, ctx.timeZone) }, { forwardDate: true });
  for (const r of results) {
    // chrono may keep blanks at the edges of what it read; the token is the words themselves.
    let s = r.index;
    let e = r.index + r.text.length;
    while (s < e && /\s/.test(blanked[s]!)) s++;
    while (e > s && /\s/.test(blanked[e - 1]!)) e--;
    if (s === e || taken.overlaps(s, e)) continue;
    // A deadline is a four-digit year (the API's YYYY-MM-DD); "in 20000 years" stays text.
    const year = r.start.get("year");
    if (year === null || year < 1000 || year > 9999) continue;
    out.chronoResult = r;
    push(s, e, "date");
    break;
  }
  tokens.sort((a, b) => a.start - b.start);
  return out;
}

/** Finds tokens, leaving as text any the caller asked to ignore (each rerun blanks them). */
function findRespectingIgnore(text: string, ctx: QuickAddContext, withMarks: boolean): Found {
  const skip = new Taken();
  const ignore = ctx.ignore ?? [];
  for (let round = 0; ; round++) {
    const f = find(text, ctx, withMarks, skip);
    const ignored = f.tokens.filter((t) => ignore.some((x) => x.kind === t.kind && x.text === t.text));
    if (ignored.length === 0 || round >= 20) return f;
    for (const t of ignored) skip.add(t.start, t.end);
  }
}

function todayIn(ctx: DateContext): Ymd {
  const w = wallClockOf(ctx.now, ctx.timeZone);
  return { y: w.y, m: w.m, d: w.d };
}

/** The deadline and recurrence from what was found. */
function dueAndRepeat(f: Found, ctx: DateContext): { due_at: string | null; recurrence: RecurrenceRequest | null } {
  const r = f.chronoResult?.start ?? null;
  const timed = r !== null && r.isCertain("hour");
  // "in 3 hours": an exact instant from now, not a wall-clock time.
  const relativeInstant = timed && f.chronoResult!.tags().has("result/relativeDateAndTime");
  const hh = r?.get("hour") ?? 0;
  const mi = r?.get("minute") ?? 0;
  const ymdOf = (x: NonNullable<typeof r>): Ymd => ({ y: x.get("year")!, m: x.get("month")!, d: x.get("day")! });
  const at = (day: Ymd): string => (timed ? instantOf({ ...day, hh, mi }, ctx.timeZone).toISOString() : ymdString(day));

  const rule = f.repeat;
  if (!rule) {
    if (!r) return { due_at: null, recurrence: null };
    if (relativeInstant) return { due_at: new Date(Math.floor(r.date().getTime() / 60000) * 60000).toISOString(), recurrence: null };
    return { due_at: at(ymdOf(r)), recurrence: null };
  }
  // A time alone ("every weekday at 9:30") starts on the day chrono gives it: today, or tomorrow
  // when that time has passed.
  let from = r ? ymdOf(r) : todayIn(ctx);
  if (relativeInstant) {
    const w = wallClockOf(r!.date(), ctx.timeZone);
    from = { y: w.y, m: w.m, d: w.d };
  }
  if (rule.kind === "after_completion") {
    return { due_at: at(from), recurrence: { kind: "after_completion", interval: rule.interval, unit: rule.unit } };
  }
  return { due_at: at(firstOccurrence(rule, from)), recurrence: { kind: "rrule", rrule: rruleText(rule), timezone: ctx.timeZone } };
}

/**
 * A date and a repeat in a short text, e.g. an import's date column ("every monday", "Dec 24",
 * "tomorrow 3pm"): no tags, lists or priorities are looked for.
 */
export function parseDateAndRepeat(text: string, ctx: DateContext): DateAndRepeat {
  const f = findRespectingIgnore(text, ctx, false);
  return { ...dueAndRepeat(f, ctx), tokens: f.tokens };
}

/** A quick-add sentence → title, deadline, recurrence, tags, list and priority (see the header). */
export function parseQuickAdd(text: string, ctx: QuickAddContext): QuickAdd {
  const f = findRespectingIgnore(text, ctx, true);
  let title = text;
  if (f.tokens.length > 0) {
    let rest = "";
    let at = 0;
    for (const t of f.tokens) {
      rest += text.slice(at, t.start) + " ";
      at = t.end;
    }
    rest += text.slice(at);
    title = rest.replace(/\s+/g, " ").trim();
    if (title === "") title = text.replace(/\s+/g, " ").trim();
  }
  return { title, ...dueAndRepeat(f, ctx), tags: f.tags, list: f.list, priority: f.priority, tokens: f.tokens };
}

/**
 * The POST /api/v1/tasks body for a parsed sentence. `tagIds` are the ids of `q.tags` (the
 * caller creates the new ones first); `listId` overrides `q.list` (e.g. the list on screen when
 * the sentence names none).
 */
export function taskCreateBody(q: QuickAdd, opts: { tagIds?: readonly string[]; listId?: string } = {}) {
  const body: { title: string; due_at?: string; priority?: number; list_id?: string; tag_ids?: string[] } = { title: q.title };
  if (q.due_at !== null) body.due_at = q.due_at;
  if (q.priority !== null) body.priority = q.priority;
  const list = q.list?.id ?? opts.listId;
  if (list !== undefined) body.list_id = list;
  if (opts.tagIds && opts.tagIds.length) body.tag_ids = [...new Set(opts.tagIds)];
  return body;
}
