import { Zip, ZipDeflate, ZipPassThrough } from "fflate";
import { join } from "node:path";
import { AppError, isStorageFull, storageFull } from "../../core/errors";
import { gcHint } from "./backup.archive";
import { AttachmentFileMissing, type BackupFiles } from "./backup.files";
import { occurrence, type CountdownRule, type LunarCalendar } from "../../features/countdowns/countdowns.rules";
import { openReadOnly, type Conn } from "../../core/db";
import { usernameOf } from "../../features/account/account.repo";
import { attachmentBytesOfUser } from "../../features/attachments/attachments.repo";
import { exceptionDatesReader } from "../../features/recurrence/recurrence.repo";
import { iterateRecords } from "./backup.repo";
import { ENTITIES, type Entity } from "./backup.records";

/** fflate writes no ZIP64 records: an archive (and every offset in it) must stay under 4 GiB. */
export const ZIP32_LIMIT = 0xffffffff;
/** Room kept below the limit for the JSON entries, headers and central directory. */
const HEADROOM = 256 * 1024 * 1024;
/** JSON text is batched to about this many bytes before it is deflated. */
const BATCH = 64 * 1024;

export interface ExportPlan {
  backupId: string;
  userId: string;
  createdAt: string;
  appVersion: string;
  /** The exporting user's today (day number, in their zone): a countdown's derived fields count from it. */
  today: number;
  /** The lunar calendar (loadLunar()), for the derived fields of lunar countdowns. */
  lunar: LunarCalendar;
}

type Rec = Record<string, unknown>;

/**
 * A stored record (backup.repo's shape) → the archive's record: the API representation's fields
 * in the API's order, with the documented extras beside them. Habits and countdowns gain
 * `archived` (next to `archived_at`), countdowns their derived `next_date`, `days_until` and
 * `count` as the API computes them for `today`, recurrences their `exceptions`.
 */
export function toArchiveRecord(entity: Entity, r: Rec, today: number, lunar: LunarCalendar, exceptionsOf: (recurrenceId: string) => string[]): Rec {
  switch (entity) {
    case "recurrences": {
      const { created_at, updated_at, ...rest } = r;
      return { ...rest, exceptions: exceptionsOf(r.id as string), created_at, updated_at };
    }
    case "habits": {
      const { archived_at, created_at, updated_at, ...rest } = r;
      return { ...rest, archived: archived_at !== null, archived_at, created_at, updated_at };
    }
    case "countdowns": {
      const { archived_at, created_at, updated_at, ...rest } = r;
      const rule = { date: r.date, repeat: r.repeat, calendar: r.calendar, type: r.type, lunar: r.lunar } as CountdownRule;
      const o = occurrence(rule, today, lunar);
      return { ...rest, archived: archived_at !== null, archived_at, next_date: o.next_date, days_until: o.days_until, count: o.count, created_at, updated_at };
    }
    default:
      return r;
  }
}

/**
 * The archive as a pull stream: nothing is produced until the client reads, so memory stays flat
 * whatever the size. The snapshot is a read transaction on a connection of its own, held until
 * the stream ends (it must outlive awaits, which the shared connection's transactions cannot);
 * attachment files are hard-linked at the start so a purge during the download cannot take them.
 */
export function exportStream(dbPath: string, files: BackupFiles, plan: ExportPlan, onDone: (ok: boolean) => void): ReadableStream<Uint8Array> {
  const conn = openReadOnly(dbPath);
  conn.sqlite.run("BEGIN");
  let linked: string | null = null;
  const release = () => {
    try {
      conn.sqlite.run("ROLLBACK");
    } catch {
      /* already ended */
    }
    conn.close();
    if (linked) files.removeExport(plan.backupId);
    linked = null;
  };
  let attachmentsDir: string;
  try {
    // The first read fixes the snapshot; everything after sees the same database.
    if (attachmentBytesOfUser(conn, plan.userId) > ZIP32_LIMIT - HEADROOM) {
      throw new AppError(
        "state_conflict",
        "the account's attachments pass the 4 GiB a ZIP archive without ZIP64 can hold; remove some attachments or use the legacy export for the data alone",
        { variant: "archive_too_large" },
      );
    }
    const ids = [...iterateRecords(conn, "attachments", plan.userId)].map((r) => r.id as string);
    linked = plan.backupId;
    attachmentsDir = files.linkForExport(plan.backupId, ids);
  } catch (e) {
    release();
    if (e instanceof AppError) throw e;
    // Say what happened (core/problem.ts logs the cause with the 5xx): a file gone, a full disk, or something else.
    if (isStorageFull(e)) throw storageFull("the server has no space left to prepare the export", e);
    const detail = e instanceof AttachmentFileMissing ? "an attachment file is missing; try again" : "the export could not be prepared; try again later";
    throw new AppError("internal_error", detail, { variant: "export_failed", cause: e });
  }
  const gen = produce(conn, attachmentsDir, plan);
  let finished = false;
  const end = (ok: boolean) => {
    if (finished) return;
    finished = true;
    release();
    onDone(ok);
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(ctrl) {
        try {
          const { value, done } = await gen.next();
          if (done) {
            end(true);
            ctrl.close();
          } else ctrl.enqueue(value);
        } catch (e) {
          end(false);
          ctrl.error(e);
        }
      },
      async cancel() {
        // The client went away: stop reading, end the snapshot, remove the links.
        await gen.return(undefined).catch(() => {});
        end(false);
      },
    },
    { highWaterMark: 0 },
  );
}

