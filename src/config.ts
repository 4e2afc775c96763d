import { z } from "zod";

/** The longest session lifetime a setting may ask for: 100 years. */
export const SESSION_SECONDS_MAX = 100 * 366 * 24 * 3600;

/** Everything the program can be told, from flags first, then APP_* variables, then defaults. */
export const Config = z.object({
  dataDir: z.string().min(1).default("./data"),
  host: z.string().min(1).default("127.0.0.1"),
  port: z.coerce.number().int().min(0).max(65535).default(8080),
  // Trust X-Forwarded-For/-Proto from the proxy in front (only set this behind one you run).
  trustProxy: z
    .union([z.boolean(), z.enum(["true", "false", "1", "0", "yes", "no"]).transform((v) => ["true", "1", "yes"].includes(v))])
    .default(false),
  logFormat: z.enum(["text", "json", "off"]).default("text"),
  // Session lifetimes: idle (since last use) and absolute (since login), at most 100 years (a
  // longer one would put expiry dates past what a Date can hold).
  sessionIdleSeconds: z.coerce.number().int().positive().max(SESSION_SECONDS_MAX).default(14 * 24 * 3600),
  sessionAbsoluteSeconds: z.coerce.number().int().positive().max(SESSION_SECONDS_MAX).default(90 * 24 * 3600),
  // argon2id memory in KiB. 64 MiB is the OWASP-recommended order; tests lower it.
  argon2MemoryKiB: z.coerce.number().int().min(1024).default(65536),
  argon2TimeCost: z.coerce.number().int().min(1).default(2),
  // Login throttling: failures allowed before a wait is imposed.
  loginFreeFailures: z.coerce.number().int().min(1).default(5),
  // Grace period for in-flight requests on SIGTERM.
  shutdownGraceMs: z.coerce.number().int().min(0).default(10_000),
  // Largest attachment accepted (bytes); counted while streaming, 413 past it.
  attachmentMaxBytes: z.coerce.number().int().min(1).default(25 * 1024 * 1024),
  // Bytes all of one user's attachments may take together; 0 = no quota. Counted while streaming.
  attachmentQuotaBytes: z.coerce.number().int().min(0).default(0),
  // Complete backup (contract §9): preflight token life, pending preflights and staged bytes per
  // user, largest archive accepted, entry count, per-entry compression ratio, total inflated size.
  backupTokenSeconds: z.coerce.number().int().min(1).default(15 * 60),
  backupPendingMax: z.coerce.number().int().min(1).default(3),
  backupStagedMaxBytes: z.coerce.number().int().min(1).default(2 * 1024 ** 3),
  backupArchiveMaxBytes: z.coerce.number().int().min(1).default(2 * 1024 ** 3),
  backupMaxEntries: z.coerce.number().int().min(1).default(200_000),
  backupMaxRatio: z.coerce.number().int().min(1).default(200),
  backupMaxInflatedBytes: z.coerce.number().int().min(1).default(8 * 1024 ** 3),
  // GET /metrics (Prometheus) answers only when this bearer token is set, and only to it; unset,
  // the endpoint is 404. Environment only: a flag would show in `ps`. At least 32 characters of
  // RFC 6750's token alphabet (`openssl rand -hex 32` makes one), so guessing it is hopeless.
  metricsToken: z
    .string()
    .min(32, "must be at least 32 characters (openssl rand -hex 32 makes one)")
    .max(1024)
    .regex(/^[A-Za-z0-9._~+/-]+=*$/, "may contain only letters, digits and - . _ ~ + / (then = padding)")
    .optional(),
  // Scheduled whole-instance snapshots (src/transfer/snapshot): the defaults an administrator's
  // settings override. The schedule is a cron expression (croner) in backupTimezone ("" = the
  // server's own zone); backupDir "" = <data-dir>/backups; S3 is off while its bucket is "".
  backupSchedule: z.string().default("30 3 * * *"),
  backupScheduleEnabled: z
    .union([z.boolean(), z.enum(["true", "false", "1", "0", "yes", "no"]).transform((v) => ["true", "1", "yes"].includes(v))])
    .default(true),
  backupTimezone: z.string().default(""),
  backupUserArchives: z
    .union([z.boolean(), z.enum(["true", "false", "1", "0", "yes", "no"]).transform((v) => ["true", "1", "yes"].includes(v))])
    .default(false),
  backupDir: z.string().default(""),
  backupKeepDaily: z.coerce.number().int().min(0).max(1000).default(7),
  backupKeepWeekly: z.coerce.number().int().min(0).max(1000).default(4),
  backupKeepMonthly: z.coerce.number().int().min(0).max(1000).default(6),
  backupS3Endpoint: z.string().default(""),
  backupS3Region: z.string().default(""),
  backupS3Bucket: z.string().default(""),
  backupS3Prefix: z.string().default(""),
  backupS3AccessKeyId: z.string().default(""),
  backupS3SecretAccessKey: z.string().default(""),
  // Reminders: a reminder missed by less than this (the server was down) is delivered marked
  // late; an older one is recorded as missed. Retries of a failing channel stop at the same bound.
  reminderGraceSeconds: z.coerce.number().int().min(0).max(30 * 24 * 3600).default(3600),
  // The address people reach the server at (https://tasks.example.org): the done/snooze links in
  // notifications point there. Empty: http://<host>:<port>.
  publicUrl: z.union([z.literal(""), z.url({ protocol: /^https?$/ })]).default(""),
});
export type Config = z.infer<typeof Config>;

