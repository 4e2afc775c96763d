import type { Core } from "../../core/core";
import { readSnapshot, type Conn } from "../../core/db";
import { addDays, dateOfDay, dayNumber } from "../../core/days";
import { instantOfLocal, isDateOnly, localMidnightUtc, today as todayOf } from "../../core/time";
import { findUserById } from "../account/account.repo";
import { listHead } from "../lists/lists.repo";
import { roleOnList, type TaskScope } from "../lists/lists.access";
import { findTasksWithList, isVisibleTask, tagsAt } from "../tasks/tasks.repo";
import { filterDayOf } from "../tasks/tasks.views";
import { listExceptions, rruleRecurrencesInLists, rruleRecurrencesOfUser } from "../recurrence/recurrence.repo";
import { parseRRule, seriesFor, SeriesError } from "../recurrence/recurrence.engine";
import { visibleScopes } from "../lists/lists.access";
import { datedInRange } from "../tasks/tasks.views.repo";
import { listCountdowns, type CountdownRow } from "../countdowns/countdowns.repo";
import { loadLunar, needsLunar, occurrence, type LunarCalendar, countdownRule } from "../countdowns/countdowns.occurrence";
import { listHabits } from "../habits/habits.repo";
import { remindersOfTargets } from "../reminders/reminders.repo";
import { loadTarget } from "../reminders/reminders.targets";
import { habitDueOn } from "../reminders/reminders.schedule";
import type { FeedRow } from "./feeds.repo";
import type { FeedInclude } from "./feeds.schemas";
import type { FeedContent, FeedCountdownDay, FeedHabitReminder, FeedTask } from "./feeds.types";
import { yieldToRequests } from "../../core/yield";

/**
 * The bounds of one feed, so that no account makes one request read or hold without limit
 * (a user with 100k tasks: bench/feeds.ts). A calendar app only shows what is near anyway; each
 * fetch moves the window with the user's today.
 */
export const FEED_LIMITS = {
  /** Dated tasks due from this many days before today … */
  taskPastDays: 60,
  /** … through this many days after it. */
  taskFutureDays: 730,
  /** At most this many tasks (the earliest due first in the window: the far future is cut). */
  maxTasks: 5000,
  /** Later occurrences of repeating tasks (events only): through this many days ahead, at most this many. */
  occurrenceDays: 366,
  maxOccurrences: 3000,
  /** Countdown occurrences from this many days back through this many years ahead (lunar ones converted one by one). */
  countdownPastDays: 30,
  countdownYears: 5,
  /** At most this many occurrences of one countdown (a weekly one over five years: 261). */
  maxPerCountdown: 300,
  maxCountdownDays: 5000,
  /** Habit reminders from today through this many days ahead. */
  habitDays: 30,
  maxHabitReminders: 3000,
} as const;

/**
 * What the feed shows now, or null when it shows nothing any more: its owner is disabled, or
 * its list is not one the owner can see (trashed, purged, or a shared list they left or were
 * removed from). The caller answers 404 for null, as for a revoked feed.
 */
export async function feedContent(core: Core, feed: FeedRow): Promise<FeedContent | null> {
  const include = new Set(JSON.parse(feed.include) as FeedInclude[]);
  // The lunar calendar is loaded (once, lazily) before the read: a snapshot cannot await.
  const lunar = include.has("countdowns") ? await lunarIfNeeded(core, feed.userId) : null;
  // Three steps, other requests served between them (each holds the event loop while it runs):
  // the user, the list's visibility, the tasks and the countdowns' rows in one snapshot; then the
  // countdowns' days (computed, not read); then the habits' reminders in a snapshot of their own
  // (they belong to no list, so reading them apart from the tasks loses nothing).
  const read = readSnapshot(core.db, (c) => {
    const user = findUserById(c, feed.userId);
    if (!user || user.disabledAt !== null) return null;
    const tz = user.timezone;
    const today = todayOf(core.clock, tz);
    let name = user.displayName || user.username;
    let scopes: string | TaskScope[] = user.id;
    if (feed.scope === "list") {
      const head = feed.listId === null ? null : listHead(c, feed.listId);
      const role = head ? roleOnList(c, user.id, head) : null;
      if (!head || role === null || head.deletedAt !== null) return null;
      name = head.name;
      // One list's scan (tasks.views.repo): the role is not read there, only the list id.
      scopes = [{ kind: "list", listId: head.id, role: role === "viewer" ? "viewer" : "editor" }];
    }
    return {
      content: {
        name,
        timezone: tz,
        taskFormat: feed.taskFormat,
        tasks: include.has("tasks") ? tasksOf(c, user.id, scopes, feed.scope === "list" ? feed.listId : null, today, tz, feed.taskFormat) : [],
      },
      countdownRows: include.has("countdowns") ? listCountdowns(c, user.id, false) : [],
      userId: user.id,
      today,
      tz,
    };
  });
  if (read === null) return null;
  const countdowns = include.has("countdowns") ? await countdownDays(read.countdownRows, read.today, lunar) : [];
  if (!include.has("habits")) return { ...read.content, countdowns, habits: [] };
  await yieldToRequests();
  const habits = readSnapshot(core.db, (c) => habitReminders(c, read.userId, read.today, read.tz, core.clock.now()));
  return { ...read.content, countdowns, habits };
}


