import { readdirSync, rmSync, statSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import type { Core } from "../../core/core";
import type { Principal } from "../../core/auth/principal";
import { readTx, writeTx } from "../../core/db";
import { forbidden, stateConflict, validationFailed, type FieldProblem } from "../../core/errors";
import type { JobRunner } from "../../core/jobs/jobs.runner";
import type { RunJob, RunOutcome } from "./snapshot.jobs";
import { readOverrides, recordOutcome, statusRows, writeOverrides } from "./snapshot.repo";
import { nextRunAfter, scheduleProblem, serverZone, isTimeZone } from "./snapshot.schedule";
import type { BackupsOverview, DestinationStatus, Settings, SettingsPatch } from "./snapshot.schemas";
import type { S3Target } from "./snapshot.s3";

/**
 * Scheduled whole-instance snapshots, on the main thread: the effective settings (config defaults
 * under the administrator's overrides), the schedule's timer, one run at a time handed to the job
 * worker (snapshot.jobs.ts), and the outcome of each destination recorded for the Settings page,
 * /health/ready's details and /metrics. Credentials never leave this class except to the worker.
 */

/** A snapshot work directory older than this belongs to no running snapshot. */
const STALE_WORK_MS = 6 * 3600_000;

/** Longest single wait of the timer: a clock that jumps (NTP, a suspended VM) is noticed within it. */
const MAX_WAIT_MS = 5 * 60_000;

interface Effective {
  enabled: boolean;
  userArchives: boolean;
  schedule: string;
  zone: string;
  localDir: string;
  policy: { daily: number; weekly: number; monthly: number };
  s3: S3Target;
}

/** For /metrics: each destination's last verified snapshot's age and its last result. */
export interface BackupAge {
  destination: "local" | "s3";
  last_success_at: string | null;
  /** Seconds since the last verified snapshot (null: none yet). */
  age_seconds: number | null;
  last_result: "success" | "failure" | null;
}

export class SnapshotService {
  private running: Promise<RunOutcome> | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private next: Date | null = null;
  private stopped = true;

  constructor(
    private readonly core: Core,
    private readonly jobs: JobRunner,
  ) {
    // /metrics (when on): the README's alert rule fires on the first gauge (0 = never a verified snapshot).
    core.metrics.gauge<"destination">({
      name: "app_backup_last_success_timestamp_seconds",
      help: "Unix time of the newest verified whole-instance snapshot per destination (0: none yet)",
      labelNames: ["destination"],
      collect: () => this.ages().map((a) => ({ labels: { destination: a.destination }, value: a.last_success_at ? Date.parse(a.last_success_at) / 1000 : 0 })),
    });
    core.metrics.gauge<"destination">({
      name: "app_backup_last_attempt_ok",
      help: "Whether the last snapshot attempt per destination succeeded (1) or failed (0); absent before the first attempt",
      labelNames: ["destination"],
      collect: () => this.ages().filter((a) => a.last_result !== null).map((a) => ({ labels: { destination: a.destination }, value: a.last_result === "success" ? 1 : 0 })),
    });
  }

  private effective(): Effective {
    const c = this.core.config;
    const o = readOverrides(this.core.db);
    const s3o = (o.s3 ?? {}) as Record<string, unknown>;
    const str = (v: unknown, d: string) => (typeof v === "string" ? v : d);
    const num = (v: unknown, d: number) => (typeof v === "number" ? v : d);
    const zone = str(o.timezone, c.backupTimezone);
    const dir = str(o.local_dir, c.backupDir);
    return {
      enabled: typeof o.schedule_enabled === "boolean" ? o.schedule_enabled : c.backupScheduleEnabled,
      userArchives: typeof o.user_archives === "boolean" ? o.user_archives : c.backupUserArchives,
      schedule: str(o.schedule, c.backupSchedule),
      zone: zone === "" ? serverZone() : zone,
      localDir: dir === "" ? join(this.core.dataDir, "backups") : dir,
      policy: { daily: num(o.keep_daily, c.backupKeepDaily), weekly: num(o.keep_weekly, c.backupKeepWeekly), monthly: num(o.keep_monthly, c.backupKeepMonthly) },
      s3: {
        endpoint: str(s3o.endpoint, c.backupS3Endpoint),
        region: str(s3o.region, c.backupS3Region),
        bucket: str(s3o.bucket, c.backupS3Bucket),
        prefix: str(s3o.prefix, c.backupS3Prefix),
        accessKeyId: str(s3o.access_key_id, c.backupS3AccessKeyId),
        secretAccessKey: str(s3o.secret_access_key, c.backupS3SecretAccessKey),
      },
    };
  }

  private present(e: Effective): Settings {
    return {
      schedule_enabled: e.enabled,
      user_archives: e.userArchives,
      schedule: e.schedule,
      timezone: e.zone,
      local_dir: e.localDir,
      keep_daily: e.policy.daily,
      keep_weekly: e.policy.weekly,
      keep_monthly: e.policy.monthly,
      s3: {
        enabled: e.s3.bucket !== "",
        endpoint: e.s3.endpoint,
        region: e.s3.region,
        bucket: e.s3.bucket,
        prefix: e.s3.prefix,
        access_key_id_set: e.s3.accessKeyId !== "",
        secret_access_key_set: e.s3.secretAccessKey !== "",
      },
    };
  }

  private requireAdmin(p: Principal): void {
    if (!p.user.isAdmin) throw forbidden();
  }

  overview(p: Principal): BackupsOverview {
    this.requireAdmin(p);
    const e = this.effective();
    return { settings: this.present(e), running: this.running !== null, next_run_at: this.nextRun(e)?.toISOString() ?? null, destinations: this.destinations(e) };
  }

  /** Changes the settings; a null field goes back to the config's value. The schedule restarts from now. */
  updateSettings(p: Principal, patch: SettingsPatch): BackupsOverview {
    this.requireAdmin(p);
    const merged: Record<string, unknown> = { ...readOverrides(this.core.db) };
    for (const [k, v] of Object.entries(patch)) {
      if (k === "s3") continue;
      if (v === null) delete merged[k];
      else if (v !== undefined) merged[k] = v;
    }
    if (patch.s3) {
      const s3: Record<string, unknown> = { ...((merged.s3 as Record<string, unknown>) ?? {}) };
      for (const [k, v] of Object.entries(patch.s3)) {
        if (v === null) delete s3[k];
        else if (v !== undefined) s3[k] = v;
      }
      merged.s3 = s3;
    }
    const problems: FieldProblem[] = [];
    const c = this.core.config;
    const zone = typeof merged.timezone === "string" ? merged.timezone : c.backupTimezone;
    if (zone !== "" && !isTimeZone(zone)) problems.push({ path: "timezone", message: "unknown IANA time zone" });
    else {
      const sp = scheduleProblem(typeof merged.schedule === "string" ? merged.schedule : c.backupSchedule, zone === "" ? serverZone() : zone);
      if (sp) problems.push({ path: "schedule", message: sp });
    }
    if (typeof merged.local_dir === "string" && merged.local_dir !== "" && !isAbsolute(merged.local_dir)) problems.push({ path: "local_dir", message: "must be an absolute path" });
    const s3 = (merged.s3 ?? {}) as Record<string, unknown>;
    if (typeof s3.endpoint === "string" && s3.endpoint !== "" && !/^https?:\/\/[^\s/]+/.test(s3.endpoint)) problems.push({ path: "s3.endpoint", message: "must be an http(s) URL" });
    if (problems.length) throw validationFailed(problems);
    writeTx(this.core.db, (tx) => writeOverrides(tx, merged, this.core.clock.now().toISOString()));
    this.core.logger.info("backup settings changed", { by: p.user.username, fields: Object.keys(patch) });
    if (!this.stopped) this.arm();
    return this.overview(p);
  }

  private destinations(e: Effective): DestinationStatus[] {
    const rows = new Map(readTx(this.core.db, (tx) => statusRows(tx)).map((r) => [r.destination, r]));
    const names: ("local" | "s3")[] = e.s3.bucket !== "" || rows.has("s3") ? ["local", "s3"] : ["local"];
    return names.map((d) => {
      const r = rows.get(d);
      const result = !r?.lastAttemptAt ? null : r.lastAttemptAt === r.lastSuccessAt ? "success" : "failure";
      return {
        destination: d,
        last_attempt_at: r?.lastAttemptAt ?? null,
        last_success_at: r?.lastSuccessAt ?? null,
        last_failure_at: r?.lastFailureAt ?? null,
        last_result: result,
        last_error: result === "failure" ? (r?.lastError ?? null) : null,
        last_name: r?.lastName ?? null,
        last_bytes: r?.lastBytes ?? null,
        last_sha256: r?.lastSha256 ?? null,
      };
    });
  }

  /** Each destination's last result and the age of its last verified snapshot (for /metrics and /health/ready). */
  ages(): BackupAge[] {
    const now = this.core.clock.now().getTime();
    return this.destinations(this.effective()).map((d) => ({
      destination: d.destination,
      last_success_at: d.last_success_at,
      age_seconds: d.last_success_at ? Math.max(0, Math.round((now - Date.parse(d.last_success_at)) / 1000)) : null,
      last_result: d.last_result,
    }));
  }

  /** Starts a run now unless one is running (409 state_conflict). The promise settles when it ends. */
  runNow(p: Principal): Promise<RunOutcome> {
    this.requireAdmin(p);
    if (this.running) throw stateConflict("a snapshot is being taken; wait for it to finish");
    return this.run("manual");
  }

  private run(trigger: "manual" | "schedule"): Promise<RunOutcome> {
    const e = this.effective();
    const job: RunJob = { localDir: e.localDir, userArchives: e.userArchives, policy: e.policy, zone: e.zone, s3: e.s3.bucket !== "" ? e.s3 : null };
    const started = this.core.clock.now().toISOString();
    this.core.logger.info("snapshot started", { trigger, local_dir: e.localDir, s3_bucket: e.s3.bucket || null });
    const p = this.jobs
      .run<RunOutcome>("snapshot.run", job)
      .catch((err: unknown): RunOutcome => ({ local: { ok: false, error: (err as Error)?.message ?? String(err), storageFull: false } }))
      .then((out) => {
        this.record(started, out);
        return out;
      })
      .finally(() => {
        this.running = null;
      });
    this.running = p;
    return p;
  }

  private readonly failureListeners: ((text: string) => unknown)[] = [];

  /** Called with one sentence for each destination a run failed on (app.ts: the admins' notification channels). */
  onFailure(f: (text: string) => unknown): void {
    this.failureListeners.push(f);
  }

  private record(at: string, out: RunOutcome): void {
    try {
      writeTx(this.core.db, (tx) => {
        recordOutcome(tx, "local", at, out.local);
        if (out.s3) recordOutcome(tx, "s3", at, out.s3);
      });
    } catch (e) {
      this.core.logger.error("snapshot status not recorded", { error: (e as Error).message });
    }
    for (const [dest, o] of [["local", out.local], ["s3", out.s3]] as const) {
      if (!o) continue;
      if (o.ok) this.core.logger.info("snapshot stored", { destination: dest, name: o.name, bytes: o.bytes, sha256: o.sha256, pruned: o.pruned.length });
      else {
        this.core.logger.error("snapshot failed", { destination: dest, error: o.error });
        const text = `Backup failed (${dest === "s3" ? "off-site copy (S3)" : "local directory"}): ${o.error}`;
        for (const f of this.failureListeners) {
          // Told after the outcome is recorded; a listener's own failure never touches the backup's.
          Promise.resolve()
            .then(() => f(text))
            .catch((e: unknown) => this.core.logger.error("backup failure listener failed", { error: String(e) }));
        }
      }
    }
  }

  private nextRun(e: Effective): Date | null {
    if (!e.enabled) return null;
    try {
      return nextRunAfter(e.schedule, e.zone, this.core.clock.now());
    } catch {
      return null;
    }
  }

  /**
   * Starts the schedule (the server does; tests drive tick()). First removes the work directories of
   * snapshots a kill interrupted (`<data>/backup/snapshots/*`; hard links and a database copy), those
   * older than a few hours: a younger one may be an `app backup` running beside the server.
   */
  start(): void {
    this.stopped = false;
    const work = join(this.core.dataDir, "backup", "snapshots");
    try {
      const now = this.core.clock.now().getTime();
      for (const n of readdirSync(work)) {
        const p = join(work, n);
        if (now - statSync(p).mtimeMs > STALE_WORK_MS) rmSync(p, { recursive: true, force: true });
      }
    } catch {
      /* none yet */
    }
    this.arm();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Computes the next run from now and waits for it (in steps of at most MAX_WAIT_MS). */
  private arm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.next = this.nextRun(this.effective());
    this.wait();
  }

  private wait(): void {
    if (this.stopped || !this.next) return;
    const delay = Math.min(MAX_WAIT_MS, Math.max(0, this.next.getTime() - this.core.clock.now().getTime()));
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.tick().finally(() => this.wait());
    }, delay);
    this.timer.unref();
  }

  /**
   * Runs the scheduled snapshot if its time has come (by the core's clock), then sets the next one
   * (strictly after this one, so a run is never taken twice for one time). Returns the run's outcome,
   * or null when nothing was due. A run still going when the next time comes makes that time skipped.
   */
  async tick(): Promise<RunOutcome | null> {
    if (this.next === null && this.stopped) this.next = this.nextRun(this.effective());
    const now = this.core.clock.now();
    if (!this.next || now.getTime() < this.next.getTime()) return null;
    const due = this.next;
    const e = this.effective();
    this.next = e.enabled ? nextRunAfter(e.schedule, e.zone, now.getTime() > due.getTime() ? now : due) : null;
    if (this.running) {
      this.core.logger.warn("scheduled snapshot skipped: the previous one is still running", { due: due.toISOString() });
      return null;
    }
    return this.run("schedule");
  }

  /** The next scheduled run as the timer sees it (tests). */
  get nextScheduled(): Date | null {
    return this.next;
  }
}
