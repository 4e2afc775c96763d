// Manual order's keys (tasks.rank.ts placeAt), against a model array: any sequence of moves keeps
// a total order equal to the model's, and keys stay at most RANK_MAX characters however often one
// spot is inserted at (the neighbours around it are re-spread locally when needed).
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { placeAt, RANK_MAX, rankAfter, isRank, type Ranked } from "../../src/features/tasks/tasks.rank";

/** What the service does for one move: a window of up to `w` siblings each side of the spot. */
function move(list: Ranked[], id: string, to: number, w: number): Ranked[] {
  const rest = list.filter((r) => r.id !== id);
  const at = Math.min(to, rest.length);
  for (let size = w; ; size *= 4) {
    const from = Math.max(0, at - size);
    const end = Math.min(rest.length, at + size);
    const lower = from > 0 ? rest[from - 1]!.rank : null;
    const upper = end < rest.length ? rest[end]!.rank : null;
    const placed = placeAt(rest.slice(from, end), at - from, lower, upper);
    if (placed) {
      const next = new Map(placed.rekeyed.map((r) => [r.id, r.rank]));
      const out = rest.map((r) => ({ id: r.id, rank: next.get(r.id) ?? r.rank }));
      out.splice(at, 0, { id, rank: placed.rank });
      return out;
    }
    expect(from === 0 && end === rest.length).toBe(false);
  }
}

const sorted = (l: Ranked[]) => [...l].sort((a, b) => (a.rank < b.rank ? -1 : a.rank > b.rank ? 1 : a.id < b.id ? -1 : 1));

function start(n: number): Ranked[] {
  const out: Ranked[] = [];
  let last: string | null = null;
  for (let i = 0; i < n; i++) out.push({ id: `t${String(i).padStart(3, "0")}`, rank: (last = rankAfter(last)) });
  return out;
}

describe("placeAt", () => {
  test("arbitrary moves keep the model's total order, with valid bounded keys", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 12 }),
        fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 200 }),
        fc.integer({ min: 1, max: 8 }),
        (n, moves, w) => {
          let list = start(n);
          let model = list.map((r) => r.id);
          for (const [a, b] of moves) {
            const id = model[a % n]!;
            const to = b % n;
            model = model.filter((x) => x !== id);
            model.splice(to, 0, id);
            list = move(sorted(list), id, to, w);
            const order = sorted(list);
            expect(order.map((r) => r.id)).toEqual(model);
            // A total order: no two keys equal, each a valid key within the bound.
            expect(new Set(order.map((r) => r.rank)).size).toBe(n);
            for (const r of order) expect(isRank(r.rank)).toBe(true);
          }
        },
      ),
      { numRuns: 200 },
    );
  }, 120_000);

  test("inserting at one spot again and again keeps keys within RANK_MAX", () => {
    for (const spot of ["front", "second", "back-1"] as const) {
      let list = start(5);
      // 1500 insertions: without re-spreading, keys would reach ~250 characters.
      for (let i = 0; i < 1500; i++) {
        const id = `n${i}`;
        const at = spot === "front" ? 0 : spot === "second" ? 1 : list.length - 1;
        list = move(list, id, at, 16);
      }
      const order = sorted(list);
      expect(Math.max(...order.map((r) => r.rank.length))).toBeLessThanOrEqual(RANK_MAX);
      expect(new Set(order.map((r) => r.rank)).size).toBe(order.length);
      expect(order.map((r) => r.id)).toEqual(list.map((r) => r.id));
    }
  }, 120_000);

  test("tied neighbours (as an import can leave) are re-spread around the spot", () => {
    const tied: Ranked[] = [
      { id: "a", rank: "a0" },
      { id: "b", rank: "a1" },
      { id: "c", rank: "a1" },
      { id: "d", rank: "a1" },
      { id: "e", rank: "a2" },
    ];
    const placed = placeAt(tied, 2, null, null)!;
    const next = new Map(placed.rekeyed.map((r) => [r.id, r.rank]));
    const out = tied.map((r) => ({ id: r.id, rank: next.get(r.id) ?? r.rank }));
    out.splice(2, 0, { id: "x", rank: placed.rank });
    expect(sorted(out).map((r) => r.id)).toEqual(["a", "b", "x", "c", "d", "e"]);
    expect(new Set(out.map((r) => r.rank)).size).toBe(out.length);
  });
});
