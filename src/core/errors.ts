/** A field-level problem, as listed in a problem+json `errors` array. */
export interface FieldProblem {
  path: string;
  message: string;
}

/**
 * A user's value inside a problem's path or message: JSON-quoted, at most `max` characters of it
 * (an unknown key or a cell may be megabytes long; a problem names it, never repeats it).
 */
export function quoted(value: string, max = 40): string {
  return JSON.stringify(value.length <= max ? value : `${value.slice(0, max)}\u2026`);
}

/** A user's value as a path segment: as it is when short, else its first `max` characters and an ellipsis. */
export function clipped(value: string, max = 40): string {
  return value.length <= max ? value : `${value.slice(0, max)}\u2026`;
}

/**
 * The one error type of the domain. Services throw these; `core/problem.ts` is the only place
 * that turns one into HTTP. The code is stable and machine-readable.
 */
export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly status: number,
    readonly title: string,
    readonly detail?: string,
    readonly errors?: FieldProblem[],
    readonly headers?: Record<string, string>,
  ) {
    super(detail ?? title);
    this.name = "AppError";
  }
}

export type ErrorCode =
  | "malformed_request"
  | "unauthenticated"
  | "invalid_credentials"
  | "csrf_failed"
  | "forbidden"
  | "not_found"
  | "method_not_allowed"
  | "version_conflict"
  | "inbox_immutable"
  | "name_taken"
  | "already_initialized"
  | "not_archived"
  | "merge_conflict"
  | "token_consumed"
  | "state_conflict"
  | "payload_too_large"
  | "storage_quota_exceeded"
  | "unsupported_media_type"
  | "range_not_satisfiable"
  | "validation_failed"
  | "invalid_cursor"
  | "invalid_reference"
  | "invalid_parent"
  | "backup_invalid"
  | "token_invalid"
  | "rate_limited"
  | "quota_exceeded"
  | "internal_error"
  | "storage_full"
  | "not_ready"
  | "busy";

export const malformed = (detail: string) => new AppError("malformed_request", 400, "Malformed request", detail);
export const unauthenticated = (detail = "a valid session is required") =>
  new AppError("unauthenticated", 401, "Unauthenticated", detail);
export const invalidCredentials = () =>
  new AppError("invalid_credentials", 401, "Invalid credentials", "username or password is wrong");
export const csrfFailed = (detail: string) => new AppError("csrf_failed", 403, "CSRF check failed", detail);
export const forbidden = (detail = "administrator rights are required") => new AppError("forbidden", 403, "Forbidden", detail);
export const notFound = (what: string) => new AppError("not_found", 404, "Not found", `${what} not found`);
export const versionConflict = (what: string, stored: number, sent: number) =>
  new AppError("version_conflict", 409, "Version conflict", `${what} version is ${stored}, request had ${sent}`, [
    { path: "version", message: `expected ${stored}` },
  ]);
export const inboxImmutable = (detail = "the inbox cannot be renamed, moved or deleted") =>
  new AppError("inbox_immutable", 409, "Inbox is immutable", detail);
export const nameTaken = (detail: string, path = "name") =>
  new AppError("name_taken", 409, "Name taken", detail, [{ path, message: "already taken" }]);
export const alreadyInitialized = () =>
  new AppError("already_initialized", 409, "Already initialized", "the service has already been set up");
export const notArchived = (what: string) =>
  new AppError("not_archived", 409, "Not archived", `${what} must be archived or deleted first`);
export const stateConflict = (detail: string) => new AppError("state_conflict", 409, "State conflict", detail);
export const payloadTooLarge = (limit: number) =>
  new AppError("payload_too_large", 413, "Payload too large", `the body is larger than ${limit} bytes`);
/**
 * A user's attachments would pass the attachment quota. 413 like a file over the size limit (the
 * client can fix it: a smaller file, or delete some), with its own code so a client can tell them apart.
 */
export const storageQuotaExceeded = (quotaBytes: number, usedBytes: number, problem?: FieldProblem) =>
  new AppError(
    "storage_quota_exceeded",
    413,
    "Storage quota exceeded",
    `your attachments may take at most ${quotaBytes} bytes; ${usedBytes} are used, ${Math.max(0, quotaBytes - usedBytes)} are left`,
    [problem ?? { path: "file", message: `larger than the ${Math.max(0, quotaBytes - usedBytes)} bytes left of your attachment quota` }],
  );
export const validationFailed = (errors: FieldProblem[], detail = "the request is invalid") =>
  new AppError("validation_failed", 422, "Validation failed", detail, errors);
export const invalidCursor = () =>
  new AppError("invalid_cursor", 422, "Invalid cursor", "the cursor was not issued by this endpoint for this user", [
    { path: "cursor", message: "invalid cursor" },
  ]);
export const invalidReference = (errors: FieldProblem[], detail = "a referenced resource does not exist") =>
  new AppError("invalid_reference", 422, "Invalid reference", detail, errors);
export const invalidParent = (detail: string) =>
  new AppError("invalid_parent", 422, "Invalid parent", detail, [{ path: "parent_id", message: detail }]);
export const rateLimited = (retryAfterSeconds: number, detail = "too many attempts; try again later") =>
  new AppError("rate_limited", 429, "Too many requests", detail, undefined, {
    "Retry-After": String(Math.max(1, Math.ceil(retryAfterSeconds))),
  });
export const notReady = (detail: string) => new AppError("not_ready", 503, "Not ready", detail);

/** "No space" from SQLite (SQLITE_FULL) or the file system (ENOSPC, EFBIG, EDQUOT). */
export function isStorageFull(e: unknown): boolean {
  const err = e as { code?: string; message?: string } | null;
  return (
    err?.code === "ENOSPC" ||
    err?.code === "EFBIG" ||
    err?.code === "EDQUOT" ||
    err?.code === "SQLITE_FULL" ||
    /database or disk is full|no space left/i.test(err?.message ?? "")
  );
}

/** Disk full while writing: the operator's problem, said plainly; nothing was written. */
export const storageFull = (detail = "the server has no space left; nothing was changed") => new AppError("storage_full", 507, "Insufficient storage", detail);

/** Seconds a client is asked to wait when the database is held by a long job (a restore). */
export const BUSY_RETRY_AFTER_SECONDS = 2;
export const busy = () =>
  new AppError(
    "busy",
    503,
    "Busy",
    "the database is held by a long operation (a restore); try again shortly",
    undefined,
    { "Retry-After": String(BUSY_RETRY_AFTER_SECONDS) },
  );

/**
 * SQLITE_BUSY (also its extended codes), directly or as the cause of a wrapping error (drizzle
 * wraps driver errors in DrizzleQueryError): a write that could not get the database's write lock
 * within the connection's busy timeout.
 */
export function isSqliteBusy(e: unknown): boolean {
  for (let c: unknown = e, depth = 0; c && typeof c === "object" && depth < 5; c = (c as { cause?: unknown }).cause, depth++) {
    const code = (c as { code?: unknown }).code;
    if (typeof code === "string" && code.startsWith("SQLITE_BUSY")) return true;
  }
  return false;
}
