import { Database } from "bun:sqlite";
import { closeSync, fsyncSync, mkdirSync, openSync, readSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { SCHEMA_VERSION } from "../../core/db";
import { allIds } from "../../features/attachments/attachments.repo";
import { connOf } from "./snapshot.conn";
import { inflateEntry, readCentralDirectory, ZipError, ZipFile, type ZipEntry } from "../backup/backup.archive";
import { ATTACHMENT_PREFIX, DB_ENTRY, Manifest, MANIFEST_ENTRY, SECRET_ENTRY } from "./snapshot.manifest";

/**
 * Checks a snapshot archive the way a restore would need it: the ZIP read by the backup's strict
 * reader (central directory believed, every entry's size and CRC-32 enforced), the manifest parsed,
 * every file it lists present with its size and SHA-256, nothing else in the archive, and the
 * database inflated to a temporary file, opened, and found sound by `PRAGMA integrity_check` and
 * `PRAGMA foreign_key_check`, at a schema this build can run.
 */

export class SnapshotInvalid extends Error {
  constructor(readonly problems: string[]) {
    super(`the snapshot is not valid: ${problems.slice(0, 5).join("; ")}${problems.length > 5 ? ` (and ${problems.length - 5} more)` : ""}`);
    this.name = "SnapshotInvalid";
  }
}

export interface VerifiedSnapshot {
  manifest: Manifest;
  /** Bytes of the archive file. */
  bytes: number;
  /** SHA-256 of the whole archive file (what a copy elsewhere is checked against). */
  sha256: string;
}

const ATTACHMENT_NAME = /^attachments\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const USER_ARCHIVE_NAME = /^users\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.zip$/;

/** SHA-256 of a whole file, read in slices. */
export function fileSha256(path: string): string {
  const fd = openSync(path, "r");
  const sha = new Bun.CryptoHasher("sha256");
  const buf = Buffer.allocUnsafe(1024 * 1024);
  try {
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      sha.update(buf.subarray(0, n));
    }
  } finally {
    closeSync(fd);
  }
  return sha.digest("hex");
}

/**
 * Verifies the archive at `path`; `scratch` is a directory for the database's temporary copy
 * (created and removed here). `extract`, when given, receives each entry's checked bytes as they
 * are read (restore writes them out), called with the entry name before its first chunk.
 */
