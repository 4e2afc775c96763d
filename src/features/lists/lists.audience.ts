import type { Conn } from "../../core/db";
import { roleOnList } from "./lists.access";
import { memberIdsOf } from "./lists.members.repo";
import { listHead } from "./lists.repo";

/** Who sees a list now: its owner and its members (event streams; an archived list: its owner and the members hearing it go). */
export function listAudience(c: Conn, listId: string): string[] {
  const head = listHead(c, listId);
  return head ? [head.ownerId, ...memberIdsOf(c, listId)] : [];
}

/** Whether the user may see the list now (roleOnList): a replayed event of a list they left is not sent. */
export function listVisibleTo(c: Conn, userId: string, listId: string): boolean {
  const head = listHead(c, listId);
  return !!head && roleOnList(c, userId, head) !== null;
}
