import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { Inflate } from "fflate";
import { JsonRecordError, JsonRecordSplitter } from "../../core/streams/json-records";
import { MemoryPacer } from "../../core/streams/memory-pacing";

/**
 * Reading an untrusted ZIP: the central directory is the only index believed; every entry's local
 * header must agree with it, entries may not overlap, and each entry's exact byte range is
 * inflated in small slices with the declared size, CRC-32 and a ratio cap enforced while inflating
 * (a bomb is stopped at the first slice that passes its declared size). fflate's streaming `Unzip`
 * is not used: it trusts local headers, finds ends by scanning for signatures and checks no CRC.
 */

export interface ZipEntry {
  name: string;
  method: number;
  flags: number;
  crc: number;
  compressedSize: number;
  size: number;
  localOffset: number;
  /** First byte of the entry's data (after the local header). */
  dataOffset: number;
  /** One past the last byte the entry occupies (data plus any data descriptor). */
  end: number;
}

export interface ZipLimits {
  /**
   * Directory entries accepted when empty, by name (`data/`): the folders the expected entries
   * live in, which common tools (7-Zip, macOS's Compress) write as entries of their own. They are
   * checked like any entry and then left out of the list; any other directory entry is refused.
   */
  emptyDirectories?: ReadonlySet<string>;
  maxEntries: number;
  /** Inflated bytes per compressed byte, checked for entries past RATIO_GRACE_BYTES. */
  maxRatio: number;
  maxTotalBytes: number;
}

/** Small entries may compress very well (a run of zeros); the ratio cap applies past this size. */
const RATIO_GRACE_BYTES = 1024 * 1024;
/** Compressed bytes pushed to Inflate at a time: bounds one push's output to ~16 MiB. */
const INFLATE_SLICE = 16 * 1024;
const STORED_SLICE = 256 * 1024;

export class ZipError extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(message);
  }
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Positional reads of a file (sync, so the importing transaction can use them). */
export class ZipFile {
  readonly size: number;
  private constructor(
    private readonly fd: number,
    size: number,
  ) {
    this.size = size;
  }

  static open(path: string): ZipFile {
    const fd = openSync(path, "r");
    return new ZipFile(fd, fstatSync(fd).size);
  }

  read(offset: number, length: number): Buffer {
    const buf = Buffer.allocUnsafe(length);
    let got = 0;
    while (got < length) {
      const n = readSync(this.fd, buf, got, length - got, offset + got);
      if (n === 0) break;
      got += n;
    }
    return got === length ? buf : buf.subarray(0, got);
  }

  /** Reads into `buf` (reused by the caller: no allocation per slice); returns the filled part. */
  readInto(buf: Buffer, offset: number, length: number): Buffer {
    let got = 0;
    while (got < length) {
      const n = readSync(this.fd, buf, got, length - got, offset + got);
      if (n === 0) break;
      got += n;
    }
    return buf.subarray(0, got);
  }

  close(): void {
    closeSync(this.fd);
  }
}

/**
 * The fields a local file header and a central directory header share, at the same distances
 * from each other (APPNOTE 4.3.7, 4.3.12): from the general purpose flags (at `at`) to the extra
 * field's length.
 */
function headerFields(b: Buffer, at: number) {
  return {
    flags: b.readUInt16LE(at),
    method: b.readUInt16LE(at + 2),
    crc: b.readUInt32LE(at + 8),
    compressedSize: b.readUInt32LE(at + 12),
    size: b.readUInt32LE(at + 16),
    nameLen: b.readUInt16LE(at + 20),
    extraLen: b.readUInt16LE(at + 22),
  };
}

/**
 * Parses and checks the central directory. Returns the entries or throws ZipError for a problem
 * that makes the rest unreadable; `problems` collects the per-entry ones.
 */
