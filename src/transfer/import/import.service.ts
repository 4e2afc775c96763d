import { LEGACY_BODY_LIMIT } from "../../core/body";
import { malformed, validationFailed } from "../../core/errors";
import type { RequestMeta } from "../../core/http";
import type { JobRunner } from "../../core/jobs/jobs.runner";
import { multipartOf } from "../../core/streams/multipart";
import { readNamedFilePart } from "../legacy/legacy.service";
import type { ImportJob, PreviewJob } from "./import.jobs";
import type { ImportFormat, ImportResult, PreviewResult } from "./import.schemas";

/** Bytes of the upload buffer past the file that may go to the worker with it rather than the file being copied. */
const SLACK_MAX = 256 * 1024;

/** Upload limit of a file to import (the spec: 413 over 64 MiB), the legacy restore's. */
export const IMPORT_FILE_LIMIT = LEGACY_BODY_LIMIT;

/**
 * Import from other apps, the main thread's side: it reads the upload (multipart field `file`,
 * within 64 MiB) and hands the work to the job worker (import.jobs.ts), where the file is read,
 * checked, staged and later written in one transaction. No HTTP here. Loaded on first use (app.ts).
 */
export class ImportService {
  constructor(private readonly jobs: JobRunner) {}

  async preview(user: { id: string; timezone: string }, format: ImportFormat, request: Request, meta: RequestMeta): Promise<PreviewResult> {
    const part = await readNamedFilePart(multipartOf(request, IMPORT_FILE_LIMIT));
    if (!part) throw validationFailed([{ path: "file", message: "a multipart field `file` with the file to import is required" }]);
    if (part.bytes.byteLength === 0) throw validationFailed([{ path: "file", message: "the file is empty" }]);
    // The part's buffer is this service's own (readNamedFilePart): it goes to the worker without a
    // copy, as a view of it. Its slack past the file (the multipart framing when the body's length
    // was declared) goes along; a buffer grown by doubling (no declared length) is cut to the file
    // first, so the worker never holds much more than the file.
    let bytes = part.bytes;
    if (bytes.byteOffset !== 0 || bytes.buffer.byteLength - bytes.byteLength > SLACK_MAX) bytes = bytes.slice();
    const job: PreviewJob = { userId: user.id, timezone: user.timezone, format, fileName: (part.filename ?? "").slice(0, 200), bytes, meta };
    return this.jobs.run<PreviewResult>("import.preview", job, [bytes.buffer as ArrayBuffer]);
  }

  run(user: { id: string; timezone: string }, token: string, meta: RequestMeta): Promise<ImportResult> {
    if (!token) throw malformed("import_token is required");
    const job: ImportJob = { userId: user.id, timezone: user.timezone, token, meta };
    return this.jobs.run<ImportResult>("import.run", job);
  }
}
