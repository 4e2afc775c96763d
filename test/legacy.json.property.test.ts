// The legacy restore reads its JSON body record by record (src/transfer/legacy/legacy.json.ts)
// instead of JSON.parse of the whole: it must accept exactly the texts JSON.parse accepts, and
// find the same values.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { arrayElements, isArrayValue, parseSlice, readTopLevel } from "../src/transfer/legacy/legacy.json";

const enc = new TextEncoder();

/** What the record-by-record reader makes of the text: the object's members (last wins), or "invalid". */
function readPiecewise(text: string): unknown {
  const b = enc.encode(text);
  try {
    const top = readTopLevel(b);
    if (top === null) return JSON.parse(text.replace(/^\ufeff/, ""));
    const o = Object.create(null) as Record<string, unknown>;
    for (const m of top) {
      o[m.key] = isArrayValue(b, m.value) ? [...arrayElements(b, m.value)].map((e) => parseSlice(b, e.start, e.end)) : parseSlice(b, m.value.start, m.value.end);
    }
    return o;
  } catch {
    return "invalid";
  }
}

function readWhole(text: string): unknown {
  try {
    const v = JSON.parse(text.replace(/^\ufeff/, ""));
    if (v === null || typeof v !== "object" || Array.isArray(v)) return v;
    return Object.assign(Object.create(null), v);
  } catch {
    return "invalid";
  }
}

const MUTATION_CHARS = ['"', "\\", "{", "}", "[", "]", ",", ":", " ", "\n", "a", "1", "-", "e", "."];

/** A legacy-like document, formatted compactly or with indentation, then perhaps damaged. */
const documents = fc
  .record({
    keys: fc.array(fc.constantFrom("format", "tasks", "memos", "x", 'q"uote', "back\\slash", "__proto__"), { maxLength: 6 }),
    values: fc.array(fc.oneof(fc.jsonValue(), fc.array(fc.jsonValue(), { maxLength: 5 })), { minLength: 6, maxLength: 6 }),
    indent: fc.constantFrom(0, 1, 2),
    bom: fc.boolean(),
    mutation: fc.option(fc.record({ at: fc.nat(), kind: fc.constantFrom("delete", "insert"), char: fc.constantFrom(...MUTATION_CHARS) }), { nil: null }),
  })
  .map(({ keys, values, indent, bom, mutation }) => {
    // Built by hand so that duplicate keys stay in the text.
    const members = keys.map((k, i) => `${JSON.stringify(k)}:${JSON.stringify(values[i], null, indent)}`);
    let text = (bom ? "\ufeff" : "") + (indent ? `{\n${members.join(",\n")}\n}` : `{${members.join(",")}}`);
    if (mutation) {
      const at = mutation.at % (text.length + 1);
      text = mutation.kind === "delete" ? text.slice(0, at) + text.slice(at + 1) : text.slice(0, at) + mutation.char + text.slice(at);
    }
    return text;
  });

describe("legacy JSON read record by record", () => {
  test("accepts exactly what JSON.parse accepts, with the same values (last duplicate key wins)", () => {
    fc.assert(
      fc.property(documents, (text) => {
        expect(readPiecewise(text)).toEqual(readWhole(text));
      }),
      { numRuns: 3000 },
    );
  });

  test("hand-picked edges", () => {
    for (const text of [
      "",
      " ",
      "{}",
      " { } ",
      "{} x",
      "{}}",
      '{"a":1,}',
      '{"a":1 "b":2}',
      '{"a" 1}',
      '{"tasks":[1,]}',
      '{"tasks":[,1]}',
      '{"tasks":[1 2]}',
      '{"tasks":[{"a":"]"}],"t\\u0061sks":[]}',
      '{"tasks":[{"a":"\\\\"}]}',
      '{"tasks":[{"a":"\\""}]}',
      '{"tasks":[{"a":1]}]}',
      '{"tasks":[[}]]}',
      '{"tasks":tru}',
      '{"tasks":[true false]}',
      "[1,2]",
      '"text"',
      "\ufeff{\"a\":[]}",
    ]) {
      expect([text, readPiecewise(text)]).toEqual([text, readWhole(text)]);
    }
  });

  test("a body that is not UTF-8 is refused", () => {
    const bytes = new Uint8Array([...enc.encode('{"a":"'), 0xe9, ...enc.encode('"}')]);
    expect(() => readTopLevel(bytes)).toThrow("not valid UTF-8");
  });
});
