import type { Core } from "../../core/core";
import { readSnapshot } from "../../core/db";
import type { AuthUser } from "../../core/auth/principal";
import { validationFailed } from "../../core/errors";
import { addDays, dateOfDay, dayNumber } from "../../core/days";
import { isDateOnly, localMidnightUtc, today } from "../../core/time";
import { findTasksWithList, isVisibleTask } from "../tasks/tasks.repo";
import { datedInRange } from "../tasks/tasks.views.repo";
import { filterDayOf } from "../tasks/tasks.views";
import type { TasksService } from "../tasks/tasks.service";
import type { Task } from "../tasks/tasks.schemas";
import { listExceptions, rruleRecurrencesInLists, rruleRecurrencesOfUser } from "../recurrence/recurrence.repo";
import { visibleScopes } from "../lists/lists.access";
import { parseRRule, seriesFor, SeriesError } from "../recurrence/recurrence.engine";
import { listCountdowns } from "../countdowns/countdowns.repo";
import { loadLunar, needsLunar, occurrence, countdownRule } from "../countdowns/countdowns.occurrence";
import { listHabits, logsOfActiveHabits } from "../habits/habits.repo";
import { MAX_CALENDAR_TASKS, MAX_OCCURRENCES, MAX_RANGE_DAYS, type CalendarQuery, type CalendarRange, type RescheduleBody } from "./calendar.schemas";

type Day = CalendarRange["days"][number];

/**
 * The calendar (issue 14): what falls on each day of a range of at most MAX_RANGE_DAYS in the
 * user's zone. Dated tasks as the smart views place them (tasks.views.ts filterDayOf); the later
 * occurrences of repeating tasks computed by the recurrence engine (never stored); countdowns on
 * their occurrence days; habit check-ins on their dates.
 */
export class CalendarService {
  constructor(
    private readonly core: Core,
    private readonly tasks: TasksService,
  ) {}

