import ICAL from "ical.js";
import { ImportProblems, PlanBuilder, invalidFile, type PlanSummary } from "./import.plan";
import { vtodoToTask, type PlanReminder } from "./vtodo.mapping";

/**
 * An iCalendar file's VTODOs (Nextcloud Tasks, Thunderbird, Apple Reminders, tasks.org exports):
 * one list per VCALENDAR, named by X-WR-CALNAME (else the file's name). The text is walked here
 * line by line, unfolded, with the physical line each content line starts on, and cut into one
 * chunk per component: ical.js parses one VTODO at a time (kewisch/ical.js#1015: one bad line
 * aborts its whole parse, and its errors carry no line), so a problem names its line and memory
 * holds one component at a time, not the file's whole parsed tree.
 */

const WHAT = "an iCalendar file";

interface ContentLine {
  line: number;
  text: string;
}

/** Unfolded content lines (RFC 5545 §3.1: CRLF or LF followed by a space or tab continues the line). */
function* contentLines(text: string): Generator<ContentLine> {
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  let physical = 1;
  let current: ContentLine | null = null;
  const n = text.length;
  while (i < n) {
    let end = i;
    while (end < n && text[end] !== "\n" && text[end] !== "\r") end++;
    const raw = text.slice(i, end);
    const startLine = physical;
    if (end < n && text[end] === "\r") end++;
    if (end < n && text[end] === "\n") end++;
    physical++;
    i = end;
    if (current && (raw.startsWith(" ") || raw.startsWith("\t"))) {
      current.text += raw.slice(1);
      continue;
    }
    if (current) yield current;
    current = raw.trim() === "" ? null : { line: startLine, text: raw };
  }
  if (current) yield current;
}

/** The property name of a content line (before `;` or `:`), upper-case. */
const nameOf = (l: string) => l.slice(0, l.search(/[;:]|$/)).toUpperCase();
const valueOf = (l: string) => {
  const i = l.indexOf(":");
  return i < 0 ? "" : l.slice(i + 1).trim();
};

