// The CSV restore reads its body row by row from the UTF-8 bytes (parseCsvBytes in
// src/transfer/legacy/legacy.csv.ts), decoding one row at a time instead of the whole text: it
// must give exactly what the whole-text parser (parseCsv) gives, rows, line numbers and errors.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { CsvSyntaxError, encodeRow, parseCsv, parseCsvBytes, type CsvRow } from "../src/transfer/legacy/legacy.csv";

const enc = new TextEncoder();

function run(rows: () => Iterable<CsvRow>): unknown {
  const out: unknown[] = [];
  try {
    for (const r of rows()) out.push(r);
  } catch (e) {
    if (!(e instanceof CsvSyntaxError)) throw e;
    out.push({ error: e.message, line: e.line, column: e.column });
  }
  return out;
}

const whole = (text: string) => run(() => parseCsv(text));
const bytewise = (text: string) => run(() => parseCsvBytes(enc.encode(text)));

// The characters that matter to the grammar, some that do not, and multi-byte ones (a row must
// never be cut inside a character; a BOM inside the file is an ordinary character).
const piece = fc.constantFrom('"', '""', ",", "\r", "\n", "\r\n", "a", "b c", "é", "\ufeff", "\u{1F600}", "'=1", "");

describe("parseCsvBytes gives what parseCsv gives over the whole text", () => {
  test("arbitrary texts from the grammar's characters (valid and broken)", () => {
    fc.assert(
      fc.property(fc.boolean(), fc.array(piece, { maxLength: 60 }), (bom, parts) => {
        const text = (bom ? "\ufeff" : "") + parts.join("");
        expect(bytewise(text)).toEqual(whole(text));
      }),
      { numRuns: 5000 },
    );
  });

  test("well-formed files as the export writes them (quoted cells with commas, quotes and line breaks)", () => {
    const cell = fc.array(piece, { maxLength: 8 }).map((p) => p.join(""));
    fc.assert(
      fc.property(fc.array(fc.array(cell, { minLength: 1, maxLength: 6 }), { maxLength: 20 }), (rows) => {
        const text = "\ufeff" + rows.map((r) => encodeRow(r)).join("");
        const got = bytewise(text);
        expect(got).toEqual(whole(text));
        // And they are the rows written (cells raw: the neutralisation mark stays for the caller).
        expect((got as CsvRow[]).length).toBe(rows.length);
      }),
      { numRuns: 2000 },
    );
  });

  test("examples: lone CR, an unclosed quote at the end, a quote inside an unquoted cell, line numbers across quoted line breaks", () => {
    for (const text of ["a\rb\r\nc\nd", 'x,"never closed\r\nmore', 'ab"c,d\r\ne', '"1\n2\n3",x\r\n"4"\r\ny,"z"w', "\ufeff\ufeffa,b\r\n", ""]) {
      expect(bytewise(text)).toEqual(whole(text));
    }
    expect(bytewise('"1\n2",x\r\ny')).toEqual([
      { line: 1, nextLine: 3, size: 9, cells: ["1\n2", "x"] },
      { line: 3, nextLine: 3, size: 1, cells: ["y"] },
    ]);
  });
});
