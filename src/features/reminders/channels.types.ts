import type { TargetInfo } from "./reminders.targets";

/**
 * The target of an administrator's alert (event "alert": the server itself, e.g. a failed backup).
 * The optional fields of a reminder's target are never set.
 */
export interface InstanceTarget {
  type: "instance";
  id: "";
  title: string;
  due_at?: undefined;
  list?: undefined;
  priority?: undefined;
}

/**
 * What every channel is told: the webhook body of the spec (event "test" for a channel's test, and
 * "alert" for what the server tells its administrators: a failed backup).
 */
export interface ReminderMessage {
  event: "reminder" | "test" | "alert";
  id: string;
  reminder_id: string | null;
  fire_at: string;
  late: boolean;
  target: TargetInfo | InstanceTarget;
  actions: { done: string; snooze: string } | null;
}
