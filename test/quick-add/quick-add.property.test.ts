// Properties of the quick-add parser (src/core/quick-add), checked against the API's own zod
// schemas (task create, recurrence create, tag name) and the recurrence engine's RRULE check:
// - every output of a non-blank sentence is a valid request;
// - text without tokens is untouched;
// - the tokens are exact, ordered, disjoint slices: removing them and putting them back gives the input;
// - ignoring every recognised token (the quick-add box's undo) leaves the sentence as plain text.
// `now` and the zone vary, so the results do not depend on the process TZ.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { parseDateAndRepeat, parseQuickAdd, taskCreateBody, type QuickAdd, type QuickAddContext } from "../../src/core/quick-add";
import { TaskCreate } from "../../src/features/tasks/tasks.schemas";
import { RecurrenceCreate } from "../../src/features/recurrence/recurrence.schemas";
import { parseRRule } from "../../src/features/recurrence/recurrence.engine";
import { TagName } from "../../src/features/tags/tags.schemas";
import { isCalendarDate } from "../../src/core/time";

const ZONES = ["UTC", "Europe/Berlin", "America/New_York", "Asia/Tokyo", "Australia/Lord_Howe", "Pacific/Kiritimati", "America/St_Johns", "Asia/Kathmandu"];
const LISTS = [
  { id: "L1", name: "Work" },
  { id: "L2", name: "Home Stuff" },
  { id: "L3", name: "Errands" },
];
const TAGS = [
  { id: "T1", name: "work" },
  { id: "T2", name: "deep focus" },
];

/** Words chrono reads as nothing and no repeat phrase contains. */
const PLAIN = ["buy", "milk", "call", "Bob", "report", "fix", "bike", "with", "and", "the", "plan", "garden", "write", "letter", "for", "Anna", "email", "2", "apples", "42", "pay", "bills", "ask", "about", "invoice", "clean", "kitchen", "read", "book", "x"];
const DATES = ["tomorrow", "tomorrow at 3pm", "next fri", "in 2 weeks", "Dec 24", "at 9:30", "today", "in 3 hours", "on June 5 at noon", "2026-12-01", "friday 8am", "tonight", "this weekend", "next month"];
const REPEATS = ["every monday", "every 2 weeks", "every month on the last day", "every day after completion", "every weekday", "every other friday", "every mon, wed and fri", "daily", "weekly after completion", "every year", "every month on the 15th", "every month on the first monday", "every! 3 days", "every week on tuesday and thursday", "every 3 months"];
const MARKS = ["#work", "#deep focus", "#errand", "#new-tag", "~Work", "~home stuff", "~errands", "!1", "!2", "!3", "!high", "!low", "!med", "!none", "#12"];

const now = fc.date({ min: new Date("2000-01-01T00:00:00Z"), max: new Date("2090-12-31T00:00:00Z"), noInvalidDate: true });
const zone = fc.constantFrom(...ZONES);
const piece = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...PLAIN) },
  { weight: 2, arbitrary: fc.constantFrom(...DATES) },
  { weight: 2, arbitrary: fc.constantFrom(...REPEATS) },
  { weight: 2, arbitrary: fc.constantFrom(...MARKS) },
  { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 8, unit: "grapheme" }).map((s) => `#${s}`) },
);
const sentence = fc.array(piece, { minLength: 1, maxLength: 8 }).chain((ps) => fc.constantFrom(" ", "  ", ", ").map((sep) => ps.join(sep)));
const ctxOf = (n: Date, z: string): QuickAddContext => ({ now: n, timeZone: z, lists: LISTS, tags: TAGS });

function validRequests(text: string, q: QuickAdd) {
  const body = taskCreateBody(q, { tagIds: q.tags.map((t, i) => t.id ?? `new${i}`) });
  const task = TaskCreate.safeParse(body);
  expect(task.success ? null : { text, body, issues: task.error.issues }).toBeNull();
  for (const t of q.tags) expect(TagName.safeParse(t.name).success).toBe(true);
  if (q.recurrence) {
    expect(q.due_at).not.toBeNull();
    const rec = RecurrenceCreate.safeParse({ task_id: "t1", ...q.recurrence });
    expect(rec.success ? null : { text, rec: q.recurrence, issues: rec.error.issues }).toBeNull();
    if (q.recurrence.kind === "rrule") {
      // What the service checks on top of the schema: a date-only first occurrence takes no time parts.
      expect(parseRRule(q.recurrence.rrule, isCalendarDate(q.due_at!)).ok).toBe(true);
    }
  }
}

