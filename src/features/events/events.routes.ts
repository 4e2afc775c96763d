import { Elysia } from "elysia";
import { z } from "zod";
import { doc } from "../../core/openapi";
import { principalOf } from "../../core/http";
import { busy, rateLimited } from "../../core/errors";
import { TooManyStreams, type EventHub } from "../../core/events";

/** GET /events: the user's Server-Sent Events stream (core/events.ts holds the rules and bounds). */
export function eventsRoutes(hub: EventHub) {
  return new Elysia({ name: "events", prefix: "/api/v1" }).get(
    "/events",
    ({ request }) => {
      const user = principalOf(request).user;
      let body: ReadableStream<Uint8Array>;
      try {
        body = hub.open(user.id, request.headers.get("last-event-id"));
      } catch (e) {
        if (e instanceof TooManyStreams) throw e.scope === "user" ? rateLimited(5, "too many open event streams for this user; close a tab") : busy();
        throw e;
      }
      return new Response(body, {
        headers: {
          "content-type": "text/event-stream; charset=utf-8",
          "cache-control": "no-cache, no-store",
          // nginx: pass each event on at once, whatever proxy_buffering says (README: nginx).
          "x-accel-buffering": "no",
        },
      });
    },
    {
      headers: z.object({ "last-event-id": z.string().max(64).optional() }),
      detail: doc({
        summary: "Server-Sent Events: changes to everything you can see (your lists and the lists shared with you)",
        description:
          "`text/event-stream`. Each event has an `id`, an `event` type (`task.changed`, `task.deleted`, `list.changed`, `membership.changed`) and `data` `{ \"type\", \"id\", \"list_id\", \"version\" }` (`version` null for lists and memberships); a comment line every 20 s keeps the connection open. Reconnect with `Last-Event-ID` within 5 minutes to get what you missed (only what you may still see); an older or unknown id, or a client too far behind, gets a `resync` event: reload. When you leave or are removed from a list your streams are closed after a `membership.changed` event. One stream per tab; at most 20 per user (`429 rate_limited`) and a server-wide cap (`503 busy`). Behind nginx set `proxy_buffering off` for this path (README).",
        tags: ["events"],
        ok: { status: 200, schema: z.string().describe("text/event-stream") },
        errors: ["rate_limited", "busy"],
      }),
    },
  );
}
