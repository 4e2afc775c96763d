import { mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { isStorageFull } from "../../core/errors";
import type { Job, JobHandlers } from "../../core/jobs/jobs.host";
import { instantOfName, snapshotName, USER_ARCHIVE_PREFIX } from "./snapshot.manifest";
import { newId } from "../../core/ids";
import { dayNumber } from "../../core/days";
import { localDate } from "../../core/time";
import { listUsers } from "../../features/account/account.repo";
import { loadLunar } from "../../features/countdowns/countdowns.rules";
import { exportStream } from "../backup/backup.export";
import { BackupFiles } from "../backup/backup.files";
import { toPrune, type Policy } from "./snapshot.retention";
import { copyToS3, type S3Target } from "./snapshot.s3";
import { SnapshotInvalid } from "./snapshot.verify";
import { SnapshotError, writeSnapshot } from "./snapshot.write";

/**
 * A scheduled (or "run now") snapshot, in the job worker (src/jobs.worker.ts): bun:sqlite's
 * VACUUM INTO and the archive's hashing would block the serving thread for as long as they take.
 * Writes and verifies the local snapshot, prunes the local directory, then copies to S3 when one
 * is configured. The outcome of each destination comes back as plain data; the main thread
 * records it (snapshot.service.ts).
 */

export interface RunJob {
  localDir: string;
  /** Add each user's app-backup v2 archive (users/<id>.zip) to the snapshot. */
  userArchives: boolean;
  policy: Policy;
  zone: string;
  s3: S3Target | null;
}

export type DestinationOutcome =
  | { ok: true; name: string; bytes: number; sha256: string; pruned: string[] }
  | { ok: false; error: string; storageFull: boolean };

export interface RunOutcome {
  local: DestinationOutcome;
  /** Absent when no S3 destination is configured; a failure when the local snapshot failed first. */
  s3?: DestinationOutcome;
}

/** Temporary files older than this in the local directory are leftovers of a killed run. */
const STALE_PART_MS = 6 * 3600_000;

function describe(e: unknown): string {
  if (e instanceof SnapshotInvalid || e instanceof SnapshotError) return e.message;
  if (isStorageFull(e)) return `no space left on the device: ${(e as Error).message}`;
  return (e as Error)?.message ?? String(e);
}

/** Verified snapshots in `dir` (names only: `.part` files and foreign files never count). */
export function localSnapshots(dir: string): { name: string; at: Date }[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const out: { name: string; at: Date }[] = [];
  for (const name of names) {
    const at = instantOfName(name);
    if (at) out.push({ name, at });
  }
  return out;
}

/**
 * Each user's app-backup v2 archive, made by the complete backup's own export (one consistent
 * snapshot per user, streamed to a file), for the snapshot to carry as `users/<id>.zip`: what that
 * user could restore alone on any server, without the whole instance.
 */
async function writeUserArchives(job: Job, dir: string, now: Date): Promise<{ entry: string; path: string }[]> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const lunar = await loadLunar();
  const out: { entry: string; path: string }[] = [];
  for (const u of listUsers(job.core.db)) {
    const plan = { backupId: newId(), userId: u.id, createdAt: now.toISOString(), appVersion: job.core.version, today: dayNumber(localDate(now, u.timezone)), lunar };
    const path = join(dir, `${u.id}.zip`);
    const writer = Bun.file(path).writer();
    try {
      for await (const chunk of exportStream(job.core.db.path, new BackupFiles(job.core.dataDir), plan, () => {})) writer.write(chunk);
    } finally {
      await writer.end();
    }
    out.push({ entry: `${USER_ARCHIVE_PREFIX}${u.id}.zip`, path });
  }
  return out;
}

export async function runSnapshot(p: RunJob, job: Job): Promise<RunOutcome> {
  const now = job.core.clock.now();
  const name = snapshotName(now);
  let local: DestinationOutcome;
  let path = "";
  try {
    mkdirSync(p.localDir, { recursive: true, mode: 0o700 });
    for (const n of readdirSync(p.localDir)) {
      if (!/^\.app-snapshot-.*\.part$/.test(n)) continue;
      const full = join(p.localDir, n);
      if (now.getTime() - statSync(full).mtimeMs > STALE_PART_MS) rmSync(full, { force: true });
    }
    path = join(p.localDir, name);
    const usersDir = join(job.core.dataDir, "backup", "snapshots", `users-${newId()}`);
    let s;
    try {
      const extra = p.userArchives ? await writeUserArchives(job, usersDir, now) : [];
      s = writeSnapshot({ dataDir: job.core.dataDir, outPath: path, now, appVersion: job.core.version, extra });
    } finally {
      rmSync(usersDir, { recursive: true, force: true });
    }
    // Pruned only now that the new snapshot is verified; never the one just written.
    const drop = toPrune(localSnapshots(p.localDir), p.policy, p.zone).filter((n) => n !== name);
    for (const n of drop) rmSync(join(p.localDir, n), { force: true });
    local = { ok: true, name, bytes: s.bytes, sha256: s.sha256, pruned: drop };
  } catch (e) {
    local = { ok: false, error: describe(e), storageFull: isStorageFull(e) };
  }
  if (!p.s3) return { local };
  if (!local.ok) return { local, s3: { ok: false, error: "not attempted: the local snapshot failed", storageFull: false } };
  try {
    const r = await copyToS3(p.s3, path, name, { sha256: local.sha256, bytes: local.bytes }, p.policy, p.zone);
    return { local, s3: { ok: true, name: r.key, bytes: local.bytes, sha256: local.sha256, pruned: r.pruned } };
  } catch (e) {
    return { local, s3: { ok: false, error: (e as Error).message, storageFull: false } };
  }
}

export function snapshotJobs(): JobHandlers {
  return {
    run: (p: RunJob, job: Job) => runSnapshot(p, job),
  };
}
