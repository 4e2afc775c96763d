import { isUtf8 } from "node:buffer";
import { unzipSync } from "fflate";
import { parseDateAndRepeat, LOCALES, type Locale } from "../../core/quick-add";
import { unsafePath } from "../backup/backup.archive";
import { CsvSyntaxError, parseCsvBytes } from "../legacy/legacy.csv";
import { zoneOrNull } from "./import.dates";
import { ImportProblems, PlanBuilder, invalidFile, type PlanSummary, type PlanRecurrence, type PlanTask } from "./import.plan";

/**
 * Todoist: a project exported as CSV ("Export as a template"), or the account backup, a ZIP of
 * one such CSV per active project (todoist.com/help "Download or restore backups"). Columns are
 * read by name (TYPE, CONTENT, DESCRIPTION, PRIORITY, INDENT, AUTHOR, RESPONSIBLE, DATE,
 * DATE_LANG, TIMEZONE, DURATION, DURATION_UNIT, DEADLINE, …; older files lack DESCRIPTION, newer
 * ones add IS_COLLAPSED). Each project is a folder: its tasks before the first section go to a
 * list named after the project, each section is a list of its own. `@label` words in CONTENT are
 * tags. DATE is Todoist's natural-language due string ("every monday", "Oct 12", "every! 3
 * days"), read by the quick add's parser (src/core/quick-add) in the row's TIMEZONE.
 */

const WHAT = "a Todoist CSV or backup ZIP";

/**
 * Todoist's PRIORITY column uses the app's own numbering, p1 the highest: 1 → high … 4 → none.
 * (Its API numbers the other way round, 4 = p1: Doist/todoist-python#18.) Evidence that exports
 * use the app's numbering: ordinary tasks carry 4 in exports quoted by other importers, the
 * official template's rows, and mrzmyr/ticktick-to-todoist#4 ("priority 4 is the default").
 */
const PRIORITY: Record<string, number> = { "1": 3, "2": 2, "3": 1, "4": 0 };

/** ZIP bounds (a bomb must not take the server's memory): entries, one CSV's size, all CSVs' size. */
const ZIP_MAX_ENTRIES = 1000;
const ZIP_ENTRY_MAX_BYTES = 64 * 1024 * 1024;
const ZIP_TOTAL_MAX_BYTES = 256 * 1024 * 1024;
/** Inflated bytes per compressed byte past 1 MiB: CSV text compresses ~5-10×, never 1000×. */
const ZIP_MAX_RATIO = 200;

/** A label: `@` at the start of a word, then anything but spaces (so `mail@example.com` is no label). */
const LABEL = /(^|\s)@([^\s@]+)/g;
/** Words that say a DATE repeats: such a DATE that the parser cannot read as a repeat is never made a one-off. */
const REPEAT_WORD = /\b(every|daily|weekly|monthly|yearly|annually|jeden|jede|jedes|täglich|wöchentlich|monatlich|jährlich|chaque|cada|ogni)\b|every!/i;
const RELATIVE_WORD = /\b(today|tomorrow|tonight|yesterday|next|this|in \d+)\b/i;

export function isZip(bytes: Uint8Array): boolean {
  return bytes.length >= 4 && bytes[0] === 0x50 && bytes[1] === 0x4b && (bytes[2] === 3 || bytes[2] === 5) && (bytes[3] === 4 || bytes[3] === 6);
}

/** A project's name from its file name: `Work [2203306141].csv` → `Work`. */
function projectName(fileName: string): string {
  const base = fileName.split("/").pop()!.replace(/\.csv$/i, "");
  return base.replace(/\s*\[[^\]]*\]\s*$/, "").trim() || "Todoist";
}

