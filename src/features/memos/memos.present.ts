import type { MemoRow } from "./memos.repo";
import type { Memo } from "./memos.schemas";

export function presentMemo(r: MemoRow): Memo {
  return {
    id: r.id,
    content: r.content,
    pinned: r.pinned,
    version: r.version,
    created_at: r.createdAt,
    updated_at: r.updatedAt,
    deleted_at: r.deletedAt,
  };
}
