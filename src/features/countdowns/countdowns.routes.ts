import { Elysia } from "elysia";
import { doc } from "../../core/openapi";
import { principalOf } from "../../core/http";
import type { CountdownsService, CountdownView } from "./countdowns.service";
import { Countdown, CountdownCreate, CountdownList, CountdownListQuery, CountdownParams, CountdownPatch } from "./countdowns.schemas";
import { presentCountdown } from "./countdowns.present";

const WRITE = ["validation_failed", "csrf_failed", "malformed_request", "payload_too_large"] as const;
const TAGS = ["countdowns"];
const present = (v: CountdownView) => presentCountdown(v.row, v.occ);

const RULES = `\`next_date\` is the next occurrence on or after the user's today (in the user's time zone); \`days_until\` counts from today (0 = today, negative for a past one-off, whose \`next_date\` is null).
Repeats: \`weekly\` every 7 days from \`date\` (either calendar); Gregorian \`monthly\` on the date's day of month, or the month's last day when it is shorter (the 31st falls on the 30th, on 28/29 February); Gregorian \`yearly\` on the same month and day, with 29 February falling on 28 February in common years.
Lunar (\`calendar: "lunar"\`, Purple Mountain Observatory rules as computed by lunar-typescript; never ICU's chinese calendar): \`lunar\` is the lunar month/day of \`date\`; \`yearly\` repeats on that lunar month and day, using the ordinary month in a year without that leap month; \`monthly\` repeats on that lunar day in every lunar month (leap months included); a day 30 in a 29-day month falls on day 29. A lunar countdown's \`date\` must lie in the lunar years 1900 to 2100 (else 422).
\`count\` (anniversary, birthday): for yearly repeats the number of years from \`date\` to \`next_date\` (lunar years for a lunar countdown), so a birthday's age; for other repeats the whole years elapsed at \`next_date\`; null for a plain countdown or a past one-off.`;

export function countdownsRoutes(service: CountdownsService) {
  return new Elysia({ name: "countdowns", prefix: "/api/v1" })
    .get("/countdowns", async ({ query, request }) => ({ items: (await service.list(principalOf(request).user, query.archived)).map(present) }), {
      query: CountdownListQuery,
      detail: doc({
        summary: "List countdowns (archived=true lists the archived ones)",
        description: `The pinned countdown first, then by \`next_date\` ascending; past one-offs last, most recent first; ties by name.\n\n${RULES}`,
        tags: TAGS,
        ok: { status: 200, schema: CountdownList },
        errors: ["validation_failed"],
      }),
    })
    .post(
      "/countdowns",
      async ({ body, request, set }) => {
        const c = present(await service.create(principalOf(request).user, body));
        set.status = 201;
        set.headers["location"] = `/api/v1/countdowns/${c.id}`;
        return c;
      },
      {
        body: CountdownCreate,
        detail: doc({
          summary: "Create a countdown, anniversary or birthday",
          description: `\`type\` defaults to countdown, \`repeat\` to none, \`calendar\` to gregorian.\n\n${RULES}`,
          tags: TAGS,
          ok: { status: 201, schema: Countdown, headers: { Location: { description: "URL of the new countdown" } } },
          errors: [...WRITE],
        }),
      },
    )
    .get("/countdowns/:countdown_id", async ({ params, request }) => present(await service.get(principalOf(request).user, params.countdown_id)), {
      params: CountdownParams,
      detail: doc({ summary: "One countdown (an archived one is answered too)", description: "With `next_date`, `days_until` and `count` computed as of the user's today in the user's time zone (the rules of `GET /countdowns`). An id that is not one of the user's countdowns is `404`.", tags: TAGS, ok: { status: 200, schema: Countdown }, errors: ["not_found", "validation_failed"] }),
    })
    .patch("/countdowns/:countdown_id", async ({ params, body, request }) => present(await service.update(principalOf(request).user, params.countdown_id, body)), {
      params: CountdownParams,
      body: CountdownPatch,
      detail: doc({
        summary: "Edit name, date, type, repeat, icon or calendar",
        description: "An archived countdown is read-only (`404` until restored). Changing `date` or `calendar` recomputes `lunar`.",
        tags: TAGS,
        ok: { status: 200, schema: Countdown },
        errors: ["not_found", ...WRITE],
      }),
    })
    .delete(
      "/countdowns/:countdown_id",
      ({ params, request, set }) => {
        service.archive(principalOf(request).user, params.countdown_id);
        set.status = 204;
      },
      {
        params: CountdownParams,
        detail: doc({ summary: "Archive a countdown (unpins it; idempotent)", description: "The countdown leaves `GET /countdowns` (it is listed with `archived=true`) and is read-only until restored; a pinned countdown is unpinned. Archiving an archived countdown changes nothing and answers `204`.", tags: TAGS, ok: { status: 204 }, errors: ["not_found", "validation_failed", "csrf_failed"] }),
      },
    )
    .post("/countdowns/:countdown_id/restore", async ({ params, request }) => present(await service.restore(principalOf(request).user, params.countdown_id)), {
      params: CountdownParams,
      detail: doc({
        summary: "Restore an archived countdown",
        description: "Only an archived countdown can be restored: an active one is `409 state_conflict` (the rule for every restore: tasks, lists, memos, habits, countdowns).",
        tags: TAGS,
        ok: { status: 200, schema: Countdown },
        errors: ["not_found", "state_conflict", "validation_failed", "csrf_failed"],
      }),
    })
    .delete(
      "/countdowns/:countdown_id/purge",
      ({ params, request, set }) => {
        service.purge(principalOf(request).user, params.countdown_id);
        set.status = 204;
      },
      {
        params: CountdownParams,
        detail: doc({ summary: "Permanently delete an archived countdown", description: "Only an archived countdown can be purged (`409 not_archived` otherwise: archive it first); it is then gone for good.", tags: TAGS, ok: { status: 204 }, errors: ["not_found", "not_archived", "validation_failed", "csrf_failed"] }),
      },
    )
    .post("/countdowns/:countdown_id/pin", async ({ params, request }) => present(await service.pin(principalOf(request).user, params.countdown_id)), {
      params: CountdownParams,
      detail: doc({
        summary: "Pin a countdown; any other pinned countdown is unpinned",
        description: "An archived countdown cannot be pinned (`404`).",
        tags: TAGS,
        ok: { status: 200, schema: Countdown },
        errors: ["not_found", "validation_failed", "csrf_failed"],
      }),
    })
    .delete("/countdowns/:countdown_id/pin", async ({ params, request }) => present(await service.unpin(principalOf(request).user, params.countdown_id)), {
      params: CountdownParams,
      detail: doc({ summary: "Unpin a countdown (idempotent)", description: "Answers the countdown with `pinned: false`; unpinning one that is not pinned changes nothing. Works on an archived countdown too (it is never pinned).", tags: TAGS, ok: { status: 200, schema: Countdown }, errors: ["not_found", "validation_failed", "csrf_failed"] }),
    });
}
