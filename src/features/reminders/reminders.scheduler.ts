import type { Core } from "../../core/core";
import { writeTx } from "../../core/db";
import { failpoint } from "../../core/failpoint";
import { isSqliteBusy } from "../../core/errors";
import { claimDelivery, dueDeliveries, earliestAttempt, releaseInterrupted, type DeliveryRow } from "./channels.repo";
import { earliestFire } from "./reminders.repo";
import { pruneDeliveries } from "./deliveries.retention";
import type { RemindersService } from "./reminders.service";
import type { AttemptResult, ChannelsService } from "./channels.service";
import { yieldToRequests } from "../../core/yield";

/**
 * The scheduler: one durable schedule (reminders.next_fire_at and deliveries.next_attempt_at,
 * both indexed) and ONE timer, set for the earliest of the two. It never polls every row: each
 * pass reads what is due through the indexes.
 *
 * It shares the event loop with the requests, and bun:sqlite blocks that loop while a statement
 * runs and while a commit fsyncs the WAL (`synchronous = FULL`: every commit is an fsync). So its
 * database work is cut into few, short, batched transactions with a turn of the event loop
 * (setImmediate) between them, so a request waits at most one slice:
 * - firing: due reminders are recorded in the ledger and re-armed in transactions of at most
 *   `batch` reminders and SLICE_MS of work;
 * - claiming: up to `claimBatch` due deliveries are claimed (status sending, attempts + 1, a lease)
 *   in ONE transaction and queued in memory; `concurrency` sends run from that queue;
 * - recording: outcomes are group-committed: one transaction for everything that finished in the
 *   last GROUP_COMMIT_MS, or as soon as `claimBatch` outcomes wait, and at the end of a pass; the
 *   transaction that claims the next batch records the outcomes waiting too.
 * For 10,000 deliveries that is ~10,000 / claimBatch commits, plus a few, instead of 2 × 10,000.
 * (A commit costs ~5 ms on a busy disk, more at its tail; the loop waits for each.)
 *
 * Exactly once per (reminder, occurrence, channel) comes from the ledger: the row is unique on
 * that triple (INSERT ... ON CONFLICT DO NOTHING, in the same transaction as the re-arm), claimed
 * in a commit before its send, and its outcome recorded in a later commit. A crash between claim
 * and outcome leaves it `sending` (for a whole claimed batch, or a whole group of outcomes: each
 * commit is atomic), which a restart sends again under the same delivery id; a crash after the
 * outcome's commit never sends it again. Failpoints at each step (reminders.after_claim,
 * reminders.after_send, reminders.in_record, reminders.after_record) let test/reminders/crash.test.ts
 * kill the server there.
 */
export const MAX_SLEEP_MS = 60_000;
/** How long a claimed attempt may take before the same process may claim it again (above the 10 s timeout, 40 s for SMTP). */
const LEASE_MS = 60_000;
/** The longest one send may take (SMTP: connection + greeting + socket timeouts): the lease of a claimed batch grows with it. */
const SEND_MAX_MS = 40_000;
/** The delivery history's retention (deliveries.retention.ts) runs at most this often. */
const PRUNE_EVERY_MS = 3_600_000;
/** Work per firing transaction before it commits and yields (a request waits at most about this, plus the fsync). */
const SLICE_MS = 8;
/** Outcomes wait at most this long to be recorded together (one commit, one fsync, for all of them). */
const GROUP_COMMIT_MS = 200;

export interface SchedulerOptions {
  concurrency?: number;
  /** Reminders handled per firing transaction (at most; SLICE_MS bounds it too). */
  batch?: number;
  /** Deliveries claimed per transaction, and outcomes per group commit. */
  claimBatch?: number;
}


export class ReminderScheduler {
  private timer: ReturnType<typeof setTimeout> | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private started = false;
  /** Set by stop(): a pass under way claims nothing more. */
  private stopping = false;
  private readonly inFlight = new Set<Promise<void>>();
  /** Claimed deliveries waiting for a send slot. */
  private queue: DeliveryRow[] = [];
  /** Ids claimed by this process and not yet recorded: never claimed twice, whatever the lease says. */
  private readonly held = new Set<string>();
  /** Outcomes of finished attempts not yet recorded (flush). */
  private outcomes: AttemptResult[] = [];
  private flushTimer: ReturnType<typeof setTimeout> | null = null;
  private readonly concurrency: number;
  private readonly batch: number;
  private readonly claimBatch: number;
  /** When the delivery history was last pruned (clock time). */
  private lastPrune = -Infinity;

