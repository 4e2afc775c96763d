import { LEGACY_BODY_LIMIT, RawBody, STREAMED_BODY } from "../../core/body";
import { payloadTooLarge } from "../../core/errors";
import type { RequestMeta } from "../../core/http";
import type { JobRunner } from "../../core/jobs/jobs.runner";
import { MULTIPART_FRAMING_BYTES, type MultipartReader } from "../../core/streams/multipart";
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
    // The bytes go to the worker without a copy: a multipart file's buffer is this service's own
    // (readFilePart), so it goes whole with its view; a body's view of part of a buffer that may
    // be shared is copied first.
    let transfer: ArrayBuffer[] = [];
    if (s.kind === "part" && s.bytes) transfer = [s.bytes.buffer as ArrayBuffer];
    else if (s.kind === "bytes" && s.bytes) {
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
 * Other fields are read past and ignored. The bytes are copied as they arrive into one buffer of
 * this function's own, sized by the declared body length (grown by doubling for a chunked body),
 * so each chunk goes at once and the file is held once, not as chunks plus their joined copy.
 */
async function readFilePart(body: MultipartReader): Promise<Uint8Array | null> {
  return (await readNamedFilePart(body))?.bytes ?? null;
}

/** readFilePart with the file name the client gave (the importers name a calendar after it). */
export async function readNamedFilePart(body: MultipartReader): Promise<{ bytes: Uint8Array; filename: string | null } | null> {
  let part = await body.nextPart();
  while (part && part.field !== "file") part = await body.nextPart();
  if (!part) return null;
  const filename = part.filename;
  const declared = body.declaredBytes;
  let out = new Uint8Array(declared !== null && declared <= LEGACY_BODY_LIMIT + MULTIPART_FRAMING_BYTES ? declared : 1024 * 1024);
  let size = 0;
  for await (const c of body.partData()) {
    if (size + c.byteLength > LEGACY_BODY_LIMIT) throw payloadTooLarge(LEGACY_BODY_LIMIT);
    if (size + c.byteLength > out.byteLength) {
      const grown = new Uint8Array(Math.min(LEGACY_BODY_LIMIT, Math.max(out.byteLength * 2, size + c.byteLength)));
      grown.set(out.subarray(0, size));
      out = grown;
    }
    out.set(c, size);
    size += c.byteLength;
  }
  while (await body.nextPart()) {
    for await (const _ of body.partData()) {
      // other fields are ignored
    }
  }
  return { bytes: out.subarray(0, size), filename };
}
