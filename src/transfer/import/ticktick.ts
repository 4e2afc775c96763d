import { CsvSyntaxError, parseCsvBytes } from "../legacy/legacy.csv";
import { dueOf, instantOf, parseSourceTime, zoneOrNull, type SourceTime } from "./import.dates";
import { ImportProblems, PlanBuilder, invalidFile, type PlanSummary, type PlanTask } from "./import.plan";
import { durationSeconds, mapReminder, type PlanReminder, type ReminderTask, type ReminderUser } from "./reminder.mapping";

/**
 * TickTick's backup CSV (Settings → Backup): a preamble of quoted records ("Date: …", "Version:
 * 7.1"/"7.2", a multi-line "Status:" legend), then a header row and one row per task or note.
 * Shapes checked against published samples and other importers' fixtures (see
 * test/fixtures/import/README.md): the header is found by content, never by offset (preambles
 * differ); columns are read by name (7.2 adds `projectKind`; older files lack `Kind`); a record
 * may span lines (multi-line Content), and its line is the one it starts on.
 */

const WHAT = "a TickTick backup CSV";
/** Records read looking for the header before the file is judged not to be a TickTick backup. */
const PREAMBLE_MAX = 20;

const KNOWN = new Set([
  "Folder Name",
  "List Name",
  "Title",
  "Kind",
  "Tags",
  "Content",
  "Is Check list",
  "Start Date",
  "Due Date",
  "Reminder",
  "Repeat",
  "Priority",
  "Status",
  "Created Time",
  "Completed Time",
  "Order",
  "Timezone",
  "Is All Day",
  "Is Floating",
  "Column Name",
  "Column Order",
  "View Mode",
  "taskId",
  "parentId",
  "projectKind",
]);

/** TickTick 0 none, 1 low, 3 medium, 5 high → this app's 0..3. */
const PRIORITY: Record<string, number> = { "": 0, "0": 0, "1": 1, "3": 2, "5": 3 };

/** Checklist item markers of the Content cell: ▫ open, ▪ done. */
const OPEN_ITEM = "\u25ab";
const DONE_ITEM = "\u25aa";

/** `plan`: a builder with a sink for the import's second pass (import.read.ts). */
export function readTickTick(bytes: Uint8Array, userTz: string, reminderTime = "09:00", plan = new PlanBuilder()): PlanSummary {
  const problems = new ImportProblems();
  let col: Map<string, number> | null = null;
  let records = 0;
  const seenIds = new Map<string, number>();
  try {
    for (const row of parseCsvBytes(bytes)) {
      if (col === null) {
        if (row.cells.includes("Title") && row.cells.includes("List Name")) {
          col = new Map();
          row.cells.forEach((h, i) => {
            const name = h.trim();
            if (!col!.has(name)) col!.set(name, i);
            if (!KNOWN.has(name) && name) plan.skip(row.line, `column ${name}`, "not a TickTick column this importer knows: ignored");
          });
          continue;
        }
        if (++records >= PREAMBLE_MAX) break;
        continue;
      }
      if (problems.full) break;
      if (row.cells.every((c) => c.trim() === "")) continue;
      readRow(plan, problems, col, row.cells, row.line, { tz: userTz, reminderTime }, seenIds);
    }
  } catch (e) {
    if (e instanceof CsvSyntaxError) problems.add(e.line, `column ${e.column}: ${e.message}`);
    else throw e;
  }
  if (col === null && problems.size === 0) invalidFile(WHAT, 'no header row with the columns "List Name" and "Title" was found', 1);
  problems.throwIfAny(WHAT);
  return plan.finish();
}