export function readCentralDirectory(zip: ZipFile, limits: ZipLimits, problems: ZipError[]): ZipEntry[] {
  if (zip.size < 22) throw new ZipError("archive", "not a ZIP archive (too short)");
  const tailLen = Math.min(zip.size, 22 + 0xffff);
  const tail = zip.read(zip.size - tailLen, tailLen);
  let eocd = -1;
  for (let i = tail.length - 22; i >= 0; i--) {
    if (tail.readUInt32LE(i) === 0x06054b50 && i + 22 + tail.readUInt16LE(i + 20) === tail.length) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new ZipError("archive", "not a ZIP archive (no end of central directory record), or truncated");
  const eocdOffset = zip.size - tailLen + eocd;
  const disk = tail.readUInt16LE(eocd + 4);
  const cdDisk = tail.readUInt16LE(eocd + 6);
  const countDisk = tail.readUInt16LE(eocd + 8);
  const count = tail.readUInt16LE(eocd + 10);
  const cdSize = tail.readUInt32LE(eocd + 12);
  const cdOffset = tail.readUInt32LE(eocd + 16);
  if (disk !== 0 || cdDisk !== 0 || countDisk !== count) throw new ZipError("archive", "multi-volume archives are not supported");
  if (count === 0xffff || cdSize === 0xffffffff || cdOffset === 0xffffffff) throw new ZipError("archive", "ZIP64 archives are not supported");
  if (count > limits.maxEntries) throw new ZipError("archive", `too many entries (${count}, at most ${limits.maxEntries})`);
  if (cdOffset + cdSize !== eocdOffset) throw new ZipError("archive", "the central directory is not where the end record says (truncated or padded archive)");
  const cd = zip.read(cdOffset, cdSize);
  if (cd.length !== cdSize) throw new ZipError("archive", "truncated central directory");

  const entries: ZipEntry[] = [];
  const directories: ZipEntry[] = [];
  const names = new Set<string>();
  const nfcNames = new Set<string>();
  let total = 0;
  let p = 0;
  for (let i = 0; i < count; i++) {
    if (p + 46 > cd.length || cd.readUInt32LE(p) !== 0x02014b50) throw new ZipError("archive", "corrupt central directory");
    const madeBy = cd.readUInt16LE(p + 4);
    const { flags, method, crc, compressedSize, size, nameLen, extraLen } = headerFields(cd, p + 8);
    const commentLen = cd.readUInt16LE(p + 32);
    const diskStart = cd.readUInt16LE(p + 34);
    const extAttr = cd.readUInt32LE(p + 38);
    const localOffset = cd.readUInt32LE(p + 42);
    if (p + 46 + nameLen + extraLen + commentLen > cd.length) throw new ZipError("archive", "corrupt central directory");
    const rawName = cd.subarray(p + 46, p + 46 + nameLen);
    p += 46 + nameLen + extraLen + commentLen;

    let name: string;
    try {
      name = utf8.decode(rawName);
    } catch {
      problems.push(new ZipError(`entry #${i}`, "the entry name is not UTF-8"));
      continue;
    }
    const ascii = rawName.every((b) => b < 0x80);
    if (!ascii && (flags & 0x800) === 0) {
      problems.push(new ZipError(name, "the entry name is not flagged as UTF-8"));
      continue;
    }
    const pathProblem = unsafePath(name);
    if (pathProblem) {
      problems.push(new ZipError(name, pathProblem));
      continue;
    }
    if (names.has(name)) {
      problems.push(new ZipError(name, "duplicate entry name"));
      continue;
    }
    const nfc = name.normalize("NFC");
    if (nfcNames.has(nfc)) {
      problems.push(new ZipError(name, "duplicate entry name after Unicode normalisation"));
      continue;
    }
    names.add(name);
    nfcNames.add(nfc);
    // Unix (3) and macOS (19, Info-ZIP and Archive Utility) keep the file's mode in the upper
    // half of the external attributes. A symbolic link is refused whatever host claims to have
    // made the entry: it would otherwise be written as a regular file holding its target.
    const host = madeBy >> 8;
    const unixMode = host === 3 || host === 19 ? extAttr >>> 16 : 0;
    if (((extAttr >>> 16) & 0o170000) === 0o120000) {
      problems.push(new ZipError(name, "symbolic links are not allowed"));
      continue;
    }
    const directory = name.endsWith("/") || (extAttr & 0x10) !== 0 || (unixMode & 0o170000) === 0o040000;
    if (directory) {
      if (!name.endsWith("/") || !limits.emptyDirectories?.has(name)) {
        problems.push(new ZipError(name, "unexpected directory entry"));
        continue;
      }
      // Nothing in it: no bytes, and at most the two bytes of an empty deflate stream.
      if (size !== 0 || crc !== 0 || compressedSize > 2) {
        problems.push(new ZipError(name, "a directory entry with content"));
        continue;
      }
    }
    if ((flags & 0x41) !== 0) {
      problems.push(new ZipError(name, "encrypted entries are not allowed"));
      continue;
    }
    if (method !== 0 && method !== 8) {
      problems.push(new ZipError(name, `compression method ${method} is not supported (only stored and deflate)`));
      continue;
    }
    if (diskStart !== 0) {
      problems.push(new ZipError(name, "multi-volume entry"));
      continue;
    }
    if (size === 0xffffffff || compressedSize === 0xffffffff || localOffset === 0xffffffff) {
      problems.push(new ZipError(name, "ZIP64 entries are not supported"));
      continue;
    }
    if (method === 0 && size !== compressedSize) {
      problems.push(new ZipError(name, "a stored entry's sizes differ"));
      continue;
    }
    if (size > RATIO_GRACE_BYTES && size > limits.maxRatio * Math.max(1, compressedSize)) {
      problems.push(new ZipError(name, `compression ratio over ${limits.maxRatio}:1`));
      continue;
    }
    total += size;

    // The local header must agree with the central directory.
    const lh = zip.read(localOffset, 30);
    if (lh.length < 30 || lh.readUInt32LE(0) !== 0x04034b50) {
      problems.push(new ZipError(name, "no local header where the central directory says (truncated or corrupt)"));
      continue;
    }
    const { flags: lFlags, method: lMethod, crc: lCrc, compressedSize: lCsize, size: lSize, nameLen: lNameLen, extraLen: lExtraLen } = headerFields(lh, 6);
    const lName = zip.read(localOffset + 30, lNameLen);
    const descriptor = (flags & 0x08) !== 0;
    const sizesAgree = descriptor
      ? (lCrc === 0 || lCrc === crc) && (lCsize === 0 || lCsize === compressedSize) && (lSize === 0 || lSize === size)
      : lCrc === crc && lCsize === compressedSize && lSize === size;
    if (lMethod !== method || (lFlags & 0x0849) !== (flags & 0x0849) || !lName.equals(rawName) || !sizesAgree) {
      problems.push(new ZipError(name, "the local header disagrees with the central directory"));
      continue;
    }
    const dataOffset = localOffset + 30 + lNameLen + lExtraLen;
    let end = dataOffset + compressedSize;
    if (descriptor) {
      const dd = zip.read(end, 16);
      const withSig = dd.length >= 16 && dd.readUInt32LE(0) === 0x08074b50;
      const off = withSig ? 4 : 0;
      if (dd.length < off + 12 || dd.readUInt32LE(off) !== crc || dd.readUInt32LE(off + 4) !== compressedSize || dd.readUInt32LE(off + 8) !== size) {
        problems.push(new ZipError(name, "the data descriptor disagrees with the central directory"));
        continue;
      }
      end += off + 12;
    }
    if (end > cdOffset) {
      problems.push(new ZipError(name, "the entry runs into the central directory (truncated or corrupt)"));
      continue;
    }
    const entry = { name, method, flags, crc, compressedSize, size, localOffset, dataOffset, end };
    // An accepted directory entry takes part in the overlap check below, and is not listed.
    if (directory) directories.push(entry);
    else entries.push(entry);
  }
  if (p !== cd.length) throw new ZipError("archive", "the central directory size disagrees with its entries");
  if (total > limits.maxTotalBytes) throw new ZipError("archive", `the archive inflates to more than ${limits.maxTotalBytes} bytes`);
  const sorted = [...entries, ...directories].sort((a, b) => a.localOffset - b.localOffset);
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i]!.localOffset < sorted[i - 1]!.end) problems.push(new ZipError(sorted[i]!.name, `overlaps entry ${sorted[i - 1]!.name}`));
  }
  return entries;
}

