import { AppError } from "../../core/errors";
import { ProblemList } from "../../core/problem-caps";
import { charCount } from "../../core/text";
import { MemoryPacer } from "../../core/streams/memory-pacing";
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
 * todoist.ts, ics.ts) fills a PlanBuilder, which checks every task against the rules an API write
 * obeys as it is given, so the preview and the import say and do the same; finish() resolves the
 * tree. Memory does not grow with the rows beyond a few numbers per task: the plan keeps the tree,
 * not the tasks, and the import reads the file a second time to write them (Plan.replay;
 * bench/README.md, import-ticktick.ts). A reader gives a task once it is complete (the second
 * pass writes it then) and gives the same tasks in the same order from the same bytes.
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

/**
 * What a reader's pass makes of the file (PlanBuilder.finish()): everything the preview answers,
 * the folders and lists, and the task tree in a compact form, one entry per task in the order the
 * reader gave them (not the tasks themselves: the import reads the file again, Plan.replay).
 */
export interface PlanSummary {
  folders: PlanFolder[];
  lists: PlanList[];
  /**
   * For the i-th task the reader gave: `parent[i]`, the index of its parent (-1: top-level; one
   * level deep, in the same list), and `position[i]`, its place among its list's top-level tasks
   * or its parent's subtasks (the source's order; ties keep the file's order).
   */
  tree: { parent: Int32Array; position: Int32Array };
  counts: ImportCounts;
  skipped: Skipped[];
  changed: Changed[];
}

/** Where a second pass over the file (PlanBuilder with a sink) sends each task and memo, checked as the summary said. */
export interface PlanSink {
  /** The i-th task of the file (its index into PlanSummary.tree); its parentKey is not resolved (the tree says). */
  task(t: PlanTask, i: number): void;
  memo(m: PlanMemo): void;
}

/**
 * A file read as its format: the summary, and `replay`, which reads the file again (synchronously:
 * inside the import's transaction) and hands each task and memo to a sink, so no more than one
 * row's data is held at a time however long the file is (import.write.ts).
 */
export interface Plan extends PlanSummary {
  replay(sink: PlanSink): void;
}

/**
 * Rows read (or tasks written) between two collections. Reading a row (CSV cells, dates, checks)
 * leaves several KB of garbage that JavaScriptCore weighs late: the legacy restore's rhythm
 * (legacy.stored.ts).
 */
export const ROWS_PER_GC = 2000;

/** Notes listed per kind in a preview; past it a last entry counts the rest (a 20k-row file stays small). */
export const NOTES_MAX = 500;

/** Notes of one kind said in one phase, in order: the first NOTES_MAX kept, all counted. */
class NoteList<T extends Skipped | Changed> {
  readonly items: T[] = [];
  total = 0;
  add(n: T): void {
    if (this.items.length < NOTES_MAX) this.items.push(n);
    this.total++;
  }
  /** One more note past the first NOTES_MAX (counted, never listed). */
  addUnlisted(): void {
    this.total++;
  }
}

/**
 * The phases notes are said in, in the order a preview lists them: while the file is read, about
 * the tree, from each task's checks, about the memos, about list names, the grouped ones.
 */
const PHASES = ["read", "tree", "check", "memo", "lists", "grouped"] as const;
type Phase = (typeof PHASES)[number];

