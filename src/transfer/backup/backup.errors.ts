import { AppError, storageFull as storageFullError } from "../../core/errors";

/** The backup's own refusals, thrown on the main thread (backup.service.ts) and in the job worker (backup.jobs.ts). */
export const tokenInvalid = (detail: string) => new AppError("token_invalid", detail, { errors: [{ path: "preflight_token", message: detail }] });
export const tokenConsumed = () => new AppError("token_consumed", "this preflight token has already been used; run a new preflight");
export const quotaExceeded = (detail: string) => new AppError("quota_exceeded", detail, { headers: { "Retry-After": "60" } });
export const storageFull = (cause?: unknown) => storageFullError("the server ran out of space during the restore; nothing was changed", cause);
export const stagingFull = (cause?: unknown) => storageFullError("the server has no space left to stage this archive", cause);
