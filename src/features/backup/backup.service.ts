import { closeSync, existsSync, openSync, renameSync, statSync, writeSync } from "node:fs";
import { open } from "node:fs/promises";
import type { Core } from "../../core/core";
import { dayNumber } from "../../core/days";
import { sqliteOf, writeTx } from "../../core/db";
import { AppError, malformed, payloadTooLarge, validationFailed } from "../../core/errors";
import type { RequestMeta } from "../../core/http";
import { newId, newToken } from "../../core/ids";
import { localDate } from "../../core/time";
import { recordAudit } from "../audit/audit.repo";
import { loadLunar } from "../countdowns/countdowns.occurrence";
import { BodyAborted, boundaryOf, MultipartReader } from "../attachments/attachments.multipart";
import { gcHint, inflateEntry, readCentralDirectory, ZipFile, type ZipError } from "./backup.archive";
import { exportStream } from "./backup.export";
import { BackupFiles, failpoint } from "./backup.files";
import { importArchive } from "./backup.import";
import {
  attachmentIdsOf,
  consumePreflight,
  deleteBusinessData,
  findPreflightByToken,
  findRestoreOfPreflight,
  insertPreflight,
  insertRestore,
  pendingOf,
  type PreflightRow,
  type RestoreRow,
} from "./backup.repo";
import { finishRestoreFiles, sweepExpiredPreflights } from "./backup.reconcile";
import type { Mode, PreflightResult, RestoreBody, RestoreResult } from "./backup.schemas";
import { Problems, readRecords, validateArchive, type ArchiveRules } from "./backup.validate";

/** Multipart framing around the file: headers, boundaries, a small extra field or two. */
const MULTIPART_OVERHEAD = 64 * 1024;

const sha256Hex = (s: string) => new Bun.CryptoHasher("sha256").update(s).digest("hex");

const tokenInvalid = (detail: string) => new AppError("token_invalid", 422, "Invalid preflight token", detail, [{ path: "preflight_token", message: detail }]);
const tokenConsumed = () => new AppError("token_consumed", 409, "Token consumed", "this preflight token has already been used; run a new preflight");
const quotaExceeded = (detail: string) => new AppError("quota_exceeded", 429, "Quota exceeded", detail, undefined, { "Retry-After": "60" });
const storageFull = () => new AppError("storage_full", 507, "Insufficient storage", "the server ran out of space during the restore; nothing was changed");

/** "No space" from SQLite (SQLITE_FULL) or the file system (ENOSPC, EFBIG, EDQUOT). */
function isStorageFull(e: unknown): boolean {
  const err = e as { code?: string; errno?: number; message?: string };
  return (
    err?.code === "ENOSPC" ||
    err?.code === "EFBIG" ||
    err?.code === "EDQUOT" ||
    err?.code === "SQLITE_FULL" ||
    /database or disk is full|no space left/i.test(err?.message ?? "")
  );
}

export interface ExportResult {
  stream: ReadableStream<Uint8Array>;
  filename: string;
}

/**
 * The complete backup: streaming export, staged and validated preflight, merge and replace restore.
 * Loaded on first use (app.ts); the start-up reconciliation is backup.reconcile.ts.
 */
export class BackupService {
  readonly files: BackupFiles;
  /** Uploads in progress per user (not yet rows), so concurrent preflights share the quota. */
  private readonly uploading = new Map<string, { n: number; bytes: number }>();
  /** Users with a restore running: a second one waits its turn (409). */
  private readonly restoring = new Set<string>();

  constructor(private readonly core: Core) {
    this.files = new BackupFiles(core.dataDir);
  }

  private get limits(): ArchiveRules {
    const c = this.core.config;
    return { maxEntries: c.backupMaxEntries, maxRatio: c.backupMaxRatio, maxTotalBytes: c.backupMaxInflatedBytes, attachmentMaxBytes: c.attachmentMaxBytes };
  }

  // ---- export ----

