import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { JsonRecordError, JsonRecordSplitter } from "../../src/core/streams/json-records";

/**
 * The shared JSON record splitter (src/core/streams/json-records.ts) against JSON.parse, fed the
 * way the backup reader feeds it: through ONE reused Buffer (the stored-entry reader reuses its
 * read buffer), cut anywhere. Valid arrays give JSON.parse's elements; damaged ones are refused
 * exactly when JSON.parse refuses them.
 */

function split(bytes: Uint8Array, cuts: number[]): unknown[] {
  const out: unknown[] = [];
  const s = new JsonRecordSplitter({ maxDepth: 64, maxRecordChars: 1024 * 1024 }, (_i, _s, _e, text) => out.push(JSON.parse(text())));
  const scratch = Buffer.alloc(bytes.length + 1);
  let at = 0;
  for (const c of [...cuts.map((x) => Math.floor(x * bytes.length)), bytes.length].sort((a, b) => a - b)) {
    // The same buffer every time, overwritten with the next slice (as ZipFile.readInto does).
    scratch.set(bytes.subarray(at, c));
    s.push(scratch.subarray(0, c - at));
    scratch.fill(0x78);
    at = c;
  }
  s.end();
  return out;
}

const tricky = fc.oneof(fc.string({ unit: "binary" }), fc.constantFrom('"', "\\", '\\"', "\\\\", "\\\\\\", "{[", "]}", ",", "\u00e9\u4e2d\ud83d\ude00"));
const value = fc.letrec((tie) => ({
  v: fc.oneof({ depthSize: "small" }, fc.constant(null), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), tricky, fc.array(tie("v"), { maxLength: 4 }), fc.dictionary(tricky, tie("v"), { maxKeys: 4 })),
}));
const cutsArb = fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 12 });

describe("JsonRecordSplitter", () => {
  test("elements equal JSON.parse's, whatever the cuts, through one reused buffer", () => {
    fc.assert(
      fc.property(fc.array(value.v, { maxLength: 10 }), cutsArb, fc.boolean(), (arr, cuts, pretty) => {
        const text = JSON.stringify(arr, null, pretty ? 2 : undefined);
        expect(split(new TextEncoder().encode(text), cuts)).toEqual(JSON.parse(text));
      }),
      { numRuns: 500 },
    );
  });

  test("a damaged array is refused exactly when JSON.parse refuses it", () => {
    const chars = ['"', "\\", "{", "}", "[", "]", ",", ":", " ", "a", "1"];
    fc.assert(
      fc.property(fc.array(value.v, { maxLength: 5 }), fc.nat(), fc.constantFrom(...chars), fc.boolean(), cutsArb, (arr, at, ch, del, cuts) => {
        let text = JSON.stringify(arr);
        const p = at % (text.length + 1);
        text = del ? text.slice(0, p) + text.slice(p + 1) : text.slice(0, p) + ch + text.slice(p);
        const bytes = new TextEncoder().encode(text);
        const oracle = new TextDecoder().decode(bytes);
        let want: unknown;
        try {
          want = JSON.parse(oracle);
          if (!Array.isArray(want)) want = "refused";
        } catch {
          want = "refused";
        }
        let got: unknown;
        try {
          got = split(bytes, cuts);
        } catch (e) {
          if (!(e instanceof JsonRecordError) && !(e instanceof SyntaxError)) throw e;
          got = "refused";
        }
        expect(got).toEqual(want);
      }),
      { numRuns: 1000 },
    );
  });

  test("nesting past maxDepth and records past maxRecordChars are refused while scanning", () => {
    const deep = new TextEncoder().encode(`[${"[".repeat(65)}${"]".repeat(65)}]`);
    expect(() => split(deep, [0.5])).toThrow("nested deeper than 64 levels");
    const big = new TextEncoder().encode(JSON.stringify(["x".repeat(1024 * 1024 + 1)]));
    expect(() => split(big, [0.1, 0.5])).toThrow("record too large");
  });
});
