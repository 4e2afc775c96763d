CREATE TABLE `import_ledger` (
	`user_id` text NOT NULL,
	`format` text NOT NULL,
	`file_sha256` text NOT NULL,
	`counts` text NOT NULL,
	`imported_at` text NOT NULL,
	PRIMARY KEY(`user_id`, `format`, `file_sha256`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `import_tokens` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`token_hash` text NOT NULL,
	`format` text NOT NULL,
	`file_sha256` text NOT NULL,
	`file_name` text NOT NULL,
	`size` integer NOT NULL,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	`consumed_at` text,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `import_tokens_token_uq` ON `import_tokens` (`token_hash`);--> statement-breakpoint
CREATE INDEX `import_tokens_user_idx` ON `import_tokens` (`user_id`,`expires_at`);