import type { Core } from "../../core/core";
import { writeTx } from "../../core/db";
import { failpoint } from "../../core/failpoint";
import { isSqliteBusy } from "../../core/errors";
import { claimDelivery, dueDeliveries, earliestAttempt, releaseInterrupted, type DeliveryRow } from "./channels.repo";
import { earliestFire } from "./reminders.repo";
import type { RemindersService } from "./reminders.service";
import type { AttemptResult, ChannelsService } from "./channels.service";

/**
 * The scheduler: one durable schedule (reminders.next_fire_at and deliveries.next_attempt_at,
 * both indexed) and ONE timer, set for the earliest of the two. It never polls every row: each
 * pass reads what is due through the indexes, in small transactions (bun:sqlite blocks the event
 * loop while a statement runs), and yields between them so requests keep flowing. A change that
 * moves the schedule (a reminder created, a task edited) wakes it; the timer never sleeps longer
 * than MAX_SLEEP_MS, so a wall-clock jump is noticed within a minute.
 *
 * Deliveries are sent off the request path, at most `concurrency` at once, each with the outbound
 * door's timeout. Exactly once per (reminder, occurrence, channel) comes from the ledger: the row
 * is unique on that triple, claimed (status sending) in its own commit before the send, and its
 * outcome recorded in another. A crash between claim and outcome leaves `sending`, which a restart
 * sends again under the same delivery id; a crash after the outcome never sends again.
 */
export const MAX_SLEEP_MS = 60_000;
/** How long a claimed attempt may take before a restart may assume it died (above the 10 s timeout). */
const LEASE_MS = 60_000;

export interface SchedulerOptions {
  concurrency?: number;
  /** Reminders handled per transaction. */
  batch?: number;
}

export class ReminderScheduler {
  private timer: ReturnType<typeof setTimeout> | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private started = false;
  private readonly inFlight = new Set<Promise<void>>();
  /** Outcomes of finished attempts not yet recorded (flush). */
  private outcomes: AttemptResult[] = [];
  private flushTimer: ReturnType<typeof setTimeout> | null = null;
  private readonly concurrency: number;
  private readonly batch: number;

  constructor(
    private readonly core: Core,
    private readonly reminders: RemindersService,
    private readonly channels: ChannelsService,
    opts: SchedulerOptions = {},
  ) {
    this.concurrency = opts.concurrency ?? 8;
    this.batch = opts.batch ?? 200;
  }

  private get graceMs(): number {
    return this.core.config.reminderGraceSeconds * 1000;
  }

  /** Starts the timer. Deliveries a crash left mid-attempt are due again at once. */
  start(): void {
    if (this.started) return;
    this.started = true;
    const n = writeTx(this.core.db, (tx) => releaseInterrupted(tx, this.core.clock.now().toISOString()));
    if (n) this.core.logger.warn("reminder deliveries interrupted by a stop are sent again", { deliveries: n });
    this.reminders.wake = () => this.wake();
    this.wake();
  }

  /** Stops the timer; attempts under way finish on their own (their outcomes recorded if the database is still open). */
  stop(): void {
    this.started = false;
    this.reminders.wake = () => {};
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
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
   * attempted; resolves when the attempts it started have ended. Tests drive it directly with a
   * pinned clock. Passes never overlap: a call during one runs another right after it.
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
    // 1. Reminders that came due: ledger rows, next occurrence armed; small transactions.
    for (;;) {
      const now = this.core.clock.now();
      if (this.reminders.dueNeedsLunar(now, this.batch)) await this.reminders.ensureLunar();
      let n: number;
      try {
        n = this.reminders.fireDue(now, this.graceMs, this.batch);
      } catch (e) {
        if (!isSqliteBusy(e)) throw e;
        // Another connection (a restore, a heavy job) holds the write lock: try again shortly.
        await Bun.sleep(200);
        continue;
      }
      await Bun.sleep(0);
      if (n < this.batch) break;
    }
    // 2. Deliveries whose attempt is due, at most `concurrency` at once; claimed a slot-full at a
    // time in one transaction, their outcomes recorded together (each commit is an fsync).
    for (;;) {
      while (this.inFlight.size >= this.concurrency) await Promise.race(this.inFlight);
      const free = this.concurrency - this.inFlight.size;
      const at = this.core.clock.now();
      const due = dueDeliveries(this.core.db, at.toISOString(), free);
      if (due.length === 0) break;
      let claimed: DeliveryRow[];
      try {
        const lease = new Date(at.getTime() + LEASE_MS).toISOString();
        claimed = writeTx(this.core.db, (tx) => due.filter((d) => claimDelivery(tx, d.id, at.toISOString(), lease)));
      } catch (e) {
        if (!isSqliteBusy(e)) throw e;
        await Bun.sleep(200);
        continue;
      }
      if (claimed.length === 0) break;
      failpoint("reminders.after_claim");
      for (const d of claimed) this.launch({ ...d, status: "sending", attempts: d.attempts + 1 });
      await Bun.sleep(0);
    }
    await Promise.all(this.inFlight);
    this.flush();
  }

  /** Records the outcomes that have arrived, in one transaction. */
  private flush(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    if (this.outcomes.length === 0) return;
    const batch = this.outcomes;
    this.outcomes = [];
    failpoint("reminders.after_send");
    for (;;) {
      try {
        writeTx(this.core.db, (tx) => {
          for (const r of batch) this.channels.record(tx, r, this.graceMs);
        });
        break;
      } catch (e) {
        if (!isSqliteBusy(e)) throw e;
        // Another connection holds the write lock for a moment: keep them for the next flush.
        this.outcomes.unshift(...batch);
        this.flushSoon(200);
        return;
      }
    }
    failpoint("reminders.after_record");
  }

  private flushSoon(ms: number): void {
    if (this.flushTimer) return;
    this.flushTimer = setTimeout(() => this.flush(), ms);
  }

  private launch(d: DeliveryRow): void {
    const p: Promise<void> = this.channels
      .send(d)
      .then(
        (r) => {
          this.outcomes.push(r);
          // Up to a slot-full of outcomes, or 20 ms, per commit.
          if (this.outcomes.length >= this.concurrency) this.flush();
          else this.flushSoon(20);
        },
        (e: unknown) => this.core.logger.error("reminder delivery failed unexpectedly", { delivery: d.id, error: String(e) }),
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
