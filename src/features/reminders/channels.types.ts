import type { TargetInfo } from "./reminders.targets";

/** What every channel is told: the webhook body of the spec (event "test" for a channel's test). */
export interface ReminderMessage {
  event: "reminder" | "test";
  id: string;
  reminder_id: string | null;
  fire_at: string;
  late: boolean;
  target: TargetInfo;
  actions: { done: string; snooze: string } | null;
}
