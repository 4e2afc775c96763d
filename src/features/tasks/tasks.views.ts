import type { Core } from "../../core/core";
import { readSnapshot, type Conn } from "../../core/db";
import type { AuthUser } from "../../core/auth/principal";
import { invalidCursor } from "../../core/errors";
import { addDays } from "../../core/days";
import { isCalendarDate, localDate, localMidnightUtc, today } from "../../core/time";
import type { TaskRow } from "./tasks.repo";
import { visibleScopes } from "../lists/lists.access";
import { presentTasks } from "./tasks.present";
import {
  completedTasks,
  countCompleted,
  countOpenDue,
  countOpenDueFrom,
  countOpenUndated,
  openDayOnly,
  openTimed,
  openUndated,
  type DueKey,
} from "./tasks.views.repo";
import type { ViewCounts, ViewName, ViewPage } from "./tasks.views.schemas";

/**
 * Sidebar counts stop here: each count is a walk of its index (a few µs a row), re-read after every
 * change, and "99+" is all a sidebar shows. Measured on 100,000 tasks (bench/views.ts): capped at
 * 1000, the seven counts took 63 ms (p50) on the shared machine.
 */
export const COUNT_CAP = 100;

/**
 * The local day an instant falls on in `tz`, exactly as the due-date filters draw days
 * (localMidnightUtc bounds; where a zone skipped or repeated midnight this can differ from the
 * wall-clock date by the filters' own rule).
 */
export function filterDayOf(instant: string, tz: string): string {
  // Intl's date (cached formatter) is the guess; the filters' bounds (cached) settle it. Temporal
  // for each row cost ~80 µs; this ~3 µs.
  let d = localDate(new Date(instant), tz);
  if (instant < midnightOf(d, tz)) d = addDays(d, -1);
  else if (instant >= midnightOf(addDays(d, 1), tz)) d = addDays(d, 1);
  return d;
}

const midnights = new Map<string, string>();
/** localMidnightUtc(date, tz), remembered (a bounded cache: dates and zones in use are few). */
function midnightOf(date: string, tz: string): string {
  const key = `${tz} ${date}`;
  let m = midnights.get(key);
  if (m === undefined) {
    if (midnights.size >= 20_000) midnights.clear();
    m = localMidnightUtc(date, tz);
    midnights.set(key, m);
  }
  return m;
}

/** A view's days, inclusive (null: open end), relative to the user's today. */
function daysOf(view: ViewName, t: string): { from: string | null; through: string | null } | null {
  switch (view) {
    case "today":
      return { from: t, through: t };
    case "tomorrow":
      return { from: addDays(t, 1), through: addDays(t, 1) };
    case "next_7_days":
      return { from: t, through: addDays(t, 6) };
    case "upcoming":
      return { from: t, through: null };
    case "overdue":
      return { from: null, through: addDays(t, -1) };
    default:
      return null;
  }
}

interface Placed {
  day: string | null;
  /** 0: date-only (first in its day), 1: timed. */
  k: 0 | 1;
  row: TaskRow;
}

/**
 * The smart views across all the user's lists (issue 14), on signed keyset cursors as GET /tasks:
 * the same visible tasks (live, top-level, active list), grouped by the local day they fall on.
 */
export class TaskViews {
  constructor(private readonly core: Core) {}

  page(user: AuthUser, view: ViewName, limit: number, cursor: string | undefined): ViewPage {
    const t = today(this.core.clock, user.timezone);
    const endpoint = `views/${view}`;
    const key = cursor === undefined ? null : this.core.cursors.decode(endpoint, user.id, cursor);
    return readSnapshot(this.core.db, (c) => {
      let placed: Placed[];
      let keyOf: (p: Placed) => (string | number)[];
      const days = daysOf(view, t);
      if (days) {
        placed = this.dated(c, user, days, parseDatedKey(key), limit + 1);
        keyOf = (p) => [p.day!, p.k, p.row.due_at!, p.row.id];
      } else if (view === "no_date") {
        placed = openUndated(c, user.id, parsePairKey(key), limit + 1).map((row) => ({ day: null, k: 0, row }));
        keyOf = (p) => [p.row.created_at, p.row.id];
      } else {
        placed = completedTasks(c, user.id, parsePairKey(key), limit + 1).map((row) => ({
          day: row.completed_at === null ? null : filterDayOf(row.completed_at, user.timezone),
          k: 0,
          row,
        }));
        keyOf = (p) => [p.row.completed_at ?? "", p.row.id];
      }
      const more = placed.length > limit;
      const shown = more ? placed.slice(0, limit) : placed;
      const tasks = presentTasks(c, user.id, shown.map((p) => p.row));
      const groups: ViewPage["groups"] = [];
      shown.forEach((p, i) => {
        const g = groups[groups.length - 1];
        if (g && g.day === p.day) g.tasks.push(tasks[i]!);
        else groups.push({ day: p.day, tasks: [tasks[i]!] });
      });
      const last = shown[shown.length - 1];
      return {
        view,
        today: t,
        groups,
        next_cursor: more && last ? this.core.cursors.encode(endpoint, user.id, keyOf(last)) : null,
      };
    });
  }

