import { isUtf8 } from "node:buffer";
import { deleteAccountContent } from "../../features/account/account-content.repo";
import type { Core } from "../../core/core";
import { readTx, writeTx, type Tx } from "../../core/db";
import { dayNumber } from "../../core/days";
import { AppError, clipped, isStorageFull, malformed, quoted, storageFull, type FieldProblem } from "../../core/errors";
import type { RequestMeta } from "../../core/http";
import { newId } from "../../core/ids";
import { Streamed, type Job, type JobHandlers } from "../../core/jobs/jobs.host";
import { recordAudit } from "../../features/audit/audit.repo";
import { tagNameKey } from "../../features/tags/tags.repo";
import { runAfterCommit, type TaskPurgeHooks } from "../../features/tasks/tasks.purge-hooks";
import { DueAt } from "../../features/tasks/tasks.schemas";
import { recurrenceOnSubtaskProblem } from "../../features/tasks/tasks.rules";
import { checkedSeries, isDateOnly, parseRRule } from "../../features/recurrence/recurrence.engine";
import { loadLunar, needsLunar, type LunarCalendar } from "../../features/countdowns/countdowns.occurrence";
import { CsvSyntaxError, decodeCell, parseCsvBytes } from "./legacy.csv";
import { JsonSyntaxError, arrayElements, isArrayValue, parseSlice, readTopLevel, type Extent } from "./legacy.json";
import {
  LegacyInserts,
  allTaskIds,
  existingTasks,
  exportCountdowns,
  exportFolders,
  exportHabits,
  exportLists,
  exportMemos,
  exportRecurrences,
  exportTasks,
  hasPinnedCountdown,
  inboxId,
  owners,
  tagsByKey,
  updateInbox,
} from "./legacy.repo";
import { CSV_COLUMNS, CSV_FIELDS, CSV_KIND, CsvWriter, cellValue, columnOf, toRecord, type LegacyRecord } from "./legacy.present";
import { RECORD_SCHEMAS, type LegacyRecords } from "./legacy.records";
import { KINDS, type Counts, type Kind, type RestoreMode, type RestoreResult } from "./legacy.schemas";

/** Colour of a tag that a restore creates (tags travel by name only). */
const NEW_TAG_COLOR = "#808080";
/** At most this many problems are listed in one answer. */
const MAX_PROBLEMS = 100;

type Severity = "validation_failed" | "invalid_parent" | "invalid_reference";
interface Problem extends FieldProblem {
  code: Severity;
}

/** Where a record (and one of its fields) sits in the file, for error paths. */
type Locate = (kind: Kind, index: number, field?: string) => string;

const zeroCounts = (): Counts => ({ folders: 0, lists: 0, tasks: 0, recurrences: 0, habits: 0, countdowns: 0, memos: 0 });

function rejectWith(problems: Problem[]): never {
  const code: Severity = problems.some((p) => p.code === "validation_failed")
    ? "validation_failed"
    : problems.some((p) => p.code === "invalid_parent")
      ? "invalid_parent"
      : "invalid_reference";
  const listed = problems.slice(0, MAX_PROBLEMS).map(({ path, message }) => ({ path, message }));
  const more = problems.length > MAX_PROBLEMS ? ` (first ${MAX_PROBLEMS} of ${problems.length} listed)` : "";
  throw new AppError(code, `the file was not restored: ${problems.length} problem(s)${more}; first: ${listed[0]!.path}: ${listed[0]!.message}`, { errors: listed });
}

/**
 * Text gathered as UTF-8 bytes in ~256 KiB pieces: a 100,000-task export is held once, as bytes,
 * rather than as 100,000 strings plus their joined copy plus its encoding.
 */
class Utf8Chunks {
  private readonly chunks: Uint8Array<ArrayBuffer>[] = [];
  private pending: string[] = [];
  private pendingLength = 0;

  push(s: string): void {
    this.pending.push(s);
    this.pendingLength += s.length;
    if (this.pendingLength >= 256 * 1024) this.flush();
  }

