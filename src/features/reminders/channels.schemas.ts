import { z } from "zod";
import { UrlId } from "../../core/ids";
import { maxChars } from "../../core/text";

const noControl = (s: string) => !/[\u0000-\u001f\u007f]/.test(s);
const Name = maxChars(z.string().trim().min(1, "name is required"), 100, "at most 100 characters").refine(noControl, "no control characters");
const HttpUrl = maxChars(z.string(), 2000, "at most 2000 characters").describe("an http or https URL");
const Base64Url = maxChars(z.string().min(1), 200).refine((s) => /^[A-Za-z0-9_-]+=*$/.test(s), "base64url");

export const WebhookConfig = z.strictObject({ url: HttpUrl });
export const NtfyConfig = z.strictObject({
  server: HttpUrl.describe("the ntfy server, e.g. https://ntfy.sh"),
  topic: maxChars(z.string().min(1), 64).refine((s) => /^[-_A-Za-z0-9]+$/.test(s), "letters, digits, - and _ only"),
  token: maxChars(z.string().min(1), 512).optional().describe("write-only: an access token, sent as Authorization: Bearer"),
});
export const EmailConfig = z.strictObject({ address: z.email().max(254) });
export const WebPushConfig = z.strictObject({
  subscription: z.strictObject({
    endpoint: HttpUrl,
    keys: z.strictObject({ p256dh: Base64Url, auth: Base64Url }).describe("write-only: the subscription's keys"),
    expirationTime: z.number().nullable().optional(),
  }),
});

export const ChannelCreate = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("webhook"), name: Name, enabled: z.boolean().optional(), config: WebhookConfig }),
  z.strictObject({ type: z.literal("ntfy"), name: Name, enabled: z.boolean().optional(), config: NtfyConfig }),
  z.strictObject({ type: z.literal("email"), name: Name, enabled: z.boolean().optional(), config: EmailConfig }),
  z.strictObject({ type: z.literal("webpush"), name: Name, enabled: z.boolean().optional(), config: WebPushConfig }),
]);
export type ChannelCreate = z.infer<typeof ChannelCreate>;

export const ChannelPatch = z.strictObject({
  name: Name.optional(),
  enabled: z.boolean().optional(),
  config: z.record(z.string(), z.unknown()).optional().describe("a whole new config of the channel's type (its secrets may be left out to keep them)"),
});
export type ChannelPatch = z.infer<typeof ChannelPatch>;

export const Channel = z
  .object({
    id: z.string(),
    type: z.enum(["webhook", "ntfy", "email", "webpush"]),
    name: z.string(),
    enabled: z.boolean(),
    config: z.record(z.string(), z.unknown()).describe("the public part only: secrets (webhook secret, ntfy token, push keys) never appear"),
    created_at: z.string(),
    last_delivery: z.object({ status: z.string(), at: z.string() }).nullable(),
  })
  .meta({ id: "NotificationChannel" });
export type Channel = z.infer<typeof Channel>;
export const ChannelCreated = Channel.extend({ secret: z.string().optional().describe("webhook only, shown this once: the HMAC key of X-Signature") });
export const ChannelList = z.object({ items: z.array(Channel) });
export const ChannelParams = z.object({ channel_id: UrlId });

export const TestResult = z.object({ status: z.literal("delivered") });

export const Delivery = z
  .object({
    id: z.string(),
    reminder_id: z.string(),
    channel_id: z.string(),
    occurrence: z.string(),
    fire_at: z.string(),
    status: z.enum(["delivered", "failed", "retrying", "missed"]),
    late: z.boolean(),
    attempts: z.number().int(),
    last_error: z.string().nullable(),
    delivered_at: z.string().nullable(),
  })
  .meta({ id: "Delivery" });
export type Delivery = z.infer<typeof Delivery>;
export const DeliveryPage = z.object({ items: z.array(Delivery), next_cursor: z.string().nullable() });
export const DeliveryQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(50),
  cursor: maxChars(z.string(), 2048).optional(),
});

const HostName = maxChars(z.string().trim().min(1), 253).refine(noControl, "no control characters");
export const SmtpPut = z.strictObject({
  host: HostName,
  port: z.number().int().min(1).max(65535),
  security: z.enum(["tls", "starttls", "none"]),
  username: maxChars(z.string(), 256).nullable().optional(),
  password: maxChars(z.string(), 1024).nullable().optional().describe("write-only; left out: the stored one is kept"),
  from: maxChars(z.string().min(3), 320).describe("the From address, e.g. `Tasks <tasks@example.org>`"),
});
export type SmtpPut = z.infer<typeof SmtpPut>;
export const SmtpView = z
  .object({ host: z.string(), port: z.number(), security: z.enum(["tls", "starttls", "none"]), username: z.string().nullable(), password_set: z.boolean(), from: z.string() })
  .nullable()
  .meta({ id: "SmtpSettings" });

export const OutboundPut = z.strictObject({
  mode: z.enum(["any", "public", "allowlist"]).describe("any: every destination; public: public addresses only (checked after DNS resolution); allowlist: only `allow`"),
  allow: z
    .array(maxChars(z.string().trim().min(1), 300))
    .max(200)
    .optional()
    .describe("allowlist mode: host names (`ntfy.example.org`), wildcards (`*.example.org`), addresses or CIDR ranges (`192.168.1.0/24`)"),
});
export type OutboundPut = z.infer<typeof OutboundPut>;
export const OutboundView = z.object({ mode: z.enum(["any", "public", "allowlist"]), allow: z.array(z.string()) }).meta({ id: "OutboundRule" });

export const ActionParams = z.object({ token: maxChars(z.string(), 600) });
export const ActionResult = z.object({ status: z.enum(["done", "snoozed"]), snoozed_until: z.string().nullable() });
