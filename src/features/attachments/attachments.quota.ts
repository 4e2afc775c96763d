import { storageQuotaExceeded, type FieldProblem } from "../../core/errors";

/**
 * The per-user attachment quota (APP_ATTACHMENT_QUOTA_BYTES, issue 11 §6): one copy of the rule,
 * called by the upload (attachments.service.ts) and by the backup's preflight and restore, so an
 * archive can never bring in what an upload would be refused.
 */

/** Bytes all of one user's attachments may take, or null: no quota (the setting is 0). */
export function attachmentQuota(config: { attachmentQuotaBytes: number }): number | null {
  return config.attachmentQuotaBytes > 0 ? config.attachmentQuotaBytes : null;
}

/**
 * Whether `adding` bytes of new attachments pass the quota beside the `used` bytes the user's
 * attachments take. Adding nothing never does (a user over a quota lowered since keeps what they
 * have and may still change other things).
 */
export function exceedsQuota(quota: number | null, used: number, adding: number): boolean {
  return quota !== null && adding > 0 && used + adding > quota;
}

/** 413 storage_quota_exceeded (the upload's answer) when `adding` bytes do not fit; `problem` names what brought them. */
export function assertWithinQuota(quota: number | null, used: number, adding: number, problem?: FieldProblem): void {
  if (quota !== null && exceedsQuota(quota, used, adding)) throw storageQuotaExceeded(quota, used, problem);
}
