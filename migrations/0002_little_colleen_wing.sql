ALTER TABLE `tasks` ADD `search_text` text DEFAULT '' NOT NULL;--> statement-breakpoint
CREATE INDEX `tasks_user_list_idx` ON `tasks` (`user_id`,`list_id`);