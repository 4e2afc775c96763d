import { clipped } from "../../core/errors";
import { MemoryPacer } from "../../core/streams/memory-pacing";
import { needsLunar } from "../../features/countdowns/countdowns.rules";
import { MAX_PROBLEMS, rejectWith, zeroCounts, type Locate, type Problem } from "./legacy.problems";
import { RECORD_SCHEMAS, type LegacyRecords } from "./legacy.records";
import { KINDS, type Kind } from "./legacy.schemas";

/**
 * The validated file: per kind, one JSON string per record (its validated value) and the record
 * ids. Each record is parsed, validated and reduced to its string on its own, so a 100,000-task
 * file is never a tree of objects (nor held twice, raw and validated); the writes parse each
 * string again when they need it and drop it once written.
 */
export interface StoredFile {
  json: Record<Kind, string[]>;
  ids: Record<Kind, string[]>;
  /** A countdown of the lunar calendar is in the file: checking it needs loadLunar(). */
  needsLunar: boolean;
}

const perKind = <T>(make: () => T) => Object.fromEntries(KINDS.map((k) => [k, make()])) as Record<Kind, T>;

export function recordAt<K extends Kind>(f: StoredFile, kind: K, i: number): LegacyRecords[K][number] {
  return JSON.parse(f.json[kind][i]!) as LegacyRecords[K][number];
}

/** The record, which the file then lets go (it is written once). */
export function take<K extends Kind>(f: StoredFile, kind: K, i: number): LegacyRecords[K][number] {
  const r = recordAt(f, kind, i);
  f.json[kind][i] = "";
  return r;
}

/**
 * Parsing, validating and binding a record leaves garbage many times its size (~6 KB per task),
 * which the collector does not weigh soon enough: left alone, the heap grew by ~130 MiB between two
 * of its own collections; with a minor collection every WRITE_GC_RECORDS records it stays flat.
 * Writing, every tenth one is full: the records written so far (let go by `take`) have lived long
 * enough to be out of a minor collection's reach.
 */
export const recordPacer = (writing = false) => new MemoryPacer(WRITE_GC_RECORDS, writing ? 10 : 0);

/**
 * A copy of `s` that shares nothing with the text it was cut from: a CSV cell is a substring of its
 * row's text, and an id kept for the whole restore would keep that text alive (100,000 rows: ~100,000
 * row texts, 36 MiB more RSS after the read; bench/README.md, "Legacy export").
 */
function ownString(s: string): string {
  return JSON.parse(JSON.stringify(s)) as string;
}

/** Records between two collections while checking and writing. */
const WRITE_GC_RECORDS = 2000;
/** Bytes of input between two collections while reading a file (measured: 8 MiB → peak +80 MiB). */
const READ_GC_BYTES = 512 * 1024;

/**
 * Validates records one at a time as they are read, keeping the valid ones compact. Problems are
 * kept per kind and listed in kind order at the end, exactly as a whole-file validation would.
 */
export class Collector {
  readonly file: StoredFile = { json: perKind(() => []), ids: perKind(() => []), needsLunar: false };
  private readonly seen = zeroCounts();
  /** Per kind, the problems of each failing issue (an unknown-keys issue names several fields). */
  private readonly found = perKind<Problem[][]>(() => []);
  private readonly foundCount = zeroCounts();
  private failed = false;
  private readonly pacer = new MemoryPacer(READ_GC_BYTES);

  add(kind: Kind, raw: unknown, locate: Locate, size: number): void {
    const i = this.seen[kind]++;
    const res = RECORD_SCHEMAS[kind].safeParse(raw);
    if (res.success) {
      if (!this.failed) {
        this.file.json[kind].push(JSON.stringify(res.data));
        this.file.ids[kind].push(ownString((res.data as { id: string }).id));
        if (kind === "countdowns" && needsLunar(res.data as LegacyRecords["countdowns"][number])) this.file.needsLunar = true;
      }
    } else {
      if (!this.failed) {
        // The file will be refused: what was kept is not needed any more.
        this.failed = true;
        for (const k of KINDS) {
          this.file.json[k] = [];
          this.file.ids[k] = [];
        }
      }
      for (const issue of res.error.issues) {
        if (this.foundCount[kind] > MAX_PROBLEMS) break;
        let group: Problem[];
        if (issue.code === "unrecognized_keys") {
          // A record's own unknown field, or one inside a field (a reminder of its `reminders`): named where it is.
          const inside = issue.path.map(String);
          group = issue.keys.map((k) => ({
            code: "validation_failed",
            path: inside.length === 0 ? locate(kind, i, clipped(k)) : `${locate(kind, i, inside[0])} ${[...inside.slice(1), clipped(k)].join(".")}`,
            message: "unknown field",
          }));
        } else {
          const field = issue.path.length ? String(issue.path[0]) : undefined;
          const rest = issue.path.slice(1).map(String).join(".");
          group = [{ code: "validation_failed", path: locate(kind, i, field) + (rest ? ` ${rest}` : ""), message: issue.message }];
        }
        this.found[kind].push(group);
        this.foundCount[kind] += group.length;
      }
    }
    this.pacer.add(size);
  }

  /** The stored file, or the problems (kinds in KINDS order, at most MAX_PROBLEMS and a few). */
  finish(): StoredFile {
    if (this.failed) {
      const problems: Problem[] = [];
      for (const kind of KINDS) {
        for (const group of this.found[kind]) {
          if (problems.length > MAX_PROBLEMS) break;
          problems.push(...group);
        }
      }
      rejectWith(problems);
    }
    return this.file;
  }
}

