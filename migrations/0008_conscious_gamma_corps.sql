DROP INDEX `tasks_user_list_idx`;--> statement-breakpoint
CREATE INDEX `tasks_live_list_idx` ON `tasks` (`list_id`,`created_at`,`id`) WHERE parent_id IS NULL AND deleted_at IS NULL;