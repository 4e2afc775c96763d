import { malformed, payloadTooLarge } from "./errors";

export const JSON_BODY_LIMIT = 1024 * 1024;
export const LEGACY_BODY_LIMIT = 64 * 1024 * 1024;

/**
 * JSON nested deeper than this (arrays and objects; the outermost value is level 1) is refused
 * with 400 malformed_request before it is parsed. No request of the API needs more than a few
 * levels; a deep body is only an attack on whatever walks it recursively afterwards (validation
 * and error reporting: 30,000 levels took 42 s and 3.2 GB, 40,000 ended in a 500, issue 11).
 * The legacy restore's record parser applies the same limit (legacy.json.ts).
 */
export const JSON_DEPTH_LIMIT = 64;

export const jsonTooDeep = () => malformed(`the JSON body is nested deeper than ${JSON_DEPTH_LIMIT} levels`);

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
// What a byte is to the depth scan: 0 nothing, 1 a quote, 2 an opening, 3 a closing bracket or brace.
const BYTE_CLASS = new Uint8Array(256);
BYTE_CLASS[QUOTE] = 1;
BYTE_CLASS[0x5b] = BYTE_CLASS[0x7b] = 2;
BYTE_CLASS[0x5d] = BYTE_CLASS[0x7d] = 3;

/**
 * Whether the JSON text in `b[start, end)` opens more than `limit` arrays/objects at once. One
 * forward pass without recursion (~40% of what JSON.parse of the same bytes costs; a tenth of a
 * microsecond for a small body): brackets inside strings are skipped (a quote preceded by an odd
 * number of backslashes is escaped). Syntax is not checked here: JSON.parse does that afterwards.
 */
export function jsonDeeperThan(b: Uint8Array, limit: number, start = 0, end = b.length): boolean {
  let depth = 0;
  for (let i = start; i < end; i++) {
    const k = BYTE_CLASS[b[i]!]!;
    if (k === 0) continue;
    if (k === 1) {
      // To the closing quote: the next quote not escaped by an odd run of backslashes.
      for (;;) {
        const q = b.indexOf(QUOTE, i + 1);
        if (q < 0 || q >= end) return false; // unterminated: JSON.parse refuses it
        let j = q - 1;
        while (b[j] === BACKSLASH) j--;
        i = q;
        if ((q - 1 - j) % 2 === 0) break;
      }
    } else if (k === 2) {
      if (++depth > limit) return true;
    } else {
      depth--;
    }
  }
  return false;
}

/** Marker returned for multipart bodies: the route reads `request.body` as a stream itself. */
export const STREAMED_BODY = Object.freeze({ streamed: true as const });

/**
 * The unparsed bytes of a large restore body (POST /restore as JSON, /restore.csv as text): the
 * route reads them record by record instead of holding the text and its whole parsed tree.
 * `take()` hands the bytes over once, so the request context no longer keeps them alive.
 */
export class RawBody {
  constructor(private bytes: Uint8Array | null) {}
  take(): Uint8Array {
    const b = this.bytes ?? new Uint8Array(0);
    this.bytes = null;
    return b;
  }
}
// The endpoints whose JSON body is handed over unparsed.
const RAW_JSON_PATHS = new Set(["/api/v1/restore"]);

/**
 * Reads a body up to `limit` bytes, deciding while reading: a declared Content-Length over the
 * limit is refused before the first byte, a chunked body as soon as it passes the limit.
 */
export async function readLimited(request: Request, limit: number): Promise<Uint8Array> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > limit) throw payloadTooLarge(limit);
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  // A large declared body is copied into one buffer as it arrives (not held twice: chunks, then their copy).
  const size = declared === null ? NaN : Number(declared);
  if (Number.isSafeInteger(size) && size > 1024 * 1024) {
    const out = new Uint8Array(size);
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (total + value.byteLength > size) {
        await reader.cancel().catch(() => {});
        throw malformed("the body is longer than its Content-Length");
      }
      out.set(value, total);
      total += value.byteLength;
    }
    return total === size ? out : out.subarray(0, total);
  }
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => {});
      throw payloadTooLarge(limit);
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(total);
  let off = 0;
  for (const c of chunks) {
    out.set(c, off);
    off += c.byteLength;
  }
  return out;
}

const LARGE_BODY_PATHS = new Set(["/api/v1/restore", "/api/v1/restore.csv"]);
// The only endpoints that take a text body; everywhere else text/* is the wrong Content-Type (400).
const TEXT_BODY_PATHS = new Set(["/api/v1/restore.csv"]);

function limitFor(path: string): number {
  return LARGE_BODY_PATHS.has(path) ? LEGACY_BODY_LIMIT : JSON_BODY_LIMIT;
}

const decoder = new TextDecoder("utf-8", { fatal: true });

/**
 * The one body parser (Elysia onParse): JSON with a byte limit; text/csv as text; multipart left
 * to the route as a stream. Anything else with a body is 400 malformed_request.
 */
export async function parseBody(request: Request, path: string, contentType: string): Promise<unknown> {
  const type = contentType.split(";")[0]!.trim().toLowerCase();
  if (type === "multipart/form-data") return STREAMED_BODY;
  const bytes = await readLimited(request, limitFor(path));
  if (type === "application/json" || type.endsWith("+json")) {
    if (bytes.byteLength === 0) return undefined;
    // The restore's record reader applies the limit itself, record by record.
    if (RAW_JSON_PATHS.has(path)) return new RawBody(bytes);
    if (jsonDeeperThan(bytes, JSON_DEPTH_LIMIT)) throw jsonTooDeep();
    let text: string;
    try {
      text = decoder.decode(bytes);
    } catch {
      throw malformed("the body is not valid UTF-8");
    }
    try {
      return JSON.parse(text);
    } catch {
      throw malformed("the body is not valid JSON");
    }
  }
  if ((type === "text/csv" || type === "text/plain") && TEXT_BODY_PATHS.has(path)) return new RawBody(bytes);
  if (bytes.byteLength === 0) return undefined;
  throw malformed(type ? `unsupported Content-Type ${type}; send application/json` : "the Content-Type header is missing; send application/json");
}
