import { z } from "zod";

/** What an administrator may change (PATCH): a field sent as null goes back to the config's value (APP_BACKUP_*). */
const nullableString = (max: number) => z.string().max(max).nullable().optional();
const keep = z.number().int().min(0).max(1000).nullable().optional();

export const S3Patch = z.strictObject({
  endpoint: nullableString(2000).describe("S3-compatible endpoint URL (`https://s3.eu-central-003.backblazeb2.com`, `http://minio:9000`); empty: AWS"),
  region: nullableString(100),
  bucket: nullableString(255).describe("empty turns the off-site copy off"),
  prefix: nullableString(1000),
  access_key_id: nullableString(1000).describe("write-only: never answered"),
  secret_access_key: nullableString(1000).describe("write-only: never answered"),
});

export const SettingsPatch = z.strictObject({
  schedule_enabled: z.boolean().nullable().optional(),
  user_archives: z.boolean().nullable().optional().describe("also put each user's app-backup v2 archive in the snapshot (`users/<user id>.zip`)"),
  schedule: nullableString(200).describe("cron expression (5 or 6 fields, croner's syntax), e.g. `30 3 * * *`"),
  timezone: nullableString(100).describe("IANA zone of the schedule and of retention's days; empty: the server's zone"),
  local_dir: nullableString(4096).describe("absolute path of the local snapshot directory; empty: `<data-dir>/backups`"),
  keep_daily: keep,
  keep_weekly: keep,
  keep_monthly: keep,
  s3: S3Patch.optional(),
});
export type SettingsPatch = z.infer<typeof SettingsPatch>;

export const Settings = z.object({
  schedule_enabled: z.boolean(),
  user_archives: z.boolean(),
  schedule: z.string(),
  timezone: z.string().describe("the zone in effect (the server's when none is set)"),
  local_dir: z.string().describe("the directory in effect"),
  keep_daily: z.number().int(),
  keep_weekly: z.number().int(),
  keep_monthly: z.number().int(),
  s3: z.object({
    enabled: z.boolean().describe("a bucket is set"),
    endpoint: z.string(),
    region: z.string(),
    bucket: z.string(),
    prefix: z.string(),
    access_key_id_set: z.boolean(),
    secret_access_key_set: z.boolean(),
  }),
});
export type Settings = z.infer<typeof Settings>;

export const DestinationStatus = z.object({
  destination: z.enum(["local", "s3"]),
  last_attempt_at: z.string().nullable(),
  last_success_at: z.string().nullable(),
  last_failure_at: z.string().nullable(),
  last_result: z.enum(["success", "failure"]).nullable().describe("of the last attempt; null: never attempted"),
  last_error: z.string().nullable().describe("why the last attempt failed (null after a success)"),
  last_name: z.string().nullable().describe("file name (local) or key (s3) of the last verified snapshot"),
  last_bytes: z.number().int().nullable(),
  last_sha256: z.string().nullable(),
});
export type DestinationStatus = z.infer<typeof DestinationStatus>;

export const BackupsOverview = z.object({
  settings: Settings,
  running: z.boolean(),
  next_run_at: z.string().nullable().describe("the next scheduled run (null: schedule off)"),
  destinations: z.array(DestinationStatus),
});
export type BackupsOverview = z.infer<typeof BackupsOverview>;

export const RunStarted = z.object({ started: z.literal(true) });
