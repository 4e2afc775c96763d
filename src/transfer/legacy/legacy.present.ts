import type { CountdownExportRow as CountdownOut } from "../../features/countdowns/countdowns.repo";
import type { FolderExportRow as FolderOut } from "../../features/folders/folders.repo";
import type { HabitExportRow as HabitOut } from "../../features/habits/habits.repo";
import type { ListExportRow as ListOut } from "../../features/lists/lists.repo";
import type { MemoExportRow as MemoOut } from "../../features/memos/memos.repo";
import { presentRecurrence } from "../../features/recurrence/recurrence.present";
import type { RecurrenceExportRow as RecurrenceOut } from "../../features/recurrence/recurrence.repo";
import type { TaskWithTagNamesRow as TaskOut } from "../../features/tasks/tasks.repo";
import type { ReminderExportRow } from "../../features/reminders/reminders.repo";
import { FIELDS } from "../../features/reminders/reminders.rules";
import { BOM, encodeRow } from "./legacy.csv";
import type { Kind } from "./legacy.schemas";

// Row → legacy v1 record (the API's field names), and the two file forms: JSON and CSV.

export type LegacyRecord = Record<string, unknown>;

/** A reminder as a legacy record carries it: `kind` and that kind's fields (the API's create body). */
export function reminderRecord(r: ReminderExportRow): LegacyRecord {
  const out: LegacyRecord = { kind: r.kind };
  for (const f of FIELDS[r.kind]) out[f] = r[f];
  return out;
}

export const toRecord = {
  folders: (r: FolderOut): LegacyRecord => ({ id: r.id, name: r.name, position: r.position, created_at: r.created_at, updated_at: r.updated_at }),
  lists: (r: ListOut): LegacyRecord => ({
    id: r.id,
    name: r.name,
    folder_id: r.folder_id,
    is_inbox: r.is_inbox === 1,
    color: r.color,
    position: r.position,
    sort: r.sort,
    created_at: r.created_at,
    updated_at: r.updated_at,
    deleted_at: r.deleted_at,
  }),
  tasks: (r: TaskOut, reminders: LegacyRecord[] = []): LegacyRecord => ({
    id: r.id,
    list_id: r.list_id,
    parent_id: r.parent_id,
    title: r.title,
    description: r.description,
    completed: r.completed === 1,
    completed_at: r.completed_at,
    due_at: r.due_at,
    priority: r.priority,
    rank: r.rank,
    tags: JSON.parse(r.tags) as string[],
    reminders,
    created_at: r.created_at,
    updated_at: r.updated_at,
    deleted_at: r.deleted_at,
  }),
  recurrences: (r: RecurrenceOut): LegacyRecord => {
    // The API's recurrence without its exceptions (legacy v1 has none).
    const { exceptions: _, ...record } = presentRecurrence(r, []);
    return record;
  },
  habits: (r: HabitOut, reminders: LegacyRecord[] = []): LegacyRecord => ({
    id: r.id,
    name: r.name,
    icon: r.icon,
    color: r.color,
    frequency: JSON.parse(r.frequency) as unknown,
    goal: r.goal,
    unit: r.unit,
    start_date: r.start_date,
    position: r.position,
    archived: r.archived_at !== null,
    reminders,
    created_at: r.created_at,
    updated_at: r.updated_at,
  }),
  countdowns: (r: CountdownOut, reminders: LegacyRecord[] = []): LegacyRecord => ({
    id: r.id,
    name: r.name,
    date: r.date,
    type: r.type,
    repeat: r.repeat,
    icon: r.icon,
    calendar: r.calendar,
    lunar: r.calendar === "lunar" && r.lunar_month !== null && r.lunar_day !== null ? { month: r.lunar_month, day: r.lunar_day, leap: r.lunar_leap === 1 } : null,
    pinned: r.pinned === 1,
    archived: r.archived_at !== null,
    reminders,
    created_at: r.created_at,
    updated_at: r.updated_at,
  }),
  memos: (r: MemoOut): LegacyRecord => ({
    id: r.id,
    content: r.content,
    pinned: r.pinned === 1,
    created_at: r.created_at,
    updated_at: r.updated_at,
    deleted_at: r.deleted_at,
  }),
};

/** Singular `kind` values of the CSV. */
export const CSV_KIND: Record<Kind, string> = {
  folders: "folder",
  lists: "list",
  tasks: "task",
  recurrences: "recurrence",
  habits: "habit",
  countdowns: "countdown",
  memos: "memo",
};

