import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { newId } from "../../core/ids";
import { ATTACHMENT_PREFIX, DB_ENTRY, SECRET_ENTRY } from "./snapshot.manifest";
import { verifySnapshot, type VerifiedSnapshot } from "./snapshot.verify";
import { syncDirectory } from "./snapshot.write";

/**
 * Restores a whole instance from a snapshot into a data directory no server runs on (the caller
 * holds the directory's lock). The archive is verified while its entries are extracted into
 * `<data>/.restore-<id>/`; only a snapshot that passed every check replaces anything. What the
 * directory held before (database with its WAL, secret, attachments) is moved, not deleted, to
 * `<data>/pre-restore-<time>/`, so a restore of the wrong file can be undone by hand.
 */

/** What a data directory holds that a snapshot replaces. */
const INSTANCE_FILES = ["app.db", "app.db-wal", "app.db-shm", "secret.key", "attachments"] as const;

export interface RestoredSnapshot extends VerifiedSnapshot {
  /** Where the previous contents went (null: the directory held none). */
  previous: string | null;
}

export function restoreSnapshot(archive: string, dataDir: string, now: Date): RestoredSnapshot {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const stage = join(dataDir, `.restore-${newId()}`);
  mkdirSync(join(stage, "attachments"), { recursive: true, mode: 0o700 });
  try {
    let fd = -1;
    const pathOf = (name: string) => {
      if (name === DB_ENTRY) return join(stage, "app.db");
      if (name === SECRET_ENTRY) return join(stage, "secret.key");
      if (name.startsWith(ATTACHMENT_PREFIX)) return join(stage, "attachments", name.slice(ATTACHMENT_PREFIX.length));
      throw new Error(`unexpected entry ${name}`);
    };
    const verified = verifySnapshot(archive, join(stage, "verify"), {
      begin: (name) => {
        fd = openSync(pathOf(name), "w", 0o600);
      },
      data: (chunk) => {
        let off = 0;
        while (off < chunk.byteLength) off += writeSync(fd, chunk, off, chunk.byteLength - off);
      },
      end: () => {
        fsyncSync(fd);
        closeSync(fd);
        fd = -1;
      },
    });
    if (fd >= 0) closeSync(fd);
    syncDirectory(join(stage, "attachments"));
    // Everything checked and on disk: move the old instance aside, the new one in.
    const present = INSTANCE_FILES.filter((f) => existsSync(join(dataDir, f)));
    let previous: string | null = null;
    if (present.length) {
      previous = join(dataDir, `pre-restore-${now.toISOString().replace(/[-:]/g, "").replace(/\.\d{3}Z$/, "Z")}`);
      mkdirSync(previous, { recursive: true, mode: 0o700 });
      for (const f of present) renameSync(join(dataDir, f), join(previous, f));
    }
    for (const f of ["app.db", "secret.key", "attachments"]) if (existsSync(join(stage, f))) renameSync(join(stage, f), join(dataDir, f));
    syncDirectory(dataDir);
    return { ...verified, previous };
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

/** Leftovers of restores a kill interrupted (never the instance itself): removed by the next restore or doctor --fix. */
export function restoreLeftovers(dataDir: string): string[] {
  try {
    return readdirSync(dataDir).filter((n) => n.startsWith(".restore-"));
  } catch {
    return [];
  }
}
