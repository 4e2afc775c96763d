import { LEGACY_BODY_LIMIT, RawBody, STREAMED_BODY } from "../../core/body";
import { payloadTooLarge } from "../../core/errors";
import type { RequestMeta } from "../../core/http";
import type { JobRunner } from "../../core/jobs/jobs.runner";
import type { MultipartReader } from "../attachments/attachments.multipart";
import type { LegacyExportJob, LegacyRestoreJob, LegacySource } from "./legacy.jobs";
import type { RestoreMode, RestoreResult } from "./legacy.schemas";

/**
 * Legacy v1 export and restore, the main thread's side: it reads what the request carries and
 * hands the work to the job worker (legacy.jobs.ts), where the file is made or read, checked and
 * written; a 60,000-task restore is half a minute of synchronous work that must not hold the
 * event loop. No HTTP here. Loaded on first use (app.ts).
 */
export class LegacyService {
  constructor(private readonly jobs: JobRunner) {}

  /** The JSON export, streamed from the worker as the client reads it. */
  exportJson(userId: string, meta: RequestMeta): Promise<ReadableStream<Uint8Array>> {
    return this.export({ userId, format: "json", meta });
  }

  /** The CSV export: UTF-8 with a BOM, header row, one row per record. */
  exportCsv(userId: string, meta: RequestMeta): Promise<ReadableStream<Uint8Array>> {
    return this.export({ userId, format: "csv", meta });
  }

  private async export(job: LegacyExportJob): Promise<ReadableStream<Uint8Array>> {
    return (await this.jobs.stream<null>("legacy.export", job)).body;
  }

  /** POST /restore: the JSON body's bytes (RawBody), or what body.ts made of another body. */
  restoreJson(userId: string, body: unknown, mode: RestoreMode, meta: RequestMeta): Promise<RestoreResult> {
    const source: LegacySource =
      body instanceof RawBody ? { kind: "bytes", bytes: body.take() } : body === STREAMED_BODY || typeof body === "string" ? { kind: "wrong_type" } : { kind: "empty" };
    return this.restore({ userId, format: "json", source, mode, meta });
  }

  /** POST /restore.csv: the CSV as text bytes, or a multipart body whose field `file` holds it. */
  async restoreCsv(userId: string, body: RawBody | MultipartReader, mode: RestoreMode, meta: RequestMeta): Promise<RestoreResult> {
    const source: LegacySource = body instanceof RawBody ? { kind: "bytes", bytes: body.take() } : { kind: "part", bytes: await readFilePart(body) };
    return this.restore({ userId, format: "csv", source, mode, meta });
  }

  private restore(job: LegacyRestoreJob): Promise<RestoreResult> {
    const s = job.source;
    // The bytes go to the worker without a copy (a view of part of a buffer is copied first).
    let transfer: ArrayBuffer[] = [];
    if ((s.kind === "bytes" || s.kind === "part") && s.bytes) {
      let b = s.bytes;
      if (b.byteOffset !== 0 || b.byteLength !== b.buffer.byteLength || !(b.buffer instanceof ArrayBuffer)) b = b.slice();
      s.bytes = b;
      transfer = [b.buffer as ArrayBuffer];
    }
    return this.jobs.run<RestoreResult>("legacy.restore", job, transfer);
  }
}

/**
 * The `file` field of a multipart restore.csv, whole (a CSV must be read entirely to be
 * validated), within the body limit (413 while reading); null when the body has no such field.
 * Other fields are read past and ignored.
 */
async function readFilePart(body: MultipartReader): Promise<Uint8Array | null> {
  let part = await body.nextPart();
  while (part && part.field !== "file") part = await body.nextPart();
  if (!part) return null;
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const c of body.partData()) {
    size += c.byteLength;
    if (size > LEGACY_BODY_LIMIT) throw payloadTooLarge(LEGACY_BODY_LIMIT);
    chunks.push(c);
  }
  while (await body.nextPart()) {
    for await (const _ of body.partData()) {
      // other fields are ignored
    }
  }
  const out = new Uint8Array(size);
  let off = 0;
  for (const c of chunks) {
    out.set(c, off);
    off += c.byteLength;
  }
  return out;
}
