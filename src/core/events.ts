import type { Clock } from "./time";

/**
 * Server-Sent Events (sharing.md, "Changes arrive without reloading"): what changed, for whom.
 *
 * Features publish after their transaction commits (a publish made while a transaction is open
 * waits for its outermost commit, and is dropped on a rollback: the `defer` given by core.ts,
 * db.ts afterCommit); the hub asks the audience resolver (wired in
 * app.ts from the lists feature: a list's owner and members) who may see the list, and queues the
 * event on those users' open streams. Every bound is explicit, so a slow or dead client never
 * grows memory and publishing never waits on a socket:
 * - per stream: at most `streamQueueMax` chunks waiting; past that the stream gets `resync` and
 *   is closed (the client reconnects and reloads);
 * - overall: at most `maxStreams` streams (`maxStreamsPerUser` per user); the replay log holds at
 *   most `logMax` events and only the last `replayMs` (5 minutes).
 * Event ids are `<boot>-<seq>`: after a restart an old Last-Event-ID answers `resync`.
 */
export type AppEventType = "task.changed" | "task.deleted" | "list.changed" | "membership.changed";

export interface AppEvent {
  type: AppEventType;
  id: string;
  list_id: string;
  version: number | null;
}

interface Stored {
  seq: number;
  at: number;
  event: AppEvent;
  to: Set<string>;
  /** Users told whatever their access now (a removed member hears of the removal). */
  always: Set<string>;
}

export interface EventLimits {
  replayMs: number;
  logMax: number;
  streamQueueMax: number;
  maxStreams: number;
  maxStreamsPerUser: number;
  heartbeatMs: number;
}

export const DEFAULT_EVENT_LIMITS: EventLimits = {
  replayMs: 5 * 60 * 1000,
  logMax: 10_000,
  streamQueueMax: 256,
  maxStreams: 2_000,
  maxStreamsPerUser: 20,
  heartbeatMs: 20_000,
};

interface Stream {
  userId: string;
  controller: ReadableStreamDefaultController<Uint8Array>;
  closed: boolean;
}

export class TooManyStreams extends Error {
  constructor(readonly scope: "server" | "user") {
    super(`too many event streams (${scope})`);
  }
}

const enc = new TextEncoder();

export class EventHub {
  readonly boot = Math.random().toString(36).slice(2, 10);
  private seq = 0;
  /** The replay log: `log[head..]` are the live entries (the rest wait for an occasional compaction). */
  private log: Stored[] = [];
  private head = 0;
  private readonly streams = new Set<Stream>();
  private readonly perUser = new Map<string, number>();
  private timer: ReturnType<typeof setInterval> | null = null;
  private audience: (listId: string) => string[] = () => [];
  private canSee: (userId: string, listId: string) => boolean = () => false;

  constructor(
    private readonly clock: Clock,
    readonly limits: EventLimits = DEFAULT_EVENT_LIMITS,
    /** Runs what it is given once the open transaction, if any, commits (db.ts afterCommit); by default at once. */
    private readonly defer: (publish: () => void) => void = (publish) => publish(),
  ) {}

  /** Who may see a list now (for publishing) and whether a user still may (for a replay). */
  configure(p: { audience: (listId: string) => string[]; canSee: (userId: string, listId: string) => boolean }): void {
    this.audience = p.audience;
    this.canSee = p.canSee;
  }

  get openStreams(): number {
    return this.streams.size;
  }

  /** After the commit: queues the event for every open stream of a user who may see its list. */
  publish(event: AppEvent, opts: { also?: string[]; audience?: string[] } = {}): void {
    this.defer(() => this.publishNow(event, opts));
  }

  private publishNow(event: AppEvent, opts: { also?: string[]; audience?: string[] }): void {
    const to = new Set(opts.audience ?? this.audience(event.list_id));
    const always = new Set(opts.also ?? []);
    for (const u of always) to.add(u);
    const now = this.clock.now().getTime();
    const stored: Stored = { seq: ++this.seq, at: now, event, to, always };
    this.log.push(stored);
    this.trim(now);
    if (this.streams.size === 0) return;
    const chunk = enc.encode(this.frame(stored));
    for (const s of this.streams) if (to.has(s.userId)) this.send(s, chunk);
  }

  /** publish() for several events, asking who sees each list once (a batch names many tasks of few lists). */
  publishAll(events: AppEvent[]): void {
    this.defer(() => this.publishAllNow(events));
  }

  private publishAllNow(events: AppEvent[]): void {
    const byList = new Map<string, string[]>();
    for (const e of events) {
      let audience = byList.get(e.list_id);
      if (audience === undefined) byList.set(e.list_id, (audience = this.audience(e.list_id)));
      this.publishNow(e, { audience });
    }
  }

  /** Ends the user's streams (a removed member): the client reconnects and sees what it now may. */
  closeStreamsOf(userId: string): void {
    this.defer(() => this.closeStreamsNow(userId));
  }