/** Why a name is not a safe relative path, or null. */
export function unsafePath(name: string): string | null {
  if (name.length === 0) return "empty entry name";
  if (name.includes("\0")) return "NUL in entry name";
  if (name.includes("\\")) return "backslash in entry name";
  if (name.startsWith("/")) return "absolute entry path";
  if (/^[A-Za-z]:/.test(name)) return "drive letter in entry path";
  if (name.split("/").some((s) => s === ".." || s === ".")) return "`.` or `..` in entry path";
  if (/[\u0000-\u001f\u007f]/.test(name)) return "control character in entry name";
  return null;
}

/**
 * Inflating a GiB allocates many short-lived buffers (fflate's output per slice); the collector
 * does not see their weight soon enough and the heap balloons. A full collection every 16 MiB
 * processed (counted across every archive read or written in this thread) keeps the peak flat
 * (measured: 239 MiB → see bench/README.md).
 */
const archivePacer = new MemoryPacer(16 * 1024 * 1024, 1);
export function gcHint(bytes: number): void {
  archivePacer.add(bytes);
}

/**
 * Streams an entry's inflated bytes to `onData`, enforcing its declared size and CRC-32 and
 * returning the SHA-256 (hex) of the inflated bytes.
 */
export function inflateEntry(zip: ZipFile, e: ZipEntry, onData: (chunk: Uint8Array) => void): string {
  // One read buffer per entry: Inflate copies what it keeps of its input, consumers copy what they keep.
  const scratch = Buffer.allocUnsafe(STORED_SLICE);
  const sha = new Bun.CryptoHasher("sha256");
  let crc = 0;
  let produced = 0;
  const take = (chunk: Uint8Array) => {
    produced += chunk.byteLength;
    if (produced > e.size) throw new ZipError(e.name, "inflates past its declared size");
    crc = Bun.hash.crc32(chunk, crc);
    sha.update(chunk);
    onData(chunk);
    gcHint(chunk.byteLength);
  };
  const end = e.dataOffset + e.compressedSize;
  if (e.method === 0) {
    for (let off = e.dataOffset; off < end; off += STORED_SLICE) {
      const part = zip.readInto(scratch, off, Math.min(STORED_SLICE, end - off));
      if (part.length === 0) throw new ZipError(e.name, "truncated entry");
      take(part);
    }
  } else {
    let finished = false;
    // Errors of the consumer (a bad record, SQLite) pass through as they are; only fflate's own
    // errors mean corrupt data.
    let consumerError: unknown = null;
    const inflater = new Inflate((chunk, final) => {
      if (consumerError !== null) return;
      try {
        if (chunk.byteLength) take(chunk);
      } catch (err) {
        consumerError = err;
      }
      if (final) finished = true;
    });
    if (e.compressedSize === 0) throw new ZipError(e.name, "empty deflate stream");
    for (let off = e.dataOffset; off < end; off += INFLATE_SLICE) {
      const n = Math.min(INFLATE_SLICE, end - off);
      const part = zip.readInto(scratch, off, n);
      if (part.length < n) throw new ZipError(e.name, "truncated entry");
      try {
        inflater.push(part, off + n >= end);
      } catch {
        if (consumerError === null) throw new ZipError(e.name, "corrupt deflate data");
      }
      if (consumerError !== null) throw consumerError;
    }
    if (!finished) throw new ZipError(e.name, "the deflate stream does not end where the entry does");
  }
  if (produced !== e.size) throw new ZipError(e.name, `inflates to ${produced} bytes, declared ${e.size}`);
  if (crc >>> 0 !== e.crc) throw new ZipError(e.name, "CRC-32 mismatch");
  return sha.digest("hex");
}

