CREATE TABLE `snapshot_settings` (
	`id` integer PRIMARY KEY NOT NULL,
	`overrides` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `snapshot_status` (
	`destination` text PRIMARY KEY NOT NULL,
	`last_attempt_at` text,
	`last_success_at` text,
	`last_failure_at` text,
	`last_error` text,
	`last_name` text,
	`last_bytes` integer,
	`last_sha256` text
);
--> statement-breakpoint
ALTER TABLE `users` ADD `disabled_at` text;