async function lunarIfNeeded(core: Core, userId: string): Promise<LunarCalendar | null> {
  const rows = readSnapshot(core.db, (c) => listCountdowns(c, userId, false));
  return rows.some(needsLunar) ? loadLunar() : null;
}

/**
 * Dated top-level tasks in the window, as the calendar view reads them (open and completed; the
 * trash and archived lists left out; lists shared with the user included). As events, completed
 * tasks are left out (a calendar shows what is still to do, and ticking a task off clears it there); as
 * to-dos they stay, marked COMPLETED, so a task app shows them ticked.
 */
function tasksOf(c: Conn, userId: string, scopes: string | TaskScope[], listId: string | null, today: string, tz: string, format: "events" | "todos"): FeedTask[] {
  const from = addDays(today, -FEED_LIMITS.taskPastDays);
  const through = addDays(today, FEED_LIMITS.taskFutureDays);
  const rows = datedInRange(
    c,
    scopes,
    { from, through, fromInstant: localMidnightUtc(from, tz), beforeInstant: localMidnightUtc(through, tz, 1) },
    FEED_LIMITS.maxTasks,
  ).filter((r) => format === "todos" || r.completed === 0);
  const tags = new Map<number, string[]>();
  for (const t of tagsAt(c, rows.map((r) => r.id), userId)) tags.set(t.at, [...(tags.get(t.at) ?? []), t.name]);
  const listNames = new Map<string, string>();
  const nameOf = (id: string): string => {
    let name = listNames.get(id);
    if (name === undefined) {
      name = listHead(c, id)?.name ?? "";
      listNames.set(id, name);
    }
    return name;
  };
  const out = rows.map((r, i): FeedTask => {
    const listName = nameOf(r.list_id);
    return {
      id: r.id,
      title: r.title,
      description: r.description,
      dueAt: r.due_at!,
      priority: r.priority,
      completed: r.completed === 1,
      completedAt: r.completed_at,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
      tags: tags.get(i) ?? [],
      listName,
      occurrence: false,
    };
  });
  if (format === "events") out.push(...laterOccurrences(c, userId, listId, out, today, tz, nameOf));
  return out;
}

/**
 * The later occurrences of the open repeating tasks (rrule) shown in the feed, as the calendar view
 * computes them (recurrence.engine; exceptions skipped), from the day after the task's own due date
 * through FEED_LIMITS.occurrenceDays ahead: a calendar app shows a weekly task on every week, not
 * only on the next one. Not for to-dos: a task app completes the current one, and the next follows.
 */
