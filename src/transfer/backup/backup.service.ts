import { renameSync } from "node:fs";
import { open } from "node:fs/promises";
import type { Core } from "../../core/core";
import { AppError, isStorageFull, malformed, payloadTooLarge, validationFailed } from "../../core/errors";
import type { RequestMeta } from "../../core/http";
import { newId } from "../../core/ids";
import type { JobRunner } from "../../core/jobs/jobs.runner";
import { MemoryPacer } from "../../core/streams/memory-pacing";
import { MULTIPART_FRAMING_BYTES, multipartOf, type MultipartReader } from "../../core/streams/multipart";
import { quotaExceeded, stagingFull, tokenConsumed, tokenInvalid } from "./backup.errors";
import { BackupFiles, FLUSH_EVERY_BYTES } from "./backup.files";
import type { ExportHead, ExportJob, PreflightJob, RestoreJob } from "./backup.jobs";
import { findPreflightByToken, findRestoreOfPreflight, markAnswered, pendingOf, type PreflightRow } from "./backup.repo";
import { finishRestoreFiles, sweepExpiredPreflights } from "./backup.reconcile";
import type { Mode, PreflightResult, RestoreBody, RestoreResult } from "./backup.schemas";

/**
 * Garbage an upload leaves (its chunks, about twice their bytes) between two collections, so RSS
 * stays flat during a 2 GiB upload. Minor collections: the chunks are young, and a full one on
 * the serving thread cost 10-90 ms each (measured under load), a stall for every other request.
 */
const UPLOAD_GC_BYTES = 16 * 1024 * 1024;

const sha256Hex = (s: string) => new Bun.CryptoHasher("sha256").update(s).digest("hex");

export interface ExportResult {
  stream: ReadableStream<Uint8Array>;
  filename: string;
}

/**
 * The complete backup: streaming export, staged and validated preflight, merge and replace restore.
 * This is the main thread's part (the request's body, quotas, tokens, one restore per user); the
 * heavy work (the archive, its validation, the import) runs in the job worker (backup.jobs.ts).
 * Loaded on first use (app.ts); the start-up reconciliation is backup.reconcile.ts.
 */
export class BackupService {
  readonly files: BackupFiles;
  /** Uploads in progress per user (not yet rows), so concurrent preflights share the quota. */
  private readonly uploading = new Map<string, { n: number; bytes: number }>();
  /** Users with a restore running: a second one waits its turn (409). */
  private readonly restoring = new Set<string>();

  constructor(
    private readonly core: Core,
    private readonly jobs: JobRunner,
  ) {
    this.files = new BackupFiles(core.dataDir);
  }

  // ---- export ----

  /** The archive, made in the job worker and streamed from there as the client reads it. */
  async export(user: { id: string; timezone: string }, meta: RequestMeta): Promise<ExportResult> {
    const job: ExportJob = { user: { id: user.id, timezone: user.timezone }, meta };
    const { head, body } = await this.jobs.stream<ExportHead>("backup.export", job);
    return { stream: body, filename: head.filename };
  }

  // ---- preflight ----

