import type { ListView } from "./lists.repo";
import type { List } from "./lists.schemas";

export function presentList(l: ListView): List {
  return {
    id: l.id,
    name: l.name,
    folder_id: l.folderId,
    is_inbox: l.isInbox,
    color: l.color,
    position: l.position,
    sort: l.sort,
    created_at: l.createdAt,
    updated_at: l.updatedAt,
    deleted_at: l.deletedAt,
    role: l.role,
    owner: l.owner,
    member_count: l.memberCount,
  };
}
