import { AppError } from "../../core/errors";
import { ProblemList } from "../../core/problem-caps";
import { charCount } from "../../core/text";
import { checkSchedule, MAX_INTERVAL, type Unit } from "../../features/recurrence/recurrence.rules";
import { recurrenceOnSubtaskProblem } from "../../features/tasks/tasks.rules";
import { DESCRIPTION_MAX, TITLE_MAX } from "../../features/tasks/tasks.schemas";
import { LIST_NAME_MAX } from "../../features/lists/lists.schemas";
import { FOLDER_NAME_MAX } from "../../features/folders/folders.schemas";
import { TAG_NAME_MAX } from "../../features/tags/tags.schemas";
import { MEMO_CONTENT_MAX } from "../../features/memos/memos.schemas";
import { tagNameKey } from "../../features/tags/tags.repo";
import { REMINDERS_PER_TARGET } from "../../features/reminders/reminders.rules";
import { MINUTES_MAX } from "../../features/reminders/reminders.schemas";
import { zeroCounts, type Changed, type ImportCounts, type Skipped } from "./import.schemas";
import type { PlanReminder } from "./vtodo.mapping";

/**
 * What a file from another app becomes, whatever its format: folders, lists, tasks (with their
 * source ids and parent links still to resolve), memos, and the notes of the preview (what is
 * skipped, what is changed, each with the line its row starts on). Each reader (ticktick.ts,
 * todoist.ts, ics.ts) fills a PlanBuilder; finish() resolves the tree and checks every task
 * against the rules an API write obeys, so the preview and the import say and do the same.
 */

export interface PlanFolder {
  key: string;
  name: string;
}

export interface PlanList {
  key: string;
  name: string;
  folderKey: string | null;
  /** The source's inbox: its tasks go to the user's inbox. */
  inbox: boolean;
}

export type PlanRecurrence = { kind: "rrule"; rrule: string; timezone: string } | { kind: "after_completion"; interval: number; unit: Unit; timezone: string };

export interface PlanTask {
  /** Unique in the file: the source's id, or a made-up one. */
  key: string;
  line?: number;
  listKey: string;
  /** The source id of the parent (resolved by finish(); null after it for top-level tasks). */
  parentKey: string | null;
  title: string;
  description: string;
  completed: boolean;
  completedAt: string | null;
  /** A date (YYYY-MM-DD) or a UTC instant with milliseconds, as tasks store it. */
  dueAt: string | null;
  priority: number;
  createdAt: string | null;
  tags: string[];
  recurrence: PlanRecurrence | null;
  /** The source's order inside its list (lower first); ties keep the file's order. */
  order: number;
  /** Reminders to create on the task (at most REMINDERS_PER_TARGET after finish()). */
  reminders?: PlanReminder[];
}

export interface PlanMemo {
  line?: number;
  content: string;
  createdAt: string | null;
}

export interface Plan {
  folders: PlanFolder[];
  lists: PlanList[];
  /** Parents before their subtasks; parentKey names a task of the plan or is null. */
  tasks: PlanTask[];
  memos: PlanMemo[];
  counts: ImportCounts;
  skipped: Skipped[];
  changed: Changed[];
}

/** Notes listed per kind in a preview; past it a last entry counts the rest (a 20k-row file stays small). */
export const NOTES_MAX = 500;

class NoteList<T extends Skipped | Changed> {
  readonly items: T[] = [];
  private omitted = 0;
  constructor(private readonly more: (n: number) => T) {}
  add(n: T): void {
    if (this.items.length < NOTES_MAX) this.items.push(n);
    else this.omitted++;
  }
  done(): T[] {
    return this.omitted ? [...this.items, this.more(this.omitted)] : this.items;
  }
}

/** Notes that repeat on many rows (a column ignored, a zone assumed) are said once, with the first line and how many rows. */
class GroupedNote {
  first?: number;
  n = 0;
  hit(line?: number): void {
    if (this.n++ === 0) this.first = line;
  }
}

