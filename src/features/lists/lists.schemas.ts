import { z } from "zod";
import { maxChars } from "../../core/text";
import { UrlId } from "../../core/ids";
import { Color } from "../tags/tags.schemas";

const noControl = (s: string) => !/[\u0000-\u001f\u007f]/.test(s);

export const LIST_NAME_MAX = 200;
export const ListName = maxChars(z.string().trim().min(1, "name is required"), LIST_NAME_MAX, `at most ${LIST_NAME_MAX} characters`).refine(
  noControl,
  "no control characters",
);

/** How a list's tasks are shown, remembered per list (GET /tasks `sort` takes the same values). */
export const ListSort = z
  .enum(["manual", "due_date", "priority", "title", "created"], { error: "sort must be manual, due_date, priority, title or created" })
  .describe("manual (rank), due_date, priority (high first), title, created (newest first)");
export type ListSort = z.infer<typeof ListSort>;

export const List = z.object({
    id: z.string(),
    name: z.string(),
    folder_id: z.string().nullable().describe("null at root, also when the folder was deleted"),
    is_inbox: z.boolean(),
    color: z.string().nullable(),
    position: z.number().int(),
    sort: ListSort,
    created_at: z.string(),
    updated_at: z.string(),
    deleted_at: z.string().nullable().describe("set while the list is archived"),
    role: z.enum(["owner", "editor", "viewer"]).describe("the user's role on the list (shared lists: editor or viewer)"),
    owner: z.object({ id: z.string(), username: z.string(), display_name: z.string() }).describe("the list's owner"),
    member_count: z.number().int().describe("the owner and the members who accepted (pending invitations not counted)"),
  })
  .meta({ id: "List" });
export type List = z.infer<typeof List>;

export const ListCreate = z.strictObject({ name: ListName, folder_id: maxChars(z.string(), 64).nullable().optional(), color: Color.nullable().optional() });
export type ListCreate = z.infer<typeof ListCreate>;

export const ListPatch = z.strictObject({
  name: ListName.optional(),
  color: Color.nullable().optional(),
  sort: ListSort.optional(),
  folder_id: maxChars(z.string(), 64).nullable().optional().describe("the caller's own placement (a member's changes only theirs)"),
  position: z.number().int().min(0).max(1_000_000).optional().describe("the caller's own placement (a member's changes only theirs)"),
});
export type ListPatch = z.infer<typeof ListPatch>;

export const ListMove = z.strictObject({ folder_id: maxChars(z.string(), 64).nullable() });
export type ListMove = z.infer<typeof ListMove>;

export const ListsQuery = z.strictObject({
    archived: z
      .enum(["true", "false"], { error: "archived must be true or false" })
      .optional()
      .transform((v) => v === "true"),
  });

export const ListList = z.object({ items: z.array(List) });
export const ListParams = z.object({ list_id: UrlId });
