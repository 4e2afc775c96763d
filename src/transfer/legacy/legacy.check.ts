import { dayNumber } from "../../core/days";
import type { LunarCalendar } from "../../features/countdowns/countdowns.rules";
import { isDateOnly } from "../../core/time";
import { checkedSeries, parseRRule } from "../../features/recurrence/recurrence.rules";
import { DueAt } from "../../features/tasks/tasks.schemas";
import { recurrenceOnSubtaskProblem } from "../../features/tasks/tasks.rules";
import { rejectWith, type Locate, type Problem } from "./legacy.problems";
import type { LegacyRecords } from "./legacy.records";
import { recordAt, recordPacer, type StoredFile } from "./legacy.stored";
import { KINDS, type Kind } from "./legacy.schemas";

// What can be checked within the file before anything is written.

export interface CheckedFile {
  /** Recurrence id → its DTSTART (kind rrule). */
  dtstart: Map<string, string>;
  /** Countdown id → lunar month/day (lunar calendar). */
  lunar: Map<string, { month: number; day: number; leap: boolean }>;
}

/** Everything that can be checked within the file: duplicates, references, the task tree, schedules. */
export function checkReferences(f: StoredFile, locate: Locate, lunarCalendar: LunarCalendar | null): CheckedFile {
  const problems: Problem[] = [];
  const idsOf = new Map<Kind, Map<string, number>>();
  for (const kind of KINDS) {
    const seen = new Map<string, number>();
    f.ids[kind].forEach((id, i) => {
      if (seen.has(id)) problems.push({ code: "validation_failed", path: locate(kind, i, "id"), message: `id ${id} appears twice` });
      else seen.set(id, i);
    });
    idsOf.set(kind, seen);
  }
  const folders = idsOf.get("folders")!;
  const lists = idsOf.get("lists")!;
  const tasks = idsOf.get("tasks")!;
  let inboxes = 0;
  const pacer = recordPacer();
  const each = <K extends Kind>(kind: K, fn: (r: LegacyRecords[K][number], i: number) => void) => {
    for (let i = 0; i < f.json[kind].length; i++) {
      fn(recordAt(f, kind, i), i);
      pacer.add();
    }
  };
  each("lists", (l, i) => {
    if (l.is_inbox) {
      inboxes++;
      if (inboxes > 1) problems.push({ code: "validation_failed", path: locate("lists", i, "is_inbox"), message: "only one list can be the inbox" });
      if (l.deleted_at !== null) problems.push({ code: "validation_failed", path: locate("lists", i, "deleted_at"), message: "the inbox cannot be archived" });
    }
    if (l.folder_id !== null && !folders.has(l.folder_id)) {
      problems.push({ code: "invalid_reference", path: locate("lists", i, "folder_id"), message: `no folder ${l.folder_id} in the file` });
    }
  });
  each("tasks", (t, i) => {
    if (!lists.has(t.list_id)) problems.push({ code: "invalid_reference", path: locate("tasks", i, "list_id"), message: `no list ${t.list_id} in the file` });
    if (t.parent_id === null) return;
    const pi = tasks.get(t.parent_id);
    if (pi === undefined) {
      problems.push({ code: "invalid_reference", path: locate("tasks", i, "parent_id"), message: `no task ${t.parent_id} in the file` });
      return;
    }
    const p = recordAt(f, "tasks", pi);
    if (p.parent_id !== null) problems.push({ code: "invalid_parent", path: locate("tasks", i, "parent_id"), message: `task ${t.parent_id} is itself a subtask; nesting is one level deep` });
    else if (p.list_id !== t.list_id) problems.push({ code: "invalid_parent", path: locate("tasks", i, "parent_id"), message: `task ${t.parent_id} is in another list` });
  });
  const dtstart = new Map<string, string>();
  const recurring = new Set<string>();
  each("recurrences", (r, i) => {
    const ti = tasks.get(r.task_id);
    if (ti === undefined) {
      problems.push({ code: "invalid_reference", path: locate("recurrences", i, "task_id"), message: `no task ${r.task_id} in the file` });
      return;
    }
    const task = recordAt(f, "tasks", ti);
    const onSubtask = recurrenceOnSubtaskProblem(task.parent_id);
    if (onSubtask) problems.push({ code: "validation_failed", path: locate("recurrences", i, "task_id"), message: onSubtask });
    if (recurring.has(r.task_id)) problems.push({ code: "validation_failed", path: locate("recurrences", i, "task_id"), message: `task ${r.task_id} has two recurrences` });
    recurring.add(r.task_id);
    if (r.kind !== "rrule") return;
    let start: string | null = task.due_at;
    if (r.dtstart !== null) {
      const d = DueAt.safeParse(r.dtstart);
      if (!d.success || d.data === null) {
        problems.push({ code: "validation_failed", path: locate("recurrences", i, "dtstart"), message: "a date YYYY-MM-DD or an RFC 3339 date-time" });
        return;
      }
      start = d.data;
    }
    if (start === null) {
      problems.push({ code: "validation_failed", path: locate("recurrences", i, "dtstart"), message: "an rrule recurrence needs a first occurrence (dtstart or the task's due_at)" });
      return;
    }
    const parsed = parseRRule(r.rrule!, isDateOnly(start));
    if (!parsed.ok) {
      problems.push({ code: "validation_failed", path: locate("recurrences", i, "rrule"), message: parsed.message });
      return;
    }
    const series = checkedSeries(parsed.rule, start, r.timezone);
    if (!series.ok) {
      problems.push({ code: "validation_failed", path: locate("recurrences", i, "rrule"), message: series.message });
      return;
    }
    dtstart.set(r.id, start);
  });
  const lunar = new Map<string, { month: number; day: number; leap: boolean }>();
  let pinned = 0;
  each("countdowns", (c, i) => {
    if (c.pinned && ++pinned > 1) problems.push({ code: "validation_failed", path: locate("countdowns", i, "pinned"), message: "only one countdown can be pinned" });
    if (c.calendar !== "lunar") return;
    if (!lunarCalendar) throw new Error("a lunar countdown needs the lunar calendar (StoredFile.needsLunar)");
    const l = lunarCalendar.toLunar(dayNumber(c.date), Number(c.date.slice(0, 4)));
    if (!lunarCalendar.inLunarRange(l)) {
      const range = `${lunarCalendar.LUNAR_MIN_YEAR} to ${lunarCalendar.LUNAR_MAX_YEAR}`;
      problems.push({ code: "validation_failed", path: locate("countdowns", i, "date"), message: `a lunar countdown needs a date in the lunar years ${range}` });
      return;
    }
    lunar.set(c.id, { month: l.month, day: l.day, leap: l.leap });
  });
  if (problems.length) rejectWith(problems);
  return { dtstart, lunar };
}
