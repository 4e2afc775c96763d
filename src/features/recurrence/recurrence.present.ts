import type { RecurrenceRecord } from "./recurrence.repo";
import type { Recurrence } from "./recurrence.schemas";

/** Row → API shape (the field order is the JSON's). Legacy export presents its records with it too. */
export function presentRecurrence(r: Omit<RecurrenceRecord, "user_id">, exceptions: string[]): Recurrence {
  return {
    id: r.id,
    task_id: r.task_id,
    kind: r.kind,
    rrule: r.rrule,
    interval: r.interval,
    unit: r.unit,
    timezone: r.timezone,
    dtstart: r.dtstart,
    exceptions,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}
