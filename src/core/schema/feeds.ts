import { sqliteTable, text, index } from "drizzle-orm/sqlite-core";
import { ownerColumn } from "./accounts";

// Read-only calendar feeds (issue 16, spec devices.md "Calendar feed"). Owned by src/features/feeds/.
// The feed's secret is not stored: it is an HMAC of the feed's id under the server secret
// (feeds.secret.ts), so GET /feeds can show the URL again and a copy of the database alone does
// not open anyone's feed.
export const feeds = sqliteTable(
  "feeds",
  {
    id: text("id").primaryKey(),
    userId: ownerColumn(),
    scope: text("scope", { enum: ["all", "list"] }).notNull(),
    // No foreign key: a feed of a list the user can no longer see (trashed, purged, left, or
    // replaced by a restore that brings it back) answers 404 until the list is visible again;
    // the user sees it in Settings and revokes it there.
    listId: text("list_id"),
    // JSON array, a non-empty subset of ["tasks","countdowns","habits"], in that order.
    include: text("include").notNull(),
    taskFormat: text("task_format", { enum: ["events", "todos"] }).notNull().default("events"),
    createdAt: text("created_at").notNull(),
    // Revoked feeds are kept (not answered, not listed): a calendar app still polling a revoked
    // URL is told 404 without being counted as someone guessing secrets (feeds.service.ts).
    revokedAt: text("revoked_at"),
  },
  (t) => [index("feeds_user_idx").on(t.userId, t.createdAt)],
);
