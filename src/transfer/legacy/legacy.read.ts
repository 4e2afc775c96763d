import { isUtf8 } from "node:buffer";
import { malformed, quoted } from "../../core/errors";
import { CsvSyntaxError, decodeCell, parseCsvBytes } from "./legacy.csv";
import { JsonSyntaxError, eachArrayElement, isArrayValue, parseSlice, readTopLevel, type Extent } from "./legacy.json";
import { CSV_COLUMNS, CSV_FIELDS, CSV_KIND, cellValue, columnOf } from "./legacy.present";
import { MAX_PROBLEMS, rejectWith, type Locate, type Problem } from "./legacy.problems";
import { Collector, type StoredFile } from "./legacy.stored";
import { KINDS, type Kind } from "./legacy.schemas";

// The two file forms, read into the validated, compact StoredFile (legacy.stored.ts).

/**
 * A restore's file as the main thread read it (legacy.service.ts): the body's bytes (JSON, or CSV
 * sent as text/csv), the multipart field `file` (null: the body had no such field), or, for the
 * JSON endpoint, a body of another type (`wrong_type`) or none (`empty`).
 */
export type LegacySource =
  | { kind: "bytes"; bytes: Uint8Array }
  | { kind: "part"; bytes: Uint8Array | null }
  | { kind: "wrong_type" }
  | { kind: "empty" };

const TOP_LEVEL_KEYS = new Set<string>(["format", "version", "exported_at", ...KINDS]);
const isKind = (k: string): k is Kind => (KINDS as readonly string[]).includes(k);

/**
 * The JSON file from its bytes, record by record (legacy.json.ts). The order of the answers is
 * the one a whole-file `JSON.parse` then validation gives: not JSON anywhere → 400; then the
 * envelope (format, version, unknown fields, kinds that are not arrays); then the records.
 */
export function readJsonFile(source: LegacySource, locate: Locate): StoredFile {
  if (source.kind === "wrong_type" || source.kind === "part") throw malformed("send the legacy JSON export as application/json");
  if (source.kind === "empty") {
    // An empty body (body.ts gives undefined).
    return rejectWith([{ code: "validation_failed", path: "body", message: "a legacy export (JSON object) is required" }]);
  }
  let bytes: Uint8Array | null = source.bytes;
  (source as { bytes: Uint8Array | null }).bytes = null;
  try {
    return readJsonBytes(bytes, locate);
  } catch (e) {
    if (e instanceof JsonSyntaxError) throw malformed("the body is not valid JSON");
    throw e;
  } finally {
    bytes = null;
  }
}

function readJsonBytes(bytes: Uint8Array, locate: Locate): StoredFile {
  const top = readTopLevel(bytes);
  if (top === null) rejectWith([{ code: "validation_failed", path: "body", message: "a legacy export (JSON object) is required" }]);
  // As JSON.parse: the last occurrence of a key wins; the others must still be valid JSON.
  const last = new Map<string, Extent>();
  for (const m of top) last.set(m.key, m.value);
  // No prototype: a "__proto__" key is an ordinary (unknown) field, as in JSON.parse's result.
  const o = Object.create(null) as Record<string, unknown>;
  const laterArrays: Extent[] = [];
  for (const m of top) {
    if (isKind(m.key) && isArrayValue(bytes, m.value)) {
      if (last.get(m.key) === m.value) o[m.key] = m.value;
      else laterArrays.push(m.value);
      continue;
    }
    const v = parseSlice(bytes, m.value.start, m.value.end);
    if (last.get(m.key) === m.value) o[m.key] = v;
    else o[m.key] ??= undefined; // keeps the key's first place in Object.keys order
  }
  const kindArrays = KINDS.flatMap((k) => {
    const e = last.get(k);
    return e && isArrayValue(bytes, e) ? [e] : [];
  });
  /** Parses every record without validating it: a syntax error anywhere is 400 before any 422. */
  const checkSyntax = (arrays: Extent[]) => {
    for (const a of arrays) eachArrayElement(bytes, a, (e) => parseSlice(bytes, e.start, e.end));
  };
  checkSyntax(laterArrays);
  const envelope = (problems: Problem[]): never => {
    checkSyntax(kindArrays);
    return rejectWith(problems);
  };
  if (o.format !== "app-legacy") envelope([{ code: "validation_failed", path: "format", message: 'not a legacy export: format must be "app-legacy"' }]);
  if (o.version !== 1) envelope([{ code: "validation_failed", path: "version", message: `unsupported version ${JSON.stringify(o.version ?? null)}; this server reads version 1` }]);
  const problems: Problem[] = [];
  for (const k of Object.keys(o)) {
    if (!TOP_LEVEL_KEYS.has(k)) problems.push({ code: "validation_failed", path: k, message: "unknown field" });
  }
  for (const kind of KINDS) {
    const v = o[kind];
    if (v !== undefined && !kindArrays.includes(v as Extent)) problems.push({ code: "validation_failed", path: kind, message: "must be an array" });
  }
  if (problems.length) envelope(problems);
  const c = new Collector();
  for (const kind of KINDS) {
    const a = last.get(kind);
    if (a === undefined || !kindArrays.includes(a)) continue;
    eachArrayElement(bytes, a, (e) => c.add(kind, parseSlice(bytes, e.start, e.end), locate, e.end - e.start));
  }
  return c.finish();
}

