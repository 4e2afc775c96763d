import { z } from "zod";
import { maxChars } from "../../core/text";

export const TaskAttachmentsParams = z.object({ task_id: maxChars(z.string(), 64) });
export const AttachmentParams = z.object({ attachment_id: maxChars(z.string(), 64) });

export const Attachment = z.object({
    id: z.string(),
    task_id: z.string(),
    filename: z.string().describe("the client's file name, cleaned: last path segment, NFC, no control or bidi characters, at most 255 characters"),
    content_type: z.string().describe("decided from the file's content (magic bytes), not only the declared type"),
    size: z.number().int().describe("bytes"),
    sha256: z.string().describe("lowercase hex SHA-256 of the bytes; the download's ETag"),
    created_at: z.string(),
  })
  .meta({ id: "Attachment" });
export type Attachment = z.infer<typeof Attachment>;

export const AttachmentList = z.object({ items: z.array(Attachment) });

/** Bytes of a download. */
export const AttachmentBytes = z.string().describe("the file's bytes");
