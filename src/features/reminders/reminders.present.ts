import type { ReminderRow } from "./reminders.repo";
import type { Reminder } from "./reminders.schemas";

export function presentReminder(r: ReminderRow): Reminder {
  return {
    id: r.id,
    target: { type: r.target_type, id: r.target_id },
    kind: r.kind,
    minutes_before: r.minutes_before,
    at: r.at,
    time: r.time,
    days_before: r.days_before,
    // A restored reminder waits for the scheduler to arm it (next_occurrence null): nothing armed yet.
    next_fire_at: r.next_occurrence === null ? null : r.next_fire_at,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}
