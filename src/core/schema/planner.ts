import { sql } from "drizzle-orm";
import { sqliteTable, text, integer, real, index, primaryKey, uniqueIndex } from "drizzle-orm/sqlite-core";
import { ownerColumn } from "./accounts";
import { timestamps } from "./columns";

export const habits = sqliteTable(
  "habits",
  {
    id: text("id").primaryKey(),
    userId: ownerColumn(),
    name: text("name").notNull(),
    icon: text("icon"),
    color: text("color"),
    // JSON: {"type":"daily"} | {"type":"weekdays","days":[1..7]} | {"type":"times_per_week","count":n}
    frequency: text("frequency").notNull(),
    goal: real("goal").notNull().default(1),
    unit: text("unit"),
    startDate: text("start_date").notNull(),
    position: integer("position").notNull().default(0),
    archivedAt: text("archived_at"),
    ...timestamps(),
  },
  (t) => [index("habits_user_idx").on(t.userId, t.position)],
);

export const habitLogs = sqliteTable(
  "habit_logs",
  {
    habitId: text("habit_id")
      .notNull()
      .references(() => habits.id, { onDelete: "cascade" }),
    userId: ownerColumn(),
    date: text("date").notNull(),
    value: real("value").notNull(),
    note: text("note"),
    ...timestamps(),
  },
  (t) => [primaryKey({ columns: [t.habitId, t.date] }), index("habit_logs_user_idx").on(t.userId)],
);

export const habitPauses = sqliteTable(
  "habit_pauses",
  {
    id: text("id").primaryKey(),
    habitId: text("habit_id")
      .notNull()
      .references(() => habits.id, { onDelete: "cascade" }),
    userId: ownerColumn(),
    startDate: text("start_date").notNull(),
    endDate: text("end_date"),
    ...timestamps(),
  },
  (t) => [index("habit_pauses_habit_idx").on(t.habitId, t.startDate)],
);

export const countdowns = sqliteTable(
  "countdowns",
  {
    id: text("id").primaryKey(),
    userId: ownerColumn(),
    name: text("name").notNull(),
    date: text("date").notNull(),
    type: text("type", { enum: ["countdown", "anniversary", "birthday"] }).notNull(),
    repeat: text("repeat", { enum: ["none", "weekly", "monthly", "yearly"] }).notNull(),
    icon: text("icon"),
    calendar: text("calendar", { enum: ["gregorian", "lunar"] }).notNull(),
    // Lunar month/day of `date` (leap months flagged separately), fixed at write time.
    lunarMonth: integer("lunar_month"),
    lunarDay: integer("lunar_day"),
    lunarLeap: integer("lunar_leap", { mode: "boolean" }),
    pinned: integer("pinned", { mode: "boolean" }).notNull().default(false),
    archivedAt: text("archived_at"),
    ...timestamps(),
  },
  (t) => [
    index("countdowns_user_idx").on(t.userId),
    // At most one pinned countdown per user, enforced by the database as well as by the service.
    uniqueIndex("countdowns_pinned_uq").on(t.userId).where(sql`pinned = 1`),
  ],
);

export const memos = sqliteTable(
  "memos",
  {
    id: text("id").primaryKey(),
    userId: ownerColumn(),
    content: text("content").notNull(),
    pinned: integer("pinned", { mode: "boolean" }).notNull().default(false),
    version: integer("version").notNull().default(1),
    ...timestamps(),
    deletedAt: text("deleted_at"),
  },
  // Newest-first keyset pages of active and of soft-deleted memos: one partial index each, so
  // both walks read the index in order with no sort.
  (t) => [
    index("memos_active_idx").on(t.userId, t.createdAt, t.id).where(sql`deleted_at IS NULL`),
    index("memos_deleted_idx").on(t.userId, t.createdAt, t.id).where(sql`deleted_at IS NOT NULL`),
  ],
);