type CellType = "string" | "nullable" | "boolean" | "number" | "json";

/** Fields of each kind in the CSV, with how a cell is read back. The recurrence's own `kind` is `recurrence_kind`. */
export const CSV_FIELDS: Record<Kind, Record<string, CellType>> = {
  folders: { id: "string", name: "string", position: "number", created_at: "string", updated_at: "string" },
  lists: {
    id: "string",
    name: "string",
    folder_id: "nullable",
    is_inbox: "boolean",
    color: "nullable",
    position: "number",
    sort: "nullable",
    created_at: "string",
    updated_at: "string",
    deleted_at: "nullable",
  },
  tasks: {
    id: "string",
    list_id: "string",
    parent_id: "nullable",
    title: "string",
    description: "string",
    completed: "boolean",
    completed_at: "nullable",
    due_at: "nullable",
    priority: "number",
    rank: "nullable",
    tags: "json",
    reminders: "json",
    created_at: "string",
    updated_at: "string",
    deleted_at: "nullable",
  },
  recurrences: {
    id: "string",
    task_id: "string",
    kind: "string",
    rrule: "nullable",
    interval: "number",
    unit: "nullable",
    timezone: "string",
    dtstart: "nullable",
    created_at: "string",
    updated_at: "string",
  },
  habits: {
    id: "string",
    name: "string",
    icon: "nullable",
    color: "nullable",
    frequency: "json",
    goal: "number",
    unit: "nullable",
    start_date: "string",
    position: "number",
    archived: "boolean",
    reminders: "json",
    created_at: "string",
    updated_at: "string",
  },
  countdowns: {
    id: "string",
    name: "string",
    date: "string",
    type: "string",
    repeat: "string",
    icon: "nullable",
    calendar: "string",
    lunar: "json",
    pinned: "boolean",
    archived: "boolean",
    reminders: "json",
    created_at: "string",
    updated_at: "string",
  },
  memos: { id: "string", content: "string", pinned: "boolean", created_at: "string", updated_at: "string", deleted_at: "nullable" },
};

/** The CSV column of a record field. */
export function columnOf(kind: Kind, field: string): string {
  return kind === "recurrences" && field === "kind" ? "recurrence_kind" : field;
}

/** Every column, in header order: `kind` first, then each field the first time a kind uses it. */
export const CSV_COLUMNS: string[] = (() => {
  const cols = ["kind"];
  for (const kind of Object.keys(CSV_FIELDS) as Kind[]) {
    for (const f of Object.keys(CSV_FIELDS[kind])) {
      const c = columnOf(kind, f);
      if (!cols.includes(c)) cols.push(c);
    }
  }
  // Timestamps last, as a reader expects.
  for (const t of ["created_at", "updated_at", "deleted_at"]) {
    cols.splice(cols.indexOf(t), 1);
    cols.push(t);
  }
  return cols;
})();

function cellText(v: unknown): string {
  if (v === null || v === undefined) return "";
  if (typeof v === "boolean") return v ? "true" : "false";
  if (typeof v === "number") return String(v);
  if (typeof v === "string") return v;
  return JSON.stringify(v);
}

/** CSV writer: the BOM and header first, then one row per record, each handed to `emit`. */
export class CsvWriter {
  private readonly index = new Map(CSV_COLUMNS.map((c, i) => [c, i]));

  constructor(private readonly emit: (row: string) => void) {
    emit(BOM + encodeRow(CSV_COLUMNS));
  }

  add(kind: Kind, record: LegacyRecord): void {
    const cells = new Array<string>(CSV_COLUMNS.length).fill("");
    cells[0] = CSV_KIND[kind];
    for (const [f, v] of Object.entries(record)) cells[this.index.get(columnOf(kind, f))!] = cellText(v);
    this.emit(encodeRow(cells));
  }
}

/** A cell read back into the value its field holds; a cell that does not fit is passed on as text for validation to name. */
export function cellValue(type: CellType, cell: string): unknown {
  switch (type) {
    case "string":
      return cell;
    case "nullable":
      return cell === "" ? null : cell;
    case "boolean":
      return cell === "true" ? true : cell === "false" ? false : cell;
    case "number":
      if (cell === "") return null;
      return /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(cell) ? Number(cell) : cell;
    case "json":
      if (cell === "") return null;
      try {
        return JSON.parse(cell) as unknown;
      } catch {
        return cell;
      }
  }
}
