import type { HabitLogRow, HabitPauseRow, HabitRow } from "./habits.repo";
import type { Frequency, Habit, HabitLog, HabitPause } from "./habits.schemas";

export function presentHabit(r: HabitRow): Habit {
  return {
    id: r.id,
    name: r.name,
    icon: r.icon,
    color: r.color,
    frequency: JSON.parse(r.frequency) as Frequency,
    goal: r.goal,
    unit: r.unit,
    start_date: r.startDate,
    position: r.position,
    archived: r.archivedAt !== null,
    created_at: r.createdAt,
    updated_at: r.updatedAt,
  };
}

export function presentLog(r: Pick<HabitLogRow, "date" | "value" | "note">): HabitLog {
  return { date: r.date, value: r.value, note: r.note };
}

export function presentPause(r: HabitPauseRow): HabitPause {
  return { id: r.id, start_date: r.startDate, end_date: r.endDate };
}
