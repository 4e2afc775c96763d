import type { TagRow } from "./tags.repo";
import type { Tag } from "./tags.schemas";

export function presentTag(t: TagRow): Tag {
  return { id: t.id, name: t.name, color: t.color };
}
