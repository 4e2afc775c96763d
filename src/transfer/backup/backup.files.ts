import { closeSync, existsSync, fsyncSync, linkSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * The backup's places in the data directory, all on the attachments' file system so that every
 * move is an atomic rename:
 *   backup/staging/<preflight id>.zip      uploaded archives waiting for restore (.part while uploading)
 *   backup/restores/<restore id>/           one restore in flight: journal.json, staging/ (new
 *                                           attachment files), quarantine/ (the replaced ones)
 *   backup/exports/<export id>/             hard links of an export's attachment files (its snapshot)
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Large files the backup writes (a staged upload, a restore's attachment files) are flushed to disk
 * every this many bytes: a gigabyte of dirty pages would make every other user's commit (an fsync
 * on the serving thread, synchronous=FULL) wait behind its writeback, a stall of everyone.
 */
export const FLUSH_EVERY_BYTES = 64 * 1024 * 1024;

export interface RestoreJournal {
  restoreId: string;
  userId: string;
  preflightId: string;
  /** Attachment ids extracted to staging/ (placed after commit when their row exists). */
  staged: string[];
  /** Attachment ids moved to quarantine/ (put back if the import did not commit). */
  quarantined: string[];
}

/** An attachment's row is in the snapshot but its file is not in the attachment directory. */
export class AttachmentFileMissing extends Error {
  constructor(
    readonly attachmentId: string,
    cause: unknown,
  ) {
    super(`the file of attachment ${attachmentId} is missing`, { cause });
    this.name = "AttachmentFileMissing";
  }
}

export class BackupFiles {
  readonly root: string;
  readonly stagingDir: string;
  readonly restoresDir: string;
  readonly exportsDir: string;
  readonly attachmentsDir: string;

  constructor(dataDir: string) {
    this.root = join(dataDir, "backup");
    this.stagingDir = join(this.root, "staging");
    this.restoresDir = join(this.root, "restores");
    this.exportsDir = join(this.root, "exports");
    this.attachmentsDir = join(dataDir, "attachments");
    for (const d of [this.stagingDir, this.restoresDir, this.exportsDir, this.attachmentsDir]) mkdirSync(d, { recursive: true, mode: 0o700 });
  }

  attachment(id: string): string {
    if (!UUID.test(id)) throw new Error("not an attachment id");
    return join(this.attachmentsDir, id);
  }

  staged(preflightId: string): string {
    return join(this.stagingDir, `${preflightId}.zip`);
  }

  stagingPart(preflightId: string): string {
    return join(this.stagingDir, `${preflightId}.zip.part`);
  }

  removeStagingPart(preflightId: string): void {
    rmSync(this.stagingPart(preflightId), { force: true });
  }

  removeStaged(preflightId: string): void {
    rmSync(this.staged(preflightId), { force: true });
    rmSync(this.stagingPart(preflightId), { force: true });
  }

  /** Staged archive ids present on disk (finished uploads only). */
  stagedIds(): string[] {
    return readdirSync(this.stagingDir)
      .filter((n) => n.endsWith(".zip"))
      .map((n) => n.slice(0, -4));
  }

  /** Removes every staged file not in `keep` (start-up: unfinished uploads and orphans). */
  sweepStaging(keep: Set<string>): void {
    for (const n of readdirSync(this.stagingDir)) {
      const id = n.endsWith(".zip") ? n.slice(0, -4) : null;
      if (id && keep.has(id)) continue;
      rmSync(join(this.stagingDir, n), { force: true, recursive: true });
    }
  }

  // ---- restores ----

  restoreDir(restoreId: string): string {
    return join(this.restoresDir, restoreId);
  }

  restoreStaging(restoreId: string, id: string): string {
    if (!UUID.test(id)) throw new Error("not an attachment id");
    return join(this.restoresDir, restoreId, "staging", id);
  }

  restoreQuarantine(restoreId: string, id: string): string {
    if (!UUID.test(id)) throw new Error("not an attachment id");
    return join(this.restoresDir, restoreId, "quarantine", id);
  }

  /** Creates the restore's directory and writes its journal durably (before any file moves). */
  beginRestore(j: RestoreJournal): void {
    const dir = this.restoreDir(j.restoreId);
    mkdirSync(join(dir, "staging"), { recursive: true, mode: 0o700 });
    mkdirSync(join(dir, "quarantine"), { recursive: true, mode: 0o700 });
    this.writeJournal(j);
  }

  writeJournal(j: RestoreJournal): void {
    const dir = this.restoreDir(j.restoreId);
    const tmp = join(dir, "journal.json.tmp");
    writeFileSync(tmp, JSON.stringify(j));
    fsyncPath(tmp);
    renameSync(tmp, join(dir, "journal.json"));
    fsyncPath(dir);
  }

  readJournal(restoreId: string): RestoreJournal | null {
    try {
      return JSON.parse(readFileSync(join(this.restoreDir(restoreId), "journal.json"), "utf8")) as RestoreJournal;
    } catch {
      return null;
    }
  }

  restoreIds(): string[] {
    return readdirSync(this.restoresDir);
  }

  /** Moves the current files of `ids` into quarantine (a file already gone is skipped). */
  quarantine(restoreId: string, ids: string[]): void {
    for (const id of ids) moveIfPresent(this.attachment(id), this.restoreQuarantine(restoreId, id));
    fsyncPath(this.attachmentsDir);
  }

  /** Rolls a restore that did not commit back: quarantined files return, staged ones go. */
  rollBack(restoreId: string): void {
    const qdir = join(this.restoreDir(restoreId), "quarantine");
    if (existsSync(qdir)) {
      for (const id of readdirSync(qdir)) {
        if (UUID.test(id)) moveIfPresent(join(qdir, id), this.attachment(id));
      }
    }
    fsyncPath(this.attachmentsDir);
    rmSync(this.restoreDir(restoreId), { recursive: true, force: true });
  }

  /**
   * Rolls a committed restore forward: staged files whose row exists go into place, quarantined
   * files are deleted, the directory goes. `placeable` says whether an id has a row now.
   */
  rollForward(restoreId: string, placeable: (id: string) => boolean, duringCleanup?: () => void): void {
    const sdir = join(this.restoreDir(restoreId), "staging");
    if (existsSync(sdir)) {
      for (const id of readdirSync(sdir)) {
        if (UUID.test(id) && placeable(id)) moveIfPresent(join(sdir, id), this.attachment(id));
      }
    }
    fsyncPath(this.attachmentsDir);
    const qdir = join(this.restoreDir(restoreId), "quarantine");
    if (existsSync(qdir)) {
      for (const id of readdirSync(qdir)) {
        unlinkSync(join(qdir, id));
        duringCleanup?.();
      }
    }
    rmSync(this.restoreDir(restoreId), { recursive: true, force: true });
  }

  // ---- exports ----

  /**
   * Hard-links the attachment files of an export into its own directory: a snapshot that a purge
   * cannot remove. An attachment whose file is not there is AttachmentFileMissing; any other
   * failure (a full disk, a permission) is thrown as it came.
   */
  linkForExport(exportId: string, ids: string[]): string {
    const dir = join(this.exportsDir, exportId);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    for (const id of ids) {
      const source = this.attachment(id);
      try {
        linkSync(source, join(dir, id));
      } catch (e) {
        // ENOENT names the source even when the target's directory is what is missing: look.
        if ((e as NodeJS.ErrnoException).code === "ENOENT" && !existsSync(source)) throw new AttachmentFileMissing(id, e);
        throw e;
      }
    }
    return dir;
  }

  removeExport(exportId: string): void {
    rmSync(join(this.exportsDir, exportId), { recursive: true, force: true });
  }

  /** Start-up: no export is running, so every link directory is a leftover. */
  sweepExports(): void {
    for (const n of readdirSync(this.exportsDir)) rmSync(join(this.exportsDir, n), { recursive: true, force: true });
  }
}

function moveIfPresent(from: string, to: string): void {
  try {
    renameSync(from, to);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
  }
}

/** fsync a file or directory (best effort for directories: some file systems refuse). */
export function fsyncPath(path: string): void {
  try {
    const fd = openSync(path, "r");
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    /* durability of a directory entry is best effort */
  }
}

/** The failpoints of the fault tests (core/failpoint.ts; reminders' deliveries use them too). */
export { failpoint } from "../../core/failpoint";