export function verifySnapshot(
  path: string,
  scratch: string,
  extract?: { begin(name: string): void; data(chunk: Uint8Array): void; end(name: string): void },
): VerifiedSnapshot {
  const problems: string[] = [];
  let zip: ZipFile;
  try {
    zip = ZipFile.open(path);
  } catch (e) {
    throw new SnapshotInvalid([`cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`]);
  }
  mkdirSync(scratch, { recursive: true, mode: 0o700 });
  try {
    const zipProblems: ZipError[] = [];
    let entries: ZipEntry[];
    try {
      // Our own archive: the database may compress very well (empty pages), so no ratio cap to speak of.
      entries = readCentralDirectory(zip, { maxEntries: 10_000_000, maxRatio: 1_000_000, maxTotalBytes: Number.MAX_SAFE_INTEGER }, zipProblems);
    } catch (e) {
      throw new SnapshotInvalid([e instanceof ZipError ? `${e.path}: ${e.message}` : (e as Error).message]);
    }
    for (const p of zipProblems) problems.push(`${p.path}: ${p.message}`);
    const byName = new Map(entries.map((e) => [e.name, e]));
    const me = byName.get(MANIFEST_ENTRY);
    if (!me) throw new SnapshotInvalid([...problems, "manifest.json is missing (not a snapshot of this program)"]);
    const chunks: Uint8Array[] = [];
    try {
      inflateEntry(zip, me, (c) => chunks.push(c.slice()));
    } catch (e) {
      throw new SnapshotInvalid([...problems, `manifest.json: ${(e as Error).message}`]);
    }
    let manifest: Manifest;
    try {
      const parsed = Manifest.safeParse(JSON.parse(new TextDecoder().decode(Buffer.concat(chunks))));
      if (!parsed.success) throw new Error(parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "));
      manifest = parsed.data;
    } catch (e) {
      throw new SnapshotInvalid([...problems, `manifest.json: ${(e as Error).message}`]);
    }
    if (manifest.schema_version > SCHEMA_VERSION) {
      problems.push(`the snapshot was written by a newer version (schema ${manifest.schema_version}; this build knows ${SCHEMA_VERSION})`);
    }
    const listed = new Set(manifest.files.map((f) => f.path));
    for (const e of entries) if (e.name !== MANIFEST_ENTRY && !listed.has(e.name)) problems.push(`${e.name}: not listed in the manifest`);
    if (!listed.has(DB_ENTRY)) problems.push("app.db: missing from the manifest");
    const dbTemp = join(scratch, "verify.db");
    for (const f of manifest.files) {
      if (f.path !== DB_ENTRY && f.path !== SECRET_ENTRY && !ATTACHMENT_NAME.test(f.path) && !USER_ARCHIVE_NAME.test(f.path)) {
        problems.push(`${f.path}: not a name a snapshot holds`);
        continue;
      }
      const e = byName.get(f.path);
      if (!e) {
        problems.push(`${f.path}: listed in the manifest but missing`);
        continue;
      }
      if (e.size !== f.size) {
        problems.push(`${f.path}: ${e.size} bytes, the manifest says ${f.size}`);
        continue;
      }
      const isDb = f.path === DB_ENTRY;
      const fd = isDb ? openSync(dbTemp, "w", 0o600) : -1;
      try {
        extract?.begin(f.path);
        const sha = inflateEntry(zip, e, (c) => {
          if (isDb) {
            let off = 0;
            while (off < c.byteLength) off += writeSync(fd, c, off, c.byteLength - off);
          }
          extract?.data(c);
        });
        if (sha !== f.sha256) problems.push(`${f.path}: SHA-256 differs from the manifest`);
        extract?.end(f.path);
        if (isDb) fsyncSync(fd);
      } catch (err) {
        if (!(err instanceof ZipError)) throw err;
        problems.push(`${f.path}: ${err.message}`);
      } finally {
        if (fd >= 0) closeSync(fd);
      }
    }
    if (problems.length === 0) problems.push(...checkDatabase(dbTemp, manifest));
    if (problems.length) throw new SnapshotInvalid(problems);
    zip.close();
    return { manifest, bytes: zip.size, sha256: fileSha256(path) };
  } finally {
    try {
      zip.close();
    } catch {
      /* closed already */
    }
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** The database copy opens, passes integrity_check and foreign_key_check, and its schema version is the manifest's. */
function checkDatabase(path: string, manifest: Manifest): string[] {
  let db: Database;
  try {
    db = new Database(path, { readonly: true });
  } catch (e) {
    return [`app.db: cannot be opened: ${(e as Error).message}`];
  }
  try {
    const rows = db.query("PRAGMA integrity_check").all() as { integrity_check: string }[];
    if (rows.length !== 1 || rows[0]!.integrity_check !== "ok") return rows.slice(0, 5).map((r) => `app.db: integrity_check: ${r.integrity_check}`);
    const fk = db.query("PRAGMA foreign_key_check").all();
    if (fk.length) return [`app.db: ${fk.length} rows break a foreign key`];
    const v = (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
    if (v !== manifest.schema_version) return [`app.db: schema version ${v}, the manifest says ${manifest.schema_version}`];
    const ids = new Set(allIds(connOf(db)));
    const inArchive = new Set(manifest.files.filter((f) => f.path.startsWith(ATTACHMENT_PREFIX)).map((f) => f.path.slice(ATTACHMENT_PREFIX.length)));
    const out: string[] = [];
    for (const id of ids) if (!inArchive.has(id)) out.push(`attachments/${id}: the database names it but the archive lacks it`);
    return out;
  } catch (e) {
    return [`app.db: ${(e as Error).message}`];
  } finally {
    db.close(false);
  }
}
