import type { Core } from "../../core/core";
import { BackupFiles, failpoint } from "./backup.files";
import { isOwnAttachment } from "../../features/attachments/attachments.repo";
import { deletePreflight, expiredPreflights, findRestore, livePreflightIds, markCleanupDone } from "./backup.repo";

/**
 * The backup's bookkeeping of files and rows that must be right before anything else touches the
 * attachment files: run by createApp at every start, and by the BackupService for its own needs.
 * Light on purpose (files and a few statements, no ZIP, validation, import or export): the rest of
 * the backup is loaded on its first use.
 */

/**
 * Start-up: restores interrupted by a crash are rolled forward (their import committed: the
 * backup_restores row exists) or back (it did not); leftover export links and staged uploads
 * without a live preflight go.
 */
export function reconcileAtStartup(core: Core): void {
  const files = new BackupFiles(core.dataDir);
  for (const id of files.restoreIds()) finishRestoreFiles(core, files, id);
  files.sweepExports();
  sweepExpiredPreflights(core, files);
  files.sweepStaging(livePreflightIds(core.db));
}

/** Rolls one restore directory forward or back, by whether its import committed. */
export function finishRestoreFiles(core: Core, files: BackupFiles, restoreId: string): void {
  const s = core.db;
  const row = findRestore(s, restoreId);
  if (!row) {
    files.rollBack(restoreId);
    return;
  }
  files.rollForward(restoreId, (id) => isOwnAttachment(s, id, row.user_id), () => failpoint("restore.during_cleanup"));
  files.removeStaged(row.preflight_id);
  markCleanupDone(s, restoreId, core.clock.now().toISOString());
}

/** Expired, unconsumed preflights lose their row and their staged file. */
export function sweepExpiredPreflights(core: Core, files: BackupFiles): void {
  const s = core.db;
  for (const id of expiredPreflights(s, core.clock.now().toISOString())) {
    files.removeStaged(id);
    deletePreflight(s, id);
  }
}
