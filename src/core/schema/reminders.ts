import { sql } from "drizzle-orm";
import { sqliteTable, text, integer, index, uniqueIndex } from "drizzle-orm/sqlite-core";
import { ownerColumn } from "./accounts";
import { timestamps } from "./columns";

// Reminders (issue 15, spec reminders.md). Owned by src/features/reminders/.
// A reminder names its target by type and id, not by foreign key: it can point at a task, a habit
// or a countdown, and those features do not know reminders exist (they announce changes through
// hooks). A reminder whose target is gone is dropped when the scheduler or a hook meets it.
// The fields map onto an iCalendar VALARM: before_due → TRIGGER;RELATED=START:-PT{n}M on the
// VTODO's DUE, at → TRIGGER;VALUE=DATE-TIME, daily/days_before → the occurrence's local time.

export const reminders = sqliteTable(
  "reminders",
  {
    id: text("id").primaryKey(),
    userId: ownerColumn(),
    targetType: text("target_type", { enum: ["task", "habit", "countdown"] }).notNull(),
    targetId: text("target_id").notNull(),
    kind: text("kind", { enum: ["before_due", "at", "daily", "days_before"] }).notNull(),
    minutesBefore: integer("minutes_before"),
    at: text("at"),
    time: text("time"),
    daysBefore: integer("days_before"),
    // The armed schedule: the next instant it fires and the occurrence it fires for (a task's
    // due_at, an `at` instant, a habit's or countdown's local date); null when nothing is armed.
    nextFireAt: text("next_fire_at"),
    nextOccurrence: text("next_occurrence"),
    // The last occurrence handed to the delivery ledger: never armed again (no double fire).
    firedOccurrence: text("fired_occurrence"),
    // A snooze (from a notification's action): fires once at this instant for fired_occurrence.
    snoozedUntil: text("snoozed_until"),
    ...timestamps(),
  },
  (t) => [
    index("reminders_target_idx").on(t.targetType, t.targetId),
    index("reminders_user_idx").on(t.userId),
    // The durable schedule: the scheduler reads the earliest armed reminder through this index.
    index("reminders_next_fire_idx").on(t.nextFireAt).where(sql`next_fire_at IS NOT NULL`),
  ],
);

export const notificationChannels = sqliteTable(
  "notification_channels",
  {
    id: text("id").primaryKey(),
    userId: ownerColumn(),
    type: text("type", { enum: ["webhook", "ntfy", "email", "webpush"] }).notNull(),
    name: text("name").notNull(),
    enabled: integer("enabled", { mode: "boolean" }).notNull().default(true),
    // JSON: the public part of the configuration (answered by the API).
    config: text("config").notNull(),
    // JSON: the write-only part (webhook secret, ntfy token, push keys); never answered.
    secrets: text("secrets").notNull().default("{}"),
    ...timestamps(),
  },
  (t) => [index("notification_channels_user_idx").on(t.userId)],
);

export const deliveries = sqliteTable(
  "deliveries",
  {
    // UUIDv7: newest-first pages walk (user_id, id).
    id: text("id").primaryKey(),
    userId: ownerColumn(),
    reminderId: text("reminder_id").notNull(),
    channelId: text("channel_id").notNull(),
    occurrence: text("occurrence").notNull(),
    fireAt: text("fire_at").notNull(),
    // pending: waiting for its first attempt (or for quiet hours to end); sending: an attempt is
    // under way (after a crash it is attempted again with the same id); retrying, delivered,
    // failed, missed: as the API says.
    status: text("status", { enum: ["pending", "sending", "retrying", "delivered", "failed", "missed"] }).notNull(),
    late: integer("late", { mode: "boolean" }).notNull().default(false),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: text("next_attempt_at"),
    lastError: text("last_error"),
    deliveredAt: text("delivered_at"),
    // What the receivers are told (title, target), fixed when the delivery is recorded.
    payload: text("payload").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [
    // The ledger's promise: one delivery per (reminder, occurrence, channel), ever.
    uniqueIndex("deliveries_once_uq").on(t.reminderId, t.occurrence, t.channelId),
    index("deliveries_user_idx").on(t.userId, t.id),
    index("deliveries_due_idx").on(t.nextAttemptAt).where(sql`status IN ('pending', 'sending', 'retrying')`),
  ],
);

/** Action URLs (done/snooze) already used: each works once. */
export const reminderActionUses = sqliteTable("reminder_action_uses", {
  // SHA-256 of the token's signed part.
  tokenHash: text("token_hash").primaryKey(),
  userId: ownerColumn(),
  usedAt: text("used_at").notNull(),
  expiresAt: text("expires_at").notNull(),
});

/** Instance-wide notification settings an administrator sets (SMTP, the outbound rule): key → JSON. */
export const notificationSettings = sqliteTable("notification_settings", {
  key: text("key").primaryKey(),
  value: text("value").notNull(),
  updatedAt: text("updated_at").notNull(),
});
