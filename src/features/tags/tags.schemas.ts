import { z } from "zod";

const noControl = (s: string) => !/[\u0000-\u001f\u007f]/.test(s);

export const TagName = z
  .string()
  .trim()
  .min(1, "name is required")
  .refine((s) => [...s].length <= 64, "at most 64 characters")
  .refine(noControl, "no control characters");
export const Color = z.string().regex(/^#[0-9A-Fa-f]{6}$/, "a colour #RRGGBB");

export const Tag = z.object({ id: z.string(), name: z.string(), color: z.string().describe("#RRGGBB") }).meta({ id: "Tag" });
export type Tag = z.infer<typeof Tag>;

export const TagCreate = z.strictObject({ name: TagName, color: Color });
export type TagCreate = z.infer<typeof TagCreate>;

export const TagPatch = z.strictObject({ name: TagName.optional(), color: Color.optional() });
export type TagPatch = z.infer<typeof TagPatch>;

export const TagList = z.object({ items: z.array(Tag) });
export const TagParams = z.object({ tag_id: z.string() });
