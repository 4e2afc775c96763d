import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { newId } from "../../core/ids";
import { failpoint } from "../backup/backup.files";
import { ATTACHMENT_PREFIX, DB_ENTRY, RESTORE_JOURNAL, SECRET_ENTRY } from "./snapshot.manifest";
import { verifySnapshot, type VerifiedSnapshot } from "./snapshot.verify";
import { syncDirectory } from "./snapshot.write";

/**
 * Restores a whole instance from a snapshot into a data directory no server runs on (the caller
 * holds the directory's lock). The archive is verified while its entries are extracted into
 * `<data>/.restore-<id>/`; only a snapshot that passed every check replaces anything. What the
 * directory held before (database with its WAL, secret, attachments) is moved, not deleted, to
 * `<data>/pre-restore-<time>/`, so a restore of the wrong file can be undone by hand.
 *
 * The swap (several renames) is journaled: `<data>/restore-journal.json` is written before the
 * first rename and removed after the last. A restore killed in between leaves the journal; the
 * server refuses to start on it (a database without its attachments would have them swept away),
 * and the next `app restore` finishes the swap first. Every step of the swap can be repeated.
 */

export { RESTORE_JOURNAL };

/** What a data directory holds that a snapshot replaces, in the order they are swapped. */
const REPLACED = ["app.db", "secret.key", "attachments"] as const;
/** The database's companions: they belong to the old database and go with it. */
const OLD_ONLY = ["app.db-wal", "app.db-shm"] as const;

interface Journal {
  archive: string;
  stage: string;
  previous: string;
}

export interface RestoredSnapshot extends VerifiedSnapshot {
  /** Where the previous contents went (null: the directory held none). */
  previous: string | null;
}

/** The interrupted restore's journal in `dataDir`, or null. */
export function pendingRestore(dataDir: string): Journal | null {
  const p = join(dataDir, RESTORE_JOURNAL);
  if (!existsSync(p)) return null;
  return JSON.parse(readFileSync(p, "utf8")) as Journal;
}

/** Copies the old database's WAL into it, so it is whole on its own when moved aside. */
function checkpointOld(dataDir: string): void {
  const path = join(dataDir, "app.db");
  if (!existsSync(path)) return;
  const db = new Database(path);
  try {
    db.run("PRAGMA wal_checkpoint(TRUNCATE)");
  } finally {
    db.close(false);
  }
}

/** Moves the old instance aside and the staged one in; safe to run again after a kill at any point. */
function swap(dataDir: string, j: Journal): boolean {
  let movedOld = false;
  mkdirSync(j.previous, { recursive: true, mode: 0o700 });
  for (const f of OLD_ONLY) {
    if (existsSync(join(dataDir, f))) {
      renameSync(join(dataDir, f), join(j.previous, f));
      movedOld = true;
    }
  }
  for (const f of REPLACED) {
    const staged = join(j.stage, f);
    if (!existsSync(staged)) continue; // swapped already (or not in the snapshot: the secret of a very old one)
    const current = join(dataDir, f);
    if (existsSync(current) && !existsSync(join(j.previous, f))) {
      renameSync(current, join(j.previous, f));
      movedOld = true;
    }
    if (existsSync(current)) rmSync(current, { recursive: true, force: true }); // a half-finished earlier swap's copy
    failpoint("restore.mid-swap");
    renameSync(staged, current);
  }
  syncDirectory(dataDir);
  return movedOld || readdirSync(j.previous).length > 0;
}

function finish(dataDir: string, j: Journal): boolean {
  const movedOld = swap(dataDir, j);
  rmSync(join(dataDir, RESTORE_JOURNAL), { force: true });
  syncDirectory(dataDir);
  rmSync(j.stage, { recursive: true, force: true });
  if (!movedOld) rmSync(j.previous, { recursive: true, force: true });
  return movedOld;
}

/** Finishes an interrupted restore; returns its journal (null when there was none). */
export function finishPendingRestore(dataDir: string): Journal | null {
  const j = pendingRestore(dataDir);
  if (!j) return null;
  finish(dataDir, j);
  return j;
}

export function restoreSnapshot(archive: string, dataDir: string, now: Date): RestoredSnapshot {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const stage = join(dataDir, `.restore-${newId()}`);
  mkdirSync(join(stage, "attachments"), { recursive: true, mode: 0o700 });
  let journaled = false;
  try {
    let fd = -1;
    // The users' own archives (users/<id>.zip) are checked, not extracted: the instance holds their data already.
    const pathOf = (name: string) => {
      if (name === DB_ENTRY) return join(stage, "app.db");
      if (name === SECRET_ENTRY) return join(stage, "secret.key");
      if (name.startsWith(ATTACHMENT_PREFIX)) return join(stage, "attachments", name.slice(ATTACHMENT_PREFIX.length));
      return null;
    };
    const verified = verifySnapshot(archive, join(stage, "verify"), {
      begin: (name) => {
        const p = pathOf(name);
        fd = p === null ? -1 : openSync(p, "w", 0o600);
      },
      data: (chunk) => {
        if (fd < 0) return;
        let off = 0;
        while (off < chunk.byteLength) off += writeSync(fd, chunk, off, chunk.byteLength - off);
      },
      end: () => {
        if (fd < 0) return;
        fsyncSync(fd);
        closeSync(fd);
        fd = -1;
      },
    });
    if (fd >= 0) closeSync(fd);
    syncDirectory(join(stage, "attachments"));
    syncDirectory(stage);
    // Everything checked and on disk: journal the swap, then move the old instance aside, the new one in.
    checkpointOld(dataDir);
    const j: Journal = { archive, stage, previous: join(dataDir, `pre-restore-${now.toISOString().replace(/[-:]/g, "").replace(/\.\d{3}Z$/, "Z")}`) };
    const jp = join(dataDir, RESTORE_JOURNAL);
    writeFileSync(`${jp}.part`, JSON.stringify(j), { mode: 0o600 });
    const jfd = openSync(`${jp}.part`, "r");
    fsyncSync(jfd);
    closeSync(jfd);
    renameSync(`${jp}.part`, jp);
    syncDirectory(dataDir);
    journaled = true;
    const movedOld = finish(dataDir, j);
    return { ...verified, previous: movedOld ? j.previous : null };
  } finally {
    // Once journaled, the stage is the journal's: a failed swap is finished by the next restore.
    if (!journaled) rmSync(stage, { recursive: true, force: true });
  }
}

/** Leftovers of restores a kill interrupted before their journal (never the instance itself). */
export function restoreLeftovers(dataDir: string): string[] {
  const pending = pendingRestore(dataDir);
  try {
    return readdirSync(dataDir).filter((n) => n.startsWith(".restore-") && (!pending || join(dataDir, n) !== pending.stage));
  } catch {
    return [];
  }
}
