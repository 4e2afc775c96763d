// The smart views' reads (Today, Tomorrow, Next 7 days, Upcoming, overdue, No date, Completed)
// and the calendar's: the tasks table's second reader file, next to tasks.repo.ts. Every query
// walks the user's visible scopes (lists.access.visibleScopes, as GET /tasks: the user's own rows,
// then each active list shared with them) and keeps VISIBLE_TOP (live top-level tasks in active
// lists); the scopes' arms are merged by SQLite in the query's order, in one compound statement.
// A user without memberships has one scope: exactly the single statement of before.
//
// A due_at is a date (YYYY-MM-DD, due that local day) or a UTC instant (falls on its date in the
// user's zone, the contract's date filters). As text, the two forms do not sort by local day, so
// each form is walked in its own partial index (tasks_open_day_idx, tasks_open_timed_idx) and the
// two walks merged by the service (tasks.views.ts); a local day is a range of dates in one and a
// range of instants [local midnight, next local midnight) in the other.
import type { Conn } from "../../core/db";
import { visibleScopes, type TaskScope } from "../lists/lists.access";
import { ROW_COLS, SCOPES_PER_STATEMENT, type TaskRow } from "./tasks.repo";

/**
 * Live top-level tasks whose list is active, tested per row (see ACTIVE_LIST in tasks.repo.ts for
 * why an EXISTS per row rather than a join). Follows a scan's `WHERE` (its scope).
 */
const VISIBLE_TOP = "t.parent_id IS NULL AND t.deleted_at IS NULL AND EXISTS (SELECT 1 FROM lists l WHERE l.id = t.list_id AND l.deleted_at IS NULL LIMIT 1)";

/** One scope of the user's visible tasks: its FROM/WHERE head (one `?`, bound to `key`) and its visibility test. */
interface Scan {
  from: string;
  key: string;
  visible: string;
}

/**
 * Whose views: a user id (their scopes are read here), or the scopes already read in this snapshot
 * (lists.access.visibleScopes), when one request reads several views (the sidebar's counts).
 */
export type ViewScopes = string | TaskScope[];

/** Each user-keyed view index and its twin keyed by list (the same rows, schema/tasks.ts). */
const LIST_TWIN = {
  tasks_open_day_idx: "tasks_list_open_day_idx",
  tasks_open_timed_idx: "tasks_list_open_timed_idx",
  tasks_live_due_idx: "tasks_list_live_due_idx",
  tasks_open_undated_idx: "tasks_list_open_undated_idx",
  tasks_done_idx: "tasks_list_done_idx",
} as const;

/**
 * The scans of what the user sees (lists.access.visibleScopes): their own rows through `index`
 * (keyed by user_id), each shared list through the index's twin keyed by list_id (its rows carry
 * the owner's user_id), walked in the same order: a shared list costs the rows the view takes
 * from it, not the list's size.
 */
function scans(c: Conn, who: ViewScopes, index: keyof typeof LIST_TWIN): Scan[] {
  return (typeof who === "string" ? visibleScopes(c, who) : who).map((s) =>
    s.kind === "own"
      ? { from: `tasks t INDEXED BY ${index} WHERE t.user_id = ?`, key: s.userId, visible: VISIBLE_TOP }
      : // A shared list's scope: visibleScopes gave only active lists, read in this same snapshot.
        { from: `tasks t INDEXED BY ${LIST_TWIN[index]} WHERE t.list_id = ?`, key: s.listId, visible: "t.parent_id IS NULL AND t.deleted_at IS NULL" },
  );
}