/** `plan`: a builder with a sink for the import's second pass (import.read.ts). */
export function readTodoist(bytes: Uint8Array, fileName: string, userTz: string, now: Date, plan = new PlanBuilder()): PlanSummary {
  const problems = new ImportProblems();
  // People expect their history to come along; Todoist's files do not carry it (its help: "Completed tasks and archived projects aren't included").
  plan.skip(undefined, "completed tasks", "Todoist exports and backups hold open tasks only: completed tasks and archived projects are not in the file");
  if (!isZip(bytes)) {
    if (!isUtf8(bytes)) invalidFile(WHAT, "the file is not UTF-8 text, nor a ZIP");
    readProject(plan, problems, bytes, projectName(fileName || "Todoist.csv"), null, userTz, now);
    problems.throwIfAny(WHAT);
    return plan.finish();
  }
  const { names: entries, ignored } = zipEntries(bytes);
  if (entries.length === 0) invalidFile(WHAT, "the ZIP holds no .csv file");
  for (const name of ignored) plan.skip(undefined, name, "not a .csv file: ignored");
  for (const name of entries) {
    if (problems.full) break;
    let files: Record<string, Uint8Array>;
    try {
      files = unzipSync(bytes, { filter: (f) => f.name === name });
    } catch (e) {
      problems.add(undefined, `cannot be inflated (${(e as Error).message})`, name);
      continue;
    }
    const csv = files[name]!;
    if (!isUtf8(csv)) {
      problems.add(undefined, "not UTF-8 text", name);
      continue;
    }
    readProject(plan, problems, csv, projectName(name), name, userTz, now);
  }
  problems.throwIfAny(WHAT);
  return plan.finish();
}

/** The .csv entries to read, checked against the bounds before anything is inflated. */
function zipEntries(bytes: Uint8Array): { names: string[]; ignored: string[] } {
  const found: { name: string; size: number; originalSize: number }[] = [];
  try {
    unzipSync(bytes, {
      filter: (f) => {
        found.push({ name: f.name, size: f.size, originalSize: f.originalSize });
        return false;
      },
    });
  } catch (e) {
    invalidFile(WHAT, `not a readable ZIP archive (${(e as Error).message})`);
  }
  if (found.length > ZIP_MAX_ENTRIES) invalidFile(WHAT, `the ZIP has ${found.length} entries; at most ${ZIP_MAX_ENTRIES}`);
  const problems = new ImportProblems();
  const names: string[] = [];
  const ignored: string[] = [];
  let total = 0;
  for (const f of found) {
    if (f.name.endsWith("/")) continue;
    const base = f.name.split("/").pop()!;
    if (f.name.startsWith("__MACOSX/") || base.startsWith(".")) continue;
    const unsafe = unsafePath(f.name);
    if (unsafe) problems.add(undefined, unsafe, f.name);
    else if (!/\.csv$/i.test(base)) ignored.push(f.name);
    else if (f.originalSize > ZIP_ENTRY_MAX_BYTES) problems.add(undefined, `inflates to ${f.originalSize} bytes; at most ${ZIP_ENTRY_MAX_BYTES}`, f.name);
    else if (f.originalSize > 1024 * 1024 && f.originalSize > f.size * ZIP_MAX_RATIO) problems.add(undefined, "compressed more than any CSV can be (a ZIP bomb?)", f.name);
    else {
      total += f.originalSize;
      names.push(f.name);
    }
  }
  if (total > ZIP_TOTAL_MAX_BYTES) problems.add(undefined, `the CSVs inflate to ${total} bytes; at most ${ZIP_TOTAL_MAX_BYTES}`);
  problems.throwIfAny(WHAT);
  // Inbox first, then by name: the order the projects are shown in Todoist is not in the backup.
  names.sort((a, b) => Number(projectName(b) === "Inbox") - Number(projectName(a) === "Inbox") || a.localeCompare(b));
  return { names, ignored };
}

