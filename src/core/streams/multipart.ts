import { AppError, malformed, payloadTooLarge } from "../errors";
import { MemoryPacer } from "./memory-pacing";

/**
 * A streaming multipart/form-data reader (RFC 7578). Nothing in the stack streams multipart
 * (Bun's `Request#formData()` holds the whole body in memory), so the parts are cut here: the
 * body is read chunk by chunk and a part's bytes are handed on as they arrive; at most one chunk
 * plus the length of the boundary is held at a time.
 */

export interface PartHeaders {
  /** The form field name (`name=` of Content-Disposition). */
  field: string;
  /** The client's file name, undecoded beyond the multipart escapes; null for a plain field. */
  filename: string | null;
  contentType: string | null;
}

/** Thrown when the body stream fails (the client went away): nothing is answered to anyone. */
export class BodyAborted extends AppError {
  constructor() {
    super("malformed_request", "the upload was interrupted");
  }
}

const CRLF = Buffer.from("\r\n");
const HEADER_END = Buffer.from("\r\n\r\n");
const MAX_HEADER_BYTES = 16 * 1024;
const MAX_PREAMBLE_BYTES = 64 * 1024;
// Every body chunk is a fresh allocation that is garbage once written: left to the collector's
// own pace, a 25 MiB upload's chunks pile up (~20 MiB of RSS). A minor collection every few MiB
// keeps memory flat whatever the size.
const COLLECT_EVERY_BYTES = 2 * 1024 * 1024;

/**
 * Bytes of multipart framing (boundaries, part headers, a small extra field or two) a body may
 * carry beyond the file it holds: its limit is the file's plus this.
 */
export const MULTIPART_FRAMING_BYTES = 64 * 1024;

/**
 * The reader of a multipart/form-data request whose file may hold `fileLimit` bytes: the body may
 * be that plus the framing (413 naming `fileLimit` past it, at once when Content-Length declares
 * more). A Content-Type that is not multipart, or has no boundary, is a 400.
 */
export function multipartOf(request: Request, fileLimit: number): MultipartReader {
  const declared = request.headers.get("content-length");
  return new MultipartReader(
    request.body ?? new ReadableStream(),
    boundaryOf(request.headers.get("content-type")),
    fileLimit + MULTIPART_FRAMING_BYTES,
    fileLimit,
    declared === null ? null : Number(declared),
  );
}

/** The boundary of a multipart/form-data Content-Type, or a 400. */
export function boundaryOf(contentType: string | null): string {
  const ct = contentType ?? "";
  if (!/^\s*multipart\/form-data\s*(;|$)/i.test(ct)) throw malformed("send the file as multipart/form-data (field `file`)");
  const m = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;"]{1,70}))/i.exec(ct);
  const b = m?.[1] ?? m?.[2];
  if (!b) throw malformed("the multipart Content-Type has no boundary");
  return b;
}

export class MultipartReader {
  private readonly reader: { read(): Promise<{ done: boolean; value?: Uint8Array }>; cancel(): Promise<void> };
  private readonly delimiter: Buffer;
  // Pending bytes not yet handed on. Starts with CRLF so the first delimiter looks like every other.
  private buf: Buffer = Buffer.from(CRLF);
  private total = 0;
  private readonly pacer = new MemoryPacer(COLLECT_EVERY_BYTES);
  private eof = false;
  private started = false;
  private finished = false;
  /** The current part's data has not been read to its end yet. */
  private inPart = false;

  constructor(
    body: ReadableStream<Uint8Array>,
    boundary: string,
    /** Bytes of the whole body past which reading stops with 413. */
    private readonly maxBodyBytes: number,
    /** The limit named in a 413 (the file limit, when the body limit adds framing to it). */
    private readonly limitForError = maxBodyBytes,
    /** A declared Content-Length: over the limit is refused before the first byte is read. */
    private readonly declaredLength: number | null = null,
  ) {
    this.reader = body.getReader();
    this.delimiter = Buffer.from(`\r\n--${boundary}`, "latin1");
  }