const asc = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
/** Each order a view reads in: the single statement's ORDER BY, the compound's (result columns), and the same in JS. */
const ORDERS = {
  due: { one: "t.due_at, t.id", all: "due_at, id", js: (a: TaskRow, b: TaskRow) => asc(a.due_at ?? "", b.due_at ?? "") || asc(a.id, b.id) },
  created: { one: "t.created_at DESC, t.id DESC", all: "created_at DESC, id DESC", js: (a: TaskRow, b: TaskRow) => asc(b.created_at, a.created_at) || asc(b.id, a.id) },
  completed: { one: "t.completed_at DESC, t.id DESC", all: "completed_at DESC, id DESC", js: (a: TaskRow, b: TaskRow) => asc(b.completed_at ?? "", a.completed_at ?? "") || asc(b.id, a.id) },
  id: { one: "t.id DESC", all: "id DESC", js: (a: TaskRow, b: TaskRow) => asc(b.id, a.id) },
} as const;

/** The scans in groups of at most SCOPES_PER_STATEMENT (one group: everything a user sees, in practice). */
function groupsOf(all: Scan[]): Scan[][] {
  const out: Scan[][] = [];
  for (let i = 0; i < all.length; i += SCOPES_PER_STATEMENT) out.push(all.slice(i, i + SCOPES_PER_STATEMENT));
  return out;
}

/**
 * The first `limit` rows of every scan matching `cond` (its `?` bound to `args` in each scan), in
 * `order`. One scan: its single statement. Several: ONE compound statement, an arm per scan, which
 * SQLite merges lazily in the arms' index order (MERGE (UNION ALL), no sort): about `limit` rows
 * read whatever the scans hold, as for one scan.
 */
function rowsOf(c: Conn, all: Scan[], cond: string, args: (string | number)[], order: keyof typeof ORDERS, limit: number): TaskRow[] {
  const run = (group: Scan[]): TaskRow[] => {
    const arms = group.map((s) => `SELECT ${ROW_COLS} FROM ${s.from} AND ${s.visible} AND ${cond}`);
    const sql = arms.length === 1 ? `${arms[0]} ORDER BY ${ORDERS[order].one} LIMIT ?` : `${arms.join(" UNION ALL ")} ORDER BY ${ORDERS[order].all} LIMIT ?`;
    return c.sqlite.query<TaskRow, (string | number)[]>(sql).all(...group.flatMap((s) => [s.key, ...args]), limit);
  };
  if (all.length <= SCOPES_PER_STATEMENT) return run(all);
  return groupsOf(all).flatMap(run).sort(ORDERS[order].js).slice(0, limit);
}

/** The rows of every scan matching `cond`, counted up to `cap` (one statement per group of scans). */
function countOf(c: Conn, all: Scan[], cond: string, args: (string | number)[], cap: number): number {
  let n = 0;
  for (const group of groupsOf(all)) {
    if (n >= cap) break;
    const arms = group.map((s) => `SELECT 1 FROM ${s.from} AND ${s.visible} AND ${cond}`);
    n += c.sqlite
      .query<{ n: number }, (string | number)[]>(`SELECT count(*) AS n FROM (${arms.join(" UNION ALL ")} LIMIT ?)`)
      .get(...group.flatMap((s) => [s.key, ...args]), cap - n)!.n;
  }
  return Math.min(cap, n);
}

/** A lower bound on (due_at, id), exclusive; `["2026-11-26", ""]` means due_at ≥ 2026-11-26. */
export type DueKey = [string, string];

/**
 * Open date-only tasks with due_at in [after, through] (after exclusive on (due_at, id); through
 * inclusive; null: open end), ascending, at most `limit`.
 */
export function openDayOnly(c: Conn, who: ViewScopes, after: DueKey, through: string | null, limit: number): TaskRow[] {
  const cond = `t.completed = 0 AND length(t.due_at) = 10 AND (t.due_at, t.id) > (?, ?)${through === null ? "" : " AND t.due_at <= ?"}`;
  return rowsOf(c, scans(c, who, "tasks_open_day_idx"), cond, [after[0], after[1], ...(through === null ? [] : [through])], "due", limit);
}

/** Open timed tasks with due_at in (after, before) on (due_at, id) (before exclusive; null: open end), ascending. */
export function openTimed(c: Conn, who: ViewScopes, after: DueKey, before: string | null, limit: number): TaskRow[] {
  const cond = `t.completed = 0 AND length(t.due_at) > 10 AND (t.due_at, t.id) > (?, ?)${before === null ? "" : " AND t.due_at < ?"}`;
  return rowsOf(c, scans(c, who, "tasks_open_timed_idx"), cond, [after[0], after[1], ...(before === null ? [] : [before])], "due", limit);
}

