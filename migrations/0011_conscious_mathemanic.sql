ALTER TABLE `lists` ADD `sort` text DEFAULT 'created' NOT NULL;--> statement-breakpoint
ALTER TABLE `tasks` ADD `rank` text DEFAULT '' NOT NULL;--> statement-breakpoint
CREATE INDEX `tasks_top_rank_idx` ON `tasks` (`list_id`,`rank`,`id`) WHERE parent_id IS NULL;--> statement-breakpoint
CREATE INDEX `tasks_open_day_idx` ON `tasks` (`user_id`,`due_at`,`id`) WHERE parent_id IS NULL AND deleted_at IS NULL AND completed = 0 AND length(due_at) = 10;--> statement-breakpoint
CREATE INDEX `tasks_open_timed_idx` ON `tasks` (`user_id`,`due_at`,`id`) WHERE parent_id IS NULL AND deleted_at IS NULL AND completed = 0 AND length(due_at) > 10;--> statement-breakpoint
CREATE INDEX `tasks_live_due_idx` ON `tasks` (`user_id`,`due_at`,`id`) WHERE parent_id IS NULL AND deleted_at IS NULL AND due_at IS NOT NULL;--> statement-breakpoint
CREATE INDEX `tasks_open_undated_idx` ON `tasks` (`user_id`,`created_at`,`id`) WHERE parent_id IS NULL AND deleted_at IS NULL AND completed = 0 AND due_at IS NULL;--> statement-breakpoint
CREATE INDEX `tasks_done_idx` ON `tasks` (`user_id`,`completed_at`,`id`) WHERE parent_id IS NULL AND deleted_at IS NULL AND completed = 1;--> statement-breakpoint
-- hand-written
-- Existing tasks get a manual order equal to their creation order among their siblings (a list's
-- top-level tasks, or a parent's subtasks): fractional-indexing integer keys "g0000001",
-- "g0000002", … (head "g": seven digits follow; decimal digits are base-62 digits), so keys made
-- later by tasks.rank.ts sort among them.
UPDATE tasks SET rank = x.k FROM (
  SELECT id, 'g' || printf('%07d', row_number() OVER (PARTITION BY list_id, parent_id ORDER BY created_at, id)) AS k FROM tasks
) x WHERE x.id = tasks.id;
