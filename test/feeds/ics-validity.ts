// Checks a produced feed two ways, so a mistake of one library is not taken for validity:
// ical.js (the library that wrote it) and Debian's python3-icalendar (an independent parser).
import { expect } from "bun:test";
import { existsSync } from "node:fs";
import ICAL from "ical.js";

/** Parses with ical.js and checks what RFC 5545 requires of what the feed writes. Returns the calendar. */
export function parseWithIcalJs(body: string): ICAL.Component {
  expect(body.endsWith("\r\n")).toBe(true);
  // Every line ends with CRLF and is folded by octets, UTF-8 sequences kept whole. ical.js puts 75
  // octets of content after a continuation's leading space (76 in all): RFC 5545 §3.1 says lines
  // SHOULD NOT pass 75, and every parser tried (ical.js, python3-icalendar) reads them.
  for (const line of body.split("\r\n")) expect(Buffer.byteLength(line)).toBeLessThanOrEqual(line.startsWith(" ") ? 76 : 75);
  const cal = new ICAL.Component(ICAL.parse(body));
  expect(cal.name).toBe("vcalendar");
  expect(cal.getFirstPropertyValue("version")).toBe("2.0");
  expect(cal.getFirstPropertyValue("prodid")).toBeTruthy();
  const uids = new Set<string>();
  for (const c of cal.getAllSubcomponents()) {
    expect(["vevent", "vtodo"]).toContain(c.name);
    const uid = String(c.getFirstPropertyValue("uid"));
    expect(uid).toBeTruthy();
    expect(uids.has(uid)).toBe(false);
    uids.add(uid);
    expect(c.getFirstPropertyValue("dtstamp")).toBeInstanceOf(ICAL.Time);
    if (c.name === "vevent") {
      const start = c.getFirstPropertyValue("dtstart") as ICAL.Time;
      expect(start).toBeInstanceOf(ICAL.Time);
      const end = c.getFirstPropertyValue("dtend") as ICAL.Time | null;
      if (end) {
        expect(end.isDate).toBe(start.isDate);
        expect(end.compare(start)).toBe(1);
      }
      // No TZID anywhere: a date, or UTC.
      if (!start.isDate) expect(start.zone?.tzid).toBe("UTC");
    }
  }
  return cal;
}

const PYTHON = ["/usr/bin/python3", "python3"].find((p) => (p.startsWith("/") ? existsSync(p) : true) && Bun.spawnSync([p, "-c", "import icalendar"]).exitCode === 0) ?? null;

export const pythonIcalendar: string | null = PYTHON;
if (!PYTHON) console.warn("SKIP python3-icalendar checks: python3 with the icalendar module is not installed (apt-get install -y python3-icalendar; .ci/run installs it)");

// Parses strictly enough to fail on a broken document: from_ical raises on a malformed line; a
// property that does not decode is in the component's `errors`; the required properties are checked.
const SCRIPT = `
import sys, icalendar
data = sys.stdin.buffer.read()
cal = icalendar.Calendar.from_ical(data)
problems = []
if cal.name != "VCALENDAR": problems.append("not a VCALENDAR")
for req in ("VERSION", "PRODID"):
    if req not in cal: problems.append("VCALENDAR without " + req)
n = 0
for comp in cal.walk():
    for e in getattr(comp, "errors", []): problems.append("%s: %s" % (comp.name, e))
    if comp.name in ("VEVENT", "VTODO"):
        n += 1
        for req in ("UID", "DTSTAMP"):
            if req not in comp: problems.append(comp.name + " without " + req)
        for key in comp.keys():
            # icalendar 4 (Debian 12) cannot decode() any CATEGORIES (an assertion in vCategory): read its values instead.
            if key == "CATEGORIES":
                for p in (comp[key] if isinstance(comp[key], list) else [comp[key]]): p.cats
                continue
            try: comp.decoded(key)
            except Exception as ex: problems.append("%s %s does not decode: %s" % (comp.name, key, ex))
        if comp.name == "VEVENT":
            if "DTSTART" not in comp: problems.append("VEVENT without DTSTART")
            elif "DTEND" in comp and not comp.decoded("DTEND") > comp.decoded("DTSTART"): problems.append("VEVENT ends before it starts")
if problems:
    print("\\n".join(problems)); sys.exit(1)
print("ok %d" % n)
`;

/** Parses with python3-icalendar; fails the test on a broken calendar. Returns the number of events/to-dos, or null when skipped. */
export function checkWithPython(body: string): number | null {
  if (!PYTHON) return null;
  const r = Bun.spawnSync([PYTHON, "-c", SCRIPT], { stdin: Buffer.from(body) });
  const out = r.stdout.toString() + r.stderr.toString();
  if (r.exitCode !== 0) throw new Error(`python3-icalendar refused the feed:\n${out}`);
  return Number(/ok (\d+)/.exec(out)![1]);
}
