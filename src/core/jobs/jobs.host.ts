import { buildCore, type Core } from "../core";
import { openDatabase, type Db } from "../db";
import { Logger } from "../log";
import { ServerSecret } from "../secret";
import { systemClock, type Clock } from "../time";
import {
  serializeError,
  STREAM_CHUNK_BYTES,
  type FromWorker,
  type InitMessage,
  type JobMessage,
  type Mirror,
  type ToWorker,
} from "./jobs.protocol";

/**
 * The worker side of the jobs (jobs.runner.ts is the main thread's): runs each job the main
 * thread sends with a Core of its own (its own SQLite connection, opened with the same settings by
 * openDatabase; the job's clock), and sends back its result, its error as plain data, or, for a
 * streamed job, its head and then its bytes as the reader's credit allows.
 */

// The worker's global scope: postMessage to the main thread, onmessage from it.
declare const self: Worker;

/** One job as its handler sees it. */
export interface Job {
  /** The server's pieces, with the job's clock (the main thread's "now" when its clock is pinned). */
  core: Core;
}

/** A handler's answer for a streamed job: the head the main thread answers with, then the body's bytes. */
export class Streamed<H = unknown> {
  constructor(
    readonly head: H,
    readonly body: ReadableStream<Uint8Array>,
  ) {}
}

// The payload is whatever the feature's main-side service sent; each handler names its type.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type JobHandler = (payload: any, job: Job) => unknown;
export type JobHandlers = Record<string, JobHandler>;

/**
 * Job modules by name (`backup` serves `backup.export`, …), each loaded on its first job with the
 * worker's base Core (for what lives as long as the worker: purge hooks).
 */
export type JobModules = Record<string, (core: Core) => Promise<JobHandlers>>;

/** Forwards the worker's log events to the main thread's logger (one log, one format). */
class ForwardingLogger extends Logger {
  constructor(private readonly post: (m: FromWorker) => void) {
    super("json", () => {});
  }
  private send(level: "info" | "warn" | "error", msg: string, fields: Record<string, unknown>): void {
    // Plain data only: an Error or a bigint in a field would not survive the structured clone.
    this.post({ type: "log", level, msg, fields: JSON.parse(JSON.stringify(fields)) as Record<string, unknown> });
  }
  override info(msg: string, fields: Record<string, unknown> = {}): void {
    this.send("info", msg, fields);
  }
  override warn(msg: string, fields: Record<string, unknown> = {}): void {
    this.send("warn", msg, fields);
  }
  override error(msg: string, fields: Record<string, unknown> = {}): void {
    this.send("error", msg, fields);
  }
}

interface StreamState {
  credit: number;
  cancelled: boolean;
  wake: (() => void) | null;
}

/**
 * Copies a job's writes from the WAL into the database file before the job answers. Otherwise the
 * next commit on the serving connection would (SQLite's auto-checkpoint runs in whichever
 * connection commits past its threshold): copying a large restore's WAL there is a stall of every
 * request (267 ms for 60 MB, ~1 s after a 60,000-task restore, measured). PASSIVE never blocks a
 * writer; a reader still on an older snapshot holds the copy back, so it is tried again a little
 * later (the serving connection's readers are short; a long export's snapshot may hold it longer,
 * and then the export's own end tries again).
 */
async function checkpoint(db: Db): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const r = db.sqlite.query("PRAGMA wal_checkpoint(PASSIVE)").get() as { busy: number; log: number; checkpointed: number } | null;
    if (!r || r.log <= 0 || r.checkpointed >= r.log) return;
    await Bun.sleep(10);
  }
}

