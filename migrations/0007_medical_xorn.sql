CREATE TABLE `backup_ledger` (
	`user_id` text NOT NULL,
	`entity` text NOT NULL,
	`source_id` text NOT NULL,
	`target_id` text NOT NULL,
	`digest` text NOT NULL,
	PRIMARY KEY(`user_id`, `entity`, `source_id`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `backup_preflights` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`token_hash` text NOT NULL,
	`file_sha256` text NOT NULL,
	`mode` text NOT NULL,
	`size` integer NOT NULL,
	`backup_id` text NOT NULL,
	`summary` text NOT NULL,
	`counts` text NOT NULL,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	`consumed_at` text,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `backup_preflights_token_uq` ON `backup_preflights` (`token_hash`);--> statement-breakpoint
CREATE INDEX `backup_preflights_user_idx` ON `backup_preflights` (`user_id`,`expires_at`);--> statement-breakpoint
CREATE TABLE `backup_restores` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`preflight_id` text NOT NULL,
	`mode` text NOT NULL,
	`backup_id` text NOT NULL,
	`counts` text NOT NULL,
	`committed_at` text NOT NULL,
	`cleanup_done_at` text,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `backup_restores_preflight_uq` ON `backup_restores` (`preflight_id`);