  constructor(
    private readonly core: Core,
    private readonly reminders: RemindersService,
    private readonly channels: ChannelsService,
    opts: SchedulerOptions = {},
  ) {
    this.concurrency = opts.concurrency ?? 8;
    this.batch = opts.batch ?? 200;
    this.claimBatch = opts.claimBatch ?? 64;
  }

  private get graceMs(): number {
    return this.core.config.reminderGraceSeconds * 1000;
  }

  /** Starts the timer. Deliveries a crash left mid-attempt are due again at once. */
  start(): void {
    if (this.started) return;
    this.started = true;
    this.stopping = false;
    // Whatever an earlier run held is `sending` in the ledger: released just below, claimable again.
    this.queue = [];
    this.held.clear();
    const n = writeTx(this.core.db, (tx) => releaseInterrupted(tx, this.core.clock.now().toISOString()));
    if (n) this.core.logger.warn("reminder deliveries interrupted by a stop are sent again", { deliveries: n });
    this.reminders.wake = () => this.wake();
    this.wake();
  }

  /** Stops the timer; attempts under way finish on their own (their outcomes recorded if the database is still open). */
  stop(): void {
    this.started = false;
    this.stopping = true;
    this.reminders.wake = () => {};
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    // Claimed but not sent: left `sending`, sent after a restart (releaseInterrupted).
    this.queue = [];
    // Outcomes already known are recorded now (the rest are re-sent after a restart).
    try {
      this.flush();
    } catch (e) {
      this.core.logger.warn("reminder outcomes not recorded at stop", { error: String(e) });
    }
  }

  /** Something moved the schedule: run a pass soon (never inside the caller's request). */
  wake(): void {
    if (!this.started) return;
    this.arm(0);
  }

