import { closeSync, existsSync, fdatasyncSync, openSync, rmSync, statSync, writeSync } from "node:fs";
import type { Core } from "../../core/core";
import { dayNumber } from "../../core/days";
import { writeTx } from "../../core/db";
import { collectGarbage } from "../../core/streams/memory-pacing";
import { AppError, isStorageFull } from "../../core/errors";
import type { RequestMeta } from "../../core/http";
import { newId, newToken } from "../../core/ids";
import { Streamed, type Job, type JobHandlers } from "../../core/jobs/jobs.host";
import { localDate } from "../../core/time";
import { recordAudit } from "../../features/audit/audit.repo";
import { assertWithinQuota, attachmentQuota } from "../../features/attachments/attachments.rules";
import { attachmentIdsOfUser, usedBytes } from "../../features/attachments/attachments.repo";
import { loadLunar } from "../../features/countdowns/countdowns.rules";
import { inflateEntry, readCentralDirectory, ZipFile, type ZipError } from "./backup.archive";
import { exportStream } from "./backup.export";
import { quotaExceeded, stagingFull, storageFull, tokenConsumed, tokenInvalid } from "./backup.errors";
import { BackupFiles, failpoint, FLUSH_EVERY_BYTES } from "./backup.files";
import { importArchive } from "./backup.import";
import { consumePreflight, deleteBusinessData, insertPreflight, insertRestore, markAnswered, pendingOf, type PreflightRow, type RestoreRow } from "./backup.repo";
import { finishRestoreFiles } from "./backup.reconcile";
import type { Mode, PreflightResult, RestoreResult } from "./backup.schemas";
import { ARCHIVE_DIRECTORIES, Problems, readRecords, validateArchive, type ArchiveRules } from "./backup.validate";

/**
 * The backup's heavy work, run in the job worker (src/jobs.worker.ts) with the worker's own
 * connection: the export's snapshot and archive, the preflight's validation of a staged archive,
 * and the restore's import. backup.service.ts (main thread) does everything that needs the request
 * (the upload, quotas, tokens) and hands these over as plain data.
 */

export interface ExportJob {
  user: { id: string; timezone: string };
  meta: RequestMeta;
}
export interface ExportHead {
  filename: string;
}

/** A staged upload (backup/staging/<id>.zip, renamed there by the main thread) to validate and record. */
export interface PreflightJob {
  id: string;
  userId: string;
  mode: Mode;
  sha: string;
  size: number;
  meta: RequestMeta;
}

/** A restore whose token the main thread has checked (owner, mode, not consumed, not expired). */
export interface RestoreJob {
  pf: PreflightRow;
  userId: string;
  meta: RequestMeta;
}

const sha256Hex = (s: string) => new Bun.CryptoHasher("sha256").update(s).digest("hex");

function limitsOf(core: Core): ArchiveRules {
  const c = core.config;
  const quota = attachmentQuota(c);
  return {
    emptyDirectories: ARCHIVE_DIRECTORIES,
    maxEntries: c.backupMaxEntries,
    maxRatio: c.backupMaxRatio,
    maxTotalBytes: c.backupMaxInflatedBytes,
    attachmentMaxBytes: c.attachmentMaxBytes,
    attachmentQuota: quota === null ? null : { bytes: quota, usedBy: (userId) => usedBytes(core.db, userId) },
  };
}

export function backupJobs(): JobHandlers {
  return {
    export: (p: ExportJob, job: Job) => exportArchive(job.core, p),
    preflight: (p: PreflightJob, job: Job) => validateStaged(job.core, p),
    restore: (p: RestoreJob, job: Job) => restoreStaged(job.core, p),
  };
}

// ---- export ----

async function exportArchive(core: Core, { user, meta }: ExportJob): Promise<Streamed<ExportHead>> {
  // A lunar countdown's derived fields need the lunar calendar (loaded on its first need).
  const lunar = await loadLunar();
  const userId = user.id;
  const now = core.clock.now();
  const backupId = newId();
  // Derived fields (a countdown's next_date, days_until, count) are written as of the user's today.
  const today = dayNumber(localDate(now, user.timezone));
  const plan = { backupId, userId, createdAt: now.toISOString(), appVersion: core.version, today, lunar };
  const stream = exportStream(core.db.path, new BackupFiles(core.dataDir), plan, () => {});
  writeTx(core.db, (tx) =>
    recordAudit(tx, { userId, action: "backup_exported", at: now, ip: meta.ip, userAgent: meta.userAgent, targetType: "backup", targetId: backupId }),
  );
  const stamp = now.toISOString().slice(0, 10);
  return new Streamed({ filename: `app-backup-${stamp}.zip` }, stream);
}