  async export(user: { id: string; timezone: string }, meta: RequestMeta): Promise<ExportResult> {
    // A lunar countdown's derived fields need the lunar calendar (loaded on its first need).
    const lunar = await loadLunar();
    const userId = user.id;
    const now = this.core.clock.now();
    const backupId = newId();
    // Derived fields (a countdown's next_date, days_until, count) are written as of the user's today.
    const today = dayNumber(localDate(now, user.timezone));
    const plan = { backupId, userId, createdAt: now.toISOString(), appVersion: this.core.version, today, lunar };
    const stream = exportStream(this.core.db.path, this.files, plan, () => {});
    writeTx(this.core.db, (tx) =>
      recordAudit(tx, { userId, action: "backup_exported", at: now, ip: meta.ip, userAgent: meta.userAgent, targetType: "backup", targetId: backupId }),
    );
    const stamp = now.toISOString().slice(0, 10);
    return { stream, filename: `app-backup-${stamp}.zip` };
  }

  // ---- preflight ----

  async preflight(userId: string, mode: Mode, request: Request, meta: RequestMeta): Promise<PreflightResult> {
    const cfg = this.core.config;
    sweepExpiredPreflights(this.core, this.files);
    const nowIso = this.core.clock.now().toISOString();
    const pending = pendingOf(this.core.db.sqlite, userId, nowIso);
    const inFlight = this.uploading.get(userId) ?? { n: 0, bytes: 0 };
    const declared = Number(request.headers.get("content-length") ?? "0") || 0;
    if (declared > cfg.backupArchiveMaxBytes + MULTIPART_OVERHEAD) throw payloadTooLarge(cfg.backupArchiveMaxBytes);
    if (pending.n + inFlight.n >= cfg.backupPendingMax) throw quotaExceeded(`at most ${cfg.backupPendingMax} pending preflights; restore or wait for one to expire`);
    if (pending.bytes + inFlight.bytes + declared > cfg.backupStagedMaxBytes + MULTIPART_OVERHEAD) {
      throw quotaExceeded(`pending preflights may hold at most ${cfg.backupStagedMaxBytes} bytes`);
    }
    const boundary = boundaryOf(request.headers.get("content-type"));
    if (!request.body) throw malformed("the body is empty; send the archive as multipart field `file`");

    const id = newId();
    const mine = { n: 1, bytes: 0 };
    inFlight.n += 1;
    this.uploading.set(userId, inFlight);
    const part = this.files.stagingPart(id);
    let staged = false;
    try {
      const { sha, size } = await this.receive(request.body, boundary, part, (bytes) => {
        inFlight.bytes += bytes - mine.bytes;
        mine.bytes = bytes;
        if (pending.bytes + inFlight.bytes > cfg.backupStagedMaxBytes) throw quotaExceeded(`pending preflights may hold at most ${cfg.backupStagedMaxBytes} bytes`);
      });
      renameSync(part, this.files.staged(id));
      staged = true;
      // Phase boundary: the upload's buffers are garbage; start the validation from a small heap.
      Bun.gc(true);
      const zip = ZipFile.open(this.files.staged(id));
      let result;
      try {
        result = await validateArchive(zip, this.limits, mode, userId, this.core.db.sqlite);
      } finally {
        zip.close();
      }
      if (!result.ok) {
        writeTx(this.core.db, (tx) =>
          recordAudit(tx, { userId, action: "backup_preflight", at: this.core.clock.now(), ip: meta.ip, userAgent: meta.userAgent, detail: { mode, valid: false, problems: result.problems.length } }),
        );
        throw new AppError("backup_invalid", 422, "Backup invalid", `the archive was rejected: ${result.problems.length} problem(s)`, result.problems);
      }
      const { manifest, counts } = result.archive;
      const token = newToken();
      const now = this.core.clock.now();
      const expiresAt = new Date(now.getTime() + cfg.backupTokenSeconds * 1000).toISOString();
      const summary = { format: manifest.format, version: manifest.version, created_at: manifest.created_at, app_version: manifest.app_version };
      writeTx(this.core.db, (tx) => {
        // The quota again, now that the row is written under the write lock.
        const p = pendingOf(sqliteOf(tx), userId, now.toISOString());
        if (p.n >= cfg.backupPendingMax) throw quotaExceeded(`at most ${cfg.backupPendingMax} pending preflights; restore or wait for one to expire`);
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
      staged = false;
      return { valid: true, preflight_token: token, backup_id: manifest.backup_id, expires_at: expiresAt, summary, counts };
    } catch (e) {
      if (isStorageFull(e)) throw new AppError("storage_full", 507, "Insufficient storage", "the server has no space left to stage this archive");
      throw e;
    } finally {
      inFlight.n -= 1;
      inFlight.bytes -= mine.bytes;
      if (inFlight.n <= 0) this.uploading.delete(userId);
      this.files.removeStagingPart(id);
      if (staged) this.files.removeStaged(id);
    }
  }

  /** Streams multipart field `file` to `path`, hashing on the way; capped at the archive limit (413). */
  private async receive(body: ReadableStream<Uint8Array>, boundary: string, path: string, onBytes: (n: number) => void): Promise<{ sha: string; size: number }> {
    const cfg = this.core.config;
    const reader = new MultipartReader(body, boundary, cfg.backupArchiveMaxBytes + MULTIPART_OVERHEAD, cfg.backupArchiveMaxBytes);
    const fh = await open(path, "wx", 0o600);
    const sha = new Bun.CryptoHasher("sha256");
    let size = 0;
    let found = false;
    try {
      for (;;) {
        const part = await reader.nextPart();
        if (!part) break;
        if (part.field !== "file" || found) continue;
        found = true;
        for await (const chunk of reader.partData()) {
          size += chunk.byteLength;
          if (size > cfg.backupArchiveMaxBytes) {
            await reader.cancel();
            throw payloadTooLarge(cfg.backupArchiveMaxBytes);
          }
          onBytes(size);
          sha.update(chunk);
          await fh.write(chunk);
          gcHint(chunk.byteLength * 2);
        }
      }
      if (!found) throw validationFailed([{ path: "file", message: "the archive is required (multipart field `file`)" }]);
      await fh.sync();
    } catch (e) {
      await reader.cancel().catch(() => {});
      if (e instanceof BodyAborted) throw e;
      throw e;
    } finally {
      await fh.close();
    }
    return { sha: sha.digest("hex"), size };
  }

  // ---- restore ----

  async restore(userId: string, body: RestoreBody, meta: RequestMeta): Promise<RestoreResult> {
    const s = this.core.db.sqlite;
    const pf = findPreflightByToken(s, sha256Hex(body.preflight_token));
    if (!pf || pf.user_id !== userId) throw tokenInvalid("unknown preflight token");
    if (pf.mode !== body.mode) throw tokenInvalid(`the token was issued for mode ${pf.mode}`);
    if (pf.consumed_at !== null) return this.cleanupRetry(pf);
    if (pf.expires_at <= this.core.clock.now().toISOString()) throw tokenInvalid("the preflight token has expired; run the preflight again");
    if (this.restoring.has(userId)) throw new AppError("state_conflict", 409, "State conflict", "a restore is already running for this account");
    this.restoring.add(userId);
    try {
      const path = this.files.staged(pf.id);
      if (!existsSync(path) || statSync(path).size !== pf.size || (await fileSha256(path)) !== pf.file_sha256) {
        throw tokenInvalid("the staged archive no longer matches the token; run the preflight again");
      }
      Bun.gc(true);
      return this.importStaged(pf, userId, meta);
    } finally {
      this.restoring.delete(userId);
    }
  }

  /** The repeated call after a committed restore: finishes a failed cleanup, never imports again. */
  private cleanupRetry(pf: PreflightRow): RestoreResult {
    const r = findRestoreOfPreflight(this.core.db.sqlite, pf.id);
    if (!r || r.cleanup_done_at !== null) throw tokenConsumed();
    finishRestoreFiles(this.core, this.files, r.id);
    return { backup_id: r.backup_id, mode: r.mode, counts: JSON.parse(r.counts) as Record<string, number>, cleanup: "completed" };
  }

  private importStaged(pf: PreflightRow, userId: string, meta: RequestMeta): RestoreResult {
    const db = this.core.db;
    const zip = ZipFile.open(this.files.staged(pf.id));
    const restoreId = newId();
    let begun = false;
    try {
      const zipProblems: ZipError[] = [];
      const entries = new Map(readCentralDirectory(zip, this.limits, zipProblems).map((e) => [e.name, e]));
      if (zipProblems.length) throw tokenInvalid("the staged archive no longer matches the token; run the preflight again");
      const attachmentIds: string[] = [];
      const attEntry = entries.get("data/attachments.json");
      if (attEntry) readRecords(zip, attEntry, "attachments", new Problems(), (r) => attachmentIds.push(r.id as string));
      const oldIds = pf.mode === "replace" ? attachmentIdsOf(db.sqlite, userId) : [];

      // 1. Journal, then the new attachment files into the restore's staging directory.
      this.files.beginRestore({ restoreId, userId, preflightId: pf.id, staged: attachmentIds, quarantined: oldIds });
      begun = true;
      for (const id of attachmentIds) {
        const fd = openSync(this.files.restoreStaging(restoreId, id), "wx", 0o600);
        try {
          inflateEntry(zip, entries.get(`attachments/${id}`)!, (chunk) => {
            let off = 0;
            while (off < chunk.byteLength) off += writeSync(fd, chunk, off, chunk.byteLength - off);
          });
        } finally {
          closeSync(fd);
        }
      }
      failpoint("restore.after_staging");
      Bun.gc(true);
      // 2. Replace: the current files step aside into quarantine (same file system: renames).
      this.files.quarantine(restoreId, oldIds);
      failpoint("restore.after_quarantine");

      // 3. One transaction: consume the token, replace or merge, record the restore, audit.
      const now = this.core.clock.now();
      const counts = JSON.parse(pf.counts) as Record<string, number>;
      writeTx(db, (tx) => {
        const sq = sqliteOf(tx);
        // References are checked at commit: records arrive in file order, subtasks maybe before parents.
        sq.run("PRAGMA defer_foreign_keys = ON");
        if (!consumePreflight(tx, pf.id, now.toISOString())) throw tokenConsumed();
        if (pf.mode === "replace") deleteBusinessData(tx, userId);
        importArchive(sq, zip, entries, pf.mode, userId);
        const row: RestoreRow = {
          id: restoreId,
          user_id: userId,
          preflight_id: pf.id,
          mode: pf.mode,
          backup_id: pf.backup_id,
          counts: pf.counts,
          committed_at: now.toISOString(),
          cleanup_done_at: null,
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
        finishRestoreFiles(this.core, this.files, restoreId);
      } catch (e) {
        this.core.logger.error("backup restore cleanup failed", { restore_id: restoreId, error: e instanceof Error ? e.message : String(e) });
        throw new AppError(
          "internal_error",
          500,
          "Restore cleanup failed",
          "the restore was committed but cleaning up the previous attachment files failed; repeat the request with the same token to finish it",
        );
      }
      return { backup_id: pf.backup_id, mode: pf.mode, counts };
    } catch (e) {
      if (begun) {
        try {
          this.files.rollBack(restoreId);
        } catch (re) {
          // Left for start-up reconciliation, which rolls back (no restore row).
          this.core.logger.error("backup restore rollback failed", { restore_id: restoreId, error: re instanceof Error ? re.message : String(re) });
        }
      }
      if (isStorageFull(e)) throw storageFull();
      throw e;
    } finally {
      zip.close();
    }
  }
}

/** SHA-256 of a file through one reused buffer (flat memory), yielding to other requests between slices. */
async function fileSha256(path: string): Promise<string> {
  const sha = new Bun.CryptoHasher("sha256");
  const zip = ZipFile.open(path);
  const buf = Buffer.allocUnsafe(1024 * 1024);
  try {
    for (let off = 0; off < zip.size; off += buf.length) {
      sha.update(zip.readInto(buf, off, Math.min(buf.length, zip.size - off)));
      if ((off / buf.length) % 64 === 63) await Bun.sleep(0);
    }
  } finally {
    zip.close();
  }
  return sha.digest("hex");
}