  /**
   * Open dated tasks on the days [from, through], by (local day, date-only before timed, due_at,
   * id): a walk of each form's index from the cursor, `n` rows each, merged.
   */
  private dated(c: Conn, user: AuthUser, days: { from: string | null; through: string | null }, key: DatedKey | null, n: number): Placed[] {
    const tz = user.timezone;
    let dayAfter: DueKey = [days.from ?? "", ""];
    let timedAfter: DueKey = [days.from === null ? "" : localMidnightUtc(days.from, tz), ""];
    if (key) {
      const [day, k, due, id] = key;
      dayAfter = k === 0 ? [due, id] : [addDays(day, 1), ""];
      timedAfter = k === 0 ? [localMidnightUtc(day, tz), ""] : [due, id];
    }
    const before = days.through === null ? null : localMidnightUtc(days.through, tz, 1);
    // Both walks over the same scopes, read once.
    const scopes = visibleScopes(c, user.id);
    const placed: Placed[] = [
      ...openDayOnly(c, scopes, dayAfter, days.through, n).map((row): Placed => ({ day: row.due_at!, k: 0, row })),
      ...openTimed(c, scopes, timedAfter, before, n).map((row): Placed => ({ day: filterDayOf(row.due_at!, tz), k: 1, row })),
    ];
    placed.sort((a, b) => cmp(a.day!, b.day!) || a.k - b.k || cmp(a.row.due_at!, b.row.due_at!) || cmp(a.row.id, b.row.id));
    return placed.slice(0, n);
  }

  /** The sidebar's counts, each up to COUNT_CAP, in one read. */
  counts(user: AuthUser): ViewCounts {
    const t = today(this.core.clock, user.timezone);
    const tz = user.timezone;
    return readSnapshot(this.core.db, (c) => {
      // The counts' eight walks over the same scopes, read once.
      const scopes = visibleScopes(c, user.id);
      const due = (from: string | null, through: string | null) =>
        countOpenDue(
          c,
          scopes,
          {
            from,
            through,
            fromInstant: from === null ? null : localMidnightUtc(from, tz),
            beforeInstant: through === null ? null : localMidnightUtc(through, tz, 1),
          },
          COUNT_CAP,
        );
      // Today, next 7 days and upcoming all start today: one walk of each index counts the three,
      // and tomorrow too (through tomorrow, less today). The walk stops at COUNT_CAP rows, so that
      // difference is exact only while "through tomorrow" is under the cap; else tomorrow is
      // counted on its own.
      const week = addDays(t, 6);
      const tomorrowDate = addDays(t, 1);
      const [today, throughTomorrow, next7, upcoming] = countOpenDueFrom(
        c,
        scopes,
        { date: t, instant: localMidnightUtc(t, tz) },
        [
          { through: t, beforeInstant: localMidnightUtc(t, tz, 1) },
          { through: tomorrowDate, beforeInstant: localMidnightUtc(tomorrowDate, tz, 1) },
          { through: week, beforeInstant: localMidnightUtc(week, tz, 1) },
          { through: null, beforeInstant: null },
        ],
        COUNT_CAP,
      ) as [number, number, number, number];
      const tomorrow = throughTomorrow < COUNT_CAP ? throughTomorrow - today : due(tomorrowDate, tomorrowDate);
      return {
        today: t,
        cap: COUNT_CAP,
        counts: {
          overdue: due(null, addDays(t, -1)),
          today,
          tomorrow,
          next_7_days: next7,
          upcoming,
          no_date: countOpenUndated(c, scopes, COUNT_CAP),
          completed: countCompleted(c, scopes, COUNT_CAP),
        },
      };
    });
  }
}

type DatedKey = [string, 0 | 1, string, string];

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function parseDatedKey(key: (string | number | null)[] | null): DatedKey | null {
  if (key === null) return null;
  const [day, k, due, id] = key;
  if (key.length !== 4 || typeof day !== "string" || !isCalendarDate(day) || (k !== 0 && k !== 1) || typeof due !== "string" || typeof id !== "string") {
    throw invalidCursor();
  }
  return [day, k, due, id];
}

function parsePairKey(key: (string | number | null)[] | null): [string, string] | null {
  if (key === null) return null;
  if (key.length !== 2 || typeof key[0] !== "string" || typeof key[1] !== "string") throw invalidCursor();
  return [key[0], key[1]];
}
