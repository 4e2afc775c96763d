import { Elysia } from "elysia";
import { doc } from "../../core/openapi";
import { principalOf } from "../../core/http";
import type { ChannelsService } from "./channels.service";
import {
  ActionParams,
  ActionResult,
  Channel,
  ChannelCreate,
  ChannelCreated,
  ChannelList,
  ChannelParams,
  ChannelPatch,
  DeliveryPage,
  DeliveryQuery,
  OutboundPut,
  OutboundView,
  SmtpPut,
  SmtpView,
  TestResult,
} from "./channels.schemas";
import { z } from "zod";

const WRITE = ["validation_failed", "csrf_failed", "malformed_request", "payload_too_large"] as const;
const TAGS = ["notifications"];

const CHANNELS = `Every enabled channel of the user receives each reminder. Types and \`config\`: \`webhook\` \`{url}\` (the server makes the HMAC secret, shown once as \`secret\` in the 201 answer: each POST carries \`X-Signature: sha256=<hex HMAC-SHA256 of the raw body>\` and \`X-Delivery-Id\`); \`ntfy\` \`{server, topic, token?}\` (POST {server}/{topic}, the title as body, headers Title, Priority, Tags, Actions with done/snooze links, Authorization: Bearer when a token is set); \`email\` \`{address}\` (through the administrator's SMTP settings, a plain-text and an HTML part); \`webpush\` \`{subscription: {endpoint, keys: {p256dh, auth}}}\` (RFC 8291 encrypted, VAPID-signed; key: GET /push/vapid-public-key).
Secrets (webhook secret, ntfy token, push keys) are write-only: never in any answer after creation. URLs must be http(s) and pass the administrator's outbound rule (checked after DNS resolution): otherwise 422 on the URL's field.`;