/** Line-numbered problems of a file that cannot be read as its format: 422 import_invalid. */
export class ImportProblems {
  private readonly list = new ProblemList();
  /** `file`: the entry of a ZIP the line is in. */
  add(line: number | undefined, message: string, file?: string): void {
    const where = line === undefined ? "file" : `line ${line}`;
    this.list.add(file === undefined ? where : line === undefined ? file : `${file}, ${where}`, message);
  }
  get size(): number {
    return this.list.size;
  }
  get full(): boolean {
    return this.list.full;
  }
  throwIfAny(what: string): void {
    if (this.list.size === 0) return;
    const first = this.list.items[0]!;
    throw new AppError("import_invalid", `the file cannot be read as ${what}: ${this.list.size} problem(s); first: ${first.path}: ${first.message}`, { errors: this.list.toErrors() });
  }
}

/** A whole-file problem (no header, not UTF-8, not a ZIP): 422 import_invalid at once. */
export function invalidFile(what: string, message: string, line?: number): never {
  const p = new ImportProblems();
  p.add(line, message);
  return p.throwIfAny(what) as never;
}

const noControl = (s: string) => s.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, "");

/** `s` cut to `max` code points, never between the halves of a surrogate pair. */
function cut(s: string, max: number): string {
  if (s.length <= max || charCount(s) <= max) return s;
  return [...s].slice(0, max).join("");
}

export class PlanBuilder {
  private readonly folders = new Map<string, PlanFolder>();
  private readonly lists = new Map<string, PlanList>();
  readonly tasks: PlanTask[] = [];
  private readonly taskKeys = new Set<string>();
  readonly memos: PlanMemo[] = [];
  private readonly skippedNotes = new NoteList<Skipped>((n) => ({ item: "…", reason: `${n} more skipped item(s) not listed` }));
  private readonly changedNotes = new NoteList<Changed>((n) => ({ item: "…", what: `${n} more changed item(s) not listed` }));
  private readonly groupedSkips = new Map<string, { note: GroupedNote; item: string; reason: string }>();
  private readonly groupedChanges = new Map<string, { note: GroupedNote; item: string; what: string }>();

  skip(line: number | undefined, item: string, reason: string): void {
    this.skippedNotes.add(line === undefined ? { item, reason } : { line, item, reason });
  }
  change(line: number | undefined, item: string, what: string): void {
    this.changedNotes.add(line === undefined ? { item, what } : { line, item, what });
  }
  /** A note said once for every row it applies to ("on N rows, first at line L"). */
  skipOnce(key: string, line: number | undefined, item: string, reason: string): void {
    let g = this.groupedSkips.get(key);
    if (!g) this.groupedSkips.set(key, (g = { note: new GroupedNote(), item, reason }));
    g.note.hit(line);
  }
  changeOnce(key: string, line: number | undefined, item: string, what: string): void {
    let g = this.groupedChanges.get(key);
    if (!g) this.groupedChanges.set(key, (g = { note: new GroupedNote(), item, what }));
    g.note.hit(line);
  }

  /** The folder of this name (one per name in the file). */
  folder(name: string): string {
    const key = `f:${name}`;
    if (!this.folders.has(key)) this.folders.set(key, { key, name });
    return key;
  }

  /**
   * The list of this name in this folder (or at root); the inbox is the user's inbox. `distinct`
   * makes a list of its own even when another has the same name (one per .ics calendar).
   */
  list(name: string, folderKey: string | null, inbox = false, distinct?: string): string {
    const key = inbox ? "inbox" : distinct !== undefined ? `l#${distinct}` : `l:${folderKey ?? ""}\u0000${name}`;
    if (!this.lists.has(key)) this.lists.set(key, { key, name, folderKey: inbox ? null : folderKey, inbox });
    return key;
  }

  hasTask(key: string): boolean {
    return this.taskKeys.has(key);
  }

  task(t: PlanTask): void {
    this.taskKeys.add(t.key);
    this.tasks.push(t);
  }

  memo(m: PlanMemo): void {
    this.memos.push(m);
  }

