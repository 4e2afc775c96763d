import { z } from "zod";
import { maxChars } from "../../core/text";
import { pageQueryShape } from "../../core/pagination";

/** Markdown text; the limit keeps one memo well under the 1 MiB body limit even in UTF-8. */
export const MEMO_CONTENT_MAX = 100_000;
export const MemoContent = maxChars(z.string().min(1, "content must not be empty"), MEMO_CONTENT_MAX, `at most ${MEMO_CONTENT_MAX} characters`)
  .describe("Markdown text, 1 to 100,000 characters");

/** As a task's version (tasks.schemas.ts): bounded so that the next change still has an exact version. */
export const MEMO_VERSION_MAX = 2 ** 31 - 1;
export const MemoVersion = z
  .number({ error: "version is required (an integer)" })
  .int()
  .min(1)
  .max(MEMO_VERSION_MAX, `at most ${MEMO_VERSION_MAX}`);

export const MemoCreate = z.strictObject({ content: MemoContent, pinned: z.boolean().optional() });
export type MemoCreate = z.infer<typeof MemoCreate>;

export const MemoPatch = z.strictObject({
    content: MemoContent.optional(),
    pinned: z.boolean().optional(),
    version: MemoVersion.describe("the version the change is based on"),
  });
export type MemoPatch = z.infer<typeof MemoPatch>;

export const MemoListQuery = z.strictObject({
    ...pageQueryShape,
    deleted: z
      .enum(["true", "false"], { error: "deleted must be true or false" })
      .default("false")
      .transform((v) => v === "true")
      .describe("true lists the soft-deleted memos instead of the active ones"),
  });
export type MemoListQuery = z.infer<typeof MemoListQuery>;

export const MemoParams = z.object({ memo_id: maxChars(z.string(), 64) });

export const Memo = z.object({
    id: z.string(),
    content: z.string(),
    pinned: z.boolean(),
    version: z.number().int().min(1).max(MEMO_VERSION_MAX).describe("starts at 1, grows by one on every change"),
    created_at: z.string(),
    updated_at: z.string(),
    deleted_at: z.string().nullable().describe("set while the memo is soft-deleted"),
  })
  .meta({ id: "Memo" });
export type Memo = z.infer<typeof Memo>;

export const MemoPage = z.object({ items: z.array(Memo), next_cursor: z.string().nullable() });