// ---- preflight ----

async function validateStaged(core: Core, p: PreflightJob): Promise<PreflightResult> {
  const cfg = core.config;
  const files = new BackupFiles(core.dataDir);
  const { id, userId, mode, sha, size, meta } = p;
  try {
    const zip = ZipFile.open(files.staged(id));
    let result;
    try {
      result = await validateArchive(zip, limitsOf(core), mode, userId, core.db);
    } finally {
      zip.close();
    }
    if (!result.ok) {
      writeTx(core.db, (tx) =>
        recordAudit(tx, { userId, action: "backup_preflight", at: core.clock.now(), ip: meta.ip, userAgent: meta.userAgent, detail: { mode, valid: false, problems: result.problems.length } }),
      );
      throw new AppError("backup_invalid", `the archive was rejected: ${result.problems.length} problem(s)`, { errors: result.problems });
    }
    const { manifest, counts } = result.archive;
    const token = newToken();
    const now = core.clock.now();
    const expiresAt = new Date(now.getTime() + cfg.backupTokenSeconds * 1000).toISOString();
    const summary = { format: manifest.format, version: manifest.version, created_at: manifest.created_at, app_version: manifest.app_version };
    writeTx(core.db, (tx) => {
      // The quota again, now that the row is written under the write lock.
      const pending = pendingOf(tx, userId, now.toISOString());
      if (pending.n >= cfg.backupPendingMax) throw quotaExceeded(`at most ${cfg.backupPendingMax} pending preflights; restore or wait for one to expire`);
      insertPreflight(tx, {
        id,
        user_id: userId,
        token_hash: sha256Hex(token),
        file_sha256: sha,
        mode,
        size,
        backup_id: manifest.backup_id,
        summary: JSON.stringify(summary),
        counts: JSON.stringify(counts),
        created_at: now.toISOString(),
        expires_at: expiresAt,
        consumed_at: null,
      });
      recordAudit(tx, {
        userId,
        action: "backup_preflight",
        at: now,
        ip: meta.ip,
        userAgent: meta.userAgent,
        targetType: "backup",
        targetId: manifest.backup_id,
        detail: { mode, valid: true, size },
      });
    });
    return { valid: true, preflight_token: token, backup_id: manifest.backup_id, expires_at: expiresAt, summary, counts };
  } catch (e) {
    if (isStorageFull(e)) throw stagingFull(e);
    throw e;
  }
}

// ---- restore ----

async function restoreStaged(core: Core, { pf, userId, meta }: RestoreJob): Promise<RestoreResult> {
  const files = new BackupFiles(core.dataDir);
  const path = files.staged(pf.id);
  if (!existsSync(path) || statSync(path).size !== pf.size || (await fileSha256(path)) !== pf.file_sha256) {
    throw tokenInvalid("the staged archive no longer matches the token; run the preflight again");
  }
  collectGarbage(true);
  return importStaged(core, files, pf, userId, meta);
}

