import { Database } from "bun:sqlite";
import { drizzle, type BunSQLiteDatabase } from "drizzle-orm/bun-sqlite";
import * as schema from "./schema";
import { embeddedMigrations } from "../../migrations";

export type Orm = BunSQLiteDatabase<typeof schema>;
/** What a repository takes as its first parameter: the database or an open transaction. */
export type Tx = Orm | Parameters<Parameters<Orm["transaction"]>[0]>[0];

export interface Db {
  /** Raw bun:sqlite handle, for prepared statements on hot paths. */
  sqlite: Database;
  orm: Orm;
  path: string;
  close(): void;
}

export class DatabaseError extends Error {}

/**
 * How long a connection waits for a write lock another connection holds. bun:sqlite waits
 * synchronously, so on the connection that serves requests a wait blocks every request: it waits
 * a few milliseconds (long enough for another connection's short commit, fsync included on a
 * fast disk) and a write that still finds the lock taken (a restore in the job worker holds it for
 * seconds) fails at once with SQLITE_BUSY, which core/problem.ts answers as 503 busy with
 * Retry-After. Start-up, the CLI and the job worker serve no one while they wait: they wait longer.
 */
export const SERVING_BUSY_TIMEOUT_MS = 10;
export const DEFAULT_BUSY_TIMEOUT_MS = 5000;

