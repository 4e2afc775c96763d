import { Elysia } from "elysia";
import { z } from "zod";
import { doc } from "../../core/openapi";
import { malformed } from "../../core/errors";
import { principalOf, requestMeta, requestOrigin } from "../../core/http";
import { getContext } from "../../core/request-context";
import type { FeedsService } from "./feeds.service";
import { FEED_LIMITS } from "./feeds.content";
import { Feed, FeedCreate, FeedFileParams, FeedList, FeedParams } from "./feeds.schemas";

const TAGS = ["feeds"];
const IcsBody = z.string().describe("an iCalendar document (RFC 5545); `304` with no body when If-None-Match names the current ETag");

const CONTENT = `What a feed shows (every time as a date or in UTC; the calendar named after the list, or the user's display name for \`scope: all\`):
- \`tasks\`: dated top-level tasks (not in the trash, not in an archived list; with \`scope: all\` the lists shared with the user too) due from ${FEED_LIMITS.taskPastDays} days before the user's today through ${FEED_LIMITS.taskFutureDays} days after it, at most ${FEED_LIMITS.maxTasks} (the earliest first). \`task_format: events\`: an all-day VEVENT for a date-only due date, a timed VEVENT (a point in time) for a due instant; completed tasks are left out. \`task_format: todos\`: a VTODO with DUE, completed ones included with STATUS:COMPLETED. A repeating task (rrule) as events: its later occurrences too, each its own event (UID \`task-<id>-<date>\`), through ${FEED_LIMITS.occurrenceDays} days ahead, at most ${FEED_LIMITS.maxOccurrences} in all, exceptions skipped; as to-dos: the current one only.
- \`countdowns\`: each active countdown on each of its days from ${FEED_LIMITS.countdownPastDays} days back through ${FEED_LIMITS.countdownYears} years ahead (at most ${FEED_LIMITS.maxPerCountdown} per countdown), as all-day events; lunar ones are converted to their Gregorian date year by year (no RRULE can express them); anniversaries and birthdays show the count, "Name (30)".
- \`habits\`: the habits' reminders (kind \`daily\`) over the next ${FEED_LIMITS.habitDays} days, as timed events at the reminder's time in the user's zone on the days it fires (scheduled, not paused, not done yet). A habit without a reminder has no time and is not shown.
Countdowns and habits are the user's own: a \`scope: list\` feed shows them too when \`include\` asks for them.`;

/** The request's origin for feed URLs, or 400 when the Host is not a host. */
function originOf(request: Request, trustProxy: boolean): string {
  const o = requestOrigin(request, trustProxy);
  if (o === null) throw malformed("the Host header is not a valid host; feed URLs are built from it");
  return o;
}

export function feedsRoutes(service: FeedsService, trustProxy: boolean) {
  return new Elysia({ name: "feeds" })
    .get("/api/v1/feeds", ({ request }) => ({ items: service.list(principalOf(request).user, originOf(request, trustProxy)) }), {
      detail: doc({
        summary: "The user's calendar feeds",
        description: "Newest first; revoked feeds are not listed. Each `url` is shown again (it is derived from the feed with the server's secret, not stored), absolute from this request's origin (behind a proxy started with `--trust-proxy`, its X-Forwarded-Proto and X-Forwarded-Host).",
        tags: TAGS,
        ok: { status: 200, schema: FeedList },
        errors: ["malformed_request"],
      }),
    })
    .post(
      "/api/v1/feeds",
      ({ body, request, set }) => {
        const f = service.create(principalOf(request).user, body, originOf(request, trustProxy), requestMeta(request));
        set.status = 201;
        set.headers["location"] = `/api/v1/feeds/${f.id}`;
        return f;
      },
      {
        body: FeedCreate,
        detail: doc({
          summary: "Create a calendar feed (a secret webcal URL)",
          description: `\`scope: list\` needs \`list_id\`: a list the user can see (their own or one shared with them) and not in the trash, else \`422 invalid_reference\`. The feed's \`url\` carries a secret of 256 bits: whoever has it reads the feed until it is revoked. Audited (\`feed_created\`).\n\n${CONTENT}`,
          tags: TAGS,
          ok: { status: 201, schema: Feed, headers: { Location: { description: "URL of the new feed in the API (its `url` is the calendar's)" } } },
          errors: ["validation_failed", "invalid_reference", "malformed_request", "csrf_failed", "payload_too_large"],
        }),
      },
    )
    .get("/api/v1/feeds/:feed_id", ({ params, request }) => service.get(principalOf(request).user, params.feed_id, originOf(request, trustProxy)), {
      params: FeedParams,
      detail: doc({ summary: "One calendar feed", description: "As listed by `GET /feeds`. A revoked feed, or one that is not the user's, is `404`.", tags: TAGS, ok: { status: 200, schema: Feed }, errors: ["not_found", "malformed_request"] }),
    })
    .delete(
      "/api/v1/feeds/:feed_id",
      ({ params, request, set }) => {
        service.revoke(principalOf(request).user, params.feed_id, requestMeta(request));
        set.status = 204;
      },
      {
        params: FeedParams,
        detail: doc({ summary: "Revoke a calendar feed", description: "Its URL answers `404` from then on. A feed that is not the user's, or is already revoked, is `404`. Audited (`feed_revoked`).", tags: TAGS, ok: { status: 204 }, errors: ["not_found", "csrf_failed"] }),
      },
    )
    .get(
      "/feeds/:file",
      async ({ params, request }) => {
        const r = await service.fetch(params.file, getContext(request)?.ip ?? null, request.headers.get("if-none-match"));
        // no-cache: a cache may keep it but must ask again (the ETag makes that cheap for the client).
        const headers = { etag: r.etag, "cache-control": "private, no-cache" };
        if (r.status === 304) return new Response(null, { status: 304, headers });
        return new Response(r.body, { headers: { ...headers, "content-type": "text/calendar; charset=utf-8" } });
      },
      {
        params: FeedFileParams,
        detail: withNotModified(doc({
          summary: "A calendar feed (no session: the secret in the URL is the credential)",
          description: `\`text/calendar; charset=utf-8\` (RFC 5545), with a strong \`ETag\`; \`If-None-Match\` with it answers \`304\`. A revoked, unknown or forged secret is \`404\` after the same work; so is a feed whose list the user can no longer see (trashed, purged, left or removed from it) or whose account is disabled. Wrong secrets are counted per client address: past 20 the address waits (\`429 rate_limited\` with \`Retry-After\`, 1 s doubling up to a minute, then up to 15 minutes past 80); a revoked URL still polled by a calendar app is not counted. The calendar asks apps to refresh hourly (REFRESH-INTERVAL, X-PUBLISHED-TTL); most poll less often.\n\n${CONTENT}`,
          tags: TAGS,
          public: true,
          ok: { status: 200, schema: IcsBody, contentType: "text/calendar; charset=utf-8", headers: { ETag: { description: "strong validator of the body" } } },
          errors: ["not_found", "rate_limited"],
        })),
      },
    );
}

/** The 304 a conditional fetch gets (doc() writes one success answer). */
function withNotModified(d: Record<string, unknown>): Record<string, unknown> {
  const responses = d.responses as Record<string, unknown>;
  responses["304"] = { description: "Not modified: `If-None-Match` named the current ETag (no body)", headers: { ETag: { description: "the current ETag", schema: { type: "string" } } } };
  d.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => Number(a) - Number(b)));
  return d;
}
