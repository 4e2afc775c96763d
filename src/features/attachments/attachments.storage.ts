import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, statSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";
import { isStorageFull, storageFull } from "../../core/errors";
import { newId } from "../../core/ids";

/**
 * Where attachment bytes live: `<data>/attachments/<attachment id>` (a server-chosen name), and
 * uploads in progress in `<data>/tmp/attachments/` on the same file system, so the final move is
 * an atomic rename. Nothing else in this feature touches the file system.
 */
export class AttachmentStorage {
  readonly dir: string;
  readonly tmpDir: string;

  constructor(dataDir: string) {
    this.dir = join(dataDir, "attachments");
    this.tmpDir = join(dataDir, "tmp", "attachments");
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    mkdirSync(this.tmpDir, { recursive: true, mode: 0o700 });
  }

  pathOf(id: string): string {
    // Ids are UUIDs we made; refuse anything else rather than ever joining a foreign string.
    if (!/^[0-9a-f-]{36}$/.test(id)) throw new Error("not an attachment id");
    return join(this.dir, id);
  }

  /** A new temporary file, created exclusively (0600). */
  createTemp(): TempFile {
    const path = join(this.tmpDir, `${newId()}.part`);
    const fd = openSync(path, "wx", 0o600);
    return new TempFile(path, fd);
  }

  /** Moves a finished temporary file into place under the attachment's id (atomic). */
  commit(temp: TempFile, id: string): void {
    renameSync(temp.path, this.pathOf(id));
    temp.renamed = true;
  }

  /** Makes the renames durable (best effort: some file systems refuse fsync on a directory). */
  syncDir(): void {
    try {
      const fd = openSync(this.dir, "r");
      try {
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
    } catch {
      /* durability of the rename is best effort */
    }
  }

  /** Removes a stored file; a file already gone is fine. */
  remove(id: string): void {
    try {
      unlinkSync(this.pathOf(id));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
    }
  }

  exists(id: string): boolean {
    try {
      return statSync(this.pathOf(id)).isFile();
    } catch {
      return false;
    }
  }

  /** Names in the attachment directory (ids, and anything else that does not belong there). */
  storedNames(): string[] {
    return readdirSync(this.dir);
  }

  removeName(name: string): void {
    rmSync(join(this.dir, name), { force: true, recursive: true });
  }

  /** Removes every leftover temporary file (only at start-up: no upload is in flight). */
  clearTemp(): number {
    let n = 0;
    for (const name of readdirSync(this.tmpDir)) {
      rmSync(join(this.tmpDir, name), { force: true, recursive: true });
      n++;
    }
    return n;
  }
}

/** "Disk full" (or a file-size limit) is the operator's problem, said plainly (its cause logged); anything else stays internal. */
const NO_SPACE = "the server has no space left for this file; nothing was stored";

/** A file being written. Write errors that mean "no space" (core/errors.ts isStorageFull) become 507 storage_full. */
export class TempFile {
  renamed = false;
  private open = true;

  constructor(
    readonly path: string,
    private readonly fd: number,
  ) {}

  write(chunk: Uint8Array): void {
    let off = 0;
    try {
      while (off < chunk.byteLength) off += writeSync(this.fd, chunk, off, chunk.byteLength - off);
    } catch (e) {
      if (isStorageFull(e)) throw storageFull(NO_SPACE, e);
      throw e;
    }
  }

  /** Flushes to disk and closes. */
  finish(): void {
    try {
      fsyncSync(this.fd);
    } catch (e) {
      if (isStorageFull(e)) throw storageFull(NO_SPACE, e);
      throw e;
    } finally {
      this.close();
    }
  }

  private close(): void {
    if (!this.open) return;
    this.open = false;
    try {
      closeSync(this.fd);
    } catch {
      /* already unusable */
    }
  }

  /** Closes and deletes the file unless it was moved into place. */
  discard(): void {
    this.close();
    if (this.renamed) return;
    try {
      unlinkSync(this.path);
    } catch {
      /* already gone */
    }
  }
}
