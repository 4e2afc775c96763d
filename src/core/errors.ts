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

/** What an AppError may carry besides its code and detail. */
interface AppErrorOptions {
  /** Field problems, listed in the answer's `errors`. */
  errors?: FieldProblem[];
  /** Headers of the answer (`Retry-After`, `Content-Range`). */
  headers?: Record<string, string>;
  /**
   * A few answers have always carried a title of their own for their code (`Export failed` for an
   * `internal_error`); core/problem.ts holds them beside the code's title. A client reads `code`.
   */
  variant?: TitleVariant;
  /** What went wrong underneath (an fs or SQLite error): logged with a 5xx, never answered. */
  cause?: unknown;
}

/**
 * The one error type of the domain. A throw site says what happened: a stable, machine-readable
 * `code`, a `detail` sentence, field problems. `core/problem.ts` alone decides the status and the
 * title (one table), turns it into HTTP, and logs every 5xx with its cause.
 */
export class AppError extends Error {
  readonly errors?: FieldProblem[];
  readonly headers?: Record<string, string>;
  readonly variant?: TitleVariant;

  constructor(
    readonly code: ErrorCode,
    readonly detail?: string,
    opts: AppErrorOptions = {},
  ) {
    super(detail ?? code, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = "AppError";
    if (opts.errors) this.errors = opts.errors;
    if (opts.headers) this.headers = opts.headers;
    if (opts.variant) this.variant = opts.variant;
  }
}

/** Titles some answers carry in place of their code's own (core/problem.ts, PROBLEMS). */
export type TitleVariant = "export_failed" | "restore_failed" | "restore_cleanup_failed" | "archive_too_large";

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
  | "import_invalid"
  | "token_invalid"
  | "rate_limited"
  | "quota_exceeded"
  | "internal_error"
  | "storage_full"
  | "not_ready"
  | "delivery_failed"
  | "busy";

export const malformed = (detail: string) => new AppError("malformed_request", detail);
export const unauthenticated = (detail = "a valid session is required") => new AppError("unauthenticated", detail);
export const invalidCredentials = () => new AppError("invalid_credentials", "username or password is wrong");
export const csrfFailed = (detail: string) => new AppError("csrf_failed", detail);
export const forbidden = (detail = "administrator rights are required") => new AppError("forbidden", detail);
export const notFound = (what: string) => new AppError("not_found", `${what} not found`);
export const versionConflict = (what: string, stored: number, sent: number) =>
  new AppError("version_conflict", `${what} version is ${stored}, request had ${sent}`, { errors: [{ path: "version", message: `expected ${stored}` }] });
export const inboxImmutable = (detail = "the inbox cannot be renamed, moved or deleted") => new AppError("inbox_immutable", detail);
export const nameTaken = (detail: string, path = "name") => new AppError("name_taken", detail, { errors: [{ path, message: "already taken" }] });
export const alreadyInitialized = () => new AppError("already_initialized", "the service has already been set up");
export const notArchived = (what: string) => new AppError("not_archived", `${what} must be archived or deleted first`);
export const stateConflict = (detail: string) => new AppError("state_conflict", detail);
export const payloadTooLarge = (limit: number) => new AppError("payload_too_large", `the body is larger than ${limit} bytes`);
/**
 * A user's attachments would pass the attachment quota. 413 like a file over the size limit (the
 * client can fix it: a smaller file, or delete some), with its own code so a client can tell them apart.
 */
export const storageQuotaExceeded = (quotaBytes: number, usedBytes: number, problem?: FieldProblem) =>
  new AppError(
    "storage_quota_exceeded",
    `your attachments may take at most ${quotaBytes} bytes; ${usedBytes} are used, ${Math.max(0, quotaBytes - usedBytes)} are left`,
    { errors: [problem ?? { path: "file", message: `larger than the ${Math.max(0, quotaBytes - usedBytes)} bytes left of your attachment quota` }] },
  );
export const validationFailed = (errors: FieldProblem[], detail = "the request is invalid") => new AppError("validation_failed", detail, { errors });
export const invalidCursor = () =>
  new AppError("invalid_cursor", "the cursor was not issued by this endpoint for this user", { errors: [{ path: "cursor", message: "invalid cursor" }] });
export const invalidReference = (errors: FieldProblem[], detail = "a referenced resource does not exist") => new AppError("invalid_reference", detail, { errors });
export const invalidParent = (detail: string) => new AppError("invalid_parent", detail, { errors: [{ path: "parent_id", message: detail }] });
export const rateLimited = (retryAfterSeconds: number, detail = "too many attempts; try again later") =>
  new AppError("rate_limited", detail, { headers: { "Retry-After": String(Math.max(1, Math.ceil(retryAfterSeconds))) } });
export const notReady = (detail: string) => new AppError("not_ready", detail);

/**
 * "No space" from SQLite (SQLITE_FULL) or the file system (ENOSPC; EFBIG: a file-size limit;
 * EDQUOT: a disk quota). The one test for it: every writer (attachments, backup, legacy) asks this.
 */
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

/** Disk full while writing: the operator's problem, said plainly; nothing was written. The cause is logged. */
export const storageFull = (detail = "the server has no space left; nothing was changed", cause?: unknown) => new AppError("storage_full", detail, { cause });

/** Seconds a client is asked to wait when the database is held by a long job (a restore). */
const BUSY_RETRY_AFTER_SECONDS = 2;
export const busy = (cause?: unknown) =>
  new AppError("busy", "the database is held by a long operation (a restore); try again shortly", {
    headers: { "Retry-After": String(BUSY_RETRY_AFTER_SECONDS) },
    cause,
  });

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
