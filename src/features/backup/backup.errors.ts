import { AppError } from "../../core/errors";

/** The backup's own refusals, thrown on the main thread (backup.service.ts) and in the job worker (backup.jobs.ts). */
export const tokenInvalid = (detail: string) => new AppError("token_invalid", 422, "Invalid preflight token", detail, [{ path: "preflight_token", message: detail }]);
export const tokenConsumed = () => new AppError("token_consumed", 409, "Token consumed", "this preflight token has already been used; run a new preflight");
export const quotaExceeded = (detail: string) => new AppError("quota_exceeded", 429, "Quota exceeded", detail, undefined, { "Retry-After": "60" });
export const storageFull = () => new AppError("storage_full", 507, "Insufficient storage", "the server ran out of space during the restore; nothing was changed");
export const stagingFull = () => new AppError("storage_full", 507, "Insufficient storage", "the server has no space left to stage this archive");

/** "No space" from SQLite (SQLITE_FULL) or the file system (ENOSPC, EFBIG, EDQUOT). */
export function isStorageFull(e: unknown): boolean {
  const err = e as { code?: string; errno?: number; message?: string };
  return (
    err?.code === "ENOSPC" ||
    err?.code === "EFBIG" ||
    err?.code === "EDQUOT" ||
    err?.code === "SQLITE_FULL" ||
    /database or disk is full|no space left/i.test(err?.message ?? "")
  );
}
