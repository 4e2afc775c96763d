import { ValidationError, NotFoundError, ParseError, InvalidCookieSignature } from "elysia";
import { AppError, busy, isSqliteBusy, malformed, unauthenticated, validationFailed, type ErrorCode, type FieldProblem, type TitleVariant } from "./errors";
import type { Logger } from "./log";
import { ProblemList, capErrors, capText } from "./problem-caps";

interface ProblemBody {
  type: string;
  title: string;
  status: number;
  code: string;
  detail?: string;
  errors?: FieldProblem[];
  request_id?: string;
}

export { PROBLEM_LIST_BYTES_MAX, PROBLEM_LIST_MAX, PROBLEM_MESSAGE_MAX, PROBLEM_QUOTE_MAX, ProblemList, capErrors, capText, omittedNote, quoteValue } from "./problem-caps";

interface ProblemType {
  status: number;
  title: string;
  /** Titles a few throw sites have always answered instead of `title` (AppError's `variant`). */
  variants?: Partial<Record<TitleVariant, string>>;
  /**
   * How an answer with a 5xx status is logged (errorResponse): "error" unless said otherwise.
   * "warn": expected under load (a restore holds the database). "none": logged where it arises.
   */
  log?: "warn" | "none";
}

/**
 * Every problem the API answers, by its `code`: the HTTP status and the title. The ONE place a
 * status is chosen: a throw site says what happened (code, detail, errors), never how it is answered.
 * The OpenAPI document takes each route's statuses from here too (core/openapi.ts).
 */
export const PROBLEMS: Readonly<Record<ErrorCode, ProblemType>> = {
  malformed_request: { status: 400, title: "Malformed request" },
  unauthenticated: { status: 401, title: "Unauthenticated" },
  invalid_credentials: { status: 401, title: "Invalid credentials" },
  csrf_failed: { status: 403, title: "CSRF check failed" },
  forbidden: { status: 403, title: "Forbidden" },
  not_found: { status: 404, title: "Not found" },
  method_not_allowed: { status: 405, title: "Method not allowed" },
  version_conflict: { status: 409, title: "Version conflict" },
  inbox_immutable: { status: 409, title: "Inbox is immutable" },
  name_taken: { status: 409, title: "Name taken" },
  already_initialized: { status: 409, title: "Already initialized" },
  not_archived: { status: 409, title: "Not archived" },
  merge_conflict: { status: 409, title: "Merge conflict" },
  token_consumed: { status: 409, title: "Token consumed" },
  // A channel's test: the receiver refused or could not be reached (its status in `errors`, never its body).
  delivery_failed: { status: 502, title: "Delivery failed", log: "none" },
  state_conflict: { status: 409, title: "State conflict", variants: { archive_too_large: "Archive too large" } },
  payload_too_large: { status: 413, title: "Payload too large" },
  storage_quota_exceeded: { status: 413, title: "Storage quota exceeded" },
  unsupported_media_type: { status: 415, title: "Unsupported media type" },
  range_not_satisfiable: { status: 416, title: "Range not satisfiable" },
  validation_failed: { status: 422, title: "Validation failed" },
  invalid_cursor: { status: 422, title: "Invalid cursor" },
  invalid_reference: { status: 422, title: "Invalid reference" },
  invalid_parent: { status: 422, title: "Invalid parent" },
  backup_invalid: { status: 422, title: "Backup invalid" },
  import_invalid: { status: 422, title: "Import invalid" },
  token_invalid: { status: 422, title: "Invalid preflight token" },
  rate_limited: { status: 429, title: "Too many requests" },
  quota_exceeded: { status: 429, title: "Quota exceeded" },
  internal_error: {
    status: 500,
    title: "Internal server error",
    variants: { export_failed: "Export failed", restore_failed: "Restore failed", restore_cleanup_failed: "Restore cleanup failed" },
  },
  // A readiness probe may ask every second: the reason is logged once when it changes (health.service.ts).
  not_ready: { status: 503, title: "Not ready", log: "none" },
  busy: { status: 503, title: "Busy", log: "warn" },
  storage_full: { status: 507, title: "Insufficient storage" },
};

/**
 * The statuses the WebDAV/CalDAV protocol answers with no body (RFC 4918, RFC 4791): not found, a
 * method a resource does not allow, a conflict, a failed precondition, a body too large, a refused
 * write. DAV clients read no body there (a precondition with a
 * DAV:error element is the DAV feature's own XML); they are decided here with every other error
 * status so that this file stays the one place that knows them.
 */
export type DavStatus = 403 | 404 | 405 | 409 | 412 | 413;

/** A bare DAV refusal (DavStatus), with the headers the protocol asks (Allow on 405). */
export function davStatus(status: DavStatus, headers?: Record<string, string>): Response {
  return new Response(null, headers ? { status, headers } : { status });
}

/** The HTTP status of a problem code. */
export function statusOf(code: ErrorCode): number {
  return PROBLEMS[code].status;
}

/** The title a problem of `code` (and `variant`) answers. */
export function titleOf(code: ErrorCode, variant?: TitleVariant): string {
  const p = PROBLEMS[code];
  return (variant && p.variants?.[variant]) || p.title;
}

/** A problem body from the table: type, title, status, code, and the detail when there is one. */
function problemBody(code: ErrorCode, detail?: string, variant?: TitleVariant): ProblemBody {
  const body: ProblemBody = { type: "about:blank", title: titleOf(code, variant), status: statusOf(code), code };
  if (detail) body.detail = detail;
  return body;
}

interface StandardIssue {
  code?: string;
  path?: readonly (PropertyKey | { key: PropertyKey })[];
  message: string;
  keys?: string[];
}