  /** Bytes of the body read so far. */
  get bytesRead(): number {
    return this.total;
  }

  /** The body's declared Content-Length, or null (chunked). */
  get declaredBytes(): number | null {
    return this.declaredLength;
  }

  /** The next chunk of the body (counted against the limit), or null at its end. */
  private async readChunk(): Promise<Buffer | null> {
    if (this.eof) return null;
    let r: { done: boolean; value?: Uint8Array };
    try {
      r = await this.reader.read();
    } catch {
      this.eof = true;
      throw new BodyAborted();
    }
    if (r.done || !r.value) {
      this.eof = true;
      return null;
    }
    const chunk = r.value;
    this.total += chunk.byteLength;
    this.pacer.add(chunk.byteLength);
    if (this.total > this.maxBodyBytes) {
      await this.cancel();
      throw payloadTooLarge(this.limitForError);
    }
    return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  }

  /** Reads one more chunk into the buffer; false at the end of the body. */
  private async pull(): Promise<boolean> {
    const c = await this.readChunk();
    if (!c) return false;
    this.buf = this.buf.byteLength === 0 ? c : Buffer.concat([this.buf, c]);
    return true;
  }

  /** Stops reading (the rest of the body is discarded). */
  async cancel(): Promise<void> {
    this.eof = true;
    await this.reader.cancel().catch(() => {});
  }

  /** After a delimiter: "--" ends the body, CRLF (after optional padding) starts a part's headers. */
  private async afterDelimiter(): Promise<void> {
    for (;;) {
      const lf = this.buf.indexOf(CRLF);
      if (this.buf.byteLength >= 2 && this.buf[0] === 0x2d && this.buf[1] === 0x2d) {
        this.finished = true;
        this.buf = Buffer.alloc(0);
        return;
      }
      if (lf >= 0) {
        if (!/^[ \t]*$/.test(this.buf.subarray(0, lf).toString("latin1"))) throw malformed("the multipart body is malformed");
        this.buf = this.buf.subarray(lf + 2);
        return;
      }
      if (this.buf.byteLength > 256) throw malformed("the multipart body is malformed");
      if (!(await this.pull())) throw malformed("the multipart body ended early");
    }
  }

  /** The next part's headers, or null after the closing boundary. */
  async nextPart(): Promise<PartHeaders | null> {
    if (!this.started) {
      this.started = true;
      if (this.declaredLength !== null && this.declaredLength > this.maxBodyBytes) {
        await this.cancel();
        throw payloadTooLarge(this.limitForError);
      }
      for (;;) {
        const i = this.buf.indexOf(this.delimiter);
        if (i >= 0) {
          this.buf = this.buf.subarray(i + this.delimiter.byteLength);
          break;
        }
        if (this.buf.byteLength > MAX_PREAMBLE_BYTES) throw malformed("no multipart boundary found");
        if (!(await this.pull())) throw malformed("the body is not multipart/form-data with the declared boundary");
      }
      await this.afterDelimiter();
    } else if (this.inPart) {
      for await (const _ of this.partData()) {
        // skipping the rest of the current part
      }
    }
    if (this.finished) {
      // The epilogue is read to the end of the body: an upload counts only once its request is
      // complete (a client that declared more and hung up stored nothing).
      while (await this.pull()) this.buf = Buffer.alloc(0);
      return null;
    }
    for (;;) {
      const end = this.buf.indexOf(HEADER_END);
      const lineEnd = this.buf.indexOf(CRLF);
      if (lineEnd === 0) {
        // A part with no headers at all.
        this.buf = this.buf.subarray(2);
        this.inPart = true;
        return { field: "", filename: null, contentType: null };
      }
      if (end >= 0) {
        const raw = this.buf.subarray(0, end).toString("utf8");
        this.buf = this.buf.subarray(end + 4);
        this.inPart = true;
        return parsePartHeaders(raw);
      }
      if (this.buf.byteLength > MAX_HEADER_BYTES) throw malformed("a multipart part's headers are too long");
      if (!(await this.pull())) throw malformed("the multipart body ended early");
    }
  }

