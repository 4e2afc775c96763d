import { Database } from "bun:sqlite";
import { Zip, ZipDeflate, ZipPassThrough } from "fflate";
import { closeSync, existsSync, fsyncSync, linkSync, mkdirSync, openSync, readSync, renameSync, rmSync, statfsSync, statSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { DEFAULT_BUSY_TIMEOUT_MS } from "../../core/db";
import { newId } from "../../core/ids";
import { allIds } from "../../features/attachments/attachments.repo";
import { connOf } from "./snapshot.conn";
import { failpoint } from "../backup/backup.files";
import { ATTACHMENT_PREFIX, DB_ENTRY, MANIFEST_ENTRY, SECRET_ENTRY, SNAPSHOT_FORMAT, SNAPSHOT_FORMAT_VERSION, type Manifest, type ManifestFile } from "./snapshot.manifest";
import { verifySnapshot, type VerifiedSnapshot } from "./snapshot.verify";

/**
 * Writes a whole-instance snapshot: the database copied with `VACUUM INTO` (SQLite's own online
 * copy: one consistent read transaction, never a copy of a live file that may be mid-commit), the
 * server secret and every attachment file the copied database names, in one ZIP with a manifest of
 * SHA-256s. The archive is written under a temporary name beside its destination, fsynced, read
 * back and verified (snapshot.verify.ts), and only then renamed to its final name: a name without
 * `.part` is a verified snapshot, whatever kill or full disk interrupts the work.
 *
 * Synchronous on purpose: the server runs it in the job worker (bun:sqlite and file I/O would block
 * the serving thread), the operator CLI runs it directly.
 */

/** fflate writes no ZIP64 records: the archive must stay below 4 GiB. */
export const ZIP32_LIMIT = 0xffffffff;
const HEADROOM = 64 * 1024 * 1024;
const CHUNK = 1024 * 1024;
/** Attachment files deleted between the database copy and their hard links: the whole copy is taken again. */
const ATTEMPTS = 3;

export class SnapshotError extends Error {
  constructor(
    message: string,
    readonly reason: "too_large" | "files_changed" | "no_database" | "verify_failed" | "write_failed",
    cause?: unknown,
  ) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "SnapshotError";
  }
}

export interface SnapshotOptions {
  dataDir: string;
  /** Where the finished snapshot goes (its directory must exist). */
  outPath: string;
  now: Date;
  appVersion: string;
  /** Files added as they are (stored): each user's app-backup v2 archive, written beforehand by the caller. */
  extra?: { entry: string; path: string }[];
}

export interface WrittenSnapshot extends VerifiedSnapshot {
  path: string;
}

/** The partial name of a snapshot being written (removed or left for the next run to remove; never counted). */
export function partPathOf(outPath: string): string {
  return join(dirname(outPath), `.${basename(outPath)}.part`);
}

function openSource(dbPath: string): Database {
  if (!existsSync(dbPath)) throw new SnapshotError(`no database at ${dbPath}`, "no_database");
  const s = new Database(dbPath, { readwrite: true, create: false });
  s.run(`PRAGMA busy_timeout = ${DEFAULT_BUSY_TIMEOUT_MS}`);
  return s;
}

/**
 * SQLite reports a write that found the disk full during VACUUM INTO as SQLITE_FULL or, depending on
 * where it failed, a plain I/O error; the free space tells them apart.
 */
function asNoSpace(e: unknown, src: Database, work: string): unknown {
  const code = String((e as { code?: unknown }).code ?? "");
  if (!code.startsWith("SQLITE_IOERR") && code !== "SQLITE_FULL") return e;
  try {
    const { page_count } = src.query("PRAGMA page_count").get() as { page_count: number };
    const { page_size } = src.query("PRAGMA page_size").get() as { page_size: number };
    const fs = statfsSync(work);
    if (code === "SQLITE_FULL" || Number(fs.bavail) * Number(fs.bsize) < page_count * page_size) {
      return Object.assign(new Error(`no space left for the database copy: ${(e as Error).message}`), { code: "ENOSPC" });
    }
  } catch {
    /* keep the original error */
  }
  return e;
}

/** Copies the database and hard-links the attachment files it names into `work/`. Returns the ids linked. */
function copyInstance(dataDir: string, work: string): string[] {
  const dbCopy = join(work, DB_ENTRY);
  for (let attempt = 1; ; attempt++) {
    rmSync(dbCopy, { force: true });
    rmSync(join(work, "attachments"), { recursive: true, force: true });
    mkdirSync(join(work, "attachments"), { recursive: true, mode: 0o700 });
    const src = openSource(join(dataDir, "app.db"));
    try {
      src.run("VACUUM INTO ?", [dbCopy]);
    } catch (e) {
      throw asNoSpace(e, src, work);
    } finally {
      src.close(false);
    }
    failpoint("snapshot.after-copy");
    const copy = new Database(dbCopy, { readonly: true });
    let ids: string[];
    try {
      ids = allIds(connOf(copy));
    } finally {
      copy.close(false);
    }
    let missing = false;
    for (const id of ids) {
      try {
        linkSync(join(dataDir, "attachments", id), join(work, "attachments", id));
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
        missing = true;
        break;
      }
    }
    if (!missing) return ids;
    if (attempt >= ATTEMPTS) throw new SnapshotError("attachment files kept disappearing while the snapshot was taken; try again", "files_changed");
  }
}