/** Sets how long `db` waits for another connection's write lock (see SERVING_BUSY_TIMEOUT_MS). */
export function setBusyTimeout(db: Db, ms: number): void {
  db.sqlite.run(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(ms))}`);
}

/** Opens (creating if needed) the database file and applies the connection settings. */
export function openDatabase(path: string): Db {
  let sqlite: Database;
  try {
    sqlite = new Database(path, { create: true, strict: true });
  } catch (e) {
    throw new DatabaseError(`cannot open database ${path}: ${(e as Error).message}`);
  }
  try {
    // Reading the header proves the file is SQLite before anything is written to it.
    sqlite.query("SELECT count(*) FROM sqlite_master").get();
  } catch (e) {
    sqlite.close();
    throw new DatabaseError(`${path} is not a usable SQLite database: ${(e as Error).message}`);
  }
  // WAL: readers never block the writer, and a crash never leaves a half-written page.
  sqlite.run("PRAGMA journal_mode = WAL");
  // FULL: fsync the WAL on every commit; a personal task list must not lose a commit on power loss.
  sqlite.run("PRAGMA synchronous = FULL");
  // Wait for a lock held by another connection (reset-password, the job worker) instead of failing
  // at once; the serving connection waits much less (SERVING_BUSY_TIMEOUT_MS, set by createApp).
  sqlite.run(`PRAGMA busy_timeout = ${DEFAULT_BUSY_TIMEOUT_MS}`);
  sqlite.run("PRAGMA foreign_keys = ON");
  // Keep temporary b-trees in memory; sorts of a page are small.
  sqlite.run("PRAGMA temp_store = MEMORY");
  // PRAGMA optimize (hourly and at close) samples at most this many rows per index: milliseconds, not a full ANALYZE.
  sqlite.run("PRAGMA analysis_limit = 1000");
  const orm = drizzle({ client: sqlite, schema });
  return {
    sqlite,
    orm,
    path,
    close() {
      try {
        sqlite.run("PRAGMA optimize");
      } catch {
        /* closing anyway */
      }
      sqlite.close(false);
    },
  };
}

/** Number of migrations this build knows; stored in PRAGMA user_version after migrating. */
export const SCHEMA_VERSION = embeddedMigrations.length;

/**
 * Applies the embedded migrations. Foreign keys are off while they run (a table rebuild must
 * not cascade), checked with foreign_key_check afterwards, then back on.
 */
export function migrate(db: Db): void {
  const current = (db.sqlite.query("PRAGMA user_version").get() as { user_version: number }).user_version;
  if (current > SCHEMA_VERSION) {
    throw new DatabaseError(
      `the database was written by a newer version of app (schema ${current}, this build knows ${SCHEMA_VERSION}); refusing to start`,
    );
  }
  const migrations = embeddedMigrations.map((m) => ({
    sql: m.sql.split("--> statement-breakpoint"),
    bps: m.breakpoints,
    folderMillis: m.when,
    hash: new Bun.CryptoHasher("sha256").update(m.sql).digest("hex"),
  }));
  db.sqlite.run("PRAGMA foreign_keys = OFF");
  try {
    // drizzle's own migrator, fed from the embedded files instead of the file system.
    (db.orm as unknown as { dialect: { migrate: (m: unknown, s: unknown, c: unknown) => void }; session: unknown }).dialect.migrate(
      migrations,
      (db.orm as unknown as { session: unknown }).session,
      {},
    );
    const broken = db.sqlite.query("PRAGMA foreign_key_check").all();
    if (broken.length > 0) throw new DatabaseError(`foreign key check failed after migration: ${JSON.stringify(broken.slice(0, 5))}`);
    db.sqlite.run(`PRAGMA user_version = ${SCHEMA_VERSION}`);
  } finally {
    db.sqlite.run("PRAGMA foreign_keys = ON");
  }
}

/**
 * Runs `fn` in a BEGIN IMMEDIATE transaction. The callback must be synchronous: with bun:sqlite an
 * async callback would commit at its first await even if it throws later, so a promise is refused
 * (and the transaction rolled back).
 */
export function writeTx<T>(db: Db, fn: (tx: Tx) => T): T {
  return db.orm.transaction(
    (tx) => {
      const result = fn(tx);
      if (result && typeof (result as { then?: unknown }).then === "function") {
        throw new Error("writeTx callback returned a promise; transaction callbacks must be synchronous");
      }
      return result;
    },
    { behavior: "immediate" },
  );
}

/** A read transaction: one consistent snapshot for several queries. */
export function readTx<T>(db: Db, fn: (tx: Tx) => T): T {
  return db.orm.transaction(
    (tx) => {
      const result = fn(tx);
      if (result && typeof (result as { then?: unknown }).then === "function") {
        throw new Error("readTx callback returned a promise; transaction callbacks must be synchronous");
      }
      return result;
    },
    { behavior: "deferred" },
  );
}

/**
 * readTx for raw-statement reads on hot paths (task pages): the same one-snapshot read, opened
 * with bun:sqlite statements instead of a drizzle transaction (which builds a new drizzle
 * database object, relational query builders included, on every call: ~5% of a task page's
 * time under load). The callback gets no `tx`: it must use `db.sqlite` statements. Inside an
 * open transaction it simply runs in that one.
 */
export function readSnapshot<T>(db: Db, fn: () => T): T {
  const s = db.sqlite;
  if (s.inTransaction) return fn();
  s.query("BEGIN").run();
  try {
    const result = fn();
    if (result && typeof (result as { then?: unknown }).then === "function") {
      throw new Error("readSnapshot callback returned a promise; transaction callbacks must be synchronous");
    }
    s.query("COMMIT").run();
    return result;
  } catch (e) {
    if (s.inTransaction) s.query("ROLLBACK").run();
    throw e;
  }
}

/**
 * Rows changed by a drizzle `.run()`. bun:sqlite returns `Changes` at run time, but drizzle types
 * the result of its bun-sqlite driver as `void`, hence the cast.
 */
export function changes(result: unknown): number {
  return (result as { changes?: number } | undefined)?.changes ?? 0;
}

/**
 * The bun:sqlite connection behind a drizzle database or transaction, for prepared statements on
 * hot paths (drizzle's query builder costs ~40 µs per call in building and mapping; a cached
 * `Database#query` statement a few µs). It is the same connection, so inside a transaction the
 * statement sees the transaction's writes.
 */
export function sqliteOf(tx: Tx): Database {
  return (tx as unknown as { session: { client: Database } }).session.client;
}
