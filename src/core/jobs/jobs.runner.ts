import type { Config } from "../../config";
import type { Db } from "../db";
import type { Logger } from "../log";
import { systemClock, type Clock } from "../time";
import {
  deserializeError,
  JobFailed,
  STREAM_WINDOW_BYTES,
  type FromWorker,
  type InitMessage,
  type JobMessage,
  type Mirror,
  type ToWorker,
} from "./jobs.protocol";

/**
 * Heavy jobs (backup export, preflight validation and restore; legacy export and restore) run in
 * one Bun Worker with its own SQLite connection (src/jobs.worker.ts), so the event loop that
 * serves every user of the household is never blocked by them: bun:sqlite, ZIP inflating and
 * JSON parsing are synchronous, and a 60,000-task restore held the loop for half a minute.
 *
 * The worker is started on the first job and ended after IDLE_MS without one (an idle server keeps
 * its start-up memory). Its jobs run one at a time in arrival order, except that a streamed job
 * (an export) yields between chunks: a slow download does not hold up a restore. A streamed job
 * runs at most STREAM_WINDOW_BYTES ahead of its reader (credits returned as the reader takes
 * chunks; jobs.protocol.ts), so memory stays bounded whatever the archive's size.
 */
export const IDLE_MS = 30_000;

export interface JobRunnerOptions {
  /** The worker's entry (src/jobs.worker.ts), as a URL; app.ts works it out beside itself. */
  workerUrl: string;
  /** The serving connection: its path for the worker's own connection, its settings to mirror. */
  db: Db;
  config: Config;
  clock: Clock;
  logger: Logger;
  version: string;
  idleMs?: number;
}

interface RunJob {
  kind: "run";
  resolve(value: unknown): void;
  reject(e: Error): void;
}

interface StreamJob {
  kind: "stream";
  resolveHead(v: { head: unknown; body: ReadableStream<Uint8Array> }): void;
  rejectHead(e: Error): void;
  started: boolean;
  /** Bytes the worker may have sent and the reader not yet taken (grows with what is taken). */
  window: number;
  queue: Uint8Array[];
  /** The reader waits for a chunk, the end or an error. */
  wake: (() => void) | null;
  ended: boolean;
  error: Error | null;
  /** A cancel waits for the worker to have stopped the job and cleaned up. */
  onEnd: (() => void) | null;
}

type Pending = RunJob | StreamJob;

export class JobRunner {
  private worker: Worker | null = null;
  private readonly jobs = new Map<number, Pending>();
  private nextId = 1;
  private idleTimer: ReturnType<typeof setTimeout> | null = null;
  private closed = false;
  /** Workers started so far (tests and benchmarks read it). */
  started = 0;

  constructor(private readonly opts: JobRunnerOptions) {}

  /** Whether a worker is running now. */
  get workerRunning(): boolean {
    return this.worker !== null;
  }