/** `plan`: a builder with a sink for the import's second pass (import.read.ts). */
export function readIcs(text: string, fileName: string, userTz: string, reminderTime = "09:00", plan = new PlanBuilder()): PlanSummary {
  const problems = new ImportProblems();
  const fallbackName = fileName.replace(/\.(ics|ical|ifb|icalendar)$/i, "").trim() || "Calendar";
  const stack: { name: string; line: number }[] = [];
  let calendars = 0;
  let listKey: string | null = null;
  let calendarProps: string[] = [];
  let chunk: ContentLine[] | null = null;
  const seen = new Map<string, number>();
  const children: { parent: string; child: string; line: number }[] = [];
  let sawContent = false;

  const calendarName = (): string => {
    if (!calendarProps.length) return fallbackName;
    try {
      const cal = new ICAL.Component(ICAL.parse(`BEGIN:VCALENDAR\r\n${calendarProps.join("\r\n")}\r\nEND:VCALENDAR\r\n`));
      const name = cal.getFirstPropertyValue("x-wr-calname");
      if (typeof name === "string" && name.trim()) return name.trim();
    } catch {
      // A malformed X-WR-CALNAME names nothing: the file's name does.
    }
    return fallbackName;
  };

  const finishTodo = (lines: ContentLine[]) => {
    const start = lines[0]!.line;
    for (const l of lines) {
      if (nameOf(l.text) === "PRIORITY" && !/^\d$/.test(valueOf(l.text))) problems.add(l.line, `PRIORITY ${JSON.stringify(valueOf(l.text).slice(0, 20))} is not 0 to 9`);
    }
    let t;
    try {
      t = vtodoToTask(new ICAL.Component(ICAL.parse(lines.map((l) => l.text).join("\r\n") + "\r\n")), userTz, reminderTime);
    } catch (e) {
      problems.add(start, `VTODO: ${(e as Error).message.split("\n")[0]!.slice(0, 150)}`);
      return;
    }
    const item = t.title.trim() || "(untitled)";
    if (lines.some((l) => nameOf(l.text) === "RECURRENCE-ID")) {
      plan.skip(start, item, "an override of one occurrence (RECURRENCE-ID): not imported");
      return;
    }
    const key = t.uid ?? `line:${start}`;
    const before = seen.get(key);
    if (before !== undefined) {
      plan.skip(start, item, `UID ${key.slice(0, 60)} was already used at line ${before}: not imported`);
      return;
    }
    seen.set(key, start);
    for (const c of t.changes) plan.change(start, item, c);
    for (const s of t.skips) plan.skip(start, item, s);
    for (const p of t.ignored) plan.skipOnce(`prop:${p}`, start, p.toUpperCase(), "property with no place in a task: ignored");
    const reminders: PlanReminder[] = [];
    for (const r of t.reminders) {
      if ("skip" in r) plan.skip(start, item, `reminder (VALARM) not imported: ${r.skip}`);
      else {
        reminders.push(r.reminder);
        if (r.change) plan.change(start, item, r.change);
      }
    }
    for (const child of t.childUids) children.push({ parent: key, child, line: start });
    if (listKey === null) listKey = plan.list(calendarName(), null, false, String(calendars));
    plan.task({
      key,
      line: start,
      listKey,
      parentKey: t.parentUid,
      title: t.title,
      description: t.description,
      completed: t.completed,
      completedAt: t.completedAt,
      dueAt: t.dueAt,
      priority: t.priority,
      createdAt: t.createdAt,
      tags: t.tags,
      recurrence: t.rrule ? { kind: "rrule", rrule: t.rrule, timezone: t.timezone } : null,
      order: t.order ?? 0,
      reminders,
    });
  };

  for (const l of contentLines(text)) {
    if (problems.full) break;
    const name = nameOf(l.text);
    if (!sawContent) {
      sawContent = true;
      if (!(name === "BEGIN" && valueOf(l.text).toUpperCase() === "VCALENDAR")) invalidFile(WHAT, "an iCalendar file starts with BEGIN:VCALENDAR", l.line);
    }
    if (!l.text.includes(":")) {
      problems.add(l.line, "not a content line (NAME:VALUE); a line break inside a value must be written \\n or folded");
      continue;
    }
    if (name === "BEGIN") {
      const comp = valueOf(l.text).toUpperCase();
      if (stack.length === 0 && comp !== "VCALENDAR") problems.add(l.line, `BEGIN:${comp.slice(0, 30)} outside a VCALENDAR`);
      stack.push({ name: comp, line: l.line });
      if (stack.length === 1) {
        calendars++;
        listKey = null;
        calendarProps = [];
      } else if (stack.length === 2) {
        if (comp === "VTODO") chunk = [];
        else if (comp === "VEVENT" || comp === "VJOURNAL") plan.skipOnce(`comp:${comp}`, l.line, comp, `${comp === "VEVENT" ? "events" : "journal entries"} are not tasks: not imported`);
      }
      if (chunk) chunk.push(l);
      continue;
    }
    if (name === "END") {
      const comp = valueOf(l.text).toUpperCase();
      const top = stack.pop();
      if (!top) {
        problems.add(l.line, `END:${comp.slice(0, 30)} without a BEGIN`);
        continue;
      }
      if (top.name !== comp) {
        problems.add(l.line, `END:${comp.slice(0, 30)} closes BEGIN:${top.name.slice(0, 30)} of line ${top.line}`);
        chunk = null;
        continue;
      }
      if (chunk) chunk.push(l);
      if (stack.length === 1 && comp === "VTODO" && chunk) {
        finishTodo(chunk);
        chunk = null;
      }
      continue;
    }
    if (chunk) chunk.push(l);
    else if (stack.length === 1) calendarProps.push(l.text);
  }
  for (const open of stack) problems.add(open.line, `BEGIN:${open.name.slice(0, 30)} is never ended`);
  if (!sawContent) invalidFile(WHAT, "the file is empty", 1);
  problems.throwIfAny(WHAT);

  // RELTYPE=CHILD on the parent: the child's parent, unless the child names another itself.
  for (const { parent, child, line } of children) {
    if (!plan.adoptChild(child, parent)) plan.change(line, child.slice(0, 60), "RELATED-TO;RELTYPE=CHILD names a task that is not in the file: ignored");
  }
  return plan.finish();
}
