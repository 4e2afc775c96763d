import { ValidationError, NotFoundError, ParseError, InvalidCookieSignature } from "elysia";
import { AppError, busy, isSqliteBusy, type FieldProblem } from "./errors";
import { ProblemList, capErrors, capText } from "./problem-caps";

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  code: string;
  detail?: string;
  errors?: FieldProblem[];
  request_id?: string;
}

export { PROBLEM_LIST_BYTES_MAX, PROBLEM_LIST_MAX, PROBLEM_MESSAGE_MAX, PROBLEM_QUOTE_MAX, ProblemList, capErrors, capText, omittedNote, quoteValue } from "./problem-caps";

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

/** The ONE place an error becomes application/problem+json; every body leaves within the caps above. */
export function toProblem(err: unknown): { body: ProblemBody; headers?: Record<string, string>; internal: boolean } {
  const p = problemOf(err);
  if (p.body.detail !== undefined) p.body.detail = capText(p.body.detail);
  if (p.body.errors !== undefined) p.body.errors = capErrors(p.body.errors);
  return p;
}

function problemOf(err: unknown): { body: ProblemBody; headers?: Record<string, string>; internal: boolean } {
  // Elysia wraps whatever the body parser throws (payload_too_large, malformed_request) in a ParseError.
  if (err instanceof ParseError && err.cause instanceof AppError) err = err.cause;
  // The write lock is held by another connection (the job worker's restore): 503 busy, never a wait.
  if (isSqliteBusy(err)) err = busy();
  if (err instanceof AppError) {
    const body: ProblemBody = { type: "about:blank", title: err.title, status: err.status, code: err.code };
    if (err.detail) body.detail = err.detail;
    if (err.errors) body.errors = err.errors;
    return { body, headers: err.headers, internal: false };
  }
  if (err instanceof ValidationError) {
    const errors = validationProblems(err);
    return {
      body: {
        type: "about:blank",
        title: "Validation failed",
        status: 422,
        code: "validation_failed",
        detail: `invalid ${err.type === "body" ? "request body" : err.type}: ${errors
          .slice(0, 5)
          .map((x) => `${capText(x.path, 60)}: ${capText(x.message, 100)}`)
          .join("; ")}`,
        errors,
      },
      internal: false,
    };
  }
  if (err instanceof NotFoundError) {
    return { body: { type: "about:blank", title: "Not found", status: 404, code: "not_found", detail: "no such endpoint" }, internal: false };
  }
  if (err instanceof ParseError) {
    return {
      body: { type: "about:blank", title: "Malformed request", status: 400, code: "malformed_request", detail: "the body could not be parsed" },
      internal: false,
    };
  }
  if (err instanceof InvalidCookieSignature) {
    return { body: { type: "about:blank", title: "Unauthenticated", status: 401, code: "unauthenticated", detail: "invalid cookie" }, internal: false };
  }
  return {
    body: { type: "about:blank", title: "Internal server error", status: 500, code: "internal_error", detail: "an unexpected error occurred" },
    internal: true,
  };
}

export function problemResponse(body: ProblemBody, headers?: Record<string, string>): Response {
  return new Response(JSON.stringify(body), {
    status: body.status,
    headers: { "content-type": "application/problem+json", ...headers },
  });
}