export function channelsRoutes(service: ChannelsService) {
  return new Elysia({ name: "notification-channels", prefix: "/api/v1" })
    .get("/notification-channels", ({ request }) => ({ items: service.list(principalOf(request).user) }), {
      detail: doc({ summary: "The user's notification channels", description: CHANNELS, tags: TAGS, ok: { status: 200, schema: ChannelList } }),
    })
    .post(
      "/notification-channels",
      async ({ body, request, set }) => {
        const { channel, secret } = await service.create(principalOf(request).user, body);
        set.status = 201;
        set.headers["location"] = `/api/v1/notification-channels/${channel.id}`;
        return secret === undefined ? channel : { ...channel, secret };
      },
      {
        body: ChannelCreate,
        detail: doc({
          summary: "Create a channel (a webhook's secret is answered this once)",
          description: `${CHANNELS}\nAt most 20 channels per user.`,
          tags: TAGS,
          ok: { status: 201, schema: ChannelCreated, headers: { Location: { description: "URL of the new channel" } } },
          errors: [...WRITE],
        }),
      },
    )
    .patch("/notification-channels/:channel_id", async ({ params, body, request }) => service.update(principalOf(request).user, params.channel_id, body), {
      params: ChannelParams,
      body: ChannelPatch,
      detail: doc({
        summary: "Rename, enable/disable or re-configure a channel",
        description: `\`config\` replaces the whole config (checked as at creation); a secret left out is kept (a webhook keeps its secret always).\n\n${CHANNELS}`,
        tags: TAGS,
        ok: { status: 200, schema: Channel },
        errors: ["not_found", ...WRITE],
      }),
    })
    .delete(
      "/notification-channels/:channel_id",
      ({ params, request, set }) => {
        service.remove(principalOf(request).user, params.channel_id);
        set.status = 204;
      },
      {
        params: ChannelParams,
        detail: doc({ summary: "Delete a channel", description: "Its pending deliveries fail (`the channel was deleted`); past ones stay listed.", tags: TAGS, ok: { status: 204 }, errors: ["not_found", "validation_failed", "csrf_failed"] }),
      },
    )
    .post("/notification-channels/:channel_id/test", async ({ params, request }) => service.test(principalOf(request).user, params.channel_id), {
      params: ChannelParams,
      detail: doc({
        summary: "Send a test notification now",
        description: "`200 {status: delivered}` when the receiver accepted it (2xx; for e-mail, the SMTP server). Otherwise `502 delivery_failed`, whose `errors` give the receiver's status or the network error, never the receiver's body. Works on a disabled channel too; not recorded as a delivery. Event `test` in the webhook body, no actions.",
        tags: TAGS,
        ok: { status: 200, schema: TestResult },
        errors: ["not_found", "delivery_failed", "validation_failed", "csrf_failed"],
      }),
    })
    .get("/push/vapid-public-key", () => ({ key: service.vapid().publicKey }), {
      detail: doc({ summary: "The server's VAPID public key (for PushManager.subscribe's applicationServerKey)", description: "Base64url, uncompressed P-256 point. The key pair is made on first need and kept in the data directory (`vapid.json`, 0600).", tags: TAGS, ok: { status: 200, schema: z.object({ key: z.string() }) } }),
    })
    .get("/deliveries", ({ query, request }) => service.deliveries(principalOf(request).user, query.limit, query.cursor), {
      query: DeliveryQuery,
      detail: doc({
        summary: "The user's deliveries, newest first",
        description: "`status`: `delivered`, `retrying` (waiting for an attempt: the first one, a retry with backoff from 30 s to 5 minutes, or quiet hours ending), `failed` (the receiver kept refusing until the grace passed, or the channel was deleted or disabled), `missed` (the server was down past the grace, `APP_REMINDER_GRACE_SECONDS`). `late`: sent more than a minute after its time (the server was down). `last_error` holds the receiver's status or the network error, never its body. `limit` 1 to 100 (default 50); `next_cursor` for the next page. Retention: the server keeps the last 30 days and at most the newest 1,000 deliveries per user; older ones that have ended (delivered, failed, missed) are deleted about once an hour, except those recorded in the last 24 hours (their done/snooze links still work) and those whose occurrence could still be sent (the history is also the exactly-once ledger).",
        tags: TAGS,
        ok: { status: 200, schema: DeliveryPage },
        errors: ["validation_failed", "invalid_cursor"],
      }),
    })
    .get("/admin/smtp", ({ request }) => service.getSmtp(principalOf(request).user), {
      detail: doc({ summary: "The SMTP server e-mail channels send through (admin only; null when none)", description: "The password is never answered: `password_set` says whether one is stored.", tags: ["admin"], ok: { status: 200, schema: SmtpView }, errors: ["forbidden"] }),
    })
    .put("/admin/smtp", ({ body, request }) => service.putSmtp(principalOf(request).user, body), {
      body: SmtpPut,
      detail: doc({
        summary: "Set the SMTP server (admin only)",
        description: "`security`: `tls` (implicit TLS, usually port 465), `starttls` (STARTTLS required, usually 587), `none` (plain, for a relay on the same machine). A `password` left out keeps the stored one; null removes it.",
        tags: ["admin"],
        ok: { status: 200, schema: SmtpView },
        errors: ["forbidden", ...WRITE],
      }),
    })
    .get("/admin/outbound", ({ request }) => service.getOutbound(principalOf(request).user), {
      detail: doc({ summary: "Where notifications may be sent (admin only)", description: "The outbound rule for webhook, ntfy and Web Push destinations. Default `any`.", tags: ["admin"], ok: { status: 200, schema: OutboundView }, errors: ["forbidden"] }),
    })
    .put("/admin/outbound", ({ body, request }) => service.putOutbound(principalOf(request).user, body), {
      body: OutboundPut,
      detail: doc({
        summary: "Limit where notifications may be sent (admin only)",
        description: "`any` (default), `public` (public addresses only: loopback, private, link-local, CGNAT, multicast and reserved ranges are refused, IPv4 and IPv6, judged on the addresses the name resolves to, at the moment of connecting), or `allowlist` with `allow` entries (host names, `*.domain` wildcards, addresses, CIDR ranges). Checked when a channel is saved (422) and at every delivery.",
        tags: ["admin"],
        ok: { status: 200, schema: OutboundView },
        errors: ["forbidden", ...WRITE],
      }),
    })
    .post("/reminder-actions/:token", ({ params }) => service.act(params.token), {
      params: ActionParams,
      detail: doc({
        summary: "A notification's done or snooze link (no session)",
        description: "The token (signed with the server secret, naming one delivery and one action) is the credential: no session or CSRF token is needed, and nothing else can be done with it. It works once (`409 token_consumed` after) and for 24 hours (`404` after, as for a forged one). `done` completes the task (a repeating one moves to its next occurrence), logs the habit's goal for that day, or only acknowledges a countdown; `snooze` fires the reminder again 10 minutes later. On a task of a list shared with the reminder's user as a viewer, `done` is `403 forbidden` (a viewer may not complete it) and the link is not spent.",
        tags: TAGS,
        public: true,
        ok: { status: 200, schema: ActionResult },
        errors: ["forbidden", "not_found", "token_consumed", "validation_failed"],
      }),
    });
}