function readProject(plan: PlanBuilder, problems: ImportProblems, bytes: Uint8Array, project: string, file: string | null, userTz: string, now: Date): void {
  const at = (item: string) => (file ? `${file}: ${item}` : item);
  const isInbox = project.toLowerCase() === "inbox";
  const folderKey = plan.folder(project);
  let listKey: string | null = null;
  let sectionKey: string | null = null;
  let col: Map<string, number> | null = null;
  /** The last task at each indent (1-based), for parents. */
  const byIndent: string[] = [];
  /**
   * The last task, handed to the plan once the comments below it are in its description (the
   * plan checks a task when it is given, and the import's second pass writes it then).
   */
  let lastTask: PlanTask | null = null;
  const handOver = () => {
    if (lastTask) plan.task(lastTask);
    lastTask = null;
  };
  try {
    for (const row of parseCsvBytes(bytes)) {
      if (problems.full) break;
      if (col === null) {
        col = new Map(row.cells.map((h, i) => [h.trim().toUpperCase(), i]));
        if (!col.has("TYPE") || !col.has("CONTENT")) {
          problems.add(row.line, 'no header row with the columns TYPE and CONTENT (a Todoist CSV starts with "TYPE,CONTENT,…")', file ?? undefined);
          return;
        }
        continue;
      }
      const get = (name: string) => {
        const i = col!.get(name);
        return i === undefined ? "" : (row.cells[i] ?? "").trim();
      };
      if (row.cells.every((c) => c.trim() === "")) continue;
      const type = get("TYPE");
      const line = row.line;
      if (type === "meta") continue;
      if (type === "section") {
        handOver();
        sectionKey = plan.list(get("CONTENT") || "(unnamed section)", folderKey, false, `${file ?? ""}\u0000${line}`);
        byIndent.length = 0;
        continue;
      }
      if (type === "note") {
        const text = get("CONTENT");
        if (!lastTask) {
          plan.skip(line, at("comment"), "a comment before any task: not imported");
          continue;
        }
        if (text) lastTask.description = lastTask.description ? `${lastTask.description}\n\n---\n${text}` : text;
        plan.changeOnce(`note:${file}`, line, at("comments"), "comments are added to their task's description");
        continue;
      }
      if (type !== "task") {
        problems.add(line, `TYPE ${JSON.stringify(type.slice(0, 20))} is not task, section, note or meta`, file ?? undefined);
        continue;
      }
      const content = get("CONTENT");
      const tags: string[] = [];
      const title = content
        .replace(LABEL, (_m, pre: string, label: string) => {
          tags.push(label);
          return pre;
        })
        .replace(/\s+/g, " ")
        .trim();
      const item = at(title || "(untitled)");
      const prioText = get("PRIORITY");
      let priority = 0;
      if (prioText === "") plan.changeOnce(`prio:${file}`, line, at("PRIORITY"), "empty: imported without a priority");
      else if (PRIORITY[prioText] === undefined) problems.add(line, `PRIORITY ${JSON.stringify(prioText.slice(0, 20))} is not 1, 2, 3 or 4`, file ?? undefined);
      else priority = PRIORITY[prioText]!;
      const indentText = get("INDENT") || "1";
      const indent = Number(indentText);
      if (!Number.isInteger(indent) || indent < 1 || indent > 100) {
        problems.add(line, `INDENT ${JSON.stringify(indentText.slice(0, 20))} is not a whole number from 1`, file ?? undefined);
        continue;
      }
      let parentKey: string | null = null;
      if (indent > 1) {
        for (let i = Math.min(indent - 1, byIndent.length); i >= 1 && parentKey === null; i--) parentKey = byIndent[i - 1] ?? null;
        if (parentKey === null) plan.change(line, item, `INDENT ${indent} with no task above it: imported as a top-level task`);
      }
      const key = `${file ?? ""}\u0000${line}`;
      byIndent.length = indent - 1;
      byIndent[indent - 1] = key;

      const zone = zoneOrNull(get("TIMEZONE")) ?? userTz;
      if (get("TIMEZONE") && zoneOrNull(get("TIMEZONE")) === null) plan.changeOnce(`tz:${get("TIMEZONE")}`, line, at(`TIMEZONE ${get("TIMEZONE").slice(0, 40)}`), `not a time zone: dates read in your time zone (${userTz})`);
      const { dueAt, recurrence } = dueOf(plan, get("DATE"), get("DATE_LANG"), zone, now, line, item);
      if (get("RESPONSIBLE")) plan.skipOnce(`resp:${file}`, line, at("RESPONSIBLE"), "assignees are not kept (tasks here have no assignee)");
      if (get("DURATION")) plan.skipOnce(`dur:${file}`, line, at("DURATION"), "durations are not kept");
      if (get("DEADLINE")) plan.skip(line, item, `deadline ${get("DEADLINE").slice(0, 40)} not kept (tasks here have one due date: DATE)`);

      if (listKey === null && sectionKey === null) listKey = isInbox ? plan.list("Inbox", null, true) : plan.list(project, folderKey);
      handOver();
      lastTask = {
        key,
        line,
        listKey: sectionKey ?? listKey!,
        parentKey,
        title,
        description: get("DESCRIPTION"),
        completed: false,
        completedAt: null,
        dueAt,
        priority,
        createdAt: null,
        tags,
        recurrence,
        order: 0,
      };
    }
  } catch (e) {
    if (e instanceof CsvSyntaxError) problems.add(e.line, `column ${e.column}: ${e.message}`, file ?? undefined);
    else throw e;
  }
  handOver();
  if (col === null) problems.add(1, "the CSV is empty", file ?? undefined);
}