  /**
   * The current part's bytes, chunk by chunk, up to the next delimiter. The body's chunks are
   * handed on as views, not copies: only the few bytes that might start a delimiter are carried
   * over from one chunk to the next (copying every chunk would make a 25 MiB upload allocate
   * 25 MiB of garbage, and the server's RSS grow with it).
   */
  async *partData(): AsyncGenerator<Uint8Array> {
    if (!this.inPart) return;
    const dl = this.delimiter.byteLength;
    for (;;) {
      const i = this.buf.indexOf(this.delimiter);
      if (i >= 0) {
        const data = this.buf.subarray(0, i);
        this.buf = this.buf.subarray(i + dl);
        this.inPart = false;
        if (data.byteLength > 0) yield data;
        await this.afterDelimiter();
        return;
      }
      // Everything but a possible partial delimiter at the end can go.
      const safe = this.buf.byteLength - (dl - 1);
      if (safe > 0) {
        const data = this.buf.subarray(0, safe);
        this.buf = this.buf.subarray(safe);
        yield data;
      }
      const chunk = await this.readChunk();
      if (!chunk) throw malformed("the multipart body ended before its closing boundary");
      const carried = this.buf;
      if (carried.byteLength === 0) {
        this.buf = chunk;
        continue;
      }
      if (chunk.byteLength < dl) {
        this.buf = Buffer.concat([carried, chunk]);
        continue;
      }
      // A delimiter starting in the carried bytes ends within the chunk's first dl - 1 bytes.
      const j = Buffer.concat([carried, chunk.subarray(0, dl - 1)]).indexOf(this.delimiter);
      if (j >= 0 && j < carried.byteLength) {
        this.buf = Buffer.concat([carried, chunk]);
        continue;
      }
      yield carried;
      this.buf = chunk;
    }
  }
}

/** Content-Disposition and Content-Type of one part. */
export function parsePartHeaders(raw: string): PartHeaders {
  let disposition = "";
  let contentType: string | null = null;
  for (const line of raw.split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === "content-disposition") disposition = value;
    else if (name === "content-type") contentType = value;
  }
  const params = dispositionParams(disposition);
  let filename: string | null = null;
  const star = params.get("filename*");
  if (star !== undefined) {
    const m = /^([A-Za-z0-9_-]+)'[^']*'(.*)$/.exec(star);
    if (m) {
      try {
        filename = decodeURIComponent(m[2]!);
      } catch {
        filename = m[2]!;
      }
    }
  }
  if (filename === null && params.has("filename")) {
    // Browsers escape `"`, CR and LF in a file name as %22, %0D and %0A (HTML form submission).
    filename = params.get("filename")!.replace(/%22/g, '"').replace(/%0D/gi, "\r").replace(/%0A/gi, "\n");
  }
  return { field: params.get("name") ?? "", filename, contentType };
}

/** Parameters of a Content-Disposition value (`form-data; name="file"; filename="a.txt"`). */
function dispositionParams(value: string): Map<string, string> {
  const out = new Map<string, string>();
  let i = value.indexOf(";");
  if (i < 0) return out;
  i++;
  const n = value.length;
  while (i < n) {
    while (i < n && (value[i] === " " || value[i] === "\t" || value[i] === ";")) i++;
    let key = "";
    while (i < n && value[i] !== "=" && value[i] !== ";") key += value[i++];
    key = key.trim().toLowerCase();
    if (value[i] !== "=") continue;
    i++;
    while (i < n && (value[i] === " " || value[i] === "\t")) i++;
    let v = "";
    if (value[i] === '"') {
      i++;
      while (i < n && value[i] !== '"') {
        // Only \" is an escape: browsers send backslashes in a name raw (`C:\x`).
        if (value[i] === "\\" && value[i + 1] === '"') i++;
        v += value[i++];
      }
      i++;
    } else {
      while (i < n && value[i] !== ";") v += value[i++];
      v = v.trim();
    }
    if (key && !out.has(key)) out.set(key, v);
  }
  return out;
}