  async range(user: AuthUser, q: CalendarQuery): Promise<CalendarRange> {
    const span = dayNumber(q.to) - dayNumber(q.from);
    if (span < 1 || span > MAX_RANGE_DAYS) {
      throw validationFailed([{ path: "to", message: `to must be 1 to ${MAX_RANGE_DAYS} days after from` }], `a range of 1 to ${MAX_RANGE_DAYS} days`);
    }
    const tz = user.timezone;
    const through = addDays(q.to, -1);
    const days: Day[] = [];
    const byDate = new Map<string, Day>();
    for (let d = dayNumber(q.from); d < dayNumber(q.to); d++) {
      const day: Day = { date: dateOfDay(d), tasks: [], occurrences: [], countdowns: [], check_ins: [] };
      days.push(day);
      byDate.set(day.date, day);
    }
    let truncated = false;
    // The lunar calendar is loaded (once, lazily) before the read, as GET /countdowns does.
    const countdowns = readSnapshot(this.core.db, (c) => listCountdowns(c, user.id, false));
    const lunar = countdowns.some(needsLunar) ? await loadLunar() : null;

    readSnapshot(this.core.db, (c) => {
      // Dated tasks, open and completed.
      const rows = datedInRange(
        c,
        user.id,
        { from: q.from, through, fromInstant: localMidnightUtc(q.from, tz), beforeInstant: localMidnightUtc(q.to, tz) },
        MAX_CALENDAR_TASKS + 1,
      );
      if (rows.length > MAX_CALENDAR_TASKS) {
        truncated = true;
        rows.length = MAX_CALENDAR_TASKS;
      }
      // Later occurrences of open repeating tasks: after the task's own due_at (which is the task
      // itself), from the range's first day on.
      // The user's own and those of the lists shared with them (lists.access, as the dated tasks).
      const shared = visibleScopes(c, user.id).flatMap((s) => (s.kind === "list" ? [s.listId] : []));
      const recs = [...rruleRecurrencesOfUser(c, user.id), ...rruleRecurrencesInLists(c, shared)];
      const repeating = new Set(recs.map((r) => r.task_id));
      for (const r of rows) {
        byDate.get(isDateOnly(r.due_at!) ? r.due_at! : filterDayOf(r.due_at!, tz))?.tasks.push({
          id: r.id,
          list_id: r.list_id,
          title: r.title,
          due_at: r.due_at!,
          completed: r.completed === 1,
          priority: r.priority,
          version: r.version,
          recurring: repeating.has(r.id),
        });
      }
      const tasks = new Map(findTasksWithList(c, user.id, recs.map((r) => r.task_id)).map((t) => [t.id, t]));
      let made = 0;
      for (const rec of recs) {
        const t = tasks.get(rec.task_id);
        if (!isVisibleTask(t) || t.parent_id !== null || t.completed === 1 || t.due_at === null || rec.dtstart === null) continue;
        const parsed = parseRRule(rec.rrule ?? "", isDateOnly(rec.dtstart));
        if (!parsed.ok) continue;
        const series = seriesFor(parsed.rule, rec.dtstart, rec.timezone);
        const exceptions = new Set(listExceptions(c, rec.id));
        // Start a day before the range (a zone apart from the user's can shift a day) or at the task's own due_at.
        const startAt = addDays(q.from, -2);
        let cursor = t.due_at;
        if ((isDateOnly(cursor) ? cursor : filterDayOf(cursor, tz)) < startAt) cursor = startAt;
        try {
          // Through two days past the range (the series' zone can differ from the user's by a day).
          for (const next of series.occurrencesThrough(cursor, addDays(through, 2), exceptions, MAX_OCCURRENCES + 1)) {
            const date = isDateOnly(next) ? next : filterDayOf(next, tz);
            const day = byDate.get(date);
            if (!day) continue;
            if (made >= MAX_OCCURRENCES) {
              truncated = true;
              break;
            }
            day.occurrences.push({ task_id: t.id, recurrence_id: rec.id, title: t.title, list_id: t.list_id, priority: t.priority, due_at: next });
            made++;
          }
        } catch (e) {
          // A schedule the engine cannot expand shows no occurrences (its task still shows on its day).
          if (!(e instanceof SeriesError)) throw e;
        }
      }
      for (const day of days) day.occurrences.sort((a, b) => (a.due_at < b.due_at ? -1 : a.due_at > b.due_at ? 1 : a.task_id < b.task_id ? -1 : 1));

      // Habit check-ins.
      const habits = new Map(listHabits(c, user.id, false).map((h) => [h.id, h]));
      for (const log of logsOfActiveHabits(c, user.id, q.from, through)) {
        const h = habits.get(log.habit_id);
        if (h) byDate.get(log.date)?.check_ins.push({ habit_id: h.id, name: h.name, icon: h.icon, color: h.color, value: log.value, goal: h.goal });
      }
    });

    // Countdowns on each of their occurrence days in the range.
    const first = dayNumber(q.from);
    const last = dayNumber(through);
    for (const row of countdowns) {
      const rule = countdownRule(row);
      for (let from = first, guard = 0; from <= last && guard <= MAX_RANGE_DAYS; guard++) {
        const occ = occurrence(rule, from, lunar);
        if (occ.next_date === null) break;
        const d = dayNumber(occ.next_date);
        if (d > last) break;
        byDate.get(occ.next_date)?.countdowns.push({ id: row.id, name: row.name, icon: row.icon, type: row.type, count: occ.count });
        from = d + 1;
      }
    }
    return { from: q.from, to: q.to, today: today(this.core.clock, tz), days, truncated };
  }

  /**
   * Moves a task to another local day keeping its time of day in the user's zone (a date-only
   * due_at becomes that date): a PATCH of due_at with the version given.
   */
  reschedule(user: AuthUser, taskId: string, b: RescheduleBody): Task {
    const cur = this.tasks.getTaskForUser(user.id, taskId);
    if (cur.due_at === null) throw validationFailed([{ path: "date", message: "the task has no due_at to move; PATCH one" }], "the task has no due date");
    let due = b.date;
    if (!isDateOnly(cur.due_at)) {
      const at = Temporal.Instant.from(cur.due_at).toZonedDateTimeISO(user.timezone);
      const moved = Temporal.PlainDate.from(b.date).toZonedDateTime({ timeZone: user.timezone, plainTime: at.toPlainTime() });
      due = new Date(moved.epochMilliseconds).toISOString();
    }
    return this.tasks.update(user, taskId, { version: b.version, due_at: due });
  }
}