/**
 * A DATE cell through the quick add's parser: a date or an instant, and a repeat. A phrase that
 * says it repeats but is not understood as a repeat is reported and not imported as a one-off
 * date (a weekly task that happens once would be wrong without a word).
 */
function dueOf(plan: PlanBuilder, text: string, lang: string, timeZone: string, now: Date, line: number, item: string): { dueAt: string | null; recurrence: PlanRecurrence | null } {
  if (!text) return { dueAt: null, recurrence: null };
  const code = lang.toLowerCase().split(/[-_]/)[0] || "en";
  const locale = (LOCALES as readonly string[]).includes(code) ? (code as Locale) : null;
  if (locale === null) {
    plan.skip(line, item, `DATE ${JSON.stringify(text.slice(0, 60))} in language ${lang.slice(0, 10)}: not understood, imported without a date`);
    return { dueAt: null, recurrence: null };
  }
  const r = parseDateAndRepeat(text, { now, timeZone, locale });
  if (REPEAT_WORD.test(text) && r.recurrence === null) {
    plan.skip(line, item, `DATE ${JSON.stringify(text.slice(0, 60))}: the repeat is not understood; imported without a date`);
    return { dueAt: null, recurrence: null };
  }
  if (r.due_at === null && r.recurrence === null) {
    plan.skip(line, item, `DATE ${JSON.stringify(text.slice(0, 60))}: not understood; imported without a date`);
    return { dueAt: null, recurrence: null };
  }
  let rest = text;
  for (const t of [...r.tokens].sort((a, b) => b.start - a.start)) rest = rest.slice(0, t.start) + " " + rest.slice(t.end);
  rest = rest.replace(/\b(at|on|starting|from|@)\b|@|,/gi, " ").trim();
  if (rest) plan.change(line, item, `DATE ${JSON.stringify(text.slice(0, 60))}: "${rest.slice(0, 40)}" not understood; the rest was read`);
  if (RELATIVE_WORD.test(text) && r.recurrence === null) plan.change(line, item, `DATE ${JSON.stringify(text.slice(0, 60))} is relative: read from the day of the import (${r.due_at})`);
  else if (r.due_at && r.recurrence === null && !/\d{4}/.test(text)) plan.change(line, item, `DATE ${JSON.stringify(text.slice(0, 60))} has no year: read as the next one (${r.due_at.slice(0, 10)})`);
  if (r.recurrence && r.due_at && /\b(starting|from)\b/i.test(text) === false && r.recurrence.kind === "rrule") {
    plan.changeOnce("repeat-start", line, "DATE", "Todoist backups keep a repeat's rule but not its start: repeats start from the day of the import");
  }
  const recurrence: PlanRecurrence | null =
    r.recurrence === null ? null : r.recurrence.kind === "rrule" ? { kind: "rrule", rrule: r.recurrence.rrule, timezone: r.recurrence.timezone } : { ...r.recurrence, timezone: timeZone };
  return { dueAt: r.due_at, recurrence };
}