async function* produce(conn: Conn, attachmentsDir: string, plan: ExportPlan): AsyncGenerator<Uint8Array> {
  const out: Uint8Array[] = [];
  let failure: Error | null = null;
  let written = 0;
  const zip = new Zip((err, chunk) => {
    if (err) failure = err;
    else {
      written += chunk.byteLength;
      out.push(chunk);
      gcHint(chunk.byteLength);
    }
  });
  const drain = function* () {
    if (failure) throw failure;
    if (written > ZIP32_LIMIT) throw new Error("the archive passed 4 GiB (ZIP64 is not supported)");
    while (out.length) yield out.shift()!;
  };
  const mtime = new Date(plan.createdAt);
  const entries: Record<string, { size: number; sha256: string }> = {};
  const counts = {} as Record<Entity, number>;
  const enc = new TextEncoder();
  const exceptions = exceptionDatesReader(conn);

  try {
    for (const entity of ENTITIES) {
      const name = `data/${entity}.json`;
      const f = new ZipDeflate(name, { level: 6 });
      f.mtime = mtime;
      zip.add(f);
      const sha = new Bun.CryptoHasher("sha256");
      let size = 0;
      let n = 0;
      let buf = "[";
      const flush = (final: boolean) => {
        const b = enc.encode(buf);
        // Rows, their JSON and the deflate buffers are garbage several times the text's size.
        gcHint(b.byteLength * 3);
        buf = "";
        sha.update(b);
        size += b.byteLength;
        f.push(b, final);
      };
      for (const r of iterateRecords(conn, entity, plan.userId)) {
        buf += (n++ === 0 ? "\n" : ",\n") + JSON.stringify(toArchiveRecord(entity, r, plan.today, plan.lunar, exceptions.of));
        if (buf.length >= BATCH) {
          flush(false);
          yield* drain();
        }
      }
      buf += n === 0 ? "]\n" : "\n]\n";
      flush(true);
      counts[entity] = n;
      entries[name] = { size, sha256: sha.digest("hex") };
      yield* drain();
    }
  } finally {
    exceptions.finalize();
  }

  for (const a of iterateRecords(conn, "attachments", plan.userId)) {
    const id = a.id as string;
    const name = `attachments/${id}`;
    // Stored, not deflated: most attachment types are compressed already, and a very repetitive
    // text file could deflate past the preflight's ratio cap (200:1) and make the backup unrestorable.
    const f = new ZipPassThrough(name);
    f.mtime = mtime;
    zip.add(f);
    const sha = new Bun.CryptoHasher("sha256");
    let size = 0;
    for await (const chunk of Bun.file(join(attachmentsDir, id)).stream()) {
      sha.update(chunk);
      size += chunk.byteLength;
      gcHint(chunk.byteLength);
      f.push(chunk, false);
      yield* drain();
    }
    f.push(new Uint8Array(0), true);
    entries[name] = { size, sha256: sha.digest("hex") };
    yield* drain();
  }

  const manifest = {
    format: "app-backup",
    version: 2,
    backup_id: plan.backupId,
    created_at: plan.createdAt,
    app_version: plan.appVersion,
    source_user: { id: plan.userId, username: usernameOf(conn, plan.userId) },
    counts,
    entries,
  };
  const m = new ZipDeflate("manifest.json", { level: 6 });
  m.mtime = mtime;
  zip.add(m);
  m.push(enc.encode(JSON.stringify(manifest, null, 1)), true);
  zip.end();
  yield* drain();
}
