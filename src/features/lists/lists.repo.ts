import { lists } from "../../core/schema";
import type { Tx } from "../../core/db";
import { newId } from "../../core/ids";

/** Every user owns exactly one system inbox, created with the user. */
export function createInbox(tx: Tx, userId: string, now: Date): string {
  const id = newId();
  tx.insert(lists)
    .values({ id, userId, name: "Inbox", isInbox: true, position: 0, createdAt: now.toISOString(), updatedAt: now.toISOString() })
    .run();
  return id;
}
