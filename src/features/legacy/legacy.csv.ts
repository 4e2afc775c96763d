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
export function* parseCsv(text: string): Generator<CsvRow> {
  let i = text.startsWith(BOM) ? 1 : 0;
  const n = text.length;
  let line = 1;
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
    yield { line: rowLine, cells, size: i - rowStart };
  }
}
