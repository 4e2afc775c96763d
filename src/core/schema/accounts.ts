import { sqliteTable, text, integer, index, uniqueIndex } from "drizzle-orm/sqlite-core";
import { timestamps } from "./columns";

// Instants are stored as RFC 3339 UTC strings with milliseconds: they sort lexicographically
// and are returned as they are. Dates are YYYY-MM-DD strings.

/** A row's owner: the user it belongs to; the row goes when the user does. */
export function ownerColumn() {
  return text("user_id")
    .notNull()
    .references(() => users.id, { onDelete: "cascade" });
}

export const users = sqliteTable(
  "users",
  {
    id: text("id").primaryKey(),
    username: text("username").notNull(),
    // Case-folded username: uniqueness is case-insensitive.
    usernameKey: text("username_key").notNull(),
    displayName: text("display_name").notNull(),
    timezone: text("timezone").notNull().default("UTC"),
    isAdmin: integer("is_admin", { mode: "boolean" }).notNull().default(false),
    // Reminders: the local time a date-only task's reminders count from, and quiet hours
    // (HH:MM, both set or both null) during which deliveries wait.
    reminderTime: text("reminder_time").notNull().default("09:00"),
    quietStart: text("quiet_start"),
    quietEnd: text("quiet_end"),
    passwordHash: text("password_hash").notNull(),
    // Set by the operator (`app users disable`): the account cannot sign in and its sessions no
    // longer authenticate; its data stays. NULL: active.
    disabledAt: text("disabled_at"),
    ...timestamps(),
  },
  (t) => [uniqueIndex("users_username_key_uq").on(t.usernameKey)],
);

export const sessions = sqliteTable(
  "sessions",
  {
    id: text("id").primaryKey(),
    userId: ownerColumn(),
    // SHA-256 (hex) of the bearer token; the token itself is never stored.
    tokenHash: text("token_hash").notNull(),
    createdAt: text("created_at").notNull(),
    lastSeenAt: text("last_seen_at").notNull(),
    // Absolute expiry; the idle expiry is last_seen_at + idle lifetime.
    expiresAt: text("expires_at").notNull(),
    ip: text("ip"),
    userAgent: text("user_agent"),
    revokedAt: text("revoked_at"),
  },
  (t) => [uniqueIndex("sessions_token_hash_uq").on(t.tokenHash), index("sessions_user_idx").on(t.userId)],
);

export const auditLogs = sqliteTable(
  "audit_logs",
  {
    // UUIDv7: time-ordered, so (user_id, id) is the keyset for newest-first pages.
    id: text("id").primaryKey(),
    userId: text("user_id").references(() => users.id, { onDelete: "cascade" }),
    at: text("at").notNull(),
    action: text("action").notNull(),
    ip: text("ip"),
    userAgent: text("user_agent"),
    targetType: text("target_type"),
    targetId: text("target_id"),
    // JSON object or NULL.
    detail: text("detail"),
  },
  (t) => [index("audit_logs_user_idx").on(t.userId, t.id)],
);
