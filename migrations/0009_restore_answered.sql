ALTER TABLE `backup_restores` ADD `answered_at` text;--> statement-breakpoint
UPDATE `backup_restores` SET `answered_at` = `cleanup_done_at` WHERE `cleanup_done_at` IS NOT NULL;