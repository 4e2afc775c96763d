import { countdownRule } from "../countdowns/countdowns.occurrence";
import type { Conn } from "../../core/db";
import { dateOfDay, dayNumber } from "../../core/days";
import { localDate } from "../../core/time";
import { findTaskWithList, isVisibleTask } from "../tasks/tasks.repo";
import { listHead } from "../lists/lists.repo";
import { findHabit, listLogs, pauseSpans } from "../habits/habits.repo";
import { findCountdown } from "../countdowns/countdowns.repo";
import type { Frequency } from "../habits/habits.schedule";
import type { TargetState } from "./reminders.schedule";

export type TargetType = "task" | "habit" | "countdown";

/** What receivers are told about a reminder's target (spec: the webhook body's `target`). */
export interface TargetInfo {
  type: TargetType;
  id: string;
  title: string;
  due_at?: string | null;
  list?: { id: string; name: string };
  /** Task priority (0 none … 3 high): ntfy's Priority is mapped from it. */
  priority?: number;
}

export interface LoadedTarget {
  /** Whether the API shows it (a task in the trash or in an archived list is not shown). */
  visible: boolean;
  state: TargetState;
  info: TargetInfo;
}

/**
 * The target's state as the schedule reads it, or null when the target is not the user's (or no
 * longer exists). `around`: the instant whose neighbourhood a habit's logs are read for.
 * A task in the trash or in an archived list, a completed task, an archived habit or countdown is
 * inactive: nothing fires for it.
 */
export function loadTarget(c: Conn, userId: string, type: TargetType, id: string, tz: string, around: Date): LoadedTarget | null {
  switch (type) {
    case "task": {
      // lists.access through findTaskWithList: the user's own task or one of a list shared with them.
      const t = findTaskWithList(c, userId, id);
      if (!t) return null;
      const list = listHead(c, t.list_id);
      return {
        visible: isVisibleTask(t),
        state: { type: "task", active: isVisibleTask(t) && t.completed === 0, dueAt: t.due_at },
        info: { type, id, title: t.title, due_at: t.due_at, list: list ? { id: list.id, name: list.name } : undefined, priority: t.priority },
      };
    }
    case "habit": {
      const h = findHabit(c, userId, id);
      if (!h) return null;
      // Logs from the Monday a week back (times_per_week counts its week) to ~14 months ahead.
      const day = dayNumber(localDate(around, tz));
      const values = new Map<number, number>();
      for (const l of listLogs(c, id, dateOfDay(day - 14), dateOfDay(day + 430))) values.set(dayNumber(l.date), l.value);
      const pauses = pauseSpans(c, id).map((p) => ({ start: dayNumber(p.start_date), end: p.end_date === null ? null : dayNumber(p.end_date) }));
      return {
        visible: true,
        state: { type: "habit", active: h.archivedAt === null, frequency: JSON.parse(h.frequency) as Frequency, goal: h.goal, startDate: h.startDate, pauses, values },
        info: { type, id, title: h.name },
      };
    }
    case "countdown": {
      const r = findCountdown(c, userId, id);
      if (!r) return null;
      return {
        visible: true,
        state: {
          type: "countdown",
          active: r.archivedAt === null,
          rule: countdownRule(r),
        },
        info: { type, id, title: r.name },
      };
    }
  }
}
