import type { Core } from "../../core/core";
import { writeTx } from "../../core/db";
import { isStorageFull, storageFull } from "../../core/errors";
import type { RequestMeta } from "../../core/http";
import { Streamed, type Job, type JobHandlers } from "../../core/jobs/jobs.host";
import { collectGarbage } from "../../core/streams/memory-pacing";
import { deleteAccountContent } from "../account-content";
import { recordAudit } from "../../features/audit/audit.repo";
import { loadLunar, type LunarCalendar } from "../../features/countdowns/countdowns.rules";
import { taskIdsOfUser } from "../../features/tasks/tasks.repo";
import { runAfterCommit } from "../../core/db";
import type { TaskPurgeHooks } from "../../features/tasks/tasks.purge-hooks";
import { checkReferences } from "./legacy.check";
import { exportCsv, exportJson } from "./legacy.export";
import type { Locate } from "./legacy.problems";
import { csvBytes, readCsvFile, readJsonFile, type LegacySource } from "./legacy.read";
import type { StoredFile } from "./legacy.stored";
import { writeFile } from "./legacy.write";
import type { RestoreMode, RestoreResult } from "./legacy.schemas";

// Legacy v1 export and restore (JSON and CSV): synchronous, heavy work, run in the job worker;
// legacy.service.ts is the main thread's side (it reads the request). No HTTP here. The parts:
// legacy.export.ts makes the files; a restore reads (legacy.read.ts, into legacy.stored.ts),
// checks (legacy.check.ts) and writes (legacy.write.ts) through the owning feature repos.

export type { LegacySource };

/** An export: the account's data as a legacy JSON or CSV file. */
export interface LegacyExportJob {
  userId: string;
  format: "json" | "csv";
  meta: RequestMeta;
}

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
    export: (p: LegacyExportJob, job: Job) =>
      new Streamed(null, p.format === "json" ? exportJson(job.core, p.userId, p.meta) : exportCsv(job.core, p.userId, p.meta)),
    restore: (p: LegacyRestoreJob, job: Job) => restore(job.core, purgeHooks, p),
  };
}

/** POST /restore (JSON: read record by record) or /restore.csv (read row by row from its bytes). */
async function restore(core: Core, purgeHooks: TaskPurgeHooks, p: LegacyRestoreJob): Promise<RestoreResult> {
  let file: StoredFile;
  let locate: Locate;
  try {
    if (p.format === "json") {
      locate = (kind, index, field) => `${kind}.${index}${field ? `.${field}` : ""}`;
      file = readJsonFile(p.source, locate);
    } else ({ file, locate } = readCsvFile(csvBytes(p.source)));
  } finally {
    // The body's bytes and every parsed record or row's text are garbage now: collect before the writes.
    collectGarbage(true);
  }
  try {
    // Lunar countdowns are checked against the lunar calendar, loaded on its first need.
    const lunar = file.needsLunar ? await loadLunar() : null;
    return restoreChecked(core, purgeHooks, p, file, locate, lunar);
  } catch (e) {
    // Disk full while writing: the transaction rolled back, as the backup restore says it.
    if (isStorageFull(e)) throw storageFull("the server ran out of space during the restore; nothing was changed", e);
    throw e;
  } finally {
    // What the restore held (the stored file, the id maps) is garbage now: give it back at once.
    collectGarbage(true);
  }
}

/** Checks the file, then (one transaction) empties the account for a replace, writes, audits. */
function restoreChecked(core: Core, purgeHooks: TaskPurgeHooks, p: LegacyRestoreJob, file: StoredFile, locate: Locate, lunar: LunarCalendar | null): RestoreResult {
  const { userId, mode, meta, format } = p;
  const checked = checkReferences(file, locate, lunar);
  const result = writeTx(core.db, (tx) => {
    let after: (() => void)[] = [];
    if (mode === "replace") {
      after = purgeHooks.beforePurge(tx, userId, taskIdsOfUser(tx, userId));
      deleteAccountContent(tx, userId);
    }
    const out = writeFile(tx, userId, file, checked, mode, locate, core.clock.now().toISOString());
    recordAudit(tx, {
      userId,
      action: "legacy_restored",
      at: core.clock.now(),
      ip: meta.ip,
      userAgent: meta.userAgent,
      detail: { format, mode, counts: out.counts, skipped: out.skipped },
    });
    return { out, after };
  });
  runAfterCommit(core.db, result.after, (e) => core.logger.error("after-restore file cleanup failed", { error: String(e) }));
  return { mode, counts: result.out.counts, skipped: result.out.skipped };
}
