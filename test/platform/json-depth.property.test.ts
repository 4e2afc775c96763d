// The JSON nesting scan of core/body.ts against an independent oracle: JSON.parse, then the depth of
// the parsed value counted by a plain recursive walk.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { jsonDeeperThan } from "../../src/core/body";

function depthOf(v: unknown): number {
  if (Array.isArray(v)) return 1 + Math.max(0, ...v.map(depthOf));
  if (v !== null && typeof v === "object") return 1 + Math.max(0, ...Object.values(v).map(depthOf));
  return 0;
}

// Strings full of what the scan must skip: brackets, quotes, backslashes, in any order.
const tricky = fc.string({ unit: fc.constantFrom("[", "]", "{", "}", '"', "\\", "a", "é", "😀", "\u0000"), maxLength: 12 });
const value = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    tricky,
    fc.integer(),
    fc.constant(null),
    fc.array(tie("v"), { maxLength: 3 }),
    fc.dictionary(tricky, tie("v"), { maxKeys: 3 }),
  ),
})).v;
// Deep chains, so depths around the limit are drawn often.
const chain = fc.tuple(fc.integer({ min: 0, max: 80 }), value, fc.boolean()).map(([n, inner, objects]) => {
  let v: unknown = inner;
  for (let i = 0; i < n; i++) v = objects && i % 2 ? { k: v } : [v];
  return v;
});

describe("jsonDeeperThan", () => {
  test("agrees with JSON.parse and a recursive count, for every limit", () => {
    fc.assert(
      fc.property(fc.oneof(value, chain), fc.integer({ min: 0, max: 70 }), fc.boolean(), (v, limit, spaced) => {
        const text = JSON.stringify(v, null, spaced ? 1 : undefined);
        const bytes = new TextEncoder().encode(text);
        expect(jsonDeeperThan(bytes, limit)).toBe(depthOf(JSON.parse(text)) > limit);
      }),
      { numRuns: 3000 },
    );
  });

  test("a window of the bytes counts only what is inside it", () => {
    const b = new TextEncoder().encode(`{"a":"[[[[","b":[[[[1]]]],"c":[[2]]}`);
    const start = b.indexOf(0x62) + 3; // the value of "b"
    expect(jsonDeeperThan(b, 3, start, start + 9)).toBe(true);
    expect(jsonDeeperThan(b, 4, start, start + 9)).toBe(false);
  });
});