  private flush(): void {
    if (this.pending.length === 0) return;
    this.chunks.push(new TextEncoder().encode(this.pending.join("")));
    this.pending = [];
    this.pendingLength = 0;
  }

  /**
   * The bytes as a stream that lets each piece go once it is sent (a Blob or a Response over one
   * buffer would copy them all first: the export's peak held the text twice).
   */
  stream(): ReadableStream<Uint8Array> {
    this.flush();
    const chunks = this.chunks.splice(0);
    const large = chunks.length > 16;
    let sent = 0;
    return new ReadableStream<Uint8Array>(
      {
        pull(ctrl) {
          const c = chunks.shift();
          if (c) {
            ctrl.enqueue(c);
            sent += c.byteLength;
            if (sent >= 4 * 1024 * 1024) {
              sent = 0;
              Bun.gc(false);
            }
          } else {
            ctrl.close();
            // A large export's garbage (rows, their JSON) goes back now rather than at the next request.
            if (large) Bun.gc(true);
          }
        },
        cancel() {
          chunks.length = 0;
        },
      },
      { highWaterMark: 0 },
    );
  }
}

/** An export: the account's data as a legacy JSON or CSV file. */
export interface LegacyExportJob {
  userId: string;
  format: "json" | "csv";
  meta: RequestMeta;
}

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

export interface LegacyRestoreJob {
  userId: string;
  format: "json" | "csv";
  source: LegacySource;
  mode: RestoreMode;
  meta: RequestMeta;
}

/**
 * The legacy jobs, run in the job worker (src/jobs.worker.ts): `purgeHooks` are the task purge
 * hooks the main thread has too (attachment files go after a replace commits).
 */
export function legacyJobs(purgeHooks: TaskPurgeHooks): JobHandlers {
  return {
    export: (p: LegacyExportJob, job: Job) => {
      const legacy = new LegacyTransfer(job.core, purgeHooks);
      return new Streamed(null, p.format === "json" ? legacy.exportJson(p.userId, p.meta) : legacy.exportCsv(p.userId, p.meta));
    },
    restore: (p: LegacyRestoreJob, job: Job) => {
      const legacy = new LegacyTransfer(job.core, purgeHooks);
      return p.format === "json" ? legacy.restoreJson(p.userId, p.source, p.mode, p.meta) : legacy.restoreCsv(p.userId, p.source, p.mode, p.meta);
    },
  };
}

/**
 * Legacy v1 export and restore (JSON and CSV): synchronous, heavy work, run in the job worker;
 * legacy.service.ts is the main thread's side (it reads the request). No HTTP here.
 */
class LegacyTransfer {
  constructor(
    private readonly core: Core,
    private readonly purgeHooks: TaskPurgeHooks,
  ) {}

  // ---- export ------------------------------------------------------------------------------

  /** Reads every kind in one snapshot and hands each record to `emit`; returns the counts. */
  private walk(userId: string, emit: (kind: Kind, record: LegacyRecord) => void): Counts {
    const counts = zeroCounts();
    const gc = gcEvery(WRITE_GC_RECORDS);
    readTx(this.core.db, (tx) => {
      const each = <R>(kind: Kind, rows: IterableIterator<R>, map: (r: R) => LegacyRecord) => {
        for (const r of rows) {
          emit(kind, map(r));
          counts[kind]++;
          gc();
        }
      };
      each("folders", exportFolders(tx, userId), toRecord.folders);
      each("lists", exportLists(tx, userId), toRecord.lists);
      each("tasks", exportTasks(tx, userId), toRecord.tasks);
      each("recurrences", exportRecurrences(tx, userId), toRecord.recurrences);
      each("habits", exportHabits(tx, userId), toRecord.habits);
      each("countdowns", exportCountdowns(tx, userId), toRecord.countdowns);
      each("memos", exportMemos(tx, userId), toRecord.memos);
    });
    return counts;
  }