/** JSON nesting allowed in a record or the manifest (ours nest 3 deep); deeper is refused while scanning, before any parse. */
export const MAX_JSON_DEPTH = 64;

/** Whether JSON text nests arrays/objects deeper than `max` (one linear scan, strings skipped). */
export function jsonNestingOver(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

/**
 * One data entry's JSON array, cut into records as its inflated bytes arrive (the shared splitter,
 * core/streams/json-records.ts): each record is parsed as it completes and handed to `onRecord`,
 * the splitter's refusals named as archive problems (`data/tasks.json[3]`). At most
 * `maxRecordChars` per record: the largest record the API can make is a memo of 100,000 UTF-16
 * units, each escaped to at most 6 characters (~600,000); 1 Mi characters leaves room and stops
 * an oversized record (a junk key of millions of characters) early, as one problem.
 */
export class JsonArraySplitter {
  private readonly splitter: JsonRecordSplitter;

  constructor(
    private readonly path: string,
    /** `chars`: the record's length as text. */
    onRecord: (value: unknown, index: number, chars: number) => void,
    maxRecordChars = 1024 * 1024,
    /** Garbage made per byte by whoever consumes the records (parsing, checking, inserting). */
    private readonly garbagePerByte = 3,
  ) {
    this.splitter = new JsonRecordSplitter({ maxDepth: MAX_JSON_DEPTH, maxRecordChars }, (index, _start, _end, text) => {
      let v: unknown;
      let t: string;
      try {
        t = text();
        v = JSON.parse(t);
      } catch (e) {
        if (e instanceof JsonRecordError) throw this.problem(e);
        throw new ZipError(`${path}[${index}]`, "invalid JSON");
      }
      // The consumer's errors (a full problem list) pass through as they are.
      onRecord(v, index, t.length);
    });
  }

  private problem(e: JsonRecordError): ZipError {
    return new ZipError(e.index === null ? this.path : `${this.path}[${e.index}]`, e.message);
  }

  push(chunk: Uint8Array): void {
    try {
      this.splitter.push(chunk);
    } catch (e) {
      throw e instanceof JsonRecordError ? this.problem(e) : e;
    }
    // Parsing and schema-checking records makes several times their size in garbage.
    gcHint(chunk.byteLength * this.garbagePerByte);
  }

  end(): void {
    try {
      this.splitter.end();
    } catch (e) {
      throw e instanceof JsonRecordError ? this.problem(e) : e;
    }
  }
}
