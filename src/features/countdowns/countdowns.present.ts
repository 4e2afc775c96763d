import type { CountdownRow } from "./countdowns.repo";
import type { Countdown } from "./countdowns.schemas";
import { countdownRule, type Occurrence } from "./countdowns.occurrence";

export function presentCountdown(r: CountdownRow, o: Occurrence): Countdown {
  return {
    id: r.id,
    name: r.name,
    date: r.date,
    type: r.type,
    repeat: r.repeat,
    icon: r.icon,
    calendar: r.calendar,
    lunar: countdownRule(r).lunar,
    pinned: r.pinned,
    archived: r.archivedAt !== null,
    next_date: o.next_date,
    days_until: o.days_until,
    count: o.count,
    created_at: r.createdAt,
    updated_at: r.updatedAt,
  };
}
