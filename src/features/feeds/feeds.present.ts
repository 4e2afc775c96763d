import type { ServerSecret } from "../../core/secret";
import type { FeedRow } from "./feeds.repo";
import type { Feed, FeedInclude } from "./feeds.schemas";
import { feedSecret } from "./feeds.secret";

/** A feed as the API answers it; `origin` is the request's (scheme://host[:port]). */
export function presentFeed(row: FeedRow, secret: ServerSecret, origin: string): Feed {
  const url = `${origin}/feeds/${feedSecret(secret, row.id)}.ics`;
  return {
    id: row.id,
    scope: row.scope,
    list_id: row.listId,
    include: JSON.parse(row.include) as FeedInclude[],
    task_format: row.taskFormat,
    url,
    webcal_url: url.replace(/^https?:/, "webcal:"),
    created_at: row.createdAt,
  };
}
