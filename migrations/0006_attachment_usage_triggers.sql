-- attachment_usage.bytes is the sum of a user's attachment sizes, kept in step by these triggers
-- in the same transaction as every insert and delete (FK cascades from a purged task or list fire
-- them too), so GET /me reads the total with one primary-key probe.
CREATE TRIGGER `attachments_usage_ai` AFTER INSERT ON `attachments` BEGIN
  INSERT INTO attachment_usage(user_id, bytes) VALUES (new.user_id, new.size)
    ON CONFLICT(user_id) DO UPDATE SET bytes = bytes + excluded.bytes;
END;
--> statement-breakpoint
CREATE TRIGGER `attachments_usage_ad` AFTER DELETE ON `attachments` BEGIN
  UPDATE attachment_usage SET bytes = bytes - old.size WHERE user_id = old.user_id;
END;