/** Writes the archive of `work/` to `partPath`, fsynced. */
function writeArchive(work: string, dataDir: string, ids: string[], partPath: string, opts: SnapshotOptions, schemaVersion: number): void {
  const fd = openSync(partPath, "w", 0o600);
  let failure: unknown = null;
  let written = 0;
  try {
    const zip = new Zip((err, chunk, _final) => {
      if (failure) return;
      if (err) {
        failure = err;
        return;
      }
      try {
        let off = 0;
        while (off < chunk.byteLength) off += writeSync(fd, chunk, off, chunk.byteLength - off);
        written += chunk.byteLength;
      } catch (e) {
        failure = e;
      }
    });
    const check = () => {
      if (failure) throw failure;
      if (written > ZIP32_LIMIT - HEADROOM) throw new SnapshotError("the instance is larger than the 4 GiB a snapshot archive can hold", "too_large");
    };
    const files: ManifestFile[] = [];
    const buf = Buffer.allocUnsafe(CHUNK);
    const addFile = (entryName: string, path: string, deflate: boolean) => {
      const entry = deflate ? new ZipDeflate(entryName, { level: 6 }) : new ZipPassThrough(entryName);
      entry.mtime = opts.now;
      zip.add(entry);
      const sha = new Bun.CryptoHasher("sha256");
      let size = 0;
      const src = openSync(path, "r");
      try {
        for (;;) {
          const n = readSync(src, buf, 0, CHUNK, null);
          if (n === 0) break;
          // A copy: fflate may keep the chunk (deflate window) while the buffer is read into again.
          const part = Uint8Array.prototype.slice.call(buf, 0, n);
          sha.update(part);
          size += n;
          entry.push(part, false);
          check();
        }
      } finally {
        closeSync(src);
      }
      entry.push(new Uint8Array(0), true);
      check();
      files.push({ path: entryName, size, sha256: sha.digest("hex") });
    };
    addFile(DB_ENTRY, join(work, DB_ENTRY), true);
    const secret = join(dataDir, "secret.key");
    if (existsSync(secret)) addFile(SECRET_ENTRY, secret, false);
    for (let i = 0; i < ids.length; i++) {
      // Stored: most attachments are compressed already.
      addFile(`${ATTACHMENT_PREFIX}${ids[i]}`, join(work, "attachments", ids[i]!), false);
      if (i === Math.floor(ids.length / 2)) failpoint("snapshot.mid-write");
    }
    failpoint("snapshot.mid-write");
    for (const x of opts.extra ?? []) addFile(x.entry, x.path, false);
    const manifest: Manifest = {
      format: SNAPSHOT_FORMAT,
      format_version: SNAPSHOT_FORMAT_VERSION,
      created_at: opts.now.toISOString(),
      app_version: opts.appVersion,
      schema_version: schemaVersion,
      attachments: ids.length,
      files,
    };
    const m = new ZipDeflate(MANIFEST_ENTRY, { level: 6 });
    m.mtime = opts.now;
    zip.add(m);
    m.push(new TextEncoder().encode(JSON.stringify(manifest, null, 1)), true);
    zip.end();
    check();
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** fsync of a directory, so a rename in it survives a power loss (best effort: some file systems refuse). */
export function syncDirectory(dir: string): void {
  try {
    const fd = openSync(dir, "r");
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    /* best effort */
  }
}

/** Writes, verifies and publishes one snapshot at `opts.outPath`. On any failure nothing is left under the final name or the temporary one. */
export function writeSnapshot(opts: SnapshotOptions): WrittenSnapshot {
  const work = join(opts.dataDir, "backup", "snapshots", newId());
  mkdirSync(work, { recursive: true, mode: 0o700 });
  const partPath = partPathOf(opts.outPath);
  let published = false;
  try {
    const ids = copyInstance(opts.dataDir, work);
    const copy = new Database(join(work, DB_ENTRY), { readonly: true });
    let schemaVersion: number;
    try {
      schemaVersion = (copy.query("PRAGMA user_version").get() as { user_version: number }).user_version;
    } finally {
      copy.close(false);
    }
    writeArchive(work, opts.dataDir, ids, partPath, opts, schemaVersion);
    // Read back from the disk and checked before the name says "good".
    const verified = verifySnapshot(partPath, join(work, "verify"));
    failpoint("snapshot.before-publish");
    renameSync(partPath, opts.outPath);
    published = true;
    syncDirectory(dirname(opts.outPath));
    return { ...verified, path: opts.outPath };
  } finally {
    if (!published) rmSync(partPath, { force: true });
    rmSync(work, { recursive: true, force: true });
  }
}

/** Size of a file, or null when it is not there. */
export function sizeOf(path: string): number | null {
  try {
    return statSync(path).size;
  } catch {
    return null;
  }
}