/** Open undated tasks, newest first (keyset on created_at, id). */
export function openUndated(c: Conn, who: ViewScopes, after: [string, string] | null, limit: number): TaskRow[] {
  const cond = `t.completed = 0 AND t.due_at IS NULL${after ? " AND (t.created_at, t.id) < (?, ?)" : ""}`;
  return rowsOf(c, scans(c, who, "tasks_open_undated_idx"), cond, after ?? [], "created", limit);
}

/**
 * Completed tasks, most recently completed first (keyset on completed_at, id). A task completed
 * without a recorded time (an old archive can hold one) comes last, by id: its key is ["", id].
 * Two range walks, so that neither tests every row above the cursor.
 */
export function completedTasks(c: Conn, who: ViewScopes, after: [string, string] | null, limit: number): TaskRow[] {
  const all = scans(c, who, "tasks_done_idx");
  const rows: TaskRow[] = [];
  if (after === null || after[0] !== "") {
    const cond = `t.completed = 1 AND t.completed_at IS NOT NULL${after ? " AND (t.completed_at, t.id) < (?, ?)" : ""}`;
    rows.push(...rowsOf(c, all, cond, after ?? [], "completed", limit));
  }
  if (rows.length < limit) {
    const id = after !== null && after[0] === "" ? after[1] : null;
    const cond = `t.completed = 1 AND t.completed_at IS NULL${id !== null ? " AND t.id < ?" : ""}`;
    rows.push(...rowsOf(c, all, cond, id !== null ? [id] : [], "id", limit - rows.length));
  }
  return rows;
}

/** Counts, each up to `cap`: open date-only tasks due in [from, through] and open timed ones in [fromInstant, beforeInstant). */
export function countOpenDue(
  c: Conn,
  who: ViewScopes,
  range: { from: string | null; through: string | null; fromInstant: string | null; beforeInstant: string | null },
  cap: number,
): number {
  const day = countOf(
    c,
    scans(c, who, "tasks_open_day_idx"),
    "t.completed = 0 AND length(t.due_at) = 10 AND t.due_at >= ? AND t.due_at <= ?",
    [range.from ?? "", range.through ?? "9999-99-99"],
    cap,
  );
  if (day >= cap) return cap;
  const timed = countOf(
    c,
    scans(c, who, "tasks_open_timed_idx"),
    "t.completed = 0 AND length(t.due_at) > 10 AND t.due_at >= ? AND t.due_at < ?",
    [range.fromInstant ?? "", range.beforeInstant ?? "A"],
    cap - day,
  );
  return Math.min(cap, day + timed);
}

/**
 * Open dated tasks due on `from` or later, counted for several ranges that all start that day
 * (the sidebar's today, next 7 days and upcoming) in ONE ascending walk of each form's index, at
 * most `cap` rows each: every range is a prefix of the walk, so a count under the cap is exact and
 * one at the cap means "at least". `through` per range: its last date (null: no end); a date-only
 * task counts when its date ≤ through, a timed one when before local midnight after through
 * (`beforeInstant`). The scopes' arms are merged in due order (an unordered LIMIT could stop inside
 * one scope and miss another's earlier rows).
 */
export function countOpenDueFrom(
  c: Conn,
  who: ViewScopes,
  from: { date: string; instant: string },
  ranges: { through: string | null; beforeInstant: string | null }[],
  cap: number,
): number[] {
  const day = dueCountsFrom(c, scans(c, who, "tasks_open_day_idx"), "length(t.due_at) = 10", from.date, ranges.map((r) => (r.through === null ? null : { le: r.through })), cap);
  const timed = dueCountsFrom(c, scans(c, who, "tasks_open_timed_idx"), "length(t.due_at) > 10", from.instant, ranges.map((r) => (r.beforeInstant === null ? null : { lt: r.beforeInstant })), cap);
  return ranges.map((_, i) => Math.min(cap, day[i]! + timed[i]!));
}

