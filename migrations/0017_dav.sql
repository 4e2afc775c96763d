CREATE TABLE `dav_changes` (
	`list_id` text NOT NULL,
	`task_id` text NOT NULL,
	`seq` integer NOT NULL,
	`at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `dav_changes_pair_uq` ON `dav_changes` (`list_id`,`task_id`);--> statement-breakpoint
CREATE INDEX `dav_changes_list_seq_idx` ON `dav_changes` (`list_id`,`seq`);--> statement-breakpoint
CREATE TABLE `dav_collections` (
	`list_id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`name` text NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `dav_collections_name_uq` ON `dav_collections` (`name`);--> statement-breakpoint
CREATE INDEX `dav_collections_user_idx` ON `dav_collections` (`user_id`);--> statement-breakpoint
CREATE TABLE `dav_floors` (
	`list_id` text PRIMARY KEY NOT NULL,
	`seq` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `dav_objects` (
	`task_id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`name` text NOT NULL,
	`uid` text NOT NULL,
	`extra` text DEFAULT '' NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `dav_objects_uid_idx` ON `dav_objects` (`uid`);--> statement-breakpoint
CREATE INDEX `dav_objects_name_idx` ON `dav_objects` (`name`);--> statement-breakpoint
CREATE INDEX `dav_objects_user_idx` ON `dav_objects` (`user_id`);--> statement-breakpoint
CREATE TABLE `dav_seq` (
	`id` integer PRIMARY KEY NOT NULL,
	`value` integer NOT NULL
);
--> statement-breakpoint
-- The sync log's writers (src/core/schema/dav.ts): every change to what a VTODO is built from, or to a
-- list's membership, takes the next dav_seq value for its (list, task) pair in the same transaction.
INSERT INTO `dav_seq`(`id`, `value`) VALUES (1, 0);
--> statement-breakpoint
CREATE TRIGGER `tasks_dav_ai` AFTER INSERT ON `tasks` BEGIN
  UPDATE dav_seq SET value = value + 1 WHERE id = 1;
  INSERT INTO dav_changes(list_id, task_id, seq, at) SELECT new.list_id, new.id, (SELECT value FROM dav_seq WHERE id = 1), CAST(strftime('%s','now') AS INTEGER) WHERE true ON CONFLICT(list_id, task_id) DO UPDATE SET seq = excluded.seq, at = excluded.at;
END;
--> statement-breakpoint
CREATE TRIGGER `tasks_dav_au` AFTER UPDATE ON `tasks` BEGIN
  UPDATE dav_seq SET value = value + 1 WHERE id = 1;
  INSERT INTO dav_changes(list_id, task_id, seq, at) SELECT new.list_id, new.id, (SELECT value FROM dav_seq WHERE id = 1), CAST(strftime('%s','now') AS INTEGER) WHERE true ON CONFLICT(list_id, task_id) DO UPDATE SET seq = excluded.seq, at = excluded.at;
  UPDATE dav_seq SET value = value + 1 WHERE id = 1;
  INSERT INTO dav_changes(list_id, task_id, seq, at) SELECT old.list_id, old.id, (SELECT value FROM dav_seq WHERE id = 1), CAST(strftime('%s','now') AS INTEGER) WHERE old.list_id <> new.list_id ON CONFLICT(list_id, task_id) DO UPDATE SET seq = excluded.seq, at = excluded.at;
END;
--> statement-breakpoint
CREATE TRIGGER `tasks_dav_ad` AFTER DELETE ON `tasks` BEGIN
  UPDATE dav_seq SET value = value + 1 WHERE id = 1;
  INSERT INTO dav_changes(list_id, task_id, seq, at) SELECT old.list_id, old.id, (SELECT value FROM dav_seq WHERE id = 1), CAST(strftime('%s','now') AS INTEGER) WHERE true ON CONFLICT(list_id, task_id) DO UPDATE SET seq = excluded.seq, at = excluded.at;
END;
--> statement-breakpoint
CREATE TRIGGER `task_tags_dav_ai` AFTER INSERT ON `task_tags` BEGIN
  UPDATE dav_seq SET value = value + 1 WHERE id = 1;
  INSERT INTO dav_changes(list_id, task_id, seq, at) SELECT t.list_id, t.id, (SELECT value FROM dav_seq WHERE id = 1), CAST(strftime('%s','now') AS INTEGER) FROM tasks t WHERE t.id = new.task_id ON CONFLICT(list_id, task_id) DO UPDATE SET seq = excluded.seq, at = excluded.at;
END;
--> statement-breakpoint
CREATE TRIGGER `task_tags_dav_ad` AFTER DELETE ON `task_tags` BEGIN
  UPDATE dav_seq SET value = value + 1 WHERE id = 1;
  INSERT INTO dav_changes(list_id, task_id, seq, at) SELECT t.list_id, t.id, (SELECT value FROM dav_seq WHERE id = 1), CAST(strftime('%s','now') AS INTEGER) FROM tasks t WHERE t.id = old.task_id ON CONFLICT(list_id, task_id) DO UPDATE SET seq = excluded.seq, at = excluded.at;
END;
--> statement-breakpoint
CREATE TRIGGER `tags_dav_au` AFTER UPDATE OF `name` ON `tags` BEGIN
  UPDATE dav_seq SET value = value + 1 WHERE id = 1;
  INSERT INTO dav_changes(list_id, task_id, seq, at) SELECT t.list_id, t.id, (SELECT value FROM dav_seq WHERE id = 1), CAST(strftime('%s','now') AS INTEGER) FROM task_tags tt JOIN tasks t ON t.id = tt.task_id WHERE tt.tag_id = new.id ON CONFLICT(list_id, task_id) DO UPDATE SET seq = excluded.seq, at = excluded.at;
END;
--> statement-breakpoint
CREATE TRIGGER `reminders_dav_ai` AFTER INSERT ON `reminders` WHEN new.target_type = 'task' BEGIN
  UPDATE dav_seq SET value = value + 1 WHERE id = 1;
  INSERT INTO dav_changes(list_id, task_id, seq, at) SELECT t.list_id, t.id, (SELECT value FROM dav_seq WHERE id = 1), CAST(strftime('%s','now') AS INTEGER) FROM tasks t WHERE t.id = new.target_id ON CONFLICT(list_id, task_id) DO UPDATE SET seq = excluded.seq, at = excluded.at;
END;
--> statement-breakpoint
CREATE TRIGGER `reminders_dav_au` AFTER UPDATE OF `kind`, `minutes_before`, `at`, `time`, `days_before`, `target_id` ON `reminders` WHEN new.target_type = 'task' BEGIN
  UPDATE dav_seq SET value = value + 1 WHERE id = 1;
  INSERT INTO dav_changes(list_id, task_id, seq, at) SELECT t.list_id, t.id, (SELECT value FROM dav_seq WHERE id = 1), CAST(strftime('%s','now') AS INTEGER) FROM tasks t WHERE t.id = new.target_id ON CONFLICT(list_id, task_id) DO UPDATE SET seq = excluded.seq, at = excluded.at;
END;
--> statement-breakpoint
CREATE TRIGGER `reminders_dav_ad` AFTER DELETE ON `reminders` WHEN old.target_type = 'task' BEGIN
  UPDATE dav_seq SET value = value + 1 WHERE id = 1;
  INSERT INTO dav_changes(list_id, task_id, seq, at) SELECT t.list_id, t.id, (SELECT value FROM dav_seq WHERE id = 1), CAST(strftime('%s','now') AS INTEGER) FROM tasks t WHERE t.id = old.target_id ON CONFLICT(list_id, task_id) DO UPDATE SET seq = excluded.seq, at = excluded.at;
END;
--> statement-breakpoint
CREATE TRIGGER `recurrences_dav_ai` AFTER INSERT ON `recurrences` BEGIN
  UPDATE dav_seq SET value = value + 1 WHERE id = 1;
  INSERT INTO dav_changes(list_id, task_id, seq, at) SELECT t.list_id, t.id, (SELECT value FROM dav_seq WHERE id = 1), CAST(strftime('%s','now') AS INTEGER) FROM tasks t WHERE t.id = new.task_id ON CONFLICT(list_id, task_id) DO UPDATE SET seq = excluded.seq, at = excluded.at;
END;
--> statement-breakpoint
CREATE TRIGGER `recurrences_dav_au` AFTER UPDATE ON `recurrences` BEGIN
  UPDATE dav_seq SET value = value + 1 WHERE id = 1;
  INSERT INTO dav_changes(list_id, task_id, seq, at) SELECT t.list_id, t.id, (SELECT value FROM dav_seq WHERE id = 1), CAST(strftime('%s','now') AS INTEGER) FROM tasks t WHERE t.id = new.task_id ON CONFLICT(list_id, task_id) DO UPDATE SET seq = excluded.seq, at = excluded.at;
END;
--> statement-breakpoint
CREATE TRIGGER `recurrences_dav_ad` AFTER DELETE ON `recurrences` BEGIN
  UPDATE dav_seq SET value = value + 1 WHERE id = 1;
  INSERT INTO dav_changes(list_id, task_id, seq, at) SELECT t.list_id, t.id, (SELECT value FROM dav_seq WHERE id = 1), CAST(strftime('%s','now') AS INTEGER) FROM tasks t WHERE t.id = old.task_id ON CONFLICT(list_id, task_id) DO UPDATE SET seq = excluded.seq, at = excluded.at;
END;
--> statement-breakpoint
CREATE TRIGGER `recurrence_exceptions_dav_ai` AFTER INSERT ON `recurrence_exceptions` BEGIN
  UPDATE dav_seq SET value = value + 1 WHERE id = 1;
  INSERT INTO dav_changes(list_id, task_id, seq, at) SELECT t.list_id, t.id, (SELECT value FROM dav_seq WHERE id = 1), CAST(strftime('%s','now') AS INTEGER) FROM tasks t WHERE t.id = (SELECT r.task_id FROM recurrences r WHERE r.id = new.recurrence_id) ON CONFLICT(list_id, task_id) DO UPDATE SET seq = excluded.seq, at = excluded.at;
END;
--> statement-breakpoint
CREATE TRIGGER `recurrence_exceptions_dav_ad` AFTER DELETE ON `recurrence_exceptions` BEGIN
  UPDATE dav_seq SET value = value + 1 WHERE id = 1;
  INSERT INTO dav_changes(list_id, task_id, seq, at) SELECT t.list_id, t.id, (SELECT value FROM dav_seq WHERE id = 1), CAST(strftime('%s','now') AS INTEGER) FROM tasks t WHERE t.id = (SELECT r.task_id FROM recurrences r WHERE r.id = old.recurrence_id) ON CONFLICT(list_id, task_id) DO UPDATE SET seq = excluded.seq, at = excluded.at;
END;
--> statement-breakpoint
CREATE TRIGGER `dav_objects_dav_ai` AFTER INSERT ON `dav_objects` BEGIN
  UPDATE dav_seq SET value = value + 1 WHERE id = 1;
  INSERT INTO dav_changes(list_id, task_id, seq, at) SELECT t.list_id, t.id, (SELECT value FROM dav_seq WHERE id = 1), CAST(strftime('%s','now') AS INTEGER) FROM tasks t WHERE t.id = new.task_id ON CONFLICT(list_id, task_id) DO UPDATE SET seq = excluded.seq, at = excluded.at;
END;
--> statement-breakpoint
CREATE TRIGGER `dav_objects_dav_au` AFTER UPDATE ON `dav_objects` BEGIN
  UPDATE dav_seq SET value = value + 1 WHERE id = 1;
  INSERT INTO dav_changes(list_id, task_id, seq, at) SELECT t.list_id, t.id, (SELECT value FROM dav_seq WHERE id = 1), CAST(strftime('%s','now') AS INTEGER) FROM tasks t WHERE t.id = new.task_id ON CONFLICT(list_id, task_id) DO UPDATE SET seq = excluded.seq, at = excluded.at;
END;
--> statement-breakpoint
CREATE TRIGGER `list_members_dav_ai` AFTER INSERT ON `list_members` BEGIN
  UPDATE dav_seq SET value = value + 1 WHERE id = 1;
  INSERT INTO dav_changes(list_id, task_id, seq, at) SELECT new.list_id, '', (SELECT value FROM dav_seq WHERE id = 1), CAST(strftime('%s','now') AS INTEGER) WHERE true ON CONFLICT(list_id, task_id) DO UPDATE SET seq = excluded.seq, at = excluded.at;
END;
--> statement-breakpoint
CREATE TRIGGER `list_members_dav_au` AFTER UPDATE OF `role` ON `list_members` BEGIN
  UPDATE dav_seq SET value = value + 1 WHERE id = 1;
  INSERT INTO dav_changes(list_id, task_id, seq, at) SELECT new.list_id, '', (SELECT value FROM dav_seq WHERE id = 1), CAST(strftime('%s','now') AS INTEGER) WHERE true ON CONFLICT(list_id, task_id) DO UPDATE SET seq = excluded.seq, at = excluded.at;
END;
--> statement-breakpoint
CREATE TRIGGER `list_members_dav_ad` AFTER DELETE ON `list_members` BEGIN
  UPDATE dav_seq SET value = value + 1 WHERE id = 1;
  INSERT INTO dav_changes(list_id, task_id, seq, at) SELECT old.list_id, '', (SELECT value FROM dav_seq WHERE id = 1), CAST(strftime('%s','now') AS INTEGER) WHERE true ON CONFLICT(list_id, task_id) DO UPDATE SET seq = excluded.seq, at = excluded.at;
END;
--> statement-breakpoint
CREATE TRIGGER `lists_dav_au` AFTER UPDATE OF `name`, `color`, `deleted_at`, `user_id` ON `lists` BEGIN
  UPDATE dav_seq SET value = value + 1 WHERE id = 1;
  INSERT INTO dav_changes(list_id, task_id, seq, at) SELECT new.id, '', (SELECT value FROM dav_seq WHERE id = 1), CAST(strftime('%s','now') AS INTEGER) WHERE true ON CONFLICT(list_id, task_id) DO UPDATE SET seq = excluded.seq, at = excluded.at;
END;