  private audited(userId: string, meta: RequestMeta, format: "json" | "csv", counts: Counts): void {
    writeTx(this.core.db, (tx) =>
      recordAudit(tx, { userId, action: "legacy_exported", at: this.core.clock.now(), ip: meta.ip, userAgent: meta.userAgent, detail: { format, counts } }),
    );
  }

  /** The JSON export as UTF-8 bytes (records serialised one by one; no intermediate object tree). */
  exportJson(userId: string, meta: RequestMeta): ReadableStream<Uint8Array> {
    const exportedAt = this.core.clock.now().toISOString();
    const out = new Utf8Chunks();
    out.push(`{"format":"app-legacy","version":1,"exported_at":${JSON.stringify(exportedAt)}`);
    let current: Kind | null = null;
    let first = true;
    const counts = this.walk(userId, (kind, record) => {
      if (kind !== current) {
        if (current !== null) out.push("]");
        out.push(`,${JSON.stringify(kind)}:[`);
        current = kind;
        first = true;
      }
      out.push((first ? "" : ",") + JSON.stringify(record));
      first = false;
    });
    if (current !== null) out.push("]");
    // Kinds without records still appear, as empty arrays.
    out.push(KINDS.filter((k) => counts[k] === 0).map((k) => `,${JSON.stringify(k)}:[]`).join("") + "}");
    this.audited(userId, meta, "json", counts);
    return out.stream();
  }

  /** The CSV export: UTF-8 with a BOM, header row, one row per record. */
  exportCsv(userId: string, meta: RequestMeta): ReadableStream<Uint8Array> {
    const out = new Utf8Chunks();
    const w = new CsvWriter((row) => out.push(row));
    const counts = this.walk(userId, (kind, record) => w.add(kind, record));
    this.audited(userId, meta, "csv", counts);
    return out.stream();
  }

  // ---- restore -----------------------------------------------------------------------------

  /** POST /restore: the JSON body's bytes (read record by record), or what body.ts made of another body. */
  async restoreJson(userId: string, source: LegacySource, mode: RestoreMode, meta: RequestMeta): Promise<RestoreResult> {
    const locate: Locate = (kind, index, field) => `${kind}.${index}${field ? `.${field}` : ""}`;
    let file: StoredFile;
    try {
      file = readJsonFile(source, locate);
    } finally {
      // The body's bytes and every parsed record are garbage now: collect before the writes.
      Bun.gc(true);
    }
    return this.restore(userId, file, locate, mode, meta, "json");
  }

  /** POST /restore.csv: the CSV as text bytes, or the field `file` of a multipart body (read row by row from its bytes). */
  async restoreCsv(userId: string, source: LegacySource, mode: RestoreMode, meta: RequestMeta): Promise<RestoreResult> {
    let read: { file: StoredFile; locate: Locate };
    try {
      read = readCsvFile(csvBytes(source));
    } finally {
      // The body's bytes and every row's text are garbage now: collect before the writes.
      Bun.gc(true);
    }
    return this.restore(userId, read.file, read.locate, mode, meta, "csv");
  }

  private async restore(userId: string, file: StoredFile, locate: Locate, mode: RestoreMode, meta: RequestMeta, format: "json" | "csv"): Promise<RestoreResult> {
    try {
      // Lunar countdowns are checked against the lunar calendar, loaded on its first need.
      const lunar = file.needsLunar ? await loadLunar() : null;
      return this.restoreChecked(userId, file, locate, mode, meta, format, lunar);
    } catch (e) {
      // Disk full while writing: the transaction rolled back, as the backup restore says it.
      if (isStorageFull(e)) throw storageFull("the server ran out of space during the restore; nothing was changed", e);
      throw e;
    } finally {
      // What the restore held (the stored file, the id maps) is garbage now: give it back at once.
      Bun.gc(true);
    }
  }