/** Columns added after legacy v1 was first written (issue 14): an older file may lack them. */
const CSV_LATER_COLUMNS = new Set(["sort", "rank", "reminders"]);

const KIND_OF_CSV = new Map(KINDS.map((k) => [CSV_KIND[k], k]));
/** Per kind, the CSV columns it uses (the others must be empty on its rows). */
const USED_COLUMNS = Object.fromEntries(
  KINDS.map((k) => [k, new Set(["kind", ...Object.keys(CSV_FIELDS[k]).map((f) => columnOf(k, f))])]),
) as Record<Kind, Set<string>>;

/**
 * The CSV, row by row from its UTF-8 bytes (legacy.csv.ts parseCsvBytes: the whole text is never
 * made, as the JSON restore never parses the whole file): each row's record is validated as it is
 * read and kept compact. Row-shape problems are answered before record ones.
 */
export function readCsvFile(bytes: Uint8Array): { file: StoredFile; locate: Locate } {
  const problems: Problem[] = [];
  const lines = Object.fromEntries(KINDS.map((k) => [k, [] as number[]])) as Record<Kind, number[]>;
  const col = new Map<string, number>();
  const locate: Locate = (kind, index, field) => {
    const line = lines[kind][index];
    if (field === undefined) return `line ${line}`;
    const c = columnOf(kind, field);
    return `line ${line}, column ${col.get(c)! + 1} (${c})`;
  };
  const collector = new Collector();
  let header: string[] | null = null;
  let kindCol = 0;
  try {
    for (const row of parseCsvBytes(bytes)) {
      if (header === null) {
        header = row.cells;
        header.forEach((h, i) => {
          if (!CSV_COLUMNS.includes(h)) problems.push({ code: "validation_failed", path: `line 1, column ${i + 1}`, message: `unknown column ${quoted(h)}` });
          else if (col.has(h)) problems.push({ code: "validation_failed", path: `line 1, column ${i + 1}`, message: `column ${h} appears twice` });
          else col.set(h, i);
        });
        for (const c of CSV_COLUMNS) if (!col.has(c) && !CSV_LATER_COLUMNS.has(c)) problems.push({ code: "validation_failed", path: "line 1", message: `missing column ${c}` });
        if (problems.length) rejectWith(problems);
        kindCol = col.get("kind")!;
        continue;
      }
      if (problems.length > MAX_PROBLEMS) break;
      if (row.cells.length === 1 && row.cells[0] === "") continue; // a blank line
      const at = (c: string) => `line ${row.line}, column ${col.get(c)! + 1} (${c})`;
      if (row.cells.length !== header.length) {
        problems.push({ code: "validation_failed", path: `line ${row.line}`, message: `${row.cells.length} cells; the header has ${header.length}` });
        continue;
      }
      const kindText = decodeCell(row.cells[kindCol]!);
      const kind = KIND_OF_CSV.get(kindText);
      if (!kind) {
        problems.push({ code: "validation_failed", path: at("kind"), message: `unknown kind ${quoted(kindText)} (folder, list, task, recurrence, habit, countdown, memo)` });
        continue;
      }
      const fields = CSV_FIELDS[kind];
      const record: Record<string, unknown> = {};
      const used = USED_COLUMNS[kind];
      for (const [field, type] of Object.entries(fields)) {
        const idx = col.get(columnOf(kind, field));
        // A column added later (CSV_LATER_COLUMNS) missing from an older file: the field is absent.
        if (idx === undefined) continue;
        const v = cellValue(type, decodeCell(row.cells[idx]!));
        // An empty optional JSON cell (lunar) is simply absent.
        if (!(v === null && type === "json" && field === "lunar")) record[field] = v;
      }
      for (const c of CSV_COLUMNS) {
        if (!used.has(c) && col.has(c) && row.cells[col.get(c)!] !== "") problems.push({ code: "validation_failed", path: at(c), message: `not a field of kind ${kindText}` });
      }
      lines[kind].push(row.line);
      collector.add(kind, record, locate, row.size);
    }
  } catch (e) {
    if (e instanceof CsvSyntaxError) rejectWith([...problems, { code: "validation_failed", path: `line ${e.line}, column ${e.column}`, message: e.message }]);
    throw e;
  }
  if (header === null) rejectWith([{ code: "validation_failed", path: "line 1", message: "the CSV is empty; a header row is required" }]);
  if (problems.length) rejectWith(problems);
  return { file: collector.finish(), locate };
}

/**
 * The CSV's bytes: the text/csv body, or the multipart field `file` (which must be there), checked
 * to be UTF-8 (with or without a BOM, which the parser skips) in one pass that makes no text.
 */
export function csvBytes(source: LegacySource): Uint8Array {
  if (source.kind !== "bytes" && source.kind !== "part") throw malformed("send the CSV as text/csv, or as the field `file` of multipart/form-data");
  const bytes = source.bytes;
  if (bytes === null) rejectWith([{ code: "validation_failed", path: "file", message: "a multipart field `file` with the CSV is required" }]);
  // The job's payload lets the bytes go: the reader holds them until the last row is read.
  (source as { bytes: Uint8Array | null }).bytes = null;
  if (!isUtf8(bytes)) throw malformed(source.kind === "bytes" ? "the body is not valid UTF-8" : "the CSV is not valid UTF-8");
  return bytes;
}

