import type { Db } from "../../core/db";
import { writeTx } from "../../core/db";
import { listUsers } from "../account/account.repo";
import { deleteEndedDeliveries, endedDeliveriesBetween, nthNewestDeliveryId, type DeliveryAge } from "./channels.repo";
import { ACTION_LIFETIME_MS } from "./reminders.actions";

/**
 * Retention of the delivery history: the deliveries table keeps the last DELIVERY_RETENTION_DAYS
 * days and at most DELIVERIES_PER_USER rows per user (Settings shows the last 100); older ended
 * deliveries are deleted by the scheduler about once an hour, a few hundred rows per transaction.
 *
 * The same rows are the ledger's exactly-once keys, so a row goes only when no delivery for its
 * (reminder, occurrence, channel) can be attempted any more, which is when all of these hold:
 * - it has ended (delivered, failed or missed): pending, sending and retrying rows are never touched;
 * - its occurrence can no longer be armed for a send. A reminder is armed only at a fire time at or
 *   after "now" (or, catching up after downtime, now − grace), and an occurrence fired before now −
 *   grace is recorded `missed`, never sent. Every kind fires at or before its occurrence: before_due
 *   at due − N minutes, `at` at its instant, a habit on its day, a countdown N days before its day;
 *   a snoozed occurrence's key carries the snooze instant. So once the latest instant the
 *   occurrence could fire (latestFire) is older than the grace, re-creating its key could at worst
 *   record another `missed` row: nothing is sent twice;
 * - it was recorded more than max(grace, 24 h) ago: its done/snooze links (24 h) still find it,
 *   and the deliveries page keeps a day's burst however large.
 */
export const DELIVERY_RETENTION_DAYS = 30;
export const DELIVERIES_PER_USER = 1000;
/** Rows judged and deleted per transaction (the event loop waits for each; the scheduler yields between). */
const SLICE = 500;
const DAY_MS = 86_400_000;

/**
 * The latest instant at which a delivery of this occurrence could fire: an instant as such; a date
 * (a date-only task, a habit's day, a countdown's day) at its end in the farthest zone (+2 days
 * covers UTC−12 to UTC+14 and any time of day); a snooze key, its snooze instant. Null when the
 * key cannot be read: such a row is kept.
 */
export function latestFire(occurrence: string): number | null {
  const snooze = occurrence.lastIndexOf("#snooze@");
  if (snooze >= 0) return latestFire(occurrence.slice(snooze + "#snooze@".length));
  if (/^\d{4}-\d{2}-\d{2}$/.test(occurrence)) {
    const t = Date.parse(`${occurrence}T00:00:00Z`);
    return Number.isNaN(t) ? null : t + 2 * DAY_MS;
  }
  if (!/^\d{4}-\d{2}-\d{2}T/.test(occurrence)) return null;
  const t = Date.parse(occurrence);
  return Number.isNaN(t) ? null : t;
}

/** Above every id (ids are lowercase hex and hyphens): a sweep with no upper bound. */
const NO_BOUND = "~";

/**
 * One retention run: deletes the ended deliveries past the age limit or the per-user cap that the
 * rules above allow. Ages are judged on created_at (the clock's time when the delivery was
 * recorded); "newest" is id order (UUIDv7: creation order). `pause` runs between transactions
 * (the scheduler yields to requests there). Returns how many rows went.
 */
export async function pruneDeliveries(db: Db, now: Date, graceMs: number, pause: () => Promise<void>): Promise<number> {
  const t = now.getTime();
  const iso = (ms: number) => new Date(ms).toISOString();
  // Nothing recorded in the last max(grace, action links' lifetime) goes, whatever the cap says.
  const youngest = iso(t - Math.max(graceMs, ACTION_LIFETIME_MS));
  const oldest = iso(t - DELIVERY_RETENTION_DAYS * DAY_MS);
  const cantFire = (d: DeliveryAge) => {
    const latest = latestFire(d.occurrence);
    return latest !== null && latest < t - graceMs && Date.parse(d.fire_at) < t - graceMs && d.created_at < youngest;
  };
  let deleted = 0;
  const sweep = async (userId: string | null, before: string, keep: (d: DeliveryAge) => boolean) => {
    let after = "";
    for (;;) {
      const rows = endedDeliveriesBetween(db, userId, after, before, SLICE);
      if (rows.length === 0) return;
      after = rows[rows.length - 1]!.id;
      const ids = rows.filter((d) => !keep(d) && cantFire(d)).map((d) => d.id);
      if (ids.length) deleted += writeTx(db, (tx) => deleteEndedDeliveries(tx, ids));
      await pause();
    }
  };
  // The age limit, over everyone's ended rows (few: the cap bounds them).
  await sweep(null, NO_BOUND, (d) => d.created_at >= oldest);
  // The per-user cap: what is older than the user's DELIVERIES_PER_USER-th newest row.
  for (const u of listUsers(db)) {
    const nth = nthNewestDeliveryId(db, u.id, DELIVERIES_PER_USER);
    if (nth !== null) await sweep(u.id, nth, () => false);
  }
  return deleted;
}