  private restoreChecked(
    userId: string,
    file: StoredFile,
    locate: Locate,
    mode: RestoreMode,
    meta: RequestMeta,
    format: "json" | "csv",
    lunar: LunarCalendar | null,
  ): RestoreResult {
    const checked = checkReferences(file, locate, lunar);
    const result = writeTx(this.core.db, (tx) => {
      let after: (() => void)[] = [];
      if (mode === "replace") {
        after = this.purgeHooks.beforePurge(tx, userId, allTaskIds(tx, userId));
        deleteAccountContent(tx, userId);
      }
      const out = this.write(tx, userId, file, checked, mode, locate);
      recordAudit(tx, {
        userId,
        action: "legacy_restored",
        at: this.core.clock.now(),
        ip: meta.ip,
        userAgent: meta.userAgent,
        detail: { format, mode, counts: out.counts, skipped: out.skipped },
      });
      return { out, after };
    });
    runAfterCommit(result.after, (e) => this.core.logger.error("after-restore file cleanup failed", { error: String(e) }));
    return { mode, counts: result.out.counts, skipped: result.out.skipped };
  }

  /** Maps identifiers (kept where free), checks what depends on the account, inserts. */
  private write(tx: Tx, userId: string, f: StoredFile, c: CheckedFile, mode: RestoreMode, locate: Locate): { counts: Counts; skipped: Counts } {
    const counts = zeroCounts();
    const skipped = zeroCounts();
    const now = this.core.clock.now().toISOString();
    const ins = new LegacyInserts(tx);
    // Per kind: file id → target id, and which records are skipped (merge: the user already has them).
    const maps = {} as Record<Kind, Map<string, string>>;
    const skip = {} as Record<Kind, Set<string>>;
    for (const kind of KINDS) {
      const ids = f.ids[kind];
      const owner = owners(tx, kind, ids);
      const map = new Map<string, string>();
      const sk = new Set<string>();
      for (const id of ids) {
        const o = owner.get(id);
        if (o === undefined) map.set(id, id);
        else if (o === userId && mode === "merge") {
          map.set(id, id);
          sk.add(id);
        } else map.set(id, newId());
      }
      maps[kind] = map;
      skip[kind] = sk;
      Bun.gc(false);
    }
    const inbox = inboxId(tx, userId);
    const problems: Problem[] = [];

    const gc = gcEvery(WRITE_GC_RECORDS, true);
    for (let i = 0; i < f.json.folders.length; i++) {
      const r = take(f, "folders", i);
      if (skip.folders.has(r.id)) {
        skipped.folders++;
        continue;
      }
      ins.folder(maps.folders.get(r.id)!, userId, r);
      counts.folders++;
    }
    for (let i = 0; i < f.json.lists.length; i++) {
      const r = take(f, "lists", i);
      if (r.is_inbox) {
        // The file's inbox is the user's inbox: its tasks go there; replace takes its colour and place.
        maps.lists.set(r.id, inbox);
        if (mode === "replace") updateInbox(tx, inbox, r.color, r.position, r.updated_at);
        continue;
      }
      if (skip.lists.has(r.id)) {
        skipped.lists++;
        continue;
      }
      ins.list(maps.lists.get(r.id)!, userId, r.folder_id === null ? null : maps.folders.get(r.folder_id)!, r);
      counts.lists++;
    }

    // Merge: a subtask whose parent the user already has must still obey the one-level rule there.
    const existing = mode === "merge" ? existingTasks(tx, userId, [...skip.tasks]) : new Map();
    const tagIds = tagsByKey(tx, userId);
    const tagOf = (name: string): string => {
      const key = tagNameKey(name);
      let id = tagIds.get(key);
      if (!id) {
        id = newId();
        ins.tag(id, userId, name, key, NEW_TAG_COLOR, now);
        tagIds.set(key, id);
      }
      return id;
    };
    const insertTask = (r: LegacyRecords["tasks"][number], i: number) => {
      if (skip.tasks.has(r.id)) {
        skipped.tasks++;
        return;
      }
      const listId = maps.lists.get(r.list_id)!;
      let parentId: string | null = null;
      if (r.parent_id !== null) {
        parentId = maps.tasks.get(r.parent_id)!;
        const p = existing.get(parentId);
        if (p && (p.parent_id !== null || p.list_id !== listId)) {
          problems.push({ code: "invalid_parent", path: locate("tasks", i, "parent_id"), message: `task ${r.parent_id} already exists here as a subtask or in another list` });
          return;
        }
      }
      const id = maps.tasks.get(r.id)!;
      ins.task(id, userId, listId, parentId, r);
      for (const name of r.tags) ins.taskTag(id, tagOf(name));
      counts.tasks++;
      gc();
    };
    // File order, so that tasks created in the same millisecond come back in the same order (the
    // export orders by created_at, then insertion); a subtask that comes before its parent waits for
    // it (the foreign key is checked row by row). Validation made sure every parent is in the file.
    const placed = new Set<string>();
    const waiting = new Map<string, number[]>();
    const place = (r: LegacyRecords["tasks"][number], i: number): void => {
      insertTask(r, i);
      placed.add(r.id);
      const children = waiting.get(r.id);
      if (children) {
        waiting.delete(r.id);
        for (const j of children) place(take(f, "tasks", j), j);
      }
    };
    for (let i = 0; i < f.json.tasks.length; i++) {
      const r = recordAt(f, "tasks", i);
      if (r.parent_id !== null && !placed.has(r.parent_id)) {
        waiting.set(r.parent_id, [...(waiting.get(r.parent_id) ?? []), i]);
        continue;
      }
      f.json.tasks[i] = "";
      place(r, i);
    }
    // Unreachable after validation (every parent is a task of the file); kept so nothing is lost silently.
    for (const [, list] of waiting) for (const j of list) insertTask(take(f, "tasks", j), j);
    if (problems.length) rejectWith(problems);

    for (let i = 0; i < f.json.recurrences.length; i++) {
      const r = take(f, "recurrences", i);
      if (skip.recurrences.has(r.id)) {
        skipped.recurrences++;
        continue;
      }
      const taskId = maps.tasks.get(r.task_id)!;
      const had = existing.get(taskId);
      if (had?.has_recurrence) {
        problems.push({ code: "validation_failed", path: locate("recurrences", i, "task_id"), message: `task ${r.task_id} already has a recurrence here` });
        continue;
      }
      // Merge: a task the user already has (skipped) may be a subtask here, whatever the file says of it.
      const onSubtask = had ? recurrenceOnSubtaskProblem(had.parent_id) : null;
      if (onSubtask) {
        problems.push({ code: "validation_failed", path: locate("recurrences", i, "task_id"), message: `task ${r.task_id} already exists here as a subtask: ${onSubtask}` });
        continue;
      }
      ins.recurrence(maps.recurrences.get(r.id)!, userId, taskId, { ...r, dtstart: c.dtstart.get(r.id) ?? null });
      counts.recurrences++;
      gc();
    }
    for (let i = 0; i < f.json.habits.length; i++) {
      const r = take(f, "habits", i);
      if (skip.habits.has(r.id)) {
        skipped.habits++;
        continue;
      }
      ins.habit(maps.habits.get(r.id)!, userId, { ...r, frequency: JSON.stringify(r.frequency), archived_at: r.archived ? r.updated_at : null });
      counts.habits++;
    }
    // One pinned countdown per user: a merge keeps the pin the user already has.
    let pinTaken = mode === "merge" && hasPinnedCountdown(tx, userId);
    for (let i = 0; i < f.json.countdowns.length; i++) {
      const r = take(f, "countdowns", i);
      if (skip.countdowns.has(r.id)) {
        skipped.countdowns++;
        continue;
      }
      const lunar = c.lunar.get(r.id) ?? null;
      const pinned = r.pinned && !r.archived && !pinTaken;
      if (pinned) pinTaken = true;
      ins.countdown(maps.countdowns.get(r.id)!, userId, {
        ...r,
        pinned,
        lunar_month: lunar?.month ?? null,
        lunar_day: lunar?.day ?? null,
        lunar_leap: lunar ? lunar.leap : null,
        archived_at: r.archived ? r.updated_at : null,
      });
      counts.countdowns++;
    }
    for (let i = 0; i < f.json.memos.length; i++) {
      const r = take(f, "memos", i);
      if (skip.memos.has(r.id)) {
        skipped.memos++;
        continue;
      }
      ins.memo(maps.memos.get(r.id)!, userId, r);
      counts.memos++;
      gc();
    }
    if (problems.length) rejectWith(problems);
    return { counts, skipped };
  }
}

