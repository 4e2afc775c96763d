DROP INDEX `memos_user_idx`;--> statement-breakpoint
CREATE INDEX `memos_active_idx` ON `memos` (`user_id`,`created_at`,`id`) WHERE deleted_at IS NULL;--> statement-breakpoint
CREATE INDEX `memos_deleted_idx` ON `memos` (`user_id`,`created_at`,`id`) WHERE deleted_at IS NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX `countdowns_pinned_uq` ON `countdowns` (`user_id`) WHERE pinned = 1;