  /**
   * Resolves the subtask tree (one level: deeper levels go onto the top-level ancestor; a missing
   * parent, a cycle or a parent in another list makes a top-level task), checks each task as an
   * API write would (lengths, tag names, the recurrence for its due date), orders parents first,
   * and counts.
   */
  finish(): Plan {
    const byKey = new Map<string, PlanTask>();
    for (const t of this.tasks) byKey.set(t.key, t);
    const item = (t: PlanTask) => t.title || "(untitled)";

    // Parents: missing or self → top-level.
    for (const t of this.tasks) {
      if (t.parentKey === null) continue;
      if (t.parentKey === t.key) {
        this.change(t.line, item(t), "its parent is itself: imported as a top-level task");
        t.parentKey = null;
      } else if (!byKey.has(t.parentKey)) {
        this.change(t.line, item(t), `its parent (${t.parentKey}) is not in the file: imported as a top-level task`);
        t.parentKey = null;
      }
    }
    // Top-level ancestor of each task; a cycle is broken at the task where it is found.
    const rootOf = new Map<string, string>();
    const findRoot = (t: PlanTask): string => {
      if (t.parentKey === null) return t.key;
      const known = rootOf.get(t.key);
      if (known) return known;
      const path: PlanTask[] = [];
      const onPath = new Set<string>();
      let cur = t;
      while (cur.parentKey !== null) {
        const k = rootOf.get(cur.key);
        if (k) break;
        if (onPath.has(cur.key)) {
          this.change(cur.line, item(cur), "its parents form a cycle: imported as a top-level task");
          cur.parentKey = null;
          break;
        }
        onPath.add(cur.key);
        path.push(cur);
        cur = byKey.get(cur.parentKey)!;
      }
      const root = rootOf.get(cur.key) ?? cur.key;
      rootOf.set(cur.key, root);
      for (const p of path) rootOf.set(p.key, root);
      return root;
    };
    for (const t of this.tasks) findRoot(t);
    for (const t of this.tasks) {
      if (t.parentKey === null) continue;
      const root = rootOf.get(t.key) ?? t.key;
      const r = byKey.get(root)!;
      if (r.listKey !== t.listKey) {
        this.change(t.line, item(t), "its parent is in another list: imported as a top-level task");
        t.parentKey = null;
        continue;
      }
      if (t.parentKey !== root) {
        this.change(t.line, item(t), `nested more than one level deep: made a subtask of "${cut(item(r), 60)}" (subtasks are one level deep here)`);
        t.parentKey = root;
      }
    }

    const tagKeys = new Set<string>();
    for (const t of this.tasks) this.checkTask(t, item(t), tagKeys);
    const memos: PlanMemo[] = [];
    for (const m of this.memos) {
      const content = noControl(m.content).trim();
      if (!content) {
        this.skip(m.line, "note", "the note is empty");
        continue;
      }
      if (charCount(content) > MEMO_CONTENT_MAX) this.change(m.line, cut(content, 60), `cut to ${MEMO_CONTENT_MAX} characters`);
      memos.push({ ...m, content: cut(content, MEMO_CONTENT_MAX) });
    }

    // Parents first, then each list's tasks by the source's order (stable: file order on ties).
    const sorted = this.tasks.map((t, i) => ({ t, i })).sort((a, b) => a.t.order - b.t.order || a.i - b.i);
    const tasks = [...sorted.filter((x) => x.t.parentKey === null), ...sorted.filter((x) => x.t.parentKey !== null)].map((x) => x.t);

    // Every list a reader named is made (a Todoist section without tasks too); the inbox is the user's.
    const lists = [...this.lists.values()];
    for (const l of lists) {
      const name = noControl(l.name).trim() || "(unnamed)";
      if (name !== l.name.trim()) this.change(undefined, l.name || "(unnamed list)", `list name changed to "${cut(name, 60)}"`);
      l.name = cut(name, LIST_NAME_MAX);
    }
    const usedFolders = new Set(lists.map((l) => l.folderKey));
    const folders = [...this.folders.values()].filter((f) => usedFolders.has(f.key));
    for (const f of folders) f.name = cut(noControl(f.name).trim() || "(unnamed)", FOLDER_NAME_MAX);

    for (const g of this.groupedSkips.values()) this.skip(g.note.first, g.item, g.note.n > 1 ? `${g.reason} (${g.note.n} rows)` : g.reason);
    for (const g of this.groupedChanges.values()) this.change(g.note.first, g.item, g.note.n > 1 ? `${g.what} (${g.note.n} rows)` : g.what);

    const counts = zeroCounts();
    counts.folders = folders.length;
    counts.lists = lists.filter((l) => !l.inbox).length;
    for (const t of tasks) {
      if (t.parentKey === null) counts.tasks++;
      else counts.subtasks++;
      if (t.recurrence) counts.recurrences++;
      counts.reminders += t.reminders?.length ?? 0;
    }
    counts.tags = tagKeys.size;
    counts.memos = memos.length;
    return { folders, lists, tasks, memos, counts, skipped: this.skippedNotes.done(), changed: this.changedNotes.done() };
  }