// ---- the validated file, compact -------------------------------------------------------------

/**
 * The validated file: per kind, one JSON string per record (its validated value) and the record
 * ids. Each record is parsed, validated and reduced to its string on its own, so a 100,000-task
 * file is never a tree of objects (nor held twice, raw and validated); the writes parse each
 * string again when they need it and drop it once written.
 */
interface StoredFile {
  json: Record<Kind, string[]>;
  ids: Record<Kind, string[]>;
  /** A countdown of the lunar calendar is in the file: checking it needs loadLunar(). */
  needsLunar: boolean;
}

const perKind = <T>(make: () => T) => Object.fromEntries(KINDS.map((k) => [k, make()])) as Record<Kind, T>;

function recordAt<K extends Kind>(f: StoredFile, kind: K, i: number): LegacyRecords[K][number] {
  return JSON.parse(f.json[kind][i]!) as LegacyRecords[K][number];
}

/** The record, which the file then lets go (it is written once). */
function take<K extends Kind>(f: StoredFile, kind: K, i: number): LegacyRecords[K][number] {
  const r = recordAt(f, kind, i);
  f.json[kind][i] = "";
  return r;
}

/**
 * A minor collection (`Bun.gc(false)`: young objects only, cheap) every `n` calls, and with
 * `fullToo` a full one every `10 n`. Parsing, validating and binding a record leaves garbage many times its size (~6 KB per
 * task), which the collector does not weigh soon enough: left alone, the heap grew by ~130 MiB
 * between two of its own collections; with a minor collection every 2,000 records it stays flat.
 */