  private arm(delayMs: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.runDue().catch((e) => this.core.logger.error("reminder scheduler pass failed", { error: String(e) }));
    }, Math.max(0, Math.min(delayMs, MAX_SLEEP_MS)));
    this.timer.unref?.();
  }

  /**
   * One pass: every reminder due by the clock's now is recorded and re-armed, every due delivery
   * attempted; resolves when the attempts it started have ended and their outcomes are recorded.
   * Tests drive it directly with a pinned clock. Passes never overlap: a call during one runs
   * another right after it.
   */
  async runDue(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          await this.pass();
        } while (this.again);
      } finally {
        this.running = null;
        this.armNext();
      }
    })();
    return this.running;
  }

  private async pass(): Promise<void> {
    // 1. Reminders that came due: ledger rows, next occurrence armed; short transactions.
    while (!this.stopping) {
      const now = this.core.clock.now();
      if (this.reminders.dueNeedsLunar(now, this.batch)) await this.reminders.ensureLunar();
      let more: boolean;
      try {
        more = this.reminders.fireDue(now, this.graceMs, this.batch, SLICE_MS).more;
      } catch (e) {
        if (!isSqliteBusy(e)) throw e;
        // Another connection (a restore, a heavy job) holds the write lock: try again shortly.
        await Bun.sleep(200);
        continue;
      }
      await yieldToRequests();
      if (!more) break;
    }
    // 2. Deliveries whose attempt is due: claimed a batch per transaction into the queue, sent
    // from it at most `concurrency` at once; outcomes group-committed (flushSoon / flush).
    while (!this.stopping) {
      while (this.inFlight.size >= this.concurrency) await Promise.race(this.inFlight);
      if (this.queue.length === 0) {
        const claimed = this.commit(true);
        if (claimed === null) {
          await Bun.sleep(200);
          continue;
        }
        if (claimed.length === 0) break;
        this.queue = claimed;
        await yieldToRequests();
      }
      // One send started per turn of the event loop: a request that arrived meanwhile runs between
      // two sends' synchronous parts (building, signing, connecting), not after all of them.
      if (this.queue.length > 0) {
        this.launch(this.queue.shift()!);
        await yieldToRequests();
      }
    }
    await Promise.all(this.inFlight);
    this.flush();
    // A flush the write lock refused is retried by its timer; the pass ends when it is recorded.
    while (this.outcomes.length > 0) await Bun.sleep(50);
    // 3. About once an hour: the delivery history past its retention.
    if (!this.stopping && this.core.clock.now().getTime() - this.lastPrune >= PRUNE_EVERY_MS) await this.prune();
  }

  /** Deletes the delivery history past its retention (deliveries.retention.ts); answers how many rows went. */
  async prune(): Promise<number> {
    const now = this.core.clock.now();
    this.lastPrune = now.getTime();
    try {
      const n = await pruneDeliveries(this.core.db, now, this.graceMs, yieldToRequests);
      if (n) this.core.logger.info("old reminder deliveries deleted", { deliveries: n });
      return n;
    } catch (e) {
      // A restore holding the write lock, say: the next run (in an hour) does it.
      if (!isSqliteBusy(e)) this.core.logger.error("reminder deliveries not pruned", { error: String(e) });
      return 0;
    }
  }

  /**
   * One transaction for the scheduler's ledger writes: every outcome waiting is recorded (the
   * group commit) and, with `claimNext`, up to claimBatch due deliveries are claimed (status
   * sending, attempts + 1, a lease), so in a burst one commit (one fsync) does both. Answers the
   * claimed deliveries, or null when another connection holds the write lock (the outcomes then
   * wait for the next try).
   */
  private commit(claimNext: boolean): DeliveryRow[] | null {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    const at = this.core.clock.now();
    const due = claimNext
      ? dueDeliveries(this.core.db, at.toISOString(), this.claimBatch + this.held.size).filter((d) => !this.held.has(d.id)).slice(0, this.claimBatch)
      : [];
    const batch = this.outcomes;
    if (batch.length === 0 && due.length === 0) return [];
    this.outcomes = [];
    if (batch.length) failpoint("reminders.after_send");
    // The lease covers the whole batch's sends at `concurrency` at once; the held set covers the rest.
    const lease = new Date(at.getTime() + LEASE_MS + Math.ceil(due.length / this.concurrency) * SEND_MAX_MS).toISOString();
    let claimed: DeliveryRow[];
    try {
      claimed = writeTx(this.core.db, (tx) => {
        batch.forEach((r, i) => {
          this.channels.record(tx, r, this.graceMs);
          // Mid-transaction: a kill here must leave none of the group recorded.
          if (i === 0) failpoint("reminders.in_record");
        });
        return due.filter((d) => claimDelivery(tx, d.id, at.toISOString(), lease));
      });
    } catch (e) {
      if (!isSqliteBusy(e)) throw e;
      this.outcomes.unshift(...batch);
      if (this.outcomes.length) this.flushSoon(200);
      return null;
    }
    for (const r of batch) this.held.delete(r.d.id);
    if (batch.length) failpoint("reminders.after_record");
    if (claimed.length) failpoint("reminders.after_claim");
    for (const d of claimed) this.held.add(d.id);
    return claimed.map((d) => ({ ...d, status: "sending", attempts: d.attempts + 1 }));
  }

  /** Records the outcomes that have arrived, in one transaction (a group commit). */
  private flush(): void {
    this.commit(false);
  }

  private flushSoon(ms: number): void {
    if (this.flushTimer) return;
    this.flushTimer = setTimeout(() => {
      try {
        this.flush();
      } catch (e) {
        this.core.logger.error("reminder outcomes not recorded", { error: String(e) });
      }
    }, ms);
  }

  private launch(d: DeliveryRow): void {
    const p: Promise<void> = this.channels
      .send(d)
      .then(
        (r) => {
          this.outcomes.push(r);
          // Up to a claimed batch of outcomes, or GROUP_COMMIT_MS, per commit.
          if (this.outcomes.length >= this.claimBatch) this.flush();
          else this.flushSoon(GROUP_COMMIT_MS);
        },
        (e: unknown) => {
          this.held.delete(d.id);
          this.core.logger.error("reminder delivery failed unexpectedly", { delivery: d.id, error: String(e) });
        },
      )
      .finally(() => this.inFlight.delete(p));
    this.inFlight.add(p);
  }

  /** The single timer: set for the earliest armed reminder or due attempt. */
  private armNext(): void {
    if (!this.started) return;
    const times = [earliestFire(this.core.db), earliestAttempt(this.core.db)].filter((t): t is string => t !== null);
    if (times.length === 0) return this.arm(MAX_SLEEP_MS);
    const earliest = Math.min(...times.map((t) => new Date(t).getTime()));
    this.arm(earliest - this.core.clock.now().getTime());
  }
}
