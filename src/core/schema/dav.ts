import { sqliteTable, text, integer, index, uniqueIndex } from "drizzle-orm/sqlite-core";
import { ownerColumn } from "./accounts";
import { timestamps } from "./columns";

// CalDAV (issue 16). Owned by src/features/dav/dav.repo.ts.
//
// dav_changes is the sync log behind getctag, sync-token and ETags: one row per (list, task) with
// the sequence number of the last change to that task's iCalendar as that list shows it, or to
// its membership (a task moved out, trashed or purged keeps its row: the tombstone). It is written
// only by the triggers of the dav migration, in the same transaction as the change, on every
// table a VTODO is built from (tasks, task_tags, tags, reminders, recurrences, exceptions,
// dav_objects) and on list_members/lists (task_id '' marks a change of the collection itself);
// the one other writer is dav.repo.ts renameObject, whose tombstone of a renamed resource's old
// name is the row of an alias id (no task has it) named by its own dav_objects row.
// So every path (API, batch, undo, trash, restore, import, recurrence, sharing, CalDAV) moves the
// token, including ones written after this comment. Rows are upserted, so the log holds one row
// per pair; tombstones are pruned after DAV_TOMBSTONE_DAYS (dav.repo.ts) and the list's floor
// then refuses older tokens.
export const davChanges = sqliteTable(
  "dav_changes",
  {
    listId: text("list_id").notNull(),
    taskId: text("task_id").notNull(),
    seq: integer("seq").notNull(),
    // Unix seconds of the change (SQLite's clock: the triggers write it); read to prune tombstones.
    at: integer("at").notNull(),
  },
  (t) => [uniqueIndex("dav_changes_pair_uq").on(t.listId, t.taskId), index("dav_changes_list_seq_idx").on(t.listId, t.seq)],
);

/** The one global change counter (row id 1): every trigger takes the next value. */
export const davSeq = sqliteTable("dav_seq", {
  id: integer("id").primaryKey(),
  value: integer("value").notNull(),
});

/** Per list: the highest sequence number whose tombstones were pruned; older tokens are refused. */
export const davFloors = sqliteTable("dav_floors", {
  listId: text("list_id").primaryKey(),
  seq: integer("seq").notNull(),
});

// What a CalDAV client chose for a task and this app does not model: the resource name (opaque,
// never parsed), the UID, and the properties and components kept verbatim (RFC 5545 text of a
// VTODO holding only them), so a client's data survives a round trip. No foreign key to tasks: a
// purged task's name is still needed for its tombstone href; rows are dropped with the tombstone.
export const davObjects = sqliteTable(
  "dav_objects",
  {
    taskId: text("task_id").primaryKey(),
    userId: ownerColumn(),
    name: text("name").notNull(),
    uid: text("uid").notNull(),
    extra: text("extra").notNull().default(""),
    ...timestamps(),
  },
  (t) => [index("dav_objects_uid_idx").on(t.uid), index("dav_objects_name_idx").on(t.name), index("dav_objects_user_idx").on(t.userId)],
);

// A collection created by a client (MKCALENDAR, Extended MKCOL) lives at the path it chose
// (RFC 4791 §5.3.1: the Request-URI): the list keeps that name as its href; other lists are named
// by their id. The name is opaque (macOS sends upper-case UUIDs) and never parsed.
export const davCollections = sqliteTable(
  "dav_collections",
  {
    listId: text("list_id").primaryKey(),
    userId: ownerColumn(),
    name: text("name").notNull(),
  },
  (t) => [uniqueIndex("dav_collections_name_uq").on(t.name), index("dav_collections_user_idx").on(t.userId)],
);
