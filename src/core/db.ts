import { Database } from "bun:sqlite";
import type { Column } from "drizzle-orm";
import { drizzle } from "drizzle-orm/bun-sqlite";
import type { BaseSQLiteDatabase, SQLiteTable } from "drizzle-orm/sqlite-core";
import * as schema from "./schema";
import { embeddedMigrations } from "../../migrations";

/** drizzle over bun:sqlite with this schema: the root database or an open transaction. */
type Drizzle = BaseSQLiteDatabase<"sync", void, typeof schema>;

/**
 * The one handle a repository function takes as its first parameter: the connection it must use,
 * as the root connection or as an open transaction. It is a drizzle handle (query builder,
 * `run`/`all` of `sql` templates) that also carries the bun:sqlite connection under it, `sqlite`,
 * for cached prepared statements on hot paths (`c.sqlite.query(sql)` compiles each SQL text once;
 * measured 2.7x faster than drizzle's relational queries on task pages). Both sides are the same
 * connection, so inside writeTx a prepared statement sees the transaction's writes, and a repo
 * function may mix them freely.
 *
 * A service opens one transaction per use case (writeTx) and hands its Conn to every repo call;
 * it never writes through the root connection while a transaction of its is open. Reads outside
 * a transaction use the root connection (the Db) or readSnapshot.
 */
export type Conn = Drizzle & {
  /** The bun:sqlite connection this handle runs on. */
  readonly sqlite: Database;
};

/** The opened database file: the root Conn, and what its owner needs to manage it. */
export type Db = Conn & {
  readonly path: string;
  close(): void;
};

/**
 * A row as a raw bun:sqlite statement returns it, typed from the drizzle table: the columns' SQL
 * names, booleans as 0/1, null where the column allows it. The row types of repos that use
 * prepared statements are picked from this, so a schema change shows up in them.
 */
export type SqlRow<T extends SQLiteTable> = {
  [K in keyof T["_"]["columns"] as T["_"]["columns"][K]["_"]["name"]]: SqlValue<T["_"]["columns"][K]>;
};
type SqlValue<C extends Column> = (C["_"]["data"] extends boolean ? number : C["_"]["data"]) | (C["_"]["notNull"] extends true ? never : null);

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

