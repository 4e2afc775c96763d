import { describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { Cursors, toPage } from "../../src/core/cursor";
import { AppError } from "../../src/core/errors";
import { ServerSecret } from "../../src/core/secret";

// docs/spec/contract.md §1 cursor pagination: signed, bound to endpoint and user; toPage fetches limit + 1.

const cursors = new Cursors(ServerSecret.fromBytes(randomBytes(32)));

function code(fn: () => unknown): string | null {
  try {
    fn();
    return null;
  } catch (e) {
    return e instanceof AppError ? e.code : `not an AppError: ${String(e)}`;
  }
}

describe("Cursors", () => {
  test("round-trips keys of strings, numbers and nulls (incl. non-ASCII)", () => {
    const key = ["2026-11-25T22:08:03.123Z", 42, null, "星期一 é"];
    expect(cursors.decode("tasks", "u1", cursors.encode("tasks", "u1", key))).toEqual(key);
  });

  test("is URL-safe", () => {
    expect(cursors.encode("tasks", "u1", ["a/b+c=?&"])).toMatch(/^[A-Za-z0-9_.-]+$/);
  });

  test("bound to the endpoint and the user", () => {
    const c = cursors.encode("tasks", "u1", ["k"]);
    expect(code(() => cursors.decode("memos", "u1", c))).toBe("invalid_cursor");
    expect(code(() => cursors.decode("tasks", "u2", c))).toBe("invalid_cursor");
  });

  test("any changed byte, a foreign secret, or garbage is invalid_cursor (never another error)", () => {
    const c = cursors.encode("tasks", "u1", ["k", 1]);
    for (let i = 0; i < c.length; i++) {
      const ch = c[i] === "A" ? "B" : "A";
      const t = c.slice(0, i) + ch + c.slice(i + 1);
      if (t === c) continue;
      expect(code(() => cursors.decode("tasks", "u1", t))).toBe("invalid_cursor");
    }
    const other = new Cursors(ServerSecret.fromBytes(randomBytes(32)));
    expect(code(() => cursors.decode("tasks", "u1", other.encode("tasks", "u1", ["k", 1])))).toBe("invalid_cursor");
    for (const g of ["", ".", "..", "abc", "a.b", "x".repeat(5000), "%%%.%%%", c + "." + c]) {
      expect(code(() => cursors.decode("tasks", "u1", g))).toBe("invalid_cursor");
    }
  });

  test("a correctly signed body of the wrong shape is still invalid_cursor", () => {
    const secret = ServerSecret.fromBytes(randomBytes(32));
    const cs = new Cursors(secret);
    for (const payload of ['{"a":1}', '["tasks","u1","notarray"]', '["tasks","u1",[{"x":1}]]', "not json", '["tasks","u1"]']) {
      const body = Buffer.from(payload).toString("base64url");
      expect(code(() => cs.decode("tasks", "u1", `${body}.${secret.sign("cursor", body)}`))).toBe("invalid_cursor");
    }
  });
});

describe("toPage", () => {
  const enc = (k: unknown[]) => JSON.stringify(k);
  test("limit + 1 rows: a next cursor from the last item shown", () => {
    const p = toPage([1, 2, 3], 2, (r) => r * 10, (r) => [r], enc);
    expect(p).toEqual({ items: [10, 20], next_cursor: "[2]" });
  });
  test("limit rows or fewer: next_cursor null", () => {
    expect(toPage([1, 2], 2, (r) => r, (r) => [r], enc)).toEqual({ items: [1, 2], next_cursor: null });
    expect(toPage([], 2, (r: number) => r, (r) => [r], enc)).toEqual({ items: [], next_cursor: null });
  });
});
