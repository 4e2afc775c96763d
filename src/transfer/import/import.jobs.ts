import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Core } from "../../core/core";
import { writeTx } from "../../core/db";
import { AppError, isStorageFull, storageFull } from "../../core/errors";
import type { RequestMeta } from "../../core/http";
import { newId, newToken } from "../../core/ids";
import type { JobHandlers, Job } from "../../core/jobs/jobs.host";
import { collectGarbage } from "../../core/streams/memory-pacing";
import { recordAudit } from "../../features/audit/audit.repo";
import { findUserById } from "../../features/account/account.repo";
import {
  allImportTokenIds,
  consumeImportToken,
  deleteImportTokens,
  expiredImportTokenIds,
  findImportToken,
  insertImportToken,
  ledgerCountsOf,
  pendingImportsOf,
  recordImport,
} from "./import.repo";
import { readPlan } from "./import.read";
import { writePlan } from "./import.write";
import type { ImportCounts, ImportFormat, ImportResult, PreviewResult } from "./import.schemas";

// Preview and import of files from other apps: synchronous, heavy work (a 20k-row CSV), run in the
// job worker (import.service.ts is the main thread's side); the CLI calls the same functions.

/** How long a preview's token lives (the spec: 15 minutes). */
export const TOKEN_TTL_MS = 15 * 60 * 1000;
/** Previews a user may have waiting at once (each stages its file, up to 64 MiB). */
export const PENDING_MAX = 5;

export interface PreviewJob {
  userId: string;
  timezone: string;
  format: ImportFormat;
  fileName: string;
  bytes: Uint8Array;
  meta: RequestMeta;
}

export interface ImportJob {
  userId: string;
  timezone: string;
  token: string;
  meta: RequestMeta;
}

/** The user's reminder time (a repeating all-day task's reminders count from it). */
export const reminderTimeOf = (core: Core, userId: string): string => findUserById(core.db, userId)?.reminderTime ?? "09:00";

const sha256Hex = (b: Uint8Array | string) => new Bun.CryptoHasher("sha256").update(b).digest("hex");
const stagingDir = (core: Core) => join(core.dataDir, "import", "staging");
const stagedPath = (core: Core, id: string) => join(stagingDir(core), id);

export const tokenInvalid = (detail: string) => new AppError("token_invalid", detail, { errors: [{ path: "import_token", message: detail }] });
export const tokenConsumed = () => new AppError("token_consumed", "this import token has already been used; preview the file again");

/** Forgets expired tokens and removes their staged files (and any staged file no token names). */
export function sweepImports(core: Core): void {
  const expired = expiredImportTokenIds(core.db, core.clock.now().toISOString());
  if (expired.length) writeTx(core.db, (tx) => deleteImportTokens(tx, expired));
  let names: string[] = [];
  try {
    names = readdirSync(stagingDir(core));
  } catch {
    return;
  }
  const live = allImportTokenIds(core.db);
  for (const n of names) if (!live.has(n)) rmSync(join(stagingDir(core), n), { force: true });
}

/** Reads the file as its format (422 import_invalid when it cannot be), stages it and answers the preview with a token. */
export async function preview(core: Core, p: PreviewJob): Promise<PreviewResult> {
  sweepImports(core);
  const now = core.clock.now();
  const pending = pendingImportsOf(core.db, p.userId, now.toISOString());
  if (pending.n >= PENDING_MAX) throw new AppError("quota_exceeded", `at most ${PENDING_MAX} previews may wait for their import; import one or wait 15 minutes`, { headers: { "Retry-After": "60" } });
  const plan = await readPlan(p.format, p.bytes, p.fileName, p.timezone, now, reminderTimeOf(core, p.userId));
  const id = newId();
  const token = newToken();
  const expires = new Date(now.getTime() + TOKEN_TTL_MS).toISOString();
  try {
    mkdirSync(stagingDir(core), { recursive: true, mode: 0o700 });
    writeFileSync(stagedPath(core, id), p.bytes, { mode: 0o600 });
    writeTx(core.db, (tx) =>
      insertImportToken(tx, {
        id,
        user_id: p.userId,
        token_hash: sha256Hex(token),
        format: p.format,
        file_sha256: sha256Hex(p.bytes),
        file_name: p.fileName,
        size: p.bytes.byteLength,
        created_at: now.toISOString(),
        expires_at: expires,
        consumed_at: null,
      }),
    );
  } catch (e) {
    rmSync(stagedPath(core, id), { force: true });
    if (isStorageFull(e)) throw storageFull("the server has no space left to stage this file", e);
    throw e;
  }
  return { import_token: token, expires_at: expires, format: p.format, counts: plan.counts, skipped: plan.skipped, changed: plan.changed };
}

/**
 * Imports a previewed file: the token must be the user's, unused and unexpired; the staged file
 * must still have the digest the token is bound to. A file this user imported before creates
 * nothing (the ledger) and answers the first import's counts. Everything in one transaction.
 */
export async function runImport(core: Core, p: ImportJob): Promise<ImportResult> {
  const now = core.clock.now();
  const nowIso = now.toISOString();
  const row = findImportToken(core.db, sha256Hex(p.token));
  if (!row || row.user_id !== p.userId) throw tokenInvalid("unknown import token; preview the file first");
  if (row.consumed_at !== null) throw tokenConsumed();
  if (row.expires_at <= nowIso) throw tokenInvalid("the import token has expired (tokens live 15 minutes); preview the file again");
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(stagedPath(core, row.id));
  } catch {
    throw tokenInvalid("the previewed file is no longer staged; preview it again");
  }
  if (sha256Hex(bytes) !== row.file_sha256) throw tokenInvalid("the staged file changed since its preview; preview it again");
  const format = row.format;
  const before = ledgerCountsOf(core.db, p.userId, format, row.file_sha256);
  if (before !== null) {
    writeTx(core.db, (tx) => {
      if (!consumeImportToken(tx, row.id, nowIso)) throw tokenConsumed();
    });
    rmSync(stagedPath(core, row.id), { force: true });
    return { format, counts: JSON.parse(before) as ImportCounts, already_imported: true };
  }
  const plan = await readPlan(format, bytes, row.file_name, p.timezone, now, reminderTimeOf(core, p.userId));
  // The first pass's keys and titles are garbage now; the write reads the file again (Plan.replay).
  collectGarbage(true);
  try {
    writeTx(core.db, (tx) => {
      if (!consumeImportToken(tx, row.id, nowIso)) throw tokenConsumed();
      writePlan(tx, p.userId, plan, nowIso);
      recordImport(tx, p.userId, format, row.file_sha256, JSON.stringify(plan.counts), nowIso);
      recordAudit(tx, { userId: p.userId, action: "imported", at: now, ip: p.meta.ip, userAgent: p.meta.userAgent, detail: { format, counts: plan.counts } });
    });
  } catch (e) {
    if (isStorageFull(e)) throw storageFull("the server ran out of space during the import; nothing was changed", e);
    throw e;
  } finally {
    collectGarbage(true);
  }
  rmSync(stagedPath(core, row.id), { force: true });
  return { format, counts: plan.counts };
}

/** The import jobs, run in the job worker (src/jobs.worker.ts). */
export function importJobs(): JobHandlers {
  return {
    preview: async (p: PreviewJob, job: Job) => {
      try {
        return await preview(job.core, p);
      } finally {
        collectGarbage(true);
      }
    },
    run: (p: ImportJob, job: Job) => runImport(job.core, p),
  };
}
