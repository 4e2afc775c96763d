import { deflateSync } from "fflate";

/** One entry of a hand-built ZIP; every field the hostile-archive tests want to get wrong. */
export interface RawEntry {
  name: string | Uint8Array;
  data: Uint8Array;
  method?: number; // 0 stored, 8 deflate (compressed here), anything else written as given
  flags?: number;
  /** Overrides written to both headers unless the local* variants say otherwise. */
  crc?: number;
  size?: number;
  compressedSize?: number;
  localName?: string;
  localMethod?: number;
  localCrc?: number;
  externalAttr?: number;
  madeBy?: number;
  /** Raw bytes used as the compressed data instead of compressing `data`. */
  raw?: Uint8Array;
  /** Points the central directory at another entry's local header (overlap tests). */
  offsetOf?: number;
  /** Central-directory entry only, pointing at this absolute offset (an entry hidden inside another's data). */
  atOffset?: number;
}

const enc = new TextEncoder();

/** A minimal ZIP writer (no data descriptors, no ZIP64) for tests. */
export function buildZip(entries: RawEntry[], opts: { trailing?: Uint8Array; countOverride?: number } = {}): Uint8Array {
  const chunks: Uint8Array[] = [];
  const central: Uint8Array[] = [];
  const offsets: number[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = typeof e.name === "string" ? enc.encode(e.name) : e.name;
    const localName = e.localName !== undefined ? enc.encode(e.localName) : name;
    const method = e.method ?? 8;
    const comp = e.raw ?? (method === 8 ? deflateSync(e.data) : e.data);
    const crc = e.crc ?? Bun.hash.crc32(e.data) >>> 0;
    const size = e.size ?? e.data.byteLength;
    const csize = e.compressedSize ?? comp.byteLength;
    const flags = e.flags ?? (typeof e.name === "string" && /[^\x00-\x7f]/.test(e.name) ? 0x800 : 0);
    const lh = Buffer.alloc(30);
    lh.writeUInt32LE(0x04034b50, 0);
    lh.writeUInt16LE(20, 4);
    lh.writeUInt16LE(flags, 6);
    lh.writeUInt16LE(e.localMethod ?? method, 8);
    lh.writeUInt32LE(e.localCrc ?? crc, 14);
    lh.writeUInt32LE(csize, 18);
    lh.writeUInt32LE(size, 22);
    lh.writeUInt16LE(localName.byteLength, 26);
    offsets.push(offset);
    const myOffset = e.atOffset ?? (e.offsetOf !== undefined ? offsets[e.offsetOf]! : offset);
    if (e.offsetOf === undefined && e.atOffset === undefined) {
      chunks.push(lh, localName, comp);
      offset += 30 + localName.byteLength + comp.byteLength;
    }
    const ch = Buffer.alloc(46);
    ch.writeUInt32LE(0x02014b50, 0);
    ch.writeUInt16LE(e.madeBy ?? 20, 4);
    ch.writeUInt16LE(20, 6);
    ch.writeUInt16LE(flags, 8);
    ch.writeUInt16LE(method, 10);
    ch.writeUInt32LE(crc, 16);
    ch.writeUInt32LE(csize, 20);
    ch.writeUInt32LE(size, 24);
    ch.writeUInt16LE(name.byteLength, 28);
    ch.writeUInt32LE(e.externalAttr ?? 0, 38);
    ch.writeUInt32LE(myOffset, 42);
    central.push(ch, name);
  }
  const cdStart = offset;
  const cdSize = central.reduce((n, c) => n + c.byteLength, 0);
  const eocd = Buffer.alloc(22);
  eocd.writeUInt32LE(0x06054b50, 0);
  const count = opts.countOverride ?? entries.length;
  eocd.writeUInt16LE(count, 8);
  eocd.writeUInt16LE(count, 10);
  eocd.writeUInt32LE(cdSize, 12);
  eocd.writeUInt32LE(cdStart, 16);
  return new Uint8Array(Buffer.concat([...chunks, ...central, eocd, ...(opts.trailing ? [opts.trailing] : [])]));
}

/** Entries of a valid archive map, in a stable order, as RawEntry list (deflated). */
export function rawEntries(files: Record<string, Uint8Array>): RawEntry[] {
  return Object.entries(files).map(([name, data]) => ({ name, data }));
}