  private closeStreamsNow(userId: string): void {
    for (const s of this.streams) if (s.userId === userId) this.end(s);
  }

  /**
   * A new stream for the user. With `lastEventId` from this boot and within the replay window,
   * what they missed (and may still see) comes first; otherwise a `resync` event when an id was given.
   */
  open(userId: string, lastEventId: string | null): ReadableStream<Uint8Array> {
    if (this.streams.size >= this.limits.maxStreams) throw new TooManyStreams("server");
    if ((this.perUser.get(userId) ?? 0) >= this.limits.maxStreamsPerUser) throw new TooManyStreams("user");
    let stream: Stream | null = null;
    const hub = this;
    return new ReadableStream<Uint8Array>(
      {
        start(controller) {
          stream = { userId, controller, closed: false };
          hub.streams.add(stream);
          hub.perUser.set(userId, (hub.perUser.get(userId) ?? 0) + 1);
          hub.startHeartbeat();
          controller.enqueue(enc.encode(`retry: 3000\n: connected ${hub.boot}\n\n`));
          if (lastEventId !== null) hub.replay(stream, lastEventId);
        },
        cancel() {
          if (stream) hub.drop(stream);
        },
      },
      // Counted in chunks: desiredSize goes negative as a client falls behind (see send).
      { highWaterMark: 0 },
    );
  }

  private replay(s: Stream, lastEventId: string): void {
    const m = /^([a-z0-9]+)-(\d{1,15})$/.exec(lastEventId);
    const now = this.clock.now().getTime();
    this.trim(now);
    const last = m ? Number(m[2]) : NaN;
    const first = this.log[this.head];
    const complete = m !== null && m[1] === this.boot && last <= this.seq && (last === this.seq || (first !== undefined && first.seq <= last + 1));
    if (!complete) {
      this.send(s, enc.encode(`event: resync\ndata: {}\n\n`));
      return;
    }
    const seeing = new Map<string, boolean>();
    for (let i = this.head; i < this.log.length; i++) {
      const e = this.log[i]!;
      if (e.seq <= last || !e.to.has(s.userId)) continue;
      let ok = e.always.has(s.userId);
      if (!ok) {
        // Access as it is now: a list the user left since is not replayed.
        let v = seeing.get(e.event.list_id);
        if (v === undefined) seeing.set(e.event.list_id, (v = this.canSee(s.userId, e.event.list_id)));
        ok = v;
      }
      if (ok) this.send(s, enc.encode(this.frame(e)));
    }
  }

  private frame(e: Stored): string {
    return `id: ${this.boot}-${e.seq}\nevent: ${e.event.type}\ndata: ${JSON.stringify(e.event)}\n\n`;
  }

  private send(s: Stream, chunk: Uint8Array): void {
    if (s.closed) return;
    // A client this far behind is not reading: tell it to reload and let it go.
    if ((s.controller.desiredSize ?? 0) < -this.limits.streamQueueMax) {
      try {
        s.controller.enqueue(enc.encode(`event: resync\ndata: {}\n\n`));
      } catch {
        // already closed underneath
      }
      this.end(s);
      return;
    }
    try {
      s.controller.enqueue(chunk);
    } catch {
      this.drop(s);
    }
  }

  private end(s: Stream): void {
    if (s.closed) return;
    try {
      s.controller.close();
    } catch {
      // closed by the client already
    }
    this.drop(s);
  }

  private drop(s: Stream): void {
    if (!this.streams.delete(s)) return;
    s.closed = true;
    const n = (this.perUser.get(s.userId) ?? 1) - 1;
    if (n <= 0) this.perUser.delete(s.userId);
    else this.perUser.set(s.userId, n);
    if (this.streams.size === 0) this.stopHeartbeat();
  }

  private trim(now: number): void {
    const cutoff = now - this.limits.replayMs;
    let i = this.head;
    while (i < this.log.length && (this.log[i]!.at < cutoff || this.log.length - i > this.limits.logMax)) i++;
    this.head = i;
    // Dropped entries are cut off in one copy once they are as many as the live ones (and at least
    // 1,024): a copy of the whole log on every publish, once it was full, made each write pay for
    // 10,000 entries (a 500-task batch: 500 copies).
    if (this.head >= 1024 && this.head * 2 >= this.log.length) {
      this.log = this.log.slice(this.head);
      this.head = 0;
    }
  }

  private startHeartbeat(): void {
    if (this.timer) return;
    const beat = enc.encode(": heartbeat\n\n");
    this.timer = setInterval(() => {
      for (const s of this.streams) this.send(s, beat);
    }, this.limits.heartbeatMs);
    // The heartbeat never keeps the process alive on its own.
    (this.timer as { unref?: () => void }).unref?.();
  }

  private stopHeartbeat(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Ends every stream (server stopping). */
  closeAll(): void {
    for (const s of [...this.streams]) this.end(s);
  }
}
