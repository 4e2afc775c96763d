-- Trigram full-text index over tasks.search_text (normalised title + description). External
-- content: the text lives once, in tasks; these triggers keep the index in step in the same
-- transaction as every write (including FK cascades, which fire triggers).
CREATE VIRTUAL TABLE `tasks_fts` USING fts5(search_text, content='tasks', content_rowid='rowid', tokenize='trigram');
--> statement-breakpoint
CREATE TRIGGER `tasks_fts_ai` AFTER INSERT ON `tasks` BEGIN
  INSERT INTO tasks_fts(rowid, search_text) VALUES (new.rowid, new.search_text);
END;
--> statement-breakpoint
CREATE TRIGGER `tasks_fts_ad` AFTER DELETE ON `tasks` BEGIN
  INSERT INTO tasks_fts(tasks_fts, rowid, search_text) VALUES ('delete', old.rowid, old.search_text);
END;
--> statement-breakpoint
CREATE TRIGGER `tasks_fts_au` AFTER UPDATE OF search_text ON `tasks` BEGIN
  INSERT INTO tasks_fts(tasks_fts, rowid, search_text) VALUES ('delete', old.rowid, old.search_text);
  INSERT INTO tasks_fts(rowid, search_text) VALUES (new.rowid, new.search_text);
END;
--> statement-breakpoint
INSERT INTO tasks_fts(tasks_fts) VALUES ('rebuild');
