import { afterAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { Database } from "bun:sqlite";
import { afterCommit, changes, readSnapshot, readTx, writeTx } from "../../src/core/db";
import { makeTestApp } from "../helpers/app";

// core/db.ts: one transaction per use case; a failure leaves nothing half-done.

const app = makeTestApp();
afterAll(() => app.close());

const insertUser = (id: string) =>
  sql`INSERT INTO users (id, username, username_key, display_name, timezone, is_admin, password_hash, created_at, updated_at)
      VALUES (${id}, ${id}, ${id}, ${id}, 'UTC', 0, 'h', 't', 't')`;
const count = () => (app.db.sqlite.query("SELECT count(*) AS n FROM users").get() as { n: number }).n;

describe("writeTx / readTx", () => {
  test("commits what the callback did and returns its value", () => {
    const before = count();
    expect(writeTx(app.db, (tx) => (tx.run(insertUser("w1")), 42))).toBe(42);
    expect(count()).toBe(before + 1);
  });

  test("a throw rolls back every statement of the callback", () => {
    const before = count();
    expect(() =>
      writeTx(app.db, (tx) => {
        tx.run(insertUser("w2"));
        tx.run(insertUser("w3"));
        throw new Error("rule broken");
      }),
    ).toThrow("rule broken");
    expect(count()).toBe(before);
  });

  test("an async callback is refused and its synchronous part rolled back", () => {
    const before = count();
    expect(() =>
      // The callback's type says synchronous; this is the mistake being guarded against.
      writeTx(app.db, (async (tx: Parameters<Parameters<typeof writeTx>[1]>[0]) => {
        tx.run(insertUser("w4"));
      }) as unknown as Parameters<typeof writeTx>[1]),
    ).toThrow(/synchronous/);
    expect(count()).toBe(before);
  });

  test("changes() counts the rows a statement touched", () => {
    writeTx(app.db, (tx) => {
      tx.run(insertUser("c1"));
      tx.run(insertUser("c2"));
    });
    const n = writeTx(app.db, (tx) => changes(tx.run(sql`UPDATE users SET display_name = 'x' WHERE id IN ('c1', 'c2')`)));
    expect(n).toBe(2);
    expect(writeTx(app.db, (tx) => changes(tx.run(sql`UPDATE users SET display_name = 'x' WHERE id = 'nobody'`)))).toBe(0);
  });

  test("readTx reads inside one transaction and refuses async callbacks", () => {
    expect(readTx(app.db, (tx) => tx.all(sql`SELECT id FROM users WHERE id = 'w1'`))).toEqual([{ id: "w1" }]);
    expect(() => readTx(app.db, (async () => 1) as unknown as Parameters<typeof readTx>[1])).toThrow(/synchronous/);
  });
});

describe("writeTx inside a transaction (a use case made of other use cases) and afterCommit", () => {
  const fail = (e: unknown) => {
    throw e;
  };
  const has = (id: string) => app.db.sqlite.query("SELECT 1 FROM users WHERE id = ?").get(id) !== null;

  test("a nested writeTx (on the root handle, as a service opens its own) joins the outer transaction: committed with it, rolled back with it", () => {
    writeTx(app.db, () => {
      writeTx(app.db, (tx) => tx.run(insertUser("n1")));
      readTx(app.db, (tx) => expect(tx.all(sql`SELECT id FROM users WHERE id = 'n1'`)).toEqual([{ id: "n1" }]));
    });
    expect(has("n1")).toBe(true);
    expect(() =>
      writeTx(app.db, () => {
        writeTx(app.db, (tx) => tx.run(insertUser("n2")));
        throw new Error("later step refused");
      }),
    ).toThrow("later step refused");
    expect(has("n2")).toBe(false);
    expect(app.db.sqlite.inTransaction).toBe(false);
  });

  test("a nested writeTx that throws rolls back its own work alone (a savepoint); the caller may go on", () => {
    writeTx(app.db, (tx) => {
      tx.run(insertUser("sp1"));
      expect(() =>
        writeTx(app.db, (inner) => {
          inner.run(insertUser("sp2"));
          throw new Error("refused");
        }),
      ).toThrow("refused");
      expect(() => writeTx(app.db, (async () => 1) as unknown as Parameters<typeof writeTx>[1])).toThrow(/synchronous/);
      tx.run(insertUser("sp3"));
    });
    expect([has("sp1"), has("sp2"), has("sp3")]).toEqual([true, false, true]);
  });

  test("afterCommit: at once outside a transaction; inside one, after the outermost commit (the data visible), never on a rollback or for a rolled-back savepoint", () => {
    const ran: string[] = [];
    afterCommit(app.db, () => ran.push("now"), fail);
    expect(ran).toEqual(["now"]);
    writeTx(app.db, (tx) => {
      tx.run(insertUser("a1"));
      afterCommit(app.db, () => ran.push(`outer sees a1 committed: ${!app.db.sqlite.inTransaction && has("a1")}`), fail);
      writeTx(app.db, () => afterCommit(app.db, () => ran.push("inner kept"), fail));
      try {
        writeTx(app.db, () => {
          writeTx(app.db, () => afterCommit(app.db, () => ran.push("inside a rolled-back savepoint"), fail));
          throw new Error("refused");
        });
      } catch {
        // the caller goes on
      }
      readTx(app.db, () => afterCommit(app.db, () => ran.push("from a nested read"), fail));
      expect(ran).toEqual(["now"]);
    });
    expect(ran).toEqual(["now", "outer sees a1 committed: true", "inner kept", "from a nested read"]);
    ran.length = 0;
    expect(() =>
      writeTx(app.db, () => {
        afterCommit(app.db, () => ran.push("rolled back"), fail);
        throw new Error("no");
      }),
    ).toThrow("no");
    expect(ran).toEqual([]);
  });

  test("a failing after-commit callback goes to its onError, the others still run, the commit stands", () => {
    const ran: string[] = [];
    const errors: string[] = [];
    writeTx(app.db, (tx) => {
      tx.run(insertUser("e1"));
      afterCommit(app.db, () => {
        throw new Error("publish broke");
      }, (e) => errors.push(String(e)));
      afterCommit(app.db, () => ran.push("second"), fail);
    });
    expect(errors).toEqual(["Error: publish broke"]);
    expect(ran).toEqual(["second"]);
    expect(has("e1")).toBe(true);
  });
});

describe("readSnapshot (raw-statement reads)", () => {
  test("every read of the callback sees one snapshot; the transaction ends with it", () => {
    const other = new Database(app.db.path);
    try {
      const seen = readSnapshot(app.db, () => {
        expect(app.db.sqlite.inTransaction).toBe(true);
        const first = count();
        other.run("INSERT INTO users (id, username, username_key, display_name, timezone, is_admin, password_hash, created_at, updated_at) VALUES ('s1', 's1', 's1', 's1', 'UTC', 0, 'h', 't', 't')");
        return [first, count()];
      });
      expect(seen[1]).toBe(seen[0]);
      expect(app.db.sqlite.inTransaction).toBe(false);
      expect(count()).toBe(seen[0]! + 1);
    } finally {
      other.close();
    }
  });

  test("a throw ends the transaction and reaches the caller; async callbacks are refused", () => {
    expect(() =>
      readSnapshot(app.db, () => {
        count();
        throw new Error("not found");
      }),
    ).toThrow("not found");
    expect(app.db.sqlite.inTransaction).toBe(false);
    expect(() => readSnapshot(app.db, (async () => 1) as unknown as () => number)).toThrow(/synchronous/);
    expect(app.db.sqlite.inTransaction).toBe(false);
  });

  test("inside a write transaction it reads that transaction's writes and leaves it open", () => {
    const before = count();
    writeTx(app.db, (tx) => {
      tx.run(insertUser("sp2"));
      expect(readSnapshot(app.db, count)).toBe(before + 1);
      expect(app.db.sqlite.inTransaction).toBe(true);
    });
    expect(count()).toBe(before + 1);
  });
});

describe("openDatabase while another process holds the file for a moment", () => {
  test("waits for the lock from the first read instead of calling the file not SQLite", async () => {
    const { openDatabase } = await import("../../src/core/db");
    const { mkdtempSync, rmSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const dir = mkdtempSync(join(tmpdir(), "app-db-lock-"));
    try {
      const path = join(dir, "app.db");
      openDatabase(path).close();
      // Another process takes the file exclusively (as a closing server's checkpoint or a WAL
      // recovery does), says so, and lets go 300 ms later.
      const holder = Bun.spawn(
        [
          process.execPath,
          "-e",
          `const { Database } = require("bun:sqlite"); const d = new Database(${JSON.stringify(path)}); d.run("PRAGMA locking_mode = EXCLUSIVE"); d.run("BEGIN EXCLUSIVE"); d.query("SELECT count(*) FROM sqlite_master").get(); console.log("locked"); setTimeout(() => { d.run("COMMIT"); d.close(); }, 300);`,
        ],
        { stdout: "pipe", stderr: "inherit" },
      );
      const reader = holder.stdout.getReader();
      const first = await reader.read();
      expect(new TextDecoder().decode(first.value)).toContain("locked");
      const db = openDatabase(path);
      expect(db.sqlite.query("SELECT count(*) AS n FROM sqlite_master").get()).toBeTruthy();
      db.close();
      expect(await holder.exited).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
