import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { JsonArraySplitter, jsonNestingOver, ZipError } from "../../src/transfer/backup/backup.archive";

/**
 * The record splitter of the backup reader against an independent oracle, JSON.parse: any JSON
 * array, cut into chunks at any byte (inside strings, escapes and multi-byte characters), gives
 * exactly its elements. Strings are skipped by jumping to the next quote or backslash, so
 * escapes at chunk edges are what this holds.
 */

function split(bytes: Uint8Array, cuts: number[]): unknown[] {
  const out: unknown[] = [];
  const s = new JsonArraySplitter("data/x.json", (v) => out.push(v), 1024 * 1024, 0);
  let at = 0;
  for (const c of [...cuts.map((x) => Math.floor(x * bytes.length)), bytes.length].sort((a, b) => a - b)) {
    s.push(bytes.subarray(at, c));
    at = c;
  }
  s.end();
  return out;
}

const tricky = fc.oneof(
  fc.string({ unit: "binary" }),
  fc.constantFrom('"', "\\", '\\"', '"\\', "\\\\\"", "{[", "]}", ",", "\u00e9\u4e2d\ud83d\ude00"),
);
const value = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: "small" },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    tricky,
    fc.array(tie("v"), { maxLength: 4 }),
    fc.dictionary(tricky, tie("v"), { maxKeys: 4 }),
  ),
}));

describe("JsonArraySplitter", () => {
  test("gives exactly JSON.parse's elements, whatever the chunk boundaries", () => {
    fc.assert(
      fc.property(fc.array(value.v, { maxLength: 12 }), fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 8 }), fc.boolean(), (arr, cuts, pretty) => {
        const text = JSON.stringify(arr, null, pretty ? 2 : undefined);
        const bytes = new TextEncoder().encode(text);
        expect(split(bytes, cuts)).toEqual(JSON.parse(text));
      }),
      { numRuns: 500 },
    );
  });

  test("refuses nesting past 64 levels before parsing, and counts strings out", () => {
    const nest = (n: number) => `[${"[".repeat(n)}${"]".repeat(n)}]`;
    expect(split(new TextEncoder().encode(nest(63)), [0.3])).toEqual([JSON.parse(nest(63)).at(0)]);
    expect(() => split(new TextEncoder().encode(nest(65)), [0.5])).toThrow(ZipError);
    // Brackets inside strings do not nest.
    expect(split(new TextEncoder().encode(JSON.stringify(["[".repeat(100), { a: "{".repeat(100) }])), [0.1, 0.6])).toEqual(["[".repeat(100), { a: "{".repeat(100) }]);
    expect(jsonNestingOver(JSON.stringify({ a: "[".repeat(100), b: [[1]] }), 64)).toBe(false);
    expect(jsonNestingOver(`{"a":"\\"",${'"b":'.repeat(1)}${"[".repeat(65)}${"]".repeat(65)}}`, 64)).toBe(true);
  });

  test("malformed arrays are refused", () => {
    for (const bad of ["[1,]", "[,1]", "[1", "{}", "[1] x", '["a]']) {
      expect(() => split(new TextEncoder().encode(bad), [0.5])).toThrow(ZipError);
    }
  });
});
