import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DatabaseError, MMAP_BYTES, SCHEMA_VERSION, migrate, openDatabase, type Db } from "../../src/core/db";
import { embeddedMigrations } from "../../migrations";

// Architecture rule 6: the migrator has its own test (fresh install, re-run), on a real file.

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), "app-mig-"));
}

function schemaOf(db: Db): unknown[] {
  return db.sqlite.query("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name").all();
}

function applied(db: Db): unknown[] {
  return db.sqlite.query("SELECT hash, created_at FROM __drizzle_migrations ORDER BY id").all();
}

describe("migrations", () => {
  test("a fresh install applies every embedded migration, records them, and passes the integrity checks", () => {
    const dir = tempDir();
    const db = openDatabase(join(dir, "app.db"));
    try {
      migrate(db);
      expect(SCHEMA_VERSION).toBe(embeddedMigrations.length);
      expect(db.sqlite.query("PRAGMA user_version").get()).toEqual({ user_version: SCHEMA_VERSION });
      expect(applied(db)).toHaveLength(embeddedMigrations.length);
      expect(db.sqlite.query("PRAGMA foreign_key_check").all()).toEqual([]);
      expect(db.sqlite.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
      // Connection settings as documented in db.ts.
      expect(db.sqlite.query("PRAGMA journal_mode").get()).toEqual({ journal_mode: "wal" });
      expect(db.sqlite.query("PRAGMA foreign_keys").get()).toEqual({ foreign_keys: 1 });
      expect(db.sqlite.query("PRAGMA synchronous").get()).toEqual({ synchronous: 2 });
      expect(db.sqlite.query("PRAGMA mmap_size").get()).toEqual({ mmap_size: MMAP_BYTES });
      expect(MMAP_BYTES).toBe(256 * 1024 * 1024);
      const tables = db.sqlite.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table'").all().map((r) => r.name);
      expect(tables).toEqual(expect.arrayContaining(["users", "sessions", "audit_logs", "lists"]));
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("re-running on the same connection and after a reopen is a no-op", () => {
    const dir = tempDir();
    const path = join(dir, "app.db");
    try {
      const db = openDatabase(path);
      migrate(db);
      db.sqlite.run(
        "INSERT INTO users (id, username, username_key, display_name, timezone, is_admin, password_hash, created_at, updated_at) VALUES ('u1','a','a','a','UTC',1,'h','2026-01-01T00:00:00.000Z','2026-01-01T00:00:00.000Z')",
      );
      const schema = schemaOf(db);
      const rows = applied(db);
      migrate(db);
      expect(schemaOf(db)).toEqual(schema);
      expect(applied(db)).toEqual(rows);
      db.close();
      const again = openDatabase(path);
      migrate(again);
      expect(schemaOf(again)).toEqual(schema);
      expect(applied(again)).toEqual(rows);
      expect(again.sqlite.query("SELECT id FROM users").all()).toEqual([{ id: "u1" }]);
      expect(again.sqlite.query("PRAGMA foreign_key_check").all()).toEqual([]);
      again.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("foreign keys are enforced after migrating (deleting a user cascades to its sessions)", () => {
    const dir = tempDir();
    const db = openDatabase(join(dir, "app.db"));
    try {
      migrate(db);
      db.sqlite.run(
        "INSERT INTO users (id, username, username_key, display_name, timezone, is_admin, password_hash, created_at, updated_at) VALUES ('u1','a','a','a','UTC',1,'h','t','t')",
      );
      db.sqlite.run("INSERT INTO sessions (id, user_id, token_hash, created_at, last_seen_at, expires_at) VALUES ('s1','u1','h','t','t','t')");
      expect(() => db.sqlite.run("INSERT INTO sessions (id, user_id, token_hash, created_at, last_seen_at, expires_at) VALUES ('s2','nobody','h2','t','t','t')")).toThrow();
      db.sqlite.run("DELETE FROM users WHERE id = 'u1'");
      expect(db.sqlite.query("SELECT count(*) AS n FROM sessions").get()).toEqual({ n: 0 });
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a database written by a newer version is refused, untouched", () => {
    const dir = tempDir();
    const path = join(dir, "app.db");
    try {
      const db = openDatabase(path);
      migrate(db);
      db.sqlite.run(`PRAGMA user_version = ${SCHEMA_VERSION + 1}`);
      const schema = schemaOf(db);
      expect(() => migrate(db)).toThrow(DatabaseError);
      expect(() => migrate(db)).toThrow(/newer version/);
      expect(schemaOf(db)).toEqual(schema);
      expect(db.sqlite.query("PRAGMA user_version").get()).toEqual({ user_version: SCHEMA_VERSION + 1 });
      db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a file that is not SQLite is refused with a clear error and left byte for byte as it was", () => {
    const dir = tempDir();
    const path = join(dir, "app.db");
    try {
      const bytes = Buffer.from("This is my shopping list, not a database.\n".repeat(200));
      writeFileSync(path, bytes);
      expect(() => openDatabase(path)).toThrow(DatabaseError);
      expect(() => openDatabase(path)).toThrow(/not a usable SQLite database/);
      expect(readFileSync(path).equals(bytes)).toBe(true);
      expect(existsSync(`${path}-wal`)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