const ENV: Record<keyof Config, string> = {
  dataDir: "APP_DATA_DIR",
  host: "APP_HOST",
  port: "APP_PORT",
  trustProxy: "APP_TRUST_PROXY",
  logFormat: "APP_LOG_FORMAT",
  sessionIdleSeconds: "APP_SESSION_IDLE_SECONDS",
  sessionAbsoluteSeconds: "APP_SESSION_ABSOLUTE_SECONDS",
  argon2MemoryKiB: "APP_ARGON2_MEMORY_KIB",
  argon2TimeCost: "APP_ARGON2_TIME_COST",
  loginFreeFailures: "APP_LOGIN_FREE_FAILURES",
  shutdownGraceMs: "APP_SHUTDOWN_GRACE_MS",
  attachmentMaxBytes: "APP_ATTACHMENT_MAX_BYTES",
  attachmentQuotaBytes: "APP_ATTACHMENT_QUOTA_BYTES",
  backupTokenSeconds: "APP_BACKUP_TOKEN_SECONDS",
  backupPendingMax: "APP_BACKUP_PENDING_MAX",
  backupStagedMaxBytes: "APP_BACKUP_STAGED_MAX_BYTES",
  backupArchiveMaxBytes: "APP_BACKUP_ARCHIVE_MAX_BYTES",
  backupMaxEntries: "APP_BACKUP_MAX_ENTRIES",
  backupMaxRatio: "APP_BACKUP_MAX_RATIO",
  backupMaxInflatedBytes: "APP_BACKUP_MAX_INFLATED_BYTES",
  metricsToken: "APP_METRICS_TOKEN",
  backupSchedule: "APP_BACKUP_SCHEDULE",
  backupScheduleEnabled: "APP_BACKUP_SCHEDULE_ENABLED",
  backupTimezone: "APP_BACKUP_TIMEZONE",
  backupUserArchives: "APP_BACKUP_USER_ARCHIVES",
  backupDir: "APP_BACKUP_DIR",
  backupKeepDaily: "APP_BACKUP_KEEP_DAILY",
  backupKeepWeekly: "APP_BACKUP_KEEP_WEEKLY",
  backupKeepMonthly: "APP_BACKUP_KEEP_MONTHLY",
  backupS3Endpoint: "APP_BACKUP_S3_ENDPOINT",
  backupS3Region: "APP_BACKUP_S3_REGION",
  backupS3Bucket: "APP_BACKUP_S3_BUCKET",
  backupS3Prefix: "APP_BACKUP_S3_PREFIX",
  backupS3AccessKeyId: "APP_BACKUP_S3_ACCESS_KEY_ID",
  backupS3SecretAccessKey: "APP_BACKUP_S3_SECRET_ACCESS_KEY",
  reminderGraceSeconds: "APP_REMINDER_GRACE_SECONDS",
  publicUrl: "APP_PUBLIC_URL",
};

export const FLAGS: Record<string, keyof Config> = {
  "--data-dir": "dataDir",
  "--host": "host",
  "--port": "port",
  "--trust-proxy": "trustProxy",
  "--log-format": "logFormat",
};

export function envName(key: keyof Config): string {
  return ENV[key];
}

/** Builds the config: explicit values (flags) win over the environment, which wins over defaults. */
export function loadConfig(flags: Partial<Record<keyof Config, string | boolean>>, env: Record<string, string | undefined>): Config {
  const raw: Record<string, unknown> = {};
  for (const key of Object.keys(ENV) as (keyof Config)[]) {
    const fromEnv = env[ENV[key]];
    if (fromEnv !== undefined && fromEnv !== "") raw[key] = fromEnv;
    if (flags[key] !== undefined) raw[key] = flags[key];
  }
  const parsed = Config.safeParse(raw);
  if (!parsed.success) {
    const msg = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
    throw new ConfigError(msg);
  }
  return parsed.data;
}

export class ConfigError extends Error {}