function readRow(plan: PlanBuilder, problems: ImportProblems, col: Map<string, number>, cells: string[], line: number, user: ReminderUser, seenIds: Map<string, number>): void {
  const userTz = user.tz;
  const get = (name: string) => {
    const i = col.get(name);
    return i === undefined ? "" : (cells[i] ?? "");
  };
  if (cells.length > col.size && cells.slice(col.size).some((c) => c !== "")) {
    problems.add(line, `${cells.length} cells; the header has ${col.size}`);
    return;
  }
  const title = get("Title");
  const item = title.trim() || "(untitled)";
  const kind = get("Kind").trim().toUpperCase();
  if (kind && kind !== "TEXT" && kind !== "CHECKLIST" && kind !== "NOTE") {
    problems.add(line, `Kind ${JSON.stringify(kind.slice(0, 20))} is not TEXT, CHECKLIST or NOTE`);
    return;
  }
  const status = get("Status").trim();
  if (!["", "0", "1", "2", "-1"].includes(status)) problems.add(line, `Status ${JSON.stringify(status.slice(0, 20))} is not 0, 1, 2 or -1`);
  const priority = PRIORITY[get("Priority").trim()];
  if (priority === undefined) problems.add(line, `Priority ${JSON.stringify(get("Priority").slice(0, 20))} is not 0, 1, 3 or 5`);
  const zoneText = get("Timezone").trim();
  let tz = zoneOrNull(zoneText);
  if (tz === null) {
    if (zoneText) plan.changeOnce(`tz:${zoneText}`, line, `time zone ${zoneText.slice(0, 60)}`, `not a time zone: dates read in your time zone (${userTz})`);
    else plan.changeOnce("tz:empty", line, "Timezone", `empty: dates read in your time zone (${userTz})`);
    tz = userTz;
  }
  const time = (name: string): SourceTime | undefined => {
    const t = parseSourceTime(get(name));
    if (t === null) {
      problems.add(line, `${name} ${JSON.stringify(get(name).slice(0, 40))} is not a date-time`);
      return undefined;
    }
    return t;
  };
  const start = time("Start Date");
  const due = time("Due Date");
  const created = time("Created Time");
  const completedTime = time("Completed Time");
  const allDayText = get("Is All Day").trim().toLowerCase();
  if (allDayText && allDayText !== "true" && allDayText !== "false") problems.add(line, `Is All Day ${JSON.stringify(allDayText.slice(0, 20))} is not true or false`);
  const taskId = get("taskId").trim();
  if (taskId) {
    const before = seenIds.get(taskId);
    if (before !== undefined) problems.add(line, `taskId ${JSON.stringify(taskId.slice(0, 40))} is also the taskId of line ${before}`);
    else seenIds.set(taskId, line);
  }
  if (priority === undefined || problems.full) return;

  const isNote = kind === "NOTE" || get("projectKind").trim().toUpperCase() === "NOTE";
  const createdAt = created ? instantOf(created, tz) : null;
  if (isNote) {
    const content = get("Content");
    plan.memo({ line, content: title.trim() && content.trim() ? `${title.trim()}\n\n${content}` : title.trim() || content, createdAt });
    if (get("Tags").trim()) plan.change(line, item, "a note's tags are not kept (memos have none)");
    return;
  }

  const folderName = get("Folder Name").trim();
  const listName = get("List Name").trim();
  const inbox = !folderName && (listName === "" || listName.toLowerCase() === "inbox");
  const listKey = plan.list(listName || "Inbox", folderName ? plan.folder(folderName) : null, inbox);

  const allDay = allDayText === "true";
  let dueAt: string | null = null;
  if (due) dueAt = dueOf(due, allDay, tz);
  else if (start) {
    dueAt = dueOf(start, allDay, tz);
    plan.change(line, item, "no due date: its start date is the due date");
  }
  if (start && due && "instant" in start && "instant" in due && Temporal.Instant.compare(start.instant, due.instant) < 0) {
    plan.change(line, item, "starts before it is due: the start date is dropped (tasks have a due date only)");
  }
  if (get("Is Floating").trim().toLowerCase() === "true" && dueAt && !allDay) plan.changeOnce("floating", line, "Is Floating", "floating times are kept at their instant in the row's time zone");

  let completed = false;
  let completedAt: string | null = null;
  if (status === "1" || status === "2") {
    completed = true;
    completedAt = completedTime ? instantOf(completedTime, tz) : createdAt;
  } else if (status === "-1") {
    completed = true;
    completedAt = completedTime ? instantOf(completedTime, tz) : createdAt;
    plan.change(line, item, "won't do: imported as completed (this app has no won't-do state)");
  } else if (completedTime) {
    plan.change(line, item, "has a completion time but is open in TickTick (reopened): imported open");
  }

  const column = get("Column Name").trim();
  if (column) plan.skipOnce("kanban", line, "Column Name", "kanban columns are not kept (lists have no columns)");

  const key = taskId || `line:${line}`;
  const orderNum = Number(get("Order").trim());
  const base: Omit<PlanTask, "key" | "title" | "description" | "parentKey" | "recurrence" | "tags" | "completed" | "completedAt" | "order"> = {
    line,
    listKey,
    dueAt,
    priority,
    createdAt,
  };

  let description = get("Content");
  const checklist = kind === "CHECKLIST" || get("Is Check list").trim().toUpperCase() === "Y";
  const items: { title: string; done: boolean }[] = [];
  if (checklist) {
    const rest: string[] = [];
    for (const l of description.split(/\r\n|\r|\n/)) {
      const t = l.trimStart();
      if (t.startsWith(OPEN_ITEM) || t.startsWith(DONE_ITEM)) items.push({ title: t.slice(1).trim(), done: t.startsWith(DONE_ITEM) });
      else rest.push(l);
    }
    description = rest.join("\n").trim();
  }

  const recurrence = repeatOf(plan, get("Repeat"), line, item, tz);
  const reminders = remindersOf(plan, get("Reminder"), line, item, { dueAt, tz, repeats: recurrence !== null }, user);
  plan.task({
    ...base,
    key,
    title,
    description,
    parentKey: get("parentId").trim() || null,
    completed,
    completedAt,
    tags: get("Tags")
      .split(",")
      .map((t) => t.trim().replace(/^#/, ""))
      .filter(Boolean),
    recurrence,
    order: Number.isFinite(orderNum) ? orderNum : 0,
    reminders,
  });
  items.forEach((it, i) => {
    if (!it.title) return;
    plan.task({
      line,
      listKey,
      key: `${key}#item${i}`,
      title: it.title,
      description: "",
      parentKey: key,
      completed: it.done || completed,
      completedAt: it.done || completed ? (completedAt ?? createdAt) : null,
      dueAt: null,
      priority: 0,
      createdAt,
      tags: [],
      recurrence: null,
      order: i,
    });
  });
}

/**
 * The Repeat cell as this app's recurrence, or null (reported). TickTick writes an RRULE body,
 * sometimes with an `RRULE:` prefix; its own extensions (ERULE custom dates, LUNAR, TT_SKIP /
 * TT_WORKDAY parts) and several rules in one cell have no equivalent here and are never half-read:
 * "skip weekends" dropped silently would put tasks on days nobody chose.
 */
function repeatOf(plan: PlanBuilder, cell: string, line: number, item: string, tz: string): PlanTask["recurrence"] {
  const rules = cell
    .split(/\r\n|\r|\n/)
    .map((r) => r.trim())
    .filter(Boolean);
  if (rules.length === 0) return null;
  const text = rules.join(" | ").slice(0, 80);
  if (rules.length > 1) {
    plan.skip(line, item, `repeat dropped: several rules in one cell (${text})`);
    return null;
  }
  const rule = rules[0]!;
  const upper = rule.toUpperCase();
  if (upper.startsWith("ERULE:") || upper.startsWith("LUNAR:")) {
    plan.skip(line, item, `repeat dropped: ${text} (TickTick's ${upper.slice(0, 5)} rules have no equivalent here)`);
    return null;
  }
  if (/(^|[:;])TT_/.test(upper)) {
    plan.skip(line, item, `repeat dropped: ${text} (TickTick's TT_ parts, such as skipping holidays or weekends, have no equivalent here)`);
    return null;
  }
  // Validated with the task's due date when the plan is finished (PlanBuilder.checkTask).
  return { kind: "rrule", rrule: rule, timezone: tz };
}

/**
 * The Reminder cell as this app's reminders. TickTick writes one iCalendar TRIGGER duration per
 * reminder, with or without a `TRIGGER:` prefix, several separated by commas or line breaks: on a
 * timed task relative to the due time (`PT0S` at it, `-PT30M` 30 minutes before), on an all-day
 * task relative to the day's 00:00 in the row's zone (`P0DT9H0M0S` 09:00 that day,
 * `-P0DT15H0M0S` 09:00 the day before). Each one is mapped by mapReminder (vtodo.mapping.ts).
 */
function remindersOf(plan: PlanBuilder, cell: string, line: number, item: string, task: ReminderTask, user: ReminderUser): PlanReminder[] {
  const out: PlanReminder[] = [];
  for (const raw of cell.split(/[,\r\n]+/)) {
    const text = raw.trim();
    if (!text) continue;
    const seconds = durationSeconds(text.replace(/^TRIGGER(;[^:]*)?:/i, ""));
    if (seconds === null) {
      plan.skip(line, item, `reminder ${JSON.stringify(text.slice(0, 40))} not imported: not a TRIGGER duration`);
      continue;
    }
    const m = mapReminder({ kind: "offset", seconds }, task, user);
    if ("skip" in m) plan.skip(line, item, `reminder ${text.slice(0, 40)} not imported: ${m.skip}`);
    else {
      out.push(m.reminder);
      if (m.change) plan.change(line, item, `reminder ${text.slice(0, 40)}: ${m.change}`);
    }
  }
  return out;
}
