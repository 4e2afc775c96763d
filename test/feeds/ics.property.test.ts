// The feed writer against arbitrary text (fast-check): whatever a title, description, list name,
// tag or calendar name holds (any Unicode, control characters, iCalendar syntax), ical.js reads the
// document back with that text in its property (CR LF and CR as LF, other control characters
// dropped: RFC 5545 TEXT allows none) and no other component; no raw control character but the
// CR LF line ends is in the document; a sample of the
// documents also goes through python3-icalendar. The writer (src/transfer/feeds/feeds.ics.ts)
// is called directly: the HTTP path is test/feeds/feeds.test.ts.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import ICAL from "ical.js";
import { icalText, renderFeed } from "../../src/transfer/feeds/feeds.ics";
import type { FeedContent } from "../../src/features/feeds/feeds.types";
import { checkWithPython, parseWithIcalJs } from "./ics-validity";

const text = fc.oneof(
  fc.string({ unit: "grapheme", maxLength: 120 }),
  fc.string({ unit: "binary", maxLength: 60 }),
  fc.constantFrom("a\r\nEND:VEVENT\r\nBEGIN:VEVENT\r\nUID:x", "x;y,z\\n", "\u0000\u0007\u001b", "é".repeat(80), "🎉".repeat(40), " leading and trailing ", ""),
);
const nonEmpty = text.filter((s) => s.length > 0);

/** What ical.js gives back for a TEXT value: the same string (the writer must not lose or add anything). */
describe("feed writer: any text stays in its property", () => {
  test("titles, descriptions, list names, tags and the calendar name round-trip through ical.js", async () => {
    let python = 0;
    await fc.assert(
      fc.asyncProperty(nonEmpty, text, text, fc.array(nonEmpty, { maxLength: 3 }), nonEmpty, fc.constantFrom("events", "todos"), async (title, description, listName, tags, calName, format) => {
        const content: FeedContent = {
          name: calName,
          timezone: "Europe/Berlin",
          taskFormat: format as "events" | "todos",
          tasks: [
            { id: "t1", title, description, dueAt: "2026-12-01", priority: 2, completed: false, completedAt: null, createdAt: "2026-11-01T00:00:00.000Z", updatedAt: "2026-11-02T00:00:00.000Z", tags, listName, occurrence: false },
          ],
          countdowns: [{ countdownId: "c1", name: title, type: "birthday", date: "2027-02-06", count: 1, calendar: "lunar", updatedAt: "2026-11-02T00:00:00.000Z" }],
          habits: [{ habitId: "h1", reminderId: "r1", name: description || "h", date: "2026-11-27", at: "2026-11-27T06:00:00.000Z", updatedAt: "2026-11-02T00:00:00.000Z" }],
        };
        const body = await renderFeed(content);
        // eslint-disable-next-line no-control-regex -- looking for control characters
        expect(body.replace(/\r\n/g, "").match(/[\u0000-\u0008\u000a-\u001f\u007f]/g)).toBeNull();
        const cal = parseWithIcalJs(body);
        expect(cal.getFirstPropertyValue("x-wr-calname")).toBe(icalText(calName));
        const items = cal.getAllSubcomponents();
        expect(items.map((c) => c.name)).toEqual([format === "todos" ? "vtodo" : "vevent", "vevent", "vevent"]);
        expect(items[0]!.getFirstPropertyValue("summary")).toBe(icalText(title));
        if (icalText(description)) expect(items[0]!.getFirstPropertyValue("description")).toBe(icalText(description));
        const categories = items[0]!.getAllProperties("categories").flatMap((p) => p.getValues() as string[]);
        const t = tags.map(icalText).filter(Boolean);
        const l = icalText(listName) ? [icalText(listName)] : [];
        expect(categories).toEqual(format === "todos" ? [...t, ...l] : [...l, ...t]);
        expect(items[1]!.getFirstPropertyValue("summary")).toBe(`${icalText(title)} (1)`);
        expect((items[2]!.getFirstPropertyValue("dtstart") as ICAL.Time).toJSDate().toISOString()).toBe("2026-11-27T06:00:00.000Z");
        // python3-icalendar on every twentieth document (a process each: the suite stays quick).
        if (python++ % 20 === 0) checkWithPython(body);
      }),
      { numRuns: 150 },
    );
  });
});