function checkTokens(text: string, q: { tokens: QuickAdd["tokens"] }) {
  let at = 0;
  const pieces: string[] = [];
  for (const t of q.tokens) {
    expect(t.start).toBeGreaterThanOrEqual(at);
    expect(t.end).toBeGreaterThan(t.start);
    expect(text.slice(t.start, t.end)).toBe(t.text);
    pieces.push(text.slice(at, t.start));
    at = t.end;
  }
  pieces.push(text.slice(at));
  // Removing the tokens leaves `pieces`; putting each token back where it was gives the input.
  let rebuilt = pieces[0]!;
  q.tokens.forEach((t, i) => (rebuilt += t.text + pieces[i + 1]!));
  expect(rebuilt).toBe(text);
  return pieces;
}

describe("quick add: properties", () => {
  test("every output of a non-blank sentence is a valid task-create (and recurrence-create) request", () => {
    fc.assert(
      fc.property(sentence, now, zone, (text, n, z) => {
        fc.pre(text.trim().length > 0 && [...text].length <= 500);
        validRequests(text, parseQuickAdd(text, ctxOf(n, z)));
      }),
      { numRuns: 600 },
    );
  });

  test("a sentence built only of tokens still has a title (the whole sentence)", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...DATES, ...REPEATS, ...MARKS), { minLength: 1, maxLength: 4 }), now, zone, (ps, n, z) => {
        const text = ps.join(" ");
        const q = parseQuickAdd(text, ctxOf(n, z));
        validRequests(text, q);
      }),
      { numRuns: 200 },
    );
  });

  test("text without tokens is untouched", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...PLAIN), { minLength: 1, maxLength: 10 }), fc.constantFrom(" ", "  ", " ; ", ", "), fc.constantFrom("", " ", "  "), now, zone, (ws, sep, pad, n, z) => {
        const text = pad + ws.join(sep) + pad;
        const q = parseQuickAdd(text, ctxOf(n, z));
        expect(q.tokens).toEqual([]);
        expect(q).toMatchObject({ title: text, due_at: null, recurrence: null, tags: [], list: null, priority: null });
      }),
      { numRuns: 300 },
    );
    // And for any string at all: when nothing is recognised, the title is the input, byte for byte.
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), now, zone, (text, n, z) => {
        const q = parseQuickAdd(text, ctxOf(n, z));
        if (q.tokens.length === 0) expect(q.title).toBe(text);
      }),
      { numRuns: 500 },
    );
  });

  test("removing the recognised tokens and re-inserting them gives the original text; the title is what is left", () => {
    fc.assert(
      fc.property(sentence, now, zone, (text, n, z) => {
        const q = parseQuickAdd(text, ctxOf(n, z));
        const pieces = checkTokens(text, q);
        if (q.tokens.length > 0) {
          const left = pieces.join(" ").replace(/\s+/g, " ").trim();
          expect(q.title).toBe(left === "" ? text.replace(/\s+/g, " ").trim() : left);
        }
        checkTokens(text, parseDateAndRepeat(text, { now: n, timeZone: z }));
      }),
      { numRuns: 400 },
    );
  });

  test("ignoring every recognised token (undo) leaves the sentence as plain text", () => {
    fc.assert(
      fc.property(sentence, now, zone, (text, n, z) => {
        const ctx = ctxOf(n, z);
        const q = parseQuickAdd(text, ctx);
        // Undo one at a time, as the box does: each undo keeps the others recognised or not, never more.
        let ignore: { kind: (typeof q.tokens)[number]["kind"]; text: string }[] = [];
        let cur = q;
        for (let i = 0; i < 30 && cur.tokens.length > 0; i++) {
          ignore = [...ignore, { kind: cur.tokens[0]!.kind, text: cur.tokens[0]!.text }];
          cur = parseQuickAdd(text, { ...ctx, ignore });
        }
        expect(cur.tokens).toEqual([]);
        expect(cur).toMatchObject({ title: text, due_at: null, recurrence: null, tags: [], list: null, priority: null });
      }),
      { numRuns: 200 },
    );
  });
});
