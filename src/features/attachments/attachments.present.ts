import { AppError } from "../../core/errors";
import type { AttachmentRecord } from "./attachments.repo";
import type { Attachment } from "./attachments.schemas";
import type { StoredAttachment } from "./attachments.service";
import { contentDisposition } from "./attachments.names";

export function presentAttachment(r: AttachmentRecord): Attachment {
  return {
    id: r.id,
    task_id: r.task_id,
    filename: r.filename,
    content_type: r.content_type,
    size: r.size,
    sha256: r.sha256,
    created_at: r.created_at,
  };
}

/** A range of the file (inclusive ends), or null for the whole file. */
type ByteRange = { start: number; end: number } | null;

/** Whether an If-None-Match / If-Range list names this entity tag (weak comparison, `*`). */
function matchesEtag(header: string, etag: string): boolean {
  const opaque = etag.replace(/^W\//, "");
  return header.split(",").some((t) => {
    const v = t.trim();
    return v === "*" || v.replace(/^W\//, "") === opaque;
  });
}

/**
 * The requested range (RFC 9110 §14): one `bytes=` range is served as 206; a malformed header or
 * several ranges are ignored (the whole file); a range that starts past the end is 416.
 */
function requestedRange(header: string | null, size: number): ByteRange {
  if (!header) return null;
  const m = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!m || (m[1] === "" && m[2] === "")) return null;
  let start: number;
  let end: number;
  if (m[1] === "") {
    const suffix = Number(m[2]);
    if (suffix === 0) throw rangeNotSatisfiable(size);
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === "" ? size - 1 : Math.min(Number(m[2]), size - 1);
    if (m[2] !== "" && Number(m[2]) < start) return null;
    if (start >= size) throw rangeNotSatisfiable(size);
  }
  return { start, end };
}

function rangeNotSatisfiable(size: number): AppError {
  return new AppError("range_not_satisfiable", `the file has ${size} bytes`, { headers: { "Content-Range": `bytes */${size}` } });
}

/**
 * The download answer: the stored type, a safe Content-Disposition, the strong ETag, conditional
 * (If-None-Match → 304) and range (206/416) requests. The body streams from the file.
 */
export function presentDownload(a: StoredAttachment, headers: Headers): Response {
  const r = a.record;
  const etag = `"${r.sha256}"`;
  const common: Record<string, string> = {
    etag,
    "cache-control": "private, no-cache",
    "x-content-type-options": "nosniff",
    "cross-origin-resource-policy": "same-origin",
    // Defence in depth should a browser ever render the bytes: no scripts, no loads, an opaque origin.
    "content-security-policy": "default-src 'none'; sandbox",
    "accept-ranges": "bytes",
  };
  const inm = headers.get("if-none-match");
  if (inm !== null && matchesEtag(inm, etag)) return new Response(null, { status: 304, headers: common });
  const ifRange = headers.get("if-range");
  const range = ifRange === null || matchesEtag(ifRange, etag) ? requestedRange(headers.get("range"), r.size) : null;
  const file = Bun.file(a.path);
  const base = { ...common, "content-type": r.content_type, "content-disposition": contentDisposition(r.filename) };
  if (!range) {
    return new Response(file, { status: 200, headers: { ...base, "content-length": String(r.size) } });
  }
  return new Response(file.slice(range.start, range.end + 1), {
    status: 206,
    headers: {
      ...base,
      "content-length": String(range.end - range.start + 1),
      "content-range": `bytes ${range.start}-${range.end}/${r.size}`,
    },
  });
}