  /** Lengths, tags and recurrence of one task, as the API would take them. */
  private checkTask(t: PlanTask, item: string, tagKeys: Set<string>): void {
    const title = noControl(t.title).replace(/[\r\n]+/g, " ").trim();
    if (!title) {
      this.change(t.line, "(untitled)", 'the title is empty: imported as "(untitled)"');
      t.title = "(untitled)";
    } else {
      if (charCount(title) > TITLE_MAX) this.change(t.line, cut(title, 60), `title cut to ${TITLE_MAX} characters`);
      t.title = cut(title, TITLE_MAX);
    }
    const description = noControl(t.description);
    if (charCount(description) > DESCRIPTION_MAX) this.change(t.line, item, `description cut to ${DESCRIPTION_MAX} characters`);
    t.description = cut(description, DESCRIPTION_MAX);
    if (!t.completed) t.completedAt = null;
    const tags: string[] = [];
    const keys = new Set<string>();
    for (const raw of t.tags) {
      const name = noControl(raw).trim();
      if (!name) continue;
      if (charCount(name) > TAG_NAME_MAX) {
        this.skip(t.line, item, `tag "${cut(name, 40)}…" is longer than ${TAG_NAME_MAX} characters`);
        continue;
      }
      const key = tagNameKey(name);
      if (keys.has(key)) continue;
      keys.add(key);
      tags.push(name);
      tagKeys.add(key);
    }
    t.tags = tags;
    if (t.reminders?.some((r) => r.kind === "before_due" && r.minutesBefore > MINUTES_MAX)) {
      this.skip(t.line, item, `a reminder more than ${MINUTES_MAX / 1440} days before the due date`);
      t.reminders = t.reminders.filter((r) => !(r.kind === "before_due" && r.minutesBefore > MINUTES_MAX));
    }
    if (t.reminders && t.reminders.length > REMINDERS_PER_TARGET) {
      this.skip(t.line, item, `${t.reminders.length - REMINDERS_PER_TARGET} reminder(s) past the first ${REMINDERS_PER_TARGET}: a task has at most ${REMINDERS_PER_TARGET} reminders`);
      t.reminders = t.reminders.slice(0, REMINDERS_PER_TARGET);
    }
    const r = t.recurrence;
    if (!r) return;
    const drop = (why: string) => {
      this.skip(t.line, item, `repeat dropped: ${why}`);
      t.recurrence = null;
    };
    const sub = recurrenceOnSubtaskProblem(t.parentKey);
    if (sub) return drop(sub);
    // A completed row of a repeating task is a past occurrence (the sources keep the series on the open one).
    if (t.completed) return drop("the task is completed (a past occurrence)");
    if (r.kind === "after_completion") {
      if (!Number.isInteger(r.interval) || r.interval < 1 || r.interval > MAX_INTERVAL) drop(`the interval must be 1 to ${MAX_INTERVAL}`);
      return;
    }
    if (t.dueAt === null) return drop("the task has no due date to repeat from");
    const checked = checkSchedule(r.rrule, t.dueAt, r.timezone);
    if (!checked.ok) return drop(`${r.rrule.slice(0, 80)}: ${checked.message}`);
    r.rrule = checked.text;
  }
}