/**
 * Of the first `cap` due_at values ≥ `from` of the open tasks of every scan matching `form`
 * (ascending), how many each bound keeps (`le`: ≤, `lt`: <, null: all). One group of scans: one
 * statement that counts in SQL (no row reaches JS); several: each group's first values, merged.
 */
function dueCountsFrom(c: Conn, all: Scan[], form: string, from: string, bounds: ({ le: string } | { lt: string } | null)[], cap: number): number[] {
  const arm = (s: Scan) => `SELECT t.due_at AS due_at FROM ${s.from} AND ${s.visible} AND t.completed = 0 AND ${form} AND t.due_at >= ?`;
  if (all.length <= SCOPES_PER_STATEMENT) {
    const cols = bounds.map((b, i) => (b === null ? `count(*) AS c${i}` : `coalesce(sum(due_at ${"le" in b ? "<=" : "<"} ?), 0) AS c${i}`));
    const walk = all.length === 1 ? `${arm(all[0]!)} ORDER BY t.due_at LIMIT ?` : `${all.map(arm).join(" UNION ALL ")} ORDER BY due_at LIMIT ?`;
    const row = c.sqlite
      .query<Record<string, number>, (string | number)[]>(`SELECT ${cols.join(", ")} FROM (${walk})`)
      .get(...bounds.flatMap((b) => (b === null ? [] : ["le" in b ? b.le : b.lt])), ...all.flatMap((s) => [s.key, from]), cap)!;
    return bounds.map((_, i) => row[`c${i}`]!);
  }
  const values = groupsOf(all)
    .flatMap((group) =>
      c.sqlite
        .query<{ due_at: string }, (string | number)[]>(`${group.map(arm).join(" UNION ALL ")} ORDER BY due_at LIMIT ?`)
        .all(...group.flatMap((s) => [s.key, from]), cap)
        .map((r) => r.due_at),
    )
    .sort(asc)
    .slice(0, cap);
  return bounds.map((b) => (b === null ? values.length : values.filter((v) => ("le" in b ? v <= b.le : v < b.lt)).length));
}

/** Open undated tasks, up to `cap`. */
export function countOpenUndated(c: Conn, who: ViewScopes, cap: number): number {
  return countOf(c, scans(c, who, "tasks_open_undated_idx"), "t.completed = 0 AND t.due_at IS NULL", [], cap);
}

/** Completed tasks, up to `cap`. */
export function countCompleted(c: Conn, who: ViewScopes, cap: number): number {
  return countOf(c, scans(c, who, "tasks_done_idx"), "t.completed = 1", [], cap);
}

/**
 * The calendar's dated tasks, open and completed: date-only due_at in [from, through], timed in
 * [fromInstant, beforeInstant), at most `limit`, by due_at. tasks_live_due_idx is walked over the
 * text range covering both (an instant bound is at most a day beside its date), each row tested.
 */
export function datedInRange(
  c: Conn,
  who: ViewScopes,
  range: { from: string; through: string; fromInstant: string; beforeInstant: string },
  limit: number,
): TaskRow[] {
  const lo = range.fromInstant < range.from ? range.fromInstant : range.from;
  // "through" + "~" sorts after every instant of that date ("T" < "~").
  const hiDate = `${range.through}~`;
  const hi = range.beforeInstant > hiDate ? range.beforeInstant : hiDate;
  const cond = `t.due_at IS NOT NULL AND t.due_at >= ? AND t.due_at < ?
          AND (CASE WHEN length(t.due_at) = 10 THEN t.due_at >= ? AND t.due_at <= ? ELSE t.due_at >= ? AND t.due_at < ? END)`;
  return rowsOf(c, scans(c, who, "tasks_live_due_idx"), cond, [lo, hi, range.from, range.through, range.fromInstant, range.beforeInstant], "due", limit);
}