function gcEvery(n: number, fullToo = false): () => void {
  let since = 0;
  let minor = 0;
  return () => {
    if (++since >= n) {
      since = 0;
      // Writing: every tenth one is a full collection, as the records written so far (let go by
      // `take`) have lived long enough to be out of a minor collection's reach.
      Bun.gc(fullToo && ++minor % 10 === 0);
    }
  };
}

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
class Collector {
  readonly file: StoredFile = { json: perKind(() => []), ids: perKind(() => []), needsLunar: false };
  private readonly seen = zeroCounts();
  /** Per kind, the problems of each failing issue (an unknown-keys issue names several fields). */
  private readonly found = perKind<Problem[][]>(() => []);
  private readonly foundCount = zeroCounts();
  private failed = false;
  private sinceGc = 0;

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
          group = issue.keys.map((k) => ({ code: "validation_failed", path: locate(kind, i, clipped(k)), message: "unknown field" }));
        } else {
          const field = issue.path.length ? String(issue.path[0]) : undefined;
          const rest = issue.path.slice(1).map(String).join(".");
          group = [{ code: "validation_failed", path: locate(kind, i, field) + (rest ? ` ${rest}` : ""), message: issue.message }];
        }
        this.found[kind].push(group);
        this.foundCount[kind] += group.length;
      }
    }
    this.sinceGc += size;
    if (this.sinceGc >= READ_GC_BYTES) {
      this.sinceGc = 0;
      Bun.gc(false);
    }
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

// ---- reading the two file forms ------------------------------------------------------------

const TOP_LEVEL_KEYS = new Set<string>(["format", "version", "exported_at", ...KINDS]);
const isKind = (k: string): k is Kind => (KINDS as readonly string[]).includes(k);

/**
 * The JSON file from its bytes, record by record (legacy.json.ts). The order of the answers is
 * the one a whole-file `JSON.parse` then validation gives: not JSON anywhere → 400; then the
 * envelope (format, version, unknown fields, kinds that are not arrays); then the records.
 */