/** The notes of one kind, phase after phase, cut at NOTES_MAX with a last entry counting the rest. */
function listed<T extends Skipped | Changed>(lists: NoteList<T>[], more: (n: number) => T): T[] {
  const out: T[] = [];
  let omitted = 0;
  for (const l of lists) {
    for (const it of l.items) {
      if (out.length < NOTES_MAX) out.push(it);
      else omitted++;
    }
    omitted += l.total - l.items.length;
  }
  return omitted ? [...out, more(omitted)] : out;
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


/**
 * A copy of `s` that shares nothing with the text it was cut from: a CSV cell is a substring of its
 * record's text, and a key kept until the end of the read would keep the whole record alive.
 */
const own = (s: string): string => (s.length === 0 ? "" : (JSON.parse(JSON.stringify(s)) as string));

/** What a task's tree notes call it: its title as the file has it (cut: kept for every row until the tree is resolved). */
const ITEM_MAX = 100;

/**
 * Collects what a reader makes of a file. Without a sink (the first pass: the preview, and the
 * import's check) it checks each task and memo as it comes (the notes of the preview, the counts)
 * and keeps only what resolving the tree needs (each task's key, parent key, list, order, line and
 * a short title); finish() resolves the tree. With a sink (the import's second pass, Plan.replay)
 * it checks each task and memo the same way, notes nothing, and hands it on.
 */
export class PlanBuilder {
  private readonly folders = new Map<string, PlanFolder>();
  private readonly lists = new Map<string, PlanList>();
  private readonly listIndex = new Map<string, number>();
  private phase: Phase = "read";
  private readonly skippedNotes = new Map<Phase, NoteList<Skipped>>(PHASES.map((p) => [p, new NoteList<Skipped>()]));
  private readonly changedNotes = new Map<Phase, NoteList<Changed>>(PHASES.map((p) => [p, new NoteList<Changed>()]));
  private readonly groupedSkips = new Map<string, { note: GroupedNote; item: string; reason: string }>();
  private readonly groupedChanges = new Map<string, { note: GroupedNote; item: string; what: string }>();
  private readonly pacer = new MemoryPacer(ROWS_PER_GC);
  private readonly counts = zeroCounts();
  private readonly tagKeys = new Set<string>();

  // The tasks so far, one entry each (the first pass only).
  private n = 0;
  private readonly keys: string[] = [];
  private readonly parentKeys: (string | null)[] = [];
  private readonly listOf: number[] = [];
  private readonly orders: number[] = [];
  private readonly lines: (number | undefined)[] = [];
  private readonly items: string[] = [];
  /**
   * Tasks whose row has a repeat: why it is dropped when it is (a subtask's is dropped once the
   * tree says so), and how many other check notes were skipped before it (its place among them).
   */
  private readonly repeats = new Map<number, { why: string | null; at: number }>();
  private readonly byKey = new Map<string, number>();

  constructor(private readonly sink?: PlanSink) {}

  skip(line: number | undefined, item: string, reason: string): void {
    if (this.sink) return;
    this.skippedNotes.get(this.phase)!.add(line === undefined ? { item, reason } : { line, item, reason });
  }
  change(line: number | undefined, item: string, what: string): void {
    if (this.sink) return;
    this.changedNotes.get(this.phase)!.add(line === undefined ? { item, what } : { line, item, what });
  }
  /** A note said once for every row it applies to ("on N rows, first at line L"). */
  skipOnce(key: string, line: number | undefined, item: string, reason: string): void {
    if (this.sink) return;
    let g = this.groupedSkips.get(key);
    if (!g) this.groupedSkips.set(key, (g = { note: new GroupedNote(), item, reason }));
    g.note.hit(line);
  }
  changeOnce(key: string, line: number | undefined, item: string, what: string): void {
    if (this.sink) return;
    let g = this.groupedChanges.get(key);
    if (!g) this.groupedChanges.set(key, (g = { note: new GroupedNote(), item, what }));
    g.note.hit(line);
  }

  /** The folder of this name (one per name in the file). */
  folder(name: string): string {
    const key = `f:${name}`;
    if (!this.folders.has(key)) this.folders.set(key, { key, name: own(name) });
    return key;
  }

  /**
   * The list of this name in this folder (or at root); the inbox is the user's inbox. `distinct`
   * makes a list of its own even when another has the same name (one per .ics calendar).
   */
  list(name: string, folderKey: string | null, inbox = false, distinct?: string): string {
    const key = inbox ? "inbox" : distinct !== undefined ? `l#${distinct}` : `l:${folderKey ?? ""}\u0000${name}`;
    if (!this.lists.has(key)) {
      this.listIndex.set(key, this.lists.size);
      this.lists.set(key, { key: own(key), name: own(name), folderKey: inbox ? null : folderKey, inbox });
    }
    return key;
  }

  /**
   * A task of the file, in the file's order (its index is its place in that order: a second pass
   * must give the same tasks in the same order, which a reader of the same bytes does).
   */
  task(t: PlanTask): void {
    const i = this.n++;
    const rawTitle = t.title;
    this.phase = "check";
    const why = this.checkTask(t, rawTitle || "(untitled)");
    this.phase = "read";
    if (this.sink) {
      if (why !== undefined && why !== null) t.recurrence = null;
      this.sink.task(t, i);
    } else {
      this.keys.push(own(t.key));
      this.parentKeys.push(t.parentKey === null ? null : own(t.parentKey));
      this.listOf.push(this.listIndex.get(t.listKey) ?? -1);
      this.orders.push(t.order);
      this.lines.push(t.line);
      this.items.push(own(cut(rawTitle, ITEM_MAX)));
      this.byKey.set(this.keys[i]!, i);
      if (why !== undefined) this.repeats.set(i, { why, at: this.skippedNotes.get("check")!.total });
      this.counts.reminders += t.reminders?.length ?? 0;
    }
    this.pacer.add();
  }

  /** Whether a task of this key was given (a reader's links between tasks). */
  hasTask(key: string): boolean {
    return this.byKey.has(key);
  }

  /**
   * Makes task `child` a subtask of `parent` unless it names a parent itself (an .ics parent's
   * RELATED-TO;RELTYPE=CHILD); false when no task has the key `child`. A second pass takes the
   * tree from the first and does nothing here.
   */
  adoptChild(child: string, parent: string): boolean {
    if (this.sink) return true;
    const i = this.byKey.get(child);
    if (i === undefined) return false;
    if (this.parentKeys[i] === null) this.parentKeys[i] = own(parent);
    return true;
  }

  memo(m: PlanMemo): void {
    this.phase = "memo";
    const content = noControl(m.content).trim();
    if (!content) {
      this.skip(m.line, "note", "the note is empty");
    } else {
      if (charCount(content) > MEMO_CONTENT_MAX) this.change(m.line, cut(content, 60), `cut to ${MEMO_CONTENT_MAX} characters`);
      if (this.sink) this.sink.memo({ ...m, content: cut(content, MEMO_CONTENT_MAX) });
      else this.counts.memos++;
    }
    this.phase = "read";
    this.pacer.add();
  }

  /**
   * Resolves the subtask tree (one level: deeper levels go onto the top-level ancestor; a missing
   * parent, a cycle or a parent in another list makes a top-level task), drops a subtask's repeat,
   * places each task in its list or under its parent by the source's order, and counts. The first
   * pass's keys and titles are let go: what is kept is two numbers per task.
   */
  finish(): PlanSummary {
    const n = this.n;
    if (this.sink) return { folders: [], lists: [], tree: { parent: new Int32Array(0), position: new Int32Array(0) }, counts: zeroCounts(), skipped: [], changed: [] };
    const item = (i: number) => this.items[i] || "(untitled)";
    const parent = new Int32Array(n).fill(-1);
    const parentKeys = this.parentKeys;
    this.phase = "tree";

    // Parents: missing or self → top-level. (A key given twice names the last task of that key.)
    for (let i = 0; i < n; i++) {
      const pk = parentKeys[i];
      if (pk === null || pk === undefined) continue;
      if (pk === this.keys[i]) {
        this.change(this.lines[i], item(i), "its parent is itself: imported as a top-level task");
        continue;
      }
      const p = this.byKey.get(pk);
      if (p === undefined) {
        this.change(this.lines[i], item(i), `its parent (${cut(pk, ITEM_MAX)}) is not in the file: imported as a top-level task`);
        continue;
      }
      parent[i] = p;
    }
    // Top-level ancestor of each task; a cycle is broken at the task where it is found.
    const rootOf = new Int32Array(n).fill(-1);
    const onPath = new Set<number>();
    const path: number[] = [];
    for (let t = 0; t < n; t++) {
      if (parent[t] === -1 || rootOf[t] !== -1) continue;
      onPath.clear();
      path.length = 0;
      let cur = t;
      while (parent[cur] !== -1) {
        if (rootOf[cur] !== -1) break;
        if (onPath.has(cur)) {
          this.change(this.lines[cur], item(cur), "its parents form a cycle: imported as a top-level task");
          parent[cur] = -1;
          break;
        }
        onPath.add(cur);
        path.push(cur);
        cur = parent[cur]!;
      }
      const root = rootOf[cur] !== -1 ? rootOf[cur]! : cur;
      rootOf[cur] = root;
      for (const p of path) rootOf[p] = root;
    }
    for (let t = 0; t < n; t++) {
      if (parent[t] === -1) continue;
      const root = rootOf[t] !== -1 ? rootOf[t]! : t;
      if (this.listOf[root] !== this.listOf[t]) {
        this.change(this.lines[t], item(t), "its parent is in another list: imported as a top-level task");
        parent[t] = -1;
        continue;
      }
      if (parent[t] !== root) {
        this.change(this.lines[t], item(t), `nested more than one level deep: made a subtask of "${cut(item(root), 60)}" (subtasks are one level deep here)`);
        parent[t] = root;
      }
    }

    // Repeats: a subtask's is dropped (recurrence rules), others as their row's check said; each
    // note in its row's place among the check notes (as if the checks had run after the tree).
    const checks = this.skippedNotes.get("check")!;
    const merged = new NoteList<Skipped>();
    let k = 0;
    const upTo = (at: number) => {
      for (; k < at; k++) {
        const note = checks.items[k];
        if (note) merged.add(note);
        else merged.addUnlisted();
      }
    };
    for (const [i, { why, at }] of this.repeats) {
      const sub = recurrenceOnSubtaskProblem(parent[i] === -1 ? null : this.keys[parent[i]!]!);
      const drop = sub ?? why;
      if (drop === null) {
        this.counts.recurrences++;
        continue;
      }
      upTo(at);
      const line = this.lines[i];
      const reason = `repeat dropped: ${drop}`;
      merged.add(line === undefined ? { item: item(i), reason } : { line, item: item(i), reason });
    }
    upTo(checks.total);
    this.skippedNotes.set("check", merged);

    // Places: each list's top-level tasks and each parent's subtasks by the source's order (stable: file order on ties).
    const sorted = Array.from({ length: n }, (_, i) => i).sort((a, b) => this.orders[a]! - this.orders[b]! || a - b);
    const position = new Int32Array(n);
    const inList = new Map<number, number>();
    const under = new Int32Array(n);
    for (const i of sorted) {
      const p = parent[i]!;
      if (p === -1) {
        const l = this.listOf[i]!;
        const at = inList.get(l) ?? 0;
        position[i] = at;
        inList.set(l, at + 1);
        this.counts.tasks++;
      } else {
        position[i] = under[p]!++;
        this.counts.subtasks++;
      }
    }

    // Every list a reader named is made (a Todoist section without tasks too); the inbox is the user's.
    const lists = [...this.lists.values()];
    this.phase = "lists";
    for (const l of lists) {
      const name = noControl(l.name).trim() || "(unnamed)";
      if (name !== l.name.trim()) this.change(undefined, l.name || "(unnamed list)", `list name changed to "${cut(name, 60)}"`);
      l.name = cut(name, LIST_NAME_MAX);
    }
    const usedFolders = new Set(lists.map((l) => l.folderKey));
    const folders = [...this.folders.values()].filter((f) => usedFolders.has(f.key));
    for (const f of folders) f.name = cut(noControl(f.name).trim() || "(unnamed)", FOLDER_NAME_MAX);

    this.phase = "grouped";
    for (const g of this.groupedSkips.values()) this.skip(g.note.first, g.item, g.note.n > 1 ? `${g.reason} (${g.note.n} rows)` : g.reason);
    for (const g of this.groupedChanges.values()) this.change(g.note.first, g.item, g.note.n > 1 ? `${g.what} (${g.note.n} rows)` : g.what);

    const counts = this.counts;
    counts.folders = folders.length;
    counts.lists = lists.filter((l) => !l.inbox).length;
    counts.tags = this.tagKeys.size;
    return { folders, lists, tree: { parent, position }, counts,
      skipped: listed([...this.skippedNotes.values()], (n) => ({ item: "…", reason: `${n} more skipped item(s) not listed` })),
      changed: listed([...this.changedNotes.values()], (n) => ({ item: "…", what: `${n} more changed item(s) not listed` })),
    };
  }

  /**
   * Lengths, tags, reminders and repeat of one task, as the API would take them (the task is
   * changed to what will be written). Answers undefined when the row has no repeat, else why its
   * repeat is dropped, or null when it is kept (a subtask's is dropped by finish()).
   */
  private checkTask(t: PlanTask, item: string): string | null | undefined {
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
      if (!this.sink && !this.tagKeys.has(key)) this.tagKeys.add(own(key));
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
    if (!r) return undefined;
    // A completed row of a repeating task is a past occurrence (the sources keep the series on the open one).
    if (t.completed) return "the task is completed (a past occurrence)";
    if (r.kind === "after_completion") {
      if (!Number.isInteger(r.interval) || r.interval < 1 || r.interval > MAX_INTERVAL) return `the interval must be 1 to ${MAX_INTERVAL}`;
      return null;
    }
    if (t.dueAt === null) return "the task has no due date to repeat from";
    const checked = checkSchedule(r.rrule, t.dueAt, r.timezone);
    if (!checked.ok) return `${r.rrule.slice(0, 80)}: ${checked.message}`;
    r.rrule = checked.text;
    return null;
  }
}