  /**
   * Runs job `kind` and resolves with its result; an AppError thrown by the job rejects as the same
   * AppError. `transfer` hands buffers of the payload over without a copy (they are unusable here after).
   */
  run<R>(kind: string, payload: unknown, transfer: ArrayBuffer[] = []): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.dispatch(kind, payload, transfer, { kind: "run", resolve: resolve as (v: unknown) => void, reject });
    });
  }

  /**
   * Runs streamed job `kind`: resolves with its head once it has started (an error before that
   * rejects, so it becomes the answer), and a body that yields its chunks as they are read.
   */
  stream<H>(kind: string, payload: unknown): Promise<{ head: H; body: ReadableStream<Uint8Array> }> {
    return new Promise((resolveHead, rejectHead) => {
      const job: StreamJob = {
        kind: "stream",
        resolveHead: resolveHead as StreamJob["resolveHead"],
        rejectHead,
        started: false,
        window: 0,
        queue: [],
        wake: null,
        ended: false,
        error: null,
        onEnd: null,
      };
      this.dispatch(kind, payload, [], job);
    });
  }

  /** Ends the worker (server stopping, tests); jobs still running fail. */
  close(): void {
    this.closed = true;
    const w = this.worker;
    if (w) this.fail(w, "the server is stopping");
    if (w) this.shutdown(w);
  }

  private dispatch(kind: string, payload: unknown, transfer: ArrayBuffer[], job: Pending): void {
    if (this.closed) {
      this.settleFailed(job, new JobFailed("the server is stopping"));
      return;
    }
    const id = this.nextId++;
    let w: Worker;
    try {
      w = this.ensureWorker();
    } catch (e) {
      this.settleFailed(job, new JobFailed(`the job worker could not start: ${(e as Error).message}`));
      return;
    }
    this.jobs.set(id, job);
    this.active();
    const clock = this.opts.clock;
    const msg: JobMessage = { type: "job", id, kind, payload, now: clock.now().getTime(), fixedClock: clock !== systemClock, mirror: this.mirror() };
    try {
      try {
        w.postMessage(msg, transfer);
      } catch {
        // A buffer that cannot be transferred (not detachable) is copied instead.
        w.postMessage(msg);
      }
    } catch (e) {
      this.jobs.delete(id);
      this.settleFailed(job, e instanceof Error ? e : new JobFailed(String(e)));
      this.maybeIdle();
    }
  }

  private mirror(): Mirror {
    const row = this.opts.db.sqlite.query("PRAGMA max_page_count").get() as { max_page_count: number } | null;
    return {
      maxPageCount: row?.max_page_count ?? 0,
      failpoint: process.env.APP_FAILPOINT ?? null,
      failpointAction: process.env.APP_FAILPOINT_ACTION ?? null,
    };
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const w = new Worker(this.opts.workerUrl);
    this.worker = w;
    this.started++;
    w.addEventListener("message", (e: MessageEvent<FromWorker>) => this.onMessage(e.data));
    // An uncaught error in the worker (the host catches every job's own) or its end: its jobs fail.
    w.addEventListener("error", (e: ErrorEvent) => {
      this.opts.logger.error("job worker failed", { error: e.message });
      if (this.worker === w) {
        this.fail(w, "the job worker failed");
        w.terminate();
      }
    });
    w.addEventListener("close", () => {
      if (this.worker === w) this.fail(w, "the job worker ended unexpectedly");
    });
    const init: InitMessage = { type: "init", dbPath: this.opts.db.path, config: this.opts.config, version: this.opts.version };
    w.postMessage(init);
    return w;
  }

  private post(m: ToWorker): void {
    this.worker?.postMessage(m);
  }

  private onMessage(m: FromWorker): void {
    if (m.type === "log") {
      this.opts.logger[m.level](m.msg, m.fields);
      return;
    }
    const job = this.jobs.get(m.id);
    if (!job) return;
    switch (m.type) {
      case "result":
        if (job.kind === "run") job.resolve(m.value);
        this.finished(m.id);
        return;
      case "error": {
        this.settleFailed(job, deserializeError(m.error));
        this.finished(m.id);
        return;
      }
      case "head":
        if (job.kind === "stream") {
          job.started = true;
          job.resolveHead({ head: m.value, body: this.bodyOf(m.id, job) });
        }
        return;
      case "chunk":
        if (job.kind === "stream") {
          job.queue.push(new Uint8Array(m.bytes));
          job.wake?.();
        }
        return;
      case "end":
        if (job.kind === "stream") {
          job.ended = true;
          job.wake?.();
          job.onEnd?.();
        }
        this.finished(m.id);
        return;
    }
  }

  /** The reader side of a streamed job: a chunk taken is a credit returned. */
  private bodyOf(id: number, job: StreamJob): ReadableStream<Uint8Array> {
    return new ReadableStream<Uint8Array>(
      {
        pull: async (ctrl) => {
          // The first read lets the worker produce its first chunk; nothing is made before.
          if (job.window === 0 && !job.ended && !job.error) {
            job.window = 1;
            this.post({ type: "credit", id, bytes: 1 });
          }
          while (job.queue.length === 0 && !job.ended && !job.error) {
            await new Promise<void>((r) => (job.wake = r));
            job.wake = null;
          }
          const chunk = job.queue.shift();
          if (chunk) {
            ctrl.enqueue(chunk);
            if (!job.ended && !job.error) {
              // What was taken may be sent again, and the window grows by as much (up to its cap).
              const grow = Math.max(0, Math.min(chunk.byteLength, STREAM_WINDOW_BYTES - job.window));
              job.window += grow;
              this.post({ type: "credit", id, bytes: chunk.byteLength + grow });
            }
          } else if (job.error) ctrl.error(job.error);
          else ctrl.close();
        },
        cancel: () => {
          job.queue.length = 0;
          if (job.ended || job.error || !this.jobs.has(id)) return;
          // Resolved when the worker has stopped the job and removed what it held (snapshot, links).
          return new Promise<void>((resolve) => {
            job.onEnd = resolve;
            this.post({ type: "cancel", id });
          });
        },
      },
      { highWaterMark: 0 },
    );
  }

  private settleFailed(job: Pending, e: Error): void {
    if (job.kind === "run") job.reject(e);
    else if (!job.started) job.rejectHead(e);
    else {
      job.error = e;
      job.wake?.();
      job.onEnd?.();
    }
  }

  /** The worker is gone (or going): every job it had fails. */
  private fail(w: Worker, reason: string): void {
    if (this.worker !== w) return;
    this.worker = null;
    this.clearIdle();
    const jobs = [...this.jobs.values()];
    this.jobs.clear();
    this.setAutoCheckpoint(null);
    for (const job of jobs) this.settleFailed(job, new JobFailed(reason));
  }

  private finished(id: number): void {
    this.jobs.delete(id);
    this.maybeIdle();
  }

  private active(): void {
    this.clearIdle();
    this.worker?.ref();
    // While jobs run, the serving connection leaves checkpoints to the worker (jobs.host.ts
    // checkpoints a job's writes before it answers): a commit here must never copy a restore's WAL.
    if (this.jobs.size === 1) this.setAutoCheckpoint(0);
  }

  /** The serving connection's auto-checkpoint setting before jobs changed it (SQLite's default 1000 pages). */
  private autoCheckpoint: number | null = null;

  private setAutoCheckpoint(pages: number | null): void {
    const s = this.opts.db.sqlite;
    try {
      if (pages === 0) {
        this.autoCheckpoint ??= (s.query("PRAGMA wal_autocheckpoint").get() as { wal_autocheckpoint: number }).wal_autocheckpoint;
        s.run("PRAGMA wal_autocheckpoint = 0");
      } else if (this.autoCheckpoint !== null) {
        s.run(`PRAGMA wal_autocheckpoint = ${this.autoCheckpoint}`);
      }
    } catch {
      /* a closed connection (tests ending): nothing to set */
    }
  }

  private clearIdle(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
  }

  /** No job left: the worker no longer keeps the process alive, and ends if none comes for a while. */
  private maybeIdle(): void {
    if (this.jobs.size > 0) return;
    this.setAutoCheckpoint(null);
    const w = this.worker;
    if (!w) return;
    w.unref();
    this.clearIdle();
    this.idleTimer = setTimeout(() => {
      if (this.worker !== w || this.jobs.size > 0) return;
      this.worker = null;
      this.idleTimer = null;
      this.shutdown(w);
    }, this.opts.idleMs ?? IDLE_MS);
    this.idleTimer.unref();
  }

  /** Asks the worker to close its connection and end; ends it outright if it has not after a while. */
  private shutdown(w: Worker): void {
    let ended = false;
    w.addEventListener("close", () => (ended = true));
    try {
      w.postMessage({ type: "shutdown" } satisfies ToWorker);
    } catch {
      /* already gone */
    }
    const t = setTimeout(() => {
      if (!ended) w.terminate();
    }, 2000);
    t.unref();
  }
}
