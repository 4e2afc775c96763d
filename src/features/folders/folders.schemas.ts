import { z } from "zod";
import { maxChars } from "../../core/text";
import { UrlId } from "../../core/ids";

const noControl = (s: string) => !/[\u0000-\u001f\u007f]/.test(s);

export const FOLDER_NAME_MAX = 200;
export const FolderName = maxChars(z.string().trim().min(1, "name is required"), FOLDER_NAME_MAX, `at most ${FOLDER_NAME_MAX} characters`).refine(
  noControl,
  "no control characters",
);

export const Folder = z.object({ id: z.string(), name: z.string(), position: z.number().int(), created_at: z.string(), updated_at: z.string() })
  .meta({ id: "Folder" });
export type Folder = z.infer<typeof Folder>;

export const FolderCreate = z.strictObject({ name: FolderName });
export type FolderCreate = z.infer<typeof FolderCreate>;

export const FolderPatch = z.strictObject({ name: FolderName.optional() });
export type FolderPatch = z.infer<typeof FolderPatch>;

/** A reorder names every active item exactly once, in the new order. */
export const ReorderBody = z.strictObject({ ids: z.array(maxChars(z.string(), 64)).max(10_000) });
export type ReorderBody = z.infer<typeof ReorderBody>;

export const FolderList = z.object({ items: z.array(Folder) });
export const FolderParams = z.object({ folder_id: UrlId });
