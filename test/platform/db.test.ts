import { afterAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { Database } from "bun:sqlite";
import { changes, readSnapshot, readTx, writeTx } from "../../src/core/db";
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
      tx.run(insertUser("s2"));
      expect(readSnapshot(app.db, count)).toBe(before + 1);
      expect(app.db.sqlite.inTransaction).toBe(true);
    });
    expect(count()).toBe(before + 1);
  });
});