function readJsonFile(source: LegacySource, locate: Locate): StoredFile {
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
    for (const a of arrays) for (const e of arrayElements(bytes, a)) parseSlice(bytes, e.start, e.end);
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
    for (const e of arrayElements(bytes, a)) c.add(kind, parseSlice(bytes, e.start, e.end), locate, e.end - e.start);
  }
  return c.finish();
}

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
function readCsvFile(bytes: Uint8Array): { file: StoredFile; locate: Locate } {
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
        for (const c of CSV_COLUMNS) if (!col.has(c)) problems.push({ code: "validation_failed", path: "line 1", message: `missing column ${c}` });
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
        const v = cellValue(type, decodeCell(row.cells[col.get(columnOf(kind, field))!]!));
        // An empty optional JSON cell (lunar) is simply absent.
        if (!(v === null && type === "json" && field === "lunar")) record[field] = v;
      }
      for (const c of CSV_COLUMNS) {
        if (!used.has(c) && row.cells[col.get(c)!] !== "") problems.push({ code: "validation_failed", path: at(c), message: `not a field of kind ${kindText}` });
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
function csvBytes(source: LegacySource): Uint8Array {
  if (source.kind !== "bytes" && source.kind !== "part") throw malformed("send the CSV as text/csv, or as the field `file` of multipart/form-data");
  const bytes = source.bytes;
  if (bytes === null) rejectWith([{ code: "validation_failed", path: "file", message: "a multipart field `file` with the CSV is required" }]);
  // The job's payload lets the bytes go: the reader holds them until the last row is read.
  (source as { bytes: Uint8Array | null }).bytes = null;
  if (!isUtf8(bytes)) throw malformed(source.kind === "bytes" ? "the body is not valid UTF-8" : "the CSV is not valid UTF-8");
  return bytes;
}

// ---- validation (before any write) ---------------------------------------------------------

interface CheckedFile {
  /** Recurrence id → its DTSTART (kind rrule). */
  dtstart: Map<string, string>;
  /** Countdown id → lunar month/day (lunar calendar). */
  lunar: Map<string, { month: number; day: number; leap: boolean }>;
}

/** Everything that can be checked within the file: duplicates, references, the task tree, schedules. */
function checkReferences(f: StoredFile, locate: Locate, lunarCalendar: LunarCalendar | null): CheckedFile {
  const problems: Problem[] = [];
  const idsOf = new Map<Kind, Map<string, number>>();
  for (const kind of KINDS) {
    const seen = new Map<string, number>();
    f.ids[kind].forEach((id, i) => {
      if (seen.has(id)) problems.push({ code: "validation_failed", path: locate(kind, i, "id"), message: `id ${id} appears twice` });
      else seen.set(id, i);
    });
    idsOf.set(kind, seen);
  }
  const folders = idsOf.get("folders")!;
  const lists = idsOf.get("lists")!;
  const tasks = idsOf.get("tasks")!;
  let inboxes = 0;
  const gc = gcEvery(WRITE_GC_RECORDS);
  const each = <K extends Kind>(kind: K, fn: (r: LegacyRecords[K][number], i: number) => void) => {
    for (let i = 0; i < f.json[kind].length; i++) {
      fn(recordAt(f, kind, i), i);
      gc();
    }
  };
  each("lists", (l, i) => {
    if (l.is_inbox) {
      inboxes++;
      if (inboxes > 1) problems.push({ code: "validation_failed", path: locate("lists", i, "is_inbox"), message: "only one list can be the inbox" });
      if (l.deleted_at !== null) problems.push({ code: "validation_failed", path: locate("lists", i, "deleted_at"), message: "the inbox cannot be archived" });
    }
    if (l.folder_id !== null && !folders.has(l.folder_id)) {
      problems.push({ code: "invalid_reference", path: locate("lists", i, "folder_id"), message: `no folder ${l.folder_id} in the file` });
    }
  });
  each("tasks", (t, i) => {
    if (!lists.has(t.list_id)) problems.push({ code: "invalid_reference", path: locate("tasks", i, "list_id"), message: `no list ${t.list_id} in the file` });
    if (t.parent_id === null) return;
    const pi = tasks.get(t.parent_id);
    if (pi === undefined) {
      problems.push({ code: "invalid_reference", path: locate("tasks", i, "parent_id"), message: `no task ${t.parent_id} in the file` });
      return;
    }
    const p = recordAt(f, "tasks", pi);
    if (p.parent_id !== null) problems.push({ code: "invalid_parent", path: locate("tasks", i, "parent_id"), message: `task ${t.parent_id} is itself a subtask; nesting is one level deep` });
    else if (p.list_id !== t.list_id) problems.push({ code: "invalid_parent", path: locate("tasks", i, "parent_id"), message: `task ${t.parent_id} is in another list` });
  });
  const dtstart = new Map<string, string>();
  const recurring = new Set<string>();
  each("recurrences", (r, i) => {
    const ti = tasks.get(r.task_id);
    if (ti === undefined) {
      problems.push({ code: "invalid_reference", path: locate("recurrences", i, "task_id"), message: `no task ${r.task_id} in the file` });
      return;
    }
    const task = recordAt(f, "tasks", ti);
    const onSubtask = recurrenceOnSubtaskProblem(task.parent_id);
    if (onSubtask) problems.push({ code: "validation_failed", path: locate("recurrences", i, "task_id"), message: onSubtask });
    if (recurring.has(r.task_id)) problems.push({ code: "validation_failed", path: locate("recurrences", i, "task_id"), message: `task ${r.task_id} has two recurrences` });
    recurring.add(r.task_id);
    if (r.kind !== "rrule") return;
    let start: string | null = task.due_at;
    if (r.dtstart !== null) {
      const d = DueAt.safeParse(r.dtstart);
      if (!d.success || d.data === null) {
        problems.push({ code: "validation_failed", path: locate("recurrences", i, "dtstart"), message: "a date YYYY-MM-DD or an RFC 3339 date-time" });
        return;
      }
      start = d.data;
    }
    if (start === null) {
      problems.push({ code: "validation_failed", path: locate("recurrences", i, "dtstart"), message: "an rrule recurrence needs a first occurrence (dtstart or the task's due_at)" });
      return;
    }
    const parsed = parseRRule(r.rrule!, isDateOnly(start));
    if (!parsed.ok) {
      problems.push({ code: "validation_failed", path: locate("recurrences", i, "rrule"), message: parsed.message });
      return;
    }
    const series = checkedSeries(parsed.rule, start, r.timezone);
    if (!series.ok) {
      problems.push({ code: "validation_failed", path: locate("recurrences", i, "rrule"), message: series.message });
      return;
    }
    dtstart.set(r.id, start);
  });
  const lunar = new Map<string, { month: number; day: number; leap: boolean }>();
  let pinned = 0;
  each("countdowns", (c, i) => {
    if (c.pinned && ++pinned > 1) problems.push({ code: "validation_failed", path: locate("countdowns", i, "pinned"), message: "only one countdown can be pinned" });
    if (c.calendar !== "lunar") return;
    if (!lunarCalendar) throw new Error("a lunar countdown needs the lunar calendar (StoredFile.needsLunar)");
    const l = lunarCalendar.toLunar(dayNumber(c.date), Number(c.date.slice(0, 4)));
    if (!lunarCalendar.inLunarRange(l)) {
      const range = `${lunarCalendar.LUNAR_MIN_YEAR} to ${lunarCalendar.LUNAR_MAX_YEAR}`;
      problems.push({ code: "validation_failed", path: locate("countdowns", i, "date"), message: `a lunar countdown needs a date in the lunar years ${range}` });
      return;
    }
    lunar.set(c.id, { month: l.month, day: l.day, leap: l.leap });
  });
  if (problems.length) rejectWith(problems);
  return { dtstart, lunar };
}