  async preflight(userId: string, mode: Mode, request: Request, meta: RequestMeta): Promise<PreflightResult> {
    const cfg = this.core.config;
    sweepExpiredPreflights(this.core, this.files);
    const nowIso = this.core.clock.now().toISOString();
    const pending = pendingOf(this.core.db, userId, nowIso);
    const inFlight = this.uploading.get(userId) ?? { n: 0, bytes: 0 };
    const declared = Number(request.headers.get("content-length") ?? "0") || 0;
    if (declared > cfg.backupArchiveMaxBytes + MULTIPART_FRAMING_BYTES) throw payloadTooLarge(cfg.backupArchiveMaxBytes);
    if (pending.n + inFlight.n >= cfg.backupPendingMax) throw quotaExceeded(`at most ${cfg.backupPendingMax} pending preflights; restore or wait for one to expire`);
    if (pending.bytes + inFlight.bytes + declared > cfg.backupStagedMaxBytes + MULTIPART_FRAMING_BYTES) {
      throw quotaExceeded(`pending preflights may hold at most ${cfg.backupStagedMaxBytes} bytes`);
    }
    const reader = multipartOf(request, cfg.backupArchiveMaxBytes);
    if (!request.body) throw malformed("the body is empty; send the archive as multipart field `file`");

    const id = newId();
    const mine = { n: 1, bytes: 0 };
    inFlight.n += 1;
    this.uploading.set(userId, inFlight);
    const part = this.files.stagingPart(id);
    let staged = false;
    try {
      const { sha, size } = await this.receive(reader, part, (bytes) => {
        inFlight.bytes += bytes - mine.bytes;
        mine.bytes = bytes;
        if (pending.bytes + inFlight.bytes > cfg.backupStagedMaxBytes) throw quotaExceeded(`pending preflights may hold at most ${cfg.backupStagedMaxBytes} bytes`);
      });
      renameSync(part, this.files.staged(id));
      staged = true;
      // Validating and recording it is the job worker's (backup.jobs.ts): inflating and checking a
      // large archive takes seconds of synchronous work.
      const job: PreflightJob = { id, userId, mode, sha, size, meta };
      const result = await this.jobs.run<PreflightResult>("backup.preflight", job);
      staged = false;
      return result;
    } catch (e) {
      if (isStorageFull(e)) throw stagingFull(e);
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
  private async receive(reader: MultipartReader, path: string, onBytes: (n: number) => void): Promise<{ sha: string; size: number }> {
    const cfg = this.core.config;
    const fh = await open(path, "wx", 0o600);
    const sha = new Bun.CryptoHasher("sha256");
    let size = 0;
    const pacer = new MemoryPacer(UPLOAD_GC_BYTES);
    let unflushed = 0;
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
          unflushed += chunk.byteLength;
          if (unflushed >= FLUSH_EVERY_BYTES) {
            unflushed = 0;
            await fh.datasync();
          }
          pacer.add(chunk.byteLength * 2);
        }
      }
      if (!found) throw validationFailed([{ path: "file", message: "the archive is required (multipart field `file`)" }]);
      await fh.sync();
    } catch (e) {
      await reader.cancel().catch(() => {});
      throw e;
    } finally {
      await fh.close();
    }
    return { sha: sha.digest("hex"), size };
  }

  // ---- restore ----

  async restore(userId: string, body: RestoreBody, meta: RequestMeta): Promise<RestoreResult> {
    const s = this.core.db;
    const pf = findPreflightByToken(s, sha256Hex(body.preflight_token));
    if (!pf || pf.user_id !== userId) throw tokenInvalid("unknown preflight token");
    if (pf.mode !== body.mode) throw tokenInvalid(`the token was issued for mode ${pf.mode}`);
    // Before the cleanup retry too: the running restore may be this token's, between its commit and its cleanup.
    if (this.restoring.has(userId)) throw new AppError("state_conflict", "a restore is already running for this account");
    if (pf.consumed_at !== null) return this.cleanupRetry(pf);
    if (pf.expires_at <= this.core.clock.now().toISOString()) throw tokenInvalid("the preflight token has expired; run the preflight again");
    this.restoring.add(userId);
    try {
      // Checking the staged file's digest and importing it is the job worker's (backup.jobs.ts).
      const job: RestoreJob = { pf, userId, meta };
      return await this.jobs.run<RestoreResult>("backup.restore", job);
    } finally {
      this.restoring.delete(userId);
    }
  }

  /**
   * The repeated call after a committed restore whose success no client was told (its cleanup
   * failed and answered 500, or the server died after the commit and start-up finished the
   * cleanup): finishes what is left of the cleanup and answers `cleanup: "completed"`, never
   * importing again. Once a success has been answered, the token is consumed (409).
   */
  private cleanupRetry(pf: PreflightRow): RestoreResult {
    const s = this.core.db;
    const r = findRestoreOfPreflight(s, pf.id);
    if (!r || r.answered_at !== null) throw tokenConsumed();
    finishRestoreFiles(this.core, this.files, r.id);
    markAnswered(s, r.id, this.core.clock.now().toISOString());
    return { backup_id: r.backup_id, mode: r.mode, counts: JSON.parse(r.counts) as Record<string, number>, cleanup: "completed" };
  }
}
