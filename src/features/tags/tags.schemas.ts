import { z } from "zod";
import { maxChars } from "../../core/text";
import { UrlId } from "../../core/ids";

const noControl = (s: string) => !/[\u0000-\u001f\u007f]/.test(s);

export const TAG_NAME_MAX = 64;
export const TagName = maxChars(z.string().trim().min(1, "name is required"), TAG_NAME_MAX, `at most ${TAG_NAME_MAX} characters`).refine(
  noControl,
  "no control characters",
);
// The pattern allows exactly 7 characters; maxLength says so to tools that do not read patterns.
export const Color = z.string().regex(/^#[0-9A-Fa-f]{6}$/, "a colour #RRGGBB").meta({ maxLength: 7 });

export const Tag = z.object({ id: z.string(), name: z.string(), color: z.string().describe("#RRGGBB") }).meta({ id: "Tag" });
export type Tag = z.infer<typeof Tag>;

export const TagCreate = z.strictObject({ name: TagName, color: Color });
export type TagCreate = z.infer<typeof TagCreate>;

export const TagPatch = z.strictObject({ name: TagName.optional(), color: Color.optional() });
export type TagPatch = z.infer<typeof TagPatch>;

export const TagList = z.object({ items: z.array(Tag) });
export const TagParams = z.object({ tag_id: UrlId });
