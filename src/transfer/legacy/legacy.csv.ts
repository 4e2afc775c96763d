/**
 * Legacy CSV v1: RFC 4180 (comma, CRLF, double-quoted cells with "" escapes), UTF-8 with a BOM,
 * one header row. Spreadsheet formula neutralisation: a cell that starts with `=`, `+`, `-`, `@`,
 * tab or CR is written with a leading `'` so a spreadsheet shows it instead of running it; a cell
 * that itself starts with `'` gets one too, so reading strips exactly one `'` from any cell that
 * has it and every value comes back as it was.
 */

export const BOM = "\ufeff";

const NEEDS_PREFIX = /^[=+\-@\t\r']/;
const NEEDS_QUOTES = /[",\r\n]/;

/** One cell as written: neutralised, then quoted when it must be. */
export function encodeCell(value: string): string {
  const v = NEEDS_PREFIX.test(value) ? `'${value}` : value;
  return NEEDS_QUOTES.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}

/** The value a cell stands for: one leading `'` (the neutralisation mark) removed. */
export function decodeCell(cell: string): string {
  return cell.startsWith("'") ? cell.slice(1) : cell;
}

export function encodeRow(cells: string[]): string {
  return cells.map(encodeCell).join(",") + "\r\n";
}

export interface CsvRow {
  /** 1-based line where the row starts (a quoted cell may span lines). */
  line: number;
  /** The line the next row starts on. */
  nextLine: number;
  /** Its length in the text (characters). */
  size: number;
  cells: string[];
}

export class CsvSyntaxError extends Error {
  constructor(
    readonly line: number,
    readonly column: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Parses the text row by row (the BOM, if any, skipped), so a large file is never held as one
 * array of every cell. Raw cells are returned: neutralisation is undone by the caller per cell.
 * Throws CsvSyntaxError with the line and column of the problem.
 */
export function parseCsv(text: string): Generator<CsvRow> {
  return parseRows(text, text.startsWith(BOM) ? 1 : 0, 1);
}

const QUOTE = 0x22;
const CR = 0x0d;
const LF = 0x0a;

/**
 * The same rows from the file's UTF-8 bytes, which are never decoded whole: each row's bytes are
 * found by a scan (a CR or LF ends the row when the quotes before it on the row pair up, as they
 * do in every row parseCsv reads without an error: a quoted cell's own `""` pair too), then
 * decoded and parsed on their own. Rows, line numbers and errors are exactly parseCsv's over the
 * whole text; the text of one row at a time is all that is held besides the bytes. `bytes` must
 * be UTF-8 (checked by the caller): a row never ends inside a character, all the bytes looked
 * for being ASCII.
 */
export function* parseCsvBytes(bytes: Uint8Array): Generator<CsvRow> {
  // A BOM inside the file is a character like any other (only the file's first is skipped).
  const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
  const n = bytes.length;
  let start = n >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  let line = 1;
  while (start < n) {
    let end = start;
    let open = false;
    for (; end < n; end++) {
      const b = bytes[end]!;
      if (b === QUOTE) open = !open;
      else if ((b === CR || b === LF) && !open) break;
    }
    if (end < n && bytes[end] === CR) end++;
    if (end < n && bytes[end] === LF) end++;
    for (const row of parseRows(decoder.decode(bytes.subarray(start, end)), 0, line)) {
      line = row.nextLine;
      yield row;
    }
    start = end;
  }
}

function* parseRows(text: string, from: number, firstLine: number): Generator<CsvRow> {
  let i = from;
  const n = text.length;
  let line = firstLine;
  while (i < n) {
    const rowLine = line;
    const rowStart = i;
    const cells: string[] = [];
    for (;;) {
      let cell = "";
      if (text[i] === '"') {
        const openLine = line;
        const openCol = cells.length + 1;
        i++;
        for (;;) {
          if (i >= n) throw new CsvSyntaxError(openLine, openCol, "a quoted cell is not closed");
          const q = text.indexOf('"', i);
          if (q < 0) throw new CsvSyntaxError(openLine, openCol, "a quoted cell is not closed");
          const chunk = text.slice(i, q);
          for (let k = chunk.indexOf("\n"); k >= 0; k = chunk.indexOf("\n", k + 1)) line++;
          cell += chunk;
          i = q + 1;
          if (text[i] === '"') {
            cell += '"';
            i++;
            continue;
          }
          break;
        }
        if (i < n && text[i] !== "," && text[i] !== "\r" && text[i] !== "\n") {
          throw new CsvSyntaxError(line, cells.length + 1, "unexpected character after a closing quote");
        }
      } else {
        let j = i;
        while (j < n && text[j] !== "," && text[j] !== "\r" && text[j] !== "\n") {
          if (text[j] === '"') throw new CsvSyntaxError(line, cells.length + 1, "a quote inside an unquoted cell");
          j++;
        }
        cell = text.slice(i, j);
        i = j;
      }
      cells.push(cell);
      if (i >= n) break;
      if (text[i] === ",") {
        i++;
        continue;
      }
      // End of the record: CRLF or LF.
      if (text[i] === "\r") i++;
      if (text[i] === "\n") i++;
      line++;
      break;
    }
    yield { line: rowLine, nextLine: line, cells, size: i - rowStart };
  }
}