function laterOccurrences(c: Conn, userId: string, listId: string | null, shown: FeedTask[], today: string, tz: string, nameOf: (id: string) => string): FeedTask[] {
  const base = new Map(shown.filter((t) => !t.completed).map((t) => [t.id, t]));
  const shared = listId === null ? visibleScopes(c, userId).flatMap((s) => (s.kind === "list" ? [s.listId] : [])) : [listId];
  const recs = [...(listId === null ? rruleRecurrencesOfUser(c, userId) : []), ...rruleRecurrencesInLists(c, shared)]
    .filter((r) => base.has(r.task_id))
    // A stable order: the same data gives the same document (and ETag).
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  if (!recs.length) return [];
  const tasks = new Map(findTasksWithList(c, userId, recs.map((r) => r.task_id)).map((t) => [t.id, t]));
  const through = addDays(today, FEED_LIMITS.occurrenceDays);
  const out: FeedTask[] = [];
  for (const rec of recs) {
    const t = tasks.get(rec.task_id);
    const shownTask = base.get(rec.task_id)!;
    if (!isVisibleTask(t) || t.completed === 1 || t.due_at === null || rec.dtstart === null || (listId !== null && t.list_id !== listId)) continue;
    const parsed = parseRRule(rec.rrule ?? "", isDateOnly(rec.dtstart));
    if (!parsed.ok) continue;
    try {
      const series = seriesFor(parsed.rule, rec.dtstart, rec.timezone);
      const left = FEED_LIMITS.maxOccurrences - out.length;
      if (left <= 0) break;
      for (const due of series.occurrencesThrough(t.due_at, through, new Set(listExceptions(c, rec.id)), left)) {
        // A zone apart from the user's can put the last one a day past the window.
        if ((isDateOnly(due) ? due : filterDayOf(due, tz)) > through) break;
        out.push({ ...shownTask, dueAt: due, listName: nameOf(t.list_id), occurrence: true });
      }
    } catch (e) {
      // A schedule the engine cannot expand shows its task only (as the calendar view does).
      if (!(e instanceof SeriesError)) throw e;
    }
  }
  return out;
}

/**
 * Each active countdown on each of its days in the window, computed by the countdowns' own rules
 * (countdowns.occurrence.ts): a lunar one falls on a different Gregorian date every year, which
 * no RRULE can say, so every occurrence is its own event (Gregorian ones too, so that the
 * month-end and 29 February rules are the app's and not each client's reading of an RRULE).
 */
async function countdownDays(rows: CountdownRow[], today: string, lunar: LunarCalendar | null): Promise<FeedCountdownDay[]> {
  const first = dayNumber(today) - FEED_LIMITS.countdownPastDays;
  const last = dayNumber(addDays(today, Math.round(FEED_LIMITS.countdownYears * 365.25)));
  const out: FeedCountdownDay[] = [];
  for (const [i, row] of rows.entries()) {
    // Other requests get their turn every 20 countdowns (a weekly one over five years is 261 days).
    if (i % 20 === 0) await yieldToRequests();
    // Made lunar between the two reads (lunarIfNeeded's and this one): left out of this fetch.
    if (needsLunar(row) && lunar === null) continue;
    const rule = countdownRule(row);
    for (let from = first, n = 0; from <= last && n < FEED_LIMITS.maxPerCountdown; n++) {
      const occ = occurrence(rule, from, lunar);
      if (occ.next_date === null) break;
      const d = dayNumber(occ.next_date);
      if (d > last) break;
      if (out.length >= FEED_LIMITS.maxCountdownDays) return out;
      out.push({ countdownId: row.id, name: row.name, type: row.type, date: occ.next_date, count: occ.count, calendar: row.calendar, updatedAt: row.updatedAt });
      from = d + 1;
    }
  }
  return out;
}

/**
 * The user's habit reminders (kind `daily`, the reminders feature's) as the times they fire over
 * the next days: on the habit's scheduled days (its weekdays; any day of a times-per-week week not
 * yet met), not paused, not already done, at the reminder's local time in the user's zone. A habit
 * without a reminder has no time of day to show and is not in the feed.
 */
function habitReminders(c: Conn, userId: string, today: string, tz: string, now: Date): FeedHabitReminder[] {
  const habits = new Map(listHabits(c, userId, false).map((h) => [h.id, h]));
  const out: FeedHabitReminder[] = [];
  const start = dayNumber(today);
  const reminders = remindersOfTargets(c, "habit", [...habits.keys()]).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  // The reminders of these habits only (reminders_target_idx), not every reminder of the account;
  // in a stable order, so the same data gives the same document (and ETag).
  for (const r of reminders) {
    const h = habits.get(r.target_id);
    if (r.user_id !== userId || r.kind !== "daily" || r.time === null || !h) continue;
    const target = loadTarget(c, userId, "habit", h.id, tz, now);
    if (!target || target.state.type !== "habit" || !target.state.active) continue;
    for (let d = start; d < start + FEED_LIMITS.habitDays; d++) {
      if (!habitDueOn(target.state, d)) continue;
      if (out.length >= FEED_LIMITS.maxHabitReminders) return out;
      const date = dateOfDay(d);
      out.push({ habitId: h.id, reminderId: r.id, name: h.name, date, at: instantOfLocal(date, r.time, tz).toISOString(), updatedAt: h.updatedAt > r.updated_at ? h.updatedAt : r.updated_at });
    }
  }
  return out;
}