/** Sets how long `c`'s connection waits for another connection's write lock (see SERVING_BUSY_TIMEOUT_MS). */
export function setBusyTimeout(c: Conn, ms: number): void {
  c.sqlite.run(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(ms))}`);
}

/** How much of the database file each connection maps (see openDatabase). */
export const MMAP_BYTES = 256 * 1024 * 1024;

/** Opens (creating if needed) the database file and applies the connection settings. */
export function openDatabase(path: string): Db {
  let sqlite: Database;
  try {
    sqlite = new Database(path, { create: true, strict: true });
  } catch (e) {
    throw new DatabaseError(`cannot open database ${path}: ${(e as Error).message}`);
  }
  try {
    // Wait for a lock held by another connection (reset-password, the job worker, a server closing
    // or checkpointing the file) instead of failing at once — from the very first read: without it
    // a lock held for a moment made the header check below report the file as not SQLite. The
    // serving connection waits much less (SERVING_BUSY_TIMEOUT_MS, set by createApp).
    sqlite.run(`PRAGMA busy_timeout = ${DEFAULT_BUSY_TIMEOUT_MS}`);
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
  sqlite.run("PRAGMA foreign_keys = ON");
  // Keep temporary b-trees in memory; sorts of a page are small.
  sqlite.run("PRAGMA temp_store = MEMORY");
  // PRAGMA optimize (hourly and at close) samples at most this many rows per index: milliseconds, not a full ANALYZE.
  sqlite.run("PRAGMA analysis_limit = 1000");
  // Read the file through a memory map (up to MMAP_BYTES; the rest, and pages still in the WAL,
  // by read()): a page already in the OS cache costs no system call and no copy. Walks that touch
  // many scattered pages (a search over every visible task; a shared list's rows lie among its
  // owner's) took half the time or less at 100,000 tasks (bench/README.md, sharing-ab.ts).
  // SQLite's own page cache stays at its default 2 MiB of heap. Mapped pages show in the process's
  // RSS as file-backed pages the kernel may drop; a cgroup (systemd MemoryMax) charges page cache
  // the same whether read or mapped.
  sqlite.run(`PRAGMA mmap_size = ${MMAP_BYTES}`);
  const orm = drizzle({ client: sqlite, schema });
  const close = () => {
    try {
      sqlite.run("PRAGMA optimize");
    } catch {
      /* closing anyway */
    }
    sqlite.close(false);
  };
  // The drizzle root handle itself becomes the Db: one object, no wrapper to unwrap.
  const db = Object.assign(orm, { sqlite, path, close }) as unknown as Db;
  return db;
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
    (db as unknown as { dialect: { migrate: (m: unknown, s: unknown, c: unknown) => void }; session: unknown }).dialect.migrate(
      migrations,
      (db as unknown as { session: unknown }).session,
      {},
    );
    const broken = db.sqlite.query("PRAGMA foreign_key_check").all();
    if (broken.length > 0) throw new DatabaseError(`foreign key check failed after migration: ${JSON.stringify(broken.slice(0, 5))}`);
    db.sqlite.run(`PRAGMA user_version = ${SCHEMA_VERSION}`);
  } finally {
    db.sqlite.run("PRAGMA foreign_keys = ON");
  }
}

/** The Conn of a drizzle transaction opened on `c`'s connection. */
function txConn(c: Conn, tx: Drizzle): Conn {
  return Object.assign(tx, { sqlite: c.sqlite });
}

function refusePromise(result: unknown, what: string): void {
  if (result && typeof (result as { then?: unknown }).then === "function") {
    throw new Error(`${what} callback returned a promise; transaction callbacks must be synchronous`);
  }
}

/**
 * Work a use case leaves for after its commit, per connection: the queue of the outermost
 * transaction open on it (writeTx/readTx), or none when no transaction of theirs is open.
 */
const afterCommitQueues = new WeakMap<Database, (() => void)[]>();

/**
 * Runs `fn` in a BEGIN IMMEDIATE transaction and hands it the transaction's Conn, which every write
 * of the use case goes through. The callback must be synchronous: with bun:sqlite an async
 * callback would commit at its first await even if it throws later, so a promise is refused (and
 * the transaction rolled back).
 *
 * Called while a transaction is open on the same connection (a use case made of other services'
 * use cases, as a CalDAV PUT is: each service opens its own writeTx), it joins that transaction as
 * a SAVEPOINT: bun:sqlite's Database.transaction, under drizzle's, nests that way (and ignores the
 * behaviour). The inner work commits only with the outer transaction; an inner throw rolls back
 * the inner work alone (ROLLBACK TO) and the caller may catch it and go on. A service's writeTx
 * on its root handle writes through the same connection, so it lands in the outer transaction.
 * What the inner work left for after its commit (afterCommit: events, wake-ups) waits for the
 * outermost commit, and is dropped with a rollback of the transaction or savepoint it was queued in.
 */
export function writeTx<T>(c: Conn, fn: (tx: Conn) => T): T {
  return inTransaction(c, "immediate", fn, "writeTx");
}

/** A read transaction: one consistent snapshot for several queries (inside an open transaction, that one). */
export function readTx<T>(c: Conn, fn: (tx: Conn) => T): T {
  return inTransaction(c, "deferred", fn, "readTx");
}

function inTransaction<T>(c: Conn, behavior: "immediate" | "deferred", fn: (tx: Conn) => T, what: string): T {
  const s = c.sqlite;
  const outer = afterCommitQueues.get(s);
  if (outer !== undefined && s.inTransaction) {
    // Joined as a savepoint: what this level queues is dropped if this level rolls back.
    const mark = outer.length;
    try {
      return c.transaction((tx) => {
        const result = fn(txConn(c, tx));
        refusePromise(result, what);
        return result;
      });
    } catch (e) {
      outer.length = mark;
      throw e;
    }
  }
  const queue: (() => void)[] = [];
  afterCommitQueues.set(s, queue);
  let result: T;
  try {
    result = c.transaction(
      (tx) => {
        const r = fn(txConn(c, tx));
        refusePromise(r, what);
        return r;
      },
      { behavior },
    );
  } finally {
    afterCommitQueues.delete(s);
  }
  // Committed: what waited for it runs now (each callback reports its own failure, see afterCommit).
  for (const cb of queue) cb();
  return result;
}

/**
 * Runs `cb` once the work of the current use case is committed: at once when no transaction is
 * open on `c`'s connection, else after the outermost writeTx/readTx commits, and never if it (or
 * the savepoint `cb` was queued in) rolls back. For what must not be seen before the data is
 * (server-sent events, the reminder scheduler's wake-up). Post-commit work must not turn a
 * committed change into an error answer: a failure goes to `onError`.
 */
export function afterCommit(c: Conn, cb: () => void, onError: (e: unknown) => void): void {
  const run = () => {
    try {
      cb();
    } catch (e) {
      onError(e);
    }
  };
  const queue = c.sqlite.inTransaction ? afterCommitQueues.get(c.sqlite) : undefined;
  if (queue) queue.push(run);
  else run();
}

/**
 * readTx for raw-statement reads on hot paths (task pages): the same one-snapshot read, opened
 * with bun:sqlite statements instead of a drizzle transaction (which builds a new drizzle
 * database object, relational query builders included, on every call: ~5% of a task page's
 * time under load). The callback gets `c` itself: the snapshot is the connection's open
 * transaction. Inside an open transaction it simply runs in that one.
 */
export function readSnapshot<T>(c: Conn, fn: (c: Conn) => T): T {
  const s = c.sqlite;
  if (s.inTransaction) return fn(c);
  s.query("BEGIN").run();
  try {
    const result = fn(c);
    refusePromise(result, "readSnapshot");
    s.query("COMMIT").run();
    return result;
  } catch (e) {
    if (s.inTransaction) s.query("ROLLBACK").run();
    throw e;
  }
}

/**
 * Statements prepared once per connection, for reads on hot paths that must not depend on
 * bun:sqlite's own cache (`c.sqlite.query(sql)` keeps only the 20 most recently used SQL texts, and
 * a page's filters make many): `const stmts = perConnection((s) => ({ byUser: s.query(...) }))`,
 * then `stmts(c).byUser.all(...)` inside a repo function taking `c`. Statements belong to the
 * connection they were prepared on, so each Conn's are its own; one WeakMap lookup per call.
 */
export function perConnection<T>(prepare: (s: Database) => T): (c: Conn) => T {
  const made = new WeakMap<Database, T>();
  return (c) => {
    let v = made.get(c.sqlite);
    if (v === undefined) {
      v = prepare(c.sqlite);
      made.set(c.sqlite, v);
    }
    return v;
  };
}

/**
 * Runs the work a use case left for after its commit (files removed once their rows are gone):
 * at once, or, when the use case ran inside a caller's transaction, after that one's commit (and
 * not at all if it rolls back: the rows, and so the files, stay). Post-commit work must not turn a
 * committed change into an error answer: failures are reported.
 */
export function runAfterCommit(c: Conn, callbacks: (() => void)[], onError: (e: unknown) => void): void {
  for (const cb of callbacks) afterCommit(c, cb, onError);
}

/**
 * Rows changed by a drizzle `.run()`. bun:sqlite returns `Changes` at run time, but drizzle types
 * the result of its bun-sqlite driver as `void`, hence the cast.
 */
export function changes(result: unknown): number {
  return (result as { changes?: number } | undefined)?.changes ?? 0;
}

/**
 * Deletes the rows of one table matching `where` (one `?` parameter) in batches of 2,000: one
 * DELETE of 100,000 tasks keeps a statement journal of every page it touches, in memory
 * (temp_store = MEMORY), ~30 MiB. For the owning repo's "remove all of a user's rows".
 */
export function deleteInBatches(c: Conn, table: string, where: string, param: string): void {
  const stmt = c.sqlite.query(`DELETE FROM ${table} WHERE rowid IN (SELECT rowid FROM ${table} WHERE ${where} LIMIT 2000)`);
  while (stmt.run(param).changes > 0) {
    /* next batch */
  }
}

/**
 * A read-only connection of its own, as a Conn: a read transaction that must outlive awaits (the
 * backup export's snapshot, held while the client downloads) cannot be one of the shared
 * connection's. The caller closes it.
 */
export function openReadOnly(path: string): Conn & { close(): void } {
  const sqlite = new Database(path, { readonly: true });
  sqlite.run(`PRAGMA busy_timeout = ${DEFAULT_BUSY_TIMEOUT_MS}`);
  const orm = drizzle({ client: sqlite, schema });
  return Object.assign(orm, { sqlite, close: () => sqlite.close(false) }) as unknown as Conn & { close(): void };
}