function importStaged(core: Core, files: BackupFiles, pf: PreflightRow, userId: string, meta: RequestMeta): RestoreResult {
  const db = core.db;
  const limits = limitsOf(core);
  const zip = ZipFile.open(files.staged(pf.id));
  const restoreId = newId();
  let begun = false;
  try {
    const zipProblems: ZipError[] = [];
    const entries = new Map(readCentralDirectory(zip, limits, zipProblems).map((e) => [e.name, e]));
    if (zipProblems.length) throw tokenInvalid("the staged archive no longer matches the token; run the preflight again");
    const attachmentIds: string[] = [];
    const attEntry = entries.get("data/attachments.json");
    if (attEntry) readRecords(zip, attEntry, "attachments", new Problems(), (r) => attachmentIds.push(r.id as string));
    const oldIds = pf.mode === "replace" ? attachmentIdsOfUser(db, userId) : [];

    // 1. Journal, then the new attachment files into the restore's staging directory.
    files.beginRestore({ restoreId, userId, preflightId: pf.id, staged: attachmentIds, quarantined: oldIds });
    begun = true;
    for (const id of attachmentIds) {
      const fd = openSync(files.restoreStaging(restoreId, id), "wx", 0o600);
      let unflushed = 0;
      try {
        inflateEntry(zip, entries.get(`attachments/${id}`)!, (chunk) => {
          let off = 0;
          while (off < chunk.byteLength) off += writeSync(fd, chunk, off, chunk.byteLength - off);
          // Bounded dirty pages: the serving thread's commits must not wait behind a gigabyte's writeback.
          unflushed += chunk.byteLength;
          if (unflushed >= FLUSH_EVERY_BYTES) {
            unflushed = 0;
            fdatasyncSync(fd);
          }
        });
      } finally {
        closeSync(fd);
      }
    }
    failpoint("restore.after_staging");
    collectGarbage(true);
    // 2. Replace: the current files step aside into quarantine (same file system: renames).
    files.quarantine(restoreId, oldIds);
    failpoint("restore.after_quarantine");

    // 3. One transaction: consume the token, replace or merge, record the restore, audit.
    const now = core.clock.now();
    const counts = JSON.parse(pf.counts) as Record<string, number>;
    let late: string[] = [];
    writeTx(db, (tx) => {
      // References are checked at commit: records arrive in file order, subtasks maybe before parents.
      tx.sqlite.run("PRAGMA defer_foreign_keys = ON");
      if (!consumePreflight(tx, pf.id, now.toISOString())) throw tokenConsumed();
      if (pf.mode === "replace") {
        // Attachments the account added while the files were being staged (the server kept serving):
        // their rows go with the rest, their files once this commits.
        const known = new Set([...oldIds, ...attachmentIds]);
        late = attachmentIdsOfUser(tx, userId).filter((id) => !known.has(id));
        deleteBusinessData(tx, userId);
      }
      const usedBefore = usedBytes(tx, userId);
      importArchive(tx, zip, entries, pf.mode, userId, core.clock.now());
      // The upload's quota, exactly (the preflight's figure may be stale: files uploaded since).
      const added = usedBytes(tx, userId) - usedBefore;
      const quota = attachmentQuota(core.config);
      assertWithinQuota(quota, usedBefore, added, {
        path: "preflight_token",
        message: `the restore would add ${added} bytes of attachments; ${Math.max(0, (quota ?? 0) - usedBefore)} are left of your attachment quota`,
      });
      const row: RestoreRow = {
        id: restoreId,
        user_id: userId,
        preflight_id: pf.id,
        mode: pf.mode,
        backup_id: pf.backup_id,
        counts: pf.counts,
        committed_at: now.toISOString(),
        cleanup_done_at: null,
        answered_at: null,
      };
      insertRestore(tx, row);
      recordAudit(tx, {
        userId,
        action: "backup_restored",
        at: now,
        ip: meta.ip,
        userAgent: meta.userAgent,
        targetType: "backup",
        targetId: pf.backup_id,
        detail: { mode: pf.mode, counts },
      });
    });
    begun = false;
    failpoint("restore.after_commit");

    // 4. Cleanup: new files into place, quarantine deleted. A failure here leaves the import
    // committed; the same token then retries only the cleanup.
    try {
      finishRestoreFiles(core, files, restoreId);
    } catch (e) {
      core.logger.error("backup restore cleanup failed", { restore_id: restoreId, error: e instanceof Error ? e.message : String(e) });
      throw new AppError(
        "internal_error",
        "the restore was committed but cleaning up the previous attachment files failed; repeat the request with the same token to finish it",
        { variant: "restore_cleanup_failed", cause: e },
      );
    }
    // A file left here is an orphan the start-up sweep removes; not a reason to answer an error.
    for (const id of late) {
      try {
        rmSync(files.attachment(id), { force: true });
      } catch (e) {
        core.logger.error("backup restore: removing a replaced attachment file failed", { attachment_id: id, error: e instanceof Error ? e.message : String(e) });
      }
    }
    // Answered from here on: a repeated call is refused (409 token_consumed). Until this point a
    // repeated call (after a 500, or a crash and the start-up cleanup) answers cleanup: completed.
    markAnswered(db, restoreId, core.clock.now().toISOString());
    return { backup_id: pf.backup_id, mode: pf.mode, counts };
  } catch (e) {
    if (begun) {
      try {
        files.rollBack(restoreId);
      } catch (re) {
        // Left for start-up reconciliation, which rolls back (no restore row).
        core.logger.error("backup restore rollback failed", { restore_id: restoreId, error: re instanceof Error ? re.message : String(re) });
      }
    }
    if (isStorageFull(e)) throw storageFull(e);
    throw e;
  } finally {
    zip.close();
  }
}

/** SHA-256 of a file through one reused buffer (flat memory). */
async function fileSha256(path: string): Promise<string> {
  const sha = new Bun.CryptoHasher("sha256");
  const zip = ZipFile.open(path);
  const buf = Buffer.allocUnsafe(1024 * 1024);
  try {
    for (let off = 0; off < zip.size; off += buf.length) {
      sha.update(zip.readInto(buf, off, Math.min(buf.length, zip.size - off)));
    }
  } finally {
    zip.close();
  }
  return sha.digest("hex");
}
