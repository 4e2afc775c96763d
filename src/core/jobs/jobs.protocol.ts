import type { Config } from "../../config";
import { AppError, type ErrorCode, type FieldProblem, type TitleVariant } from "../errors";

/**
 * What crosses between the main thread and the job worker (jobs.runner.ts ⇄ jobs.host.ts). Only
 * plain data crosses (structured clone): an error is sent as its code, detail, problems, headers
 * and cause, and made an AppError again on the main thread, so core/problem.ts answers (and logs)
 * it exactly as one thrown there.
 */

/**
 * A streamed job produces nothing before its reader asks (as a pull stream would), then runs
 * ahead of the reader by at most a window that starts at one chunk and grows with what the reader
 * takes up to STREAM_WINDOW_BYTES (a slow client holds a few MiB, a fast one is not kept waiting
 * for a round trip per chunk). Small chunks are gathered into chunks of up to STREAM_CHUNK_BYTES.
 */
export const STREAM_CHUNK_BYTES = 256 * 1024;
export const STREAM_WINDOW_BYTES = 2 * 1024 * 1024;

/** First message to a new worker: where the data is and how the server is configured. */
export interface InitMessage {
  type: "init";
  dbPath: string;
  config: Config;
  version: string;
}

export interface JobMessage {
  type: "job";
  id: number;
  /** `<module>.<handler>`: `backup.export`, `legacy.restore`, … */
  kind: string;
  payload: unknown;
  /** The main thread's clock when the job was sent (ms); the job's "now" when `fixedClock`. */
  now: number;
  /** The main thread's clock is not the system clock (tests pin it): the job uses `now` throughout. */
  fixedClock: boolean;
  /** The serving connection's settings the worker's connection mirrors for this job. */
  mirror: Mirror;
}

/**
 * What the job's connection and process take from the main thread at the time of the job: the
 * page limit set on the serving connection (an operator's cap; the tests' simulated full disk),
 * and the failpoint variables (backup.files.ts), which a test may set after the worker started
 * (a worker's environment is a copy made when it starts).
 */
export interface Mirror {
  maxPageCount: number;
  failpoint: string | null;
  failpointAction: string | null;
}

/** A streamed job's reader took `bytes`: the worker may send that much more. */
export interface CreditMessage {
  type: "credit";
  id: number;
  bytes: number;
}

/** The reader of a streamed job went away: the worker stops it and cleans up, then answers `end`. */
export interface CancelMessage {
  type: "cancel";
  id: number;
}

/** Idle: the worker closes its connection and ends. */
export interface ShutdownMessage {
  type: "shutdown";
}

export type ToWorker = InitMessage | JobMessage | CreditMessage | CancelMessage | ShutdownMessage;

export type FromWorker =
  | { type: "result"; id: number; value: unknown }
  /** A streamed job has started: its head (a file name, …); chunks follow, then `end`. */
  | { type: "head"; id: number; value: unknown }
  | { type: "chunk"; id: number; bytes: ArrayBuffer }
  | { type: "end"; id: number }
  | { type: "error"; id: number; error: SerializedError }
  | { type: "log"; level: "info" | "warn" | "error"; msg: string; fields: Record<string, unknown> };

interface SerializedInternal {
  name: string;
  message: string;
  stack?: string;
  code?: string;
}

export type SerializedError =
  | {
      app: {
        code: ErrorCode;
        detail?: string;
        errors?: FieldProblem[];
        headers?: Record<string, string>;
        variant?: TitleVariant;
        cause?: SerializedInternal;
      };
    }
  | { internal: SerializedInternal };

/** An unexpected error inside a job (or the worker's end): a 500, with the job's name, message, stack and SQLite code kept for the log. */
export class JobFailed extends Error {
  constructor(
    message: string,
    readonly code?: string,
    stack?: string,
    name = "JobFailed",
  ) {
    super(message);
    this.name = name;
    if (stack) this.stack = stack;
  }
}

export function serializeError(e: unknown): SerializedError {
  if (e instanceof AppError) {
    const app: Extract<SerializedError, { app: unknown }>["app"] = { code: e.code, detail: e.detail, errors: e.errors, headers: e.headers, variant: e.variant };
    if (e.cause !== undefined) app.cause = serializeInternal(e.cause);
    return { app };
  }
  return { internal: serializeInternal(e) };
}

function serializeInternal(e: unknown): SerializedInternal {
  const err = e as { name?: unknown; message?: unknown; stack?: unknown; code?: unknown; cause?: { code?: unknown } } | null;
  // A driver error wrapped by drizzle keeps its SQLite code on the cause.
  const code = typeof err?.code === "string" ? err.code : typeof err?.cause?.code === "string" ? err.cause.code : undefined;
  return {
    name: typeof err?.name === "string" ? err.name : "Error",
    message: typeof err?.message === "string" ? err.message : String(e),
    stack: typeof err?.stack === "string" ? err.stack : undefined,
    code,
  };
}

export function deserializeError(s: SerializedError): Error {
  if ("app" in s) {
    const a = s.app;
    return new AppError(a.code, a.detail, { errors: a.errors, headers: a.headers, variant: a.variant, cause: a.cause && deserializeInternal(a.cause) });
  }
  return deserializeInternal(s.internal);
}

function deserializeInternal(s: SerializedInternal): JobFailed {
  return new JobFailed(s.message, s.code, s.stack, s.name);
}