function issuePath(prefix: string, path: StandardIssue["path"]): string {
  const parts = (path ?? []).map((p) => String(typeof p === "object" && p !== null ? (p as { key: PropertyKey }).key : p));
  return parts.length ? parts.join(".") : prefix;
}

/**
 * Field problems from an Elysia validation error, re-read from the schema's own issues. Bounded:
 * the value was a body of at most 1 MiB and JSON_DEPTH_LIMIT levels (core/body.ts) or a query
 * string, and at most PROBLEM_LIST_MAX problems are made from its issues (the rest are counted);
 * the value itself is never turned into text.
 */
function validationProblems(e: ValidationError): FieldProblem[] {
  const where = e.type === "body" ? "body" : e.type;
  const validator = e.validator as unknown as Record<string, unknown> | undefined;
  const std = (validator?.["~standard"] ?? (validator?.schema as Record<string, unknown> | undefined)?.["~standard"]) as
    | { validate: (v: unknown) => { issues?: StandardIssue[] } | Promise<unknown> }
    | undefined;
  const out = new ProblemList();
  if (std) {
    const res = std.validate(e.value);
    const issues = res && !(res instanceof Promise) ? ((res as { issues?: StandardIssue[] }).issues ?? []) : [];
    for (const issue of issues) {
      if (issue.code === "unrecognized_keys" && issue.keys) {
        const base = issuePath("", issue.path);
        for (const k of issue.keys) out.add(base ? `${base}.${k}` : k, "unknown field");
      } else {
        out.add(issuePath(where, issue.path), issue.message);
      }
    }
  }
  if (out.size === 0) out.add(where, "invalid value");
  return out.toErrors();
}

export interface Problem {
  body: ProblemBody;
  headers?: Record<string, string>;
  /** Not an AppError: an unexpected failure, answered as a generic 500 (its body gets the request id). */
  internal: boolean;
  /** The AppError the answer was made from (an Elysia or driver error is turned into one first). */
  error: AppError | null;
}

/** The ONE place an error becomes application/problem+json; every body leaves within the caps above. */
export function toProblem(err: unknown): Problem {
  const app = asAppError(err);
  if (!app) return { body: problemBody("internal_error", "an unexpected error occurred"), internal: true, error: null };
  const body = problemBody(app.code, app.detail === undefined ? undefined : capText(app.detail), app.variant);
  if (app.errors) body.errors = capErrors(app.errors);
  return { body, headers: app.headers, internal: false, error: app };
}

/** What the framework and the driver throw, as the AppError it means; null for an unexpected error. */
function asAppError(err: unknown): AppError | null {
  // Elysia wraps whatever the body parser throws (payload_too_large, malformed_request) in a ParseError.
  if (err instanceof ParseError && err.cause instanceof AppError) err = err.cause;
  // The write lock is held by another connection (the job worker's restore): 503 busy, never a wait.
  if (isSqliteBusy(err)) return busy(err);
  if (err instanceof AppError) return err;
  if (err instanceof ValidationError) {
    const errors = validationProblems(err);
    const detail = `invalid ${err.type === "body" ? "request body" : err.type}: ${errors
      .slice(0, 5)
      .map((x) => `${capText(x.path, 60)}: ${capText(x.message, 100)}`)
      .join("; ")}`;
    return validationFailed(errors, detail);
  }
  if (err instanceof NotFoundError) return new AppError("not_found", "no such endpoint");
  if (err instanceof ParseError) return malformed("the body could not be parsed");
  if (err instanceof InvalidCookieSignature) return unauthenticated("invalid cookie");
  return null;
}

function problemResponse(body: ProblemBody, headers?: Record<string, string>): Response {
  return new Response(JSON.stringify(body), {
    status: body.status,
    headers: { "content-type": "application/problem+json", ...headers },
  });
}

/**
 * The answer to a request that failed with `err`. Every 5xx is logged with its cause, under the
 * request's id: an unexpected error (its body carries the id too), and an AppError that is the
 * server's problem (an export that failed, a full disk, a busy database).
 */
export function errorResponse(err: unknown, requestId: string | undefined, logger: Logger): Response {
  const p = toProblem(err);
  if (p.internal) p.body.request_id = requestId;
  if (p.body.status >= 500) logServerError(logger, err, p, requestId);
  return problemResponse(p.body, p.headers);
}

/** One log line for a 5xx: what was answered and what caused it (never in the body). */
function logServerError(logger: Logger, err: unknown, p: Problem, requestId: string | undefined): void {
  if (p.internal) {
    logger.error("unhandled error", { request_id: requestId ?? null, error: describe(err), stack: stackOf(err) });
    return;
  }
  const level = PROBLEMS[p.error!.code].log ?? "error";
  if (level === "none") return;
  const cause = p.error?.cause;
  logger[level]("error answered", {
    request_id: requestId ?? null,
    status: p.body.status,
    code: p.body.code,
    detail: p.body.detail ?? null,
    cause: cause === undefined ? null : describe(cause),
    stack: cause === undefined ? stackOf(err) : stackOf(cause),
  });
}

/**
 * The answer to what escapes the app's own answering (Bun.serve's `error` callback, main.ts):
 * logged with its cause, answered with a bare 500.
 */
export function lastResortResponse(err: unknown, logger: Logger): Response {
  logger.error("server error", { error: describe(err), stack: stackOf(err) });
  return problemResponse(problemBody("internal_error"));
}

function describe(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  const code = (e as { code?: unknown }).code;
  return `${e.name}: ${e.message}${typeof code === "string" && !e.message.includes(code) ? ` (${code})` : ""}`;
}

function stackOf(e: unknown): string | undefined {
  return e instanceof Error ? e.stack?.split("\n").slice(0, 6).join(" | ") : undefined;
}
