import { Database } from "bun:sqlite";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";

/**
 * The data directory's "a server runs here" lock: `<data>/server.lock`, a tiny SQLite file in which
 * the server keeps a write transaction open for as long as it runs. SQLite's lock is an fcntl lock
 * the kernel drops when the process ends, however it ends (kill -9, power loss): there is no stale
 * pid file to clean up, and a second server or an offline-only operator command (restore, users
 * disable) sees at once that the directory is in use. Online-safe commands (backup, verify, doctor)
 * do not take it.
 */
export const LOCK_FILE = "server.lock";

export class DataDirLocked extends Error {
  constructor(dir: string) {
    super(`a server is running on ${dir} (it holds ${join(dir, LOCK_FILE)}); stop it first`);
    this.name = "DataDirLocked";
  }
}

export interface DataDirLock {
  release(): void;
}

/** Takes the lock or throws DataDirLocked at once (never waits). */
export function lockDataDir(dir: string): DataDirLock {
  try {
    return tryLock(dir);
  } catch (e) {
    // A lock file a crash left unreadable (only possible while it was first created): made again.
    const code = String((e as { code?: string }).code ?? "");
    if (code !== "SQLITE_CORRUPT" && code !== "SQLITE_NOTADB") throw e;
    rmSync(join(dir, LOCK_FILE), { force: true });
    return tryLock(dir);
  }
}

function tryLock(dir: string): DataDirLock {
  const db = new Database(join(dir, LOCK_FILE), { create: true });
  try {
    db.run("PRAGMA busy_timeout = 0");
    // A rollback journal kept in memory (not WAL, no -journal file beside it): the write transaction
    // below then holds the file's exclusive lock, and never writes the file (nothing is committed).
    db.run("PRAGMA journal_mode = MEMORY");
    db.run("CREATE TABLE IF NOT EXISTS holder (pid INTEGER, since TEXT)");
    db.run("BEGIN EXCLUSIVE");
    // A write inside the transaction is what makes SQLite take the lock on the file for certain.
    db.run("DELETE FROM holder");
    db.run("INSERT INTO holder VALUES (?, ?)", [process.pid, new Date().toISOString()]);
  } catch (e) {
    db.close(false);
    if (String((e as { code?: string }).code ?? "").startsWith("SQLITE_BUSY") || /locked|busy/i.test((e as Error).message)) throw new DataDirLocked(dir);
    throw e;
  }
  return {
    release: () => {
      try {
        db.run("ROLLBACK");
      } catch {
        /* ended already */
      }
      db.close(false);
    },
  };
}

/** Whether a server holds `dir` now (false when there is no lock file). */
export function dataDirInUse(dir: string): boolean {
  if (!existsSync(join(dir, LOCK_FILE))) return false;
  try {
    lockDataDir(dir).release();
    return false;
  } catch (e) {
    if (e instanceof DataDirLocked) return true;
    throw e;
  }
}