export function serveJobs(modules: JobModules): void {
  const post = (m: FromWorker, transfer?: ArrayBuffer[]) => self.postMessage(m, transfer ?? []);
  let db: Db | null = null;
  let base: Core | null = null;
  const loaded = new Map<string, Promise<JobHandlers>>();
  const streams = new Map<number, StreamState>();

  const init = (m: InitMessage) => {
    db = openDatabase(m.dbPath);
    const logger = new ForwardingLogger(post);
    base = buildCore({ db, config: m.config, clock: systemClock, secret: ServerSecret.loadOrCreate(m.config.dataDir), logger, version: m.version });
  };

  const applyMirror = (mirror: Mirror) => {
    if (Number.isSafeInteger(mirror.maxPageCount) && mirror.maxPageCount > 0) db!.sqlite.run(`PRAGMA max_page_count = ${mirror.maxPageCount}`);
    for (const [name, value] of [
      ["APP_FAILPOINT", mirror.failpoint],
      ["APP_FAILPOINT_ACTION", mirror.failpointAction],
    ] as const) {
      if (value === null) delete process.env[name];
      else process.env[name] = value;
    }
  };

  const handlerOf = async (kind: string): Promise<JobHandler> => {
    const dot = kind.indexOf(".");
    const name = kind.slice(0, dot);
    const load = dot > 0 ? modules[name] : undefined;
    if (!load) throw new Error(`unknown job ${kind}`);
    let handlers = loaded.get(name);
    if (!handlers) {
      handlers = load(base!);
      loaded.set(name, handlers);
    }
    const h = (await handlers)[kind.slice(dot + 1)];
    if (!h) throw new Error(`unknown job ${kind}`);
    return h;
  };

  const run = async (m: JobMessage) => {
    try {
      if (!base) throw new Error("the job worker was not initialised");
      applyMirror(m.mirror);
      const handler = await handlerOf(m.kind);
      const clock: Clock = m.fixedClock ? { now: () => new Date(m.now) } : systemClock;
      const out = await handler(m.payload, { core: { ...base, clock } });
      if (out instanceof Streamed) await pump(m.id, out);
      else {
        await checkpoint(db!);
        post({ type: "result", id: m.id, value: out });
      }
    } catch (e) {
      await checkpoint(db!).catch(() => {});
      post({ type: "error", id: m.id, error: serializeError(e) });
    }
  };

  /**
   * Sends a streamed job's head, then its bytes as the reader's credit allows (none is read from
   * the producer before the first credit); `end` when done, or once the producer has stopped and
   * released what it holds after a cancel.
   */
  const pump = async (id: number, s: Streamed) => {
    const st: StreamState = { credit: 0, cancelled: false, wake: null };
    streams.set(id, st);
    const reader = s.body.getReader();
    let batch: Uint8Array[] = [];
    let batched = 0;
    const send = () => {
      // One new buffer per chunk: it is transferred (not copied again), and a producer's reused
      // buffers are never handed over.
      const out = new Uint8Array(batched);
      let off = 0;
      for (const c of batch) {
        out.set(c, off);
        off += c.byteLength;
      }
      batch = [];
      batched = 0;
      st.credit -= out.byteLength;
      post({ type: "chunk", id, bytes: out.buffer }, [out.buffer]);
    };
    try {
      post({ type: "head", id, value: s.head });
      for (;;) {
        // Bytes gathered but not sent count against the credit: read on only while there is room.
        while (st.credit - batched <= 0 && !st.cancelled) {
          if (batched > 0) send();
          else {
            await new Promise<void>((r) => (st.wake = r));
            st.wake = null;
          }
        }
        if (st.cancelled) break;
        const { value, done } = await reader.read();
        if (done) break;
        batch.push(value);
        batched += value.byteLength;
        if (batched >= STREAM_CHUNK_BYTES || batched >= st.credit) send();
      }
      if (st.cancelled) {
        // The reader went away: the producer stops and releases what it holds before `end` is sent.
        await reader.cancel().catch(() => {});
      } else if (batched > 0) send();
      await checkpoint(db!);
      post({ type: "end", id });
    } catch (e) {
      await reader.cancel().catch(() => {});
      await checkpoint(db!).catch(() => {});
      post({ type: "error", id, error: serializeError(e) });
    } finally {
      streams.delete(id);
    }
  };

  self.onmessage = (e: MessageEvent<ToWorker>) => {
    const m = e.data;
    switch (m.type) {
      case "init":
        init(m);
        return;
      case "job":
        void run(m);
        return;
      case "credit": {
        const st = streams.get(m.id);
        if (st) {
          st.credit += m.bytes;
          st.wake?.();
        }
        return;
      }
      case "cancel": {
        const st = streams.get(m.id);
        if (st) {
          st.cancelled = true;
          st.wake?.();
        }
        return;
      }
      case "shutdown":
        db?.close();
        process.exit(0);
    }
  };
}
