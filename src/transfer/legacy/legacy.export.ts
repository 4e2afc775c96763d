import type { Core } from "../../core/core";
import { readTx, writeTx } from "../../core/db";
import type { RequestMeta } from "../../core/http";
import { collectGarbage, MemoryPacer } from "../../core/streams/memory-pacing";
import { recordAudit } from "../../features/audit/audit.repo";
import { countdownRowsInOrder } from "../../features/countdowns/countdowns.repo";
import { liveFolderRowsInOrder } from "../../features/folders/folders.repo";
import { habitRowsInOrder } from "../../features/habits/habits.repo";
import { listRowsInOrder } from "../../features/lists/lists.repo";
import { memoRowsInOrder } from "../../features/memos/memos.repo";
import { recurrenceRowsInOrder } from "../../features/recurrence/recurrence.repo";
import { taskRowsWithTagNames } from "../../features/tasks/tasks.repo";
import { exportReminderRows } from "../../features/reminders/reminders.repo";
import { CsvWriter, reminderRecord, toRecord, type LegacyRecord } from "./legacy.present";
import { zeroCounts } from "./legacy.problems";
import { recordPacer } from "./legacy.stored";
import { KINDS, type Counts, type Kind } from "./legacy.schemas";

// The legacy export (JSON and CSV), made in the job worker: every kind read in one snapshot
// through the owning repos, each record serialised on its own (no intermediate object tree).

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
    // Every 4 MiB sent, the pieces let go so far are collected (minor).
    const pacer = new MemoryPacer(4 * 1024 * 1024);
    return new ReadableStream<Uint8Array>(
      {
        pull(ctrl) {
          const c = chunks.shift();
          if (c) {
            ctrl.enqueue(c);
            pacer.add(c.byteLength);
          } else {
            ctrl.close();
            // A large export's garbage (rows, their JSON) goes back now rather than at the next request.
            if (large) collectGarbage(true);
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


/** Reads every kind in one snapshot and hands each record to `emit`; returns the counts. */
function walk(core: Core, userId: string, emit: (kind: Kind, record: LegacyRecord) => void): Counts {
  const counts = zeroCounts();
  const pacer = recordPacer();
  readTx(core.db, (tx) => {
    const each = <R>(kind: Kind, rows: Iterable<R>, map: (r: R) => LegacyRecord) => {
      for (const r of rows) {
        emit(kind, map(r));
        counts[kind]++;
        pacer.add();
      }
    };
    // The user's own reminders (personal: on a shared list's task, only theirs), by target, in creation order.
    const reminders = new Map<string, LegacyRecord[]>();
    for (const r of exportReminderRows(tx, userId)) {
      const key = `${r.target_type}:${r.target_id}`;
      reminders.set(key, [...(reminders.get(key) ?? []), reminderRecord(r)]);
    }
    const of = (type: string, id: string) => reminders.get(`${type}:${id}`) ?? [];
    each("folders", liveFolderRowsInOrder(tx, userId), toRecord.folders);
    each("lists", listRowsInOrder(tx, userId), toRecord.lists);
    each("tasks", taskRowsWithTagNames(tx, userId), (r) => toRecord.tasks(r, of("task", r.id)));
    each("recurrences", recurrenceRowsInOrder(tx, userId), toRecord.recurrences);
    each("habits", habitRowsInOrder(tx, userId), (r) => toRecord.habits(r, of("habit", r.id)));
    each("countdowns", countdownRowsInOrder(tx, userId), (r) => toRecord.countdowns(r, of("countdown", r.id)));
    each("memos", memoRowsInOrder(tx, userId), toRecord.memos);
  });
  return counts;
}

function audited(core: Core, userId: string, meta: RequestMeta, format: "json" | "csv", counts: Counts): void {
  writeTx(core.db, (tx) =>
    recordAudit(tx, { userId, action: "legacy_exported", at: core.clock.now(), ip: meta.ip, userAgent: meta.userAgent, detail: { format, counts } }),
  );
}

/** The JSON export as UTF-8 bytes (records serialised one by one; no intermediate object tree). */
export function exportJson(core: Core, userId: string, meta: RequestMeta): ReadableStream<Uint8Array> {
  const exportedAt = core.clock.now().toISOString();
  const out = new Utf8Chunks();
  out.push(`{"format":"app-legacy","version":1,"exported_at":${JSON.stringify(exportedAt)}`);
  let current: Kind | null = null;
  let first = true;
  const counts = walk(core, userId, (kind, record) => {
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
  audited(core, userId, meta, "json", counts);
  return out.stream();
}

/** The CSV export: UTF-8 with a BOM, header row, one row per record. */
export function exportCsv(core: Core, userId: string, meta: RequestMeta): ReadableStream<Uint8Array> {
  const out = new Utf8Chunks();
  const w = new CsvWriter((row) => out.push(row));
  const counts = walk(core, userId, (kind, record) => w.add(kind, record));
  audited(core, userId, meta, "csv", counts);
  return out.stream();
}
