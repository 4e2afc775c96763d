import type { Clock } from "../time";

interface Entry {
  /** Attempts counted (checked and failed, in flight, or refused for want of room to check them). */
  failures: number;
  /** Of those, attempts whose password was checked and wrong. */
  wrong: number;
  lastAt: number;
  blockedUntil: number;
}

/** One sign-in attempt counted as a failure before its password is checked (see LoginThrottle.reserve). */
export interface Reservation {
  readonly ipKey: string;
  readonly usernameKey: string;
  readonly ip: Entry;
  readonly user: Entry;
  readonly at: number;
  readonly ipLastAtBefore: number;
  readonly userLastAtBefore: number;
  settled: boolean;
}

export type ReserveResult = { ok: true; reservation: Reservation } | { ok: false; retryAfter: number };

/** How many keys a table holds before it prunes, and the most it may ever hold. */
export interface ThrottleCapacity {
  /** Pruning starts at this many keys and drops unblocked keys (least recently failed first) down to half. */
  softKeys: number;
  /** Past this many keys, all of them still blocked, a key not yet known is refused (never one dropped). */
  hardKeys: number;
}

const DEFAULT_CAPACITY: ThrottleCapacity = { softKeys: 10_000, hardKeys: 50_000 };

/** Failure counts for one kind of key (client address or username). */
class FailureTable {
  private readonly entries = new Map<string, Entry>();
  private pruneAt: number;
  private prunedAt = -Infinity;

  constructor(
    private readonly free: number,
    private readonly maxWaitMs: number,
    private readonly quietMs: number,
    private readonly capacity: ThrottleCapacity,
  ) {
    this.pruneAt = capacity.softKeys;
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: string): Entry | undefined {
    return this.entries.get(key);
  }

  remaining(key: string, now: number): number {
    const e = this.entries.get(key);
    return e ? Math.max(0, e.blockedUntil - now) : 0;
  }

  private waitFor(failures: number): number {
    return failures >= this.free ? Math.min(this.maxWaitMs, 1000 * 2 ** (failures - this.free)) : 0;
  }

  /**
   * Counts one failure. Null when the key is new and the table is full of keys that are still
   * blocked: forgetting one of them would hand its owner fresh attempts, so the new key waits.
   */
  bump(key: string, now: number): Entry | null {
    let e = this.entries.get(key);
    if (e && now - e.lastAt > this.quietMs) e = undefined;
    if (!e) {
      const full = this.entries.size >= this.capacity.hardKeys;
      // When full of blocked keys, look again for ones whose wait has ended at most once a second.
      if (this.entries.size >= this.pruneAt || (full && now - this.prunedAt >= 1000)) this.prune(now);
      if (this.entries.size >= this.capacity.hardKeys && !this.entries.has(key)) return null;
      e = { failures: 0, wrong: 0, lastAt: now, blockedUntil: 0 };
    }
    // Re-inserted so the map's order is least recently failed first (what pruning drops first).
    this.entries.delete(key);
    this.entries.set(key, e);
    e.failures++;
    e.lastAt = now;
    if (e.failures >= this.free) e.blockedUntil = now + this.waitFor(e.failures);
    return e;
  }

  /** Takes back one counted failure (the attempt succeeded, or was never checked). */
  takeBack(e: Entry, bumpedAt: number, lastAtBefore: number): void {
    e.failures = Math.max(0, e.failures - 1);
    // No later failure since ours: the quiet period runs from the failure before it again.
    if (e.lastAt === bumpedAt) e.lastAt = lastAtBefore;
    e.blockedUntil = e.failures >= this.free ? Math.min(e.blockedUntil, e.lastAt + this.waitFor(e.failures)) : 0;
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  /**
   * Bounded memory under a storm of random usernames or addresses: keys past their quiet period
   * go first, then unblocked keys, least recently failed first, down to half the soft limit. A key
   * that is still blocked is never dropped (its owner would get fresh attempts at once).
   */
  prune(now: number): void {
    this.prunedAt = now;
    for (const [k, e] of this.entries) {
      if (now - e.lastAt > this.quietMs && e.blockedUntil <= now) this.entries.delete(k);
    }
    const target = Math.floor(this.capacity.softKeys / 2);
    if (this.entries.size > target) {
      for (const [k, e] of this.entries) {
        if (this.entries.size <= target) break;
        if (e.blockedUntil <= now) this.entries.delete(k);
      }
    }
    // Amortised: when most keys are blocked, the next prune waits until the table has grown a
    // quarter again, so a storm does not rescan every key on every failure.
    this.pruneAt = Math.max(this.capacity.softKeys, Math.ceil(this.entries.size * 1.25));
  }

  /** Milliseconds until the first blocked key is free again (when the table is full). */
  soonestUnblock(now: number): number {
    let soonest = this.maxWaitMs;
    for (const e of this.entries.values()) if (e.blockedUntil > now) soonest = Math.min(soonest, e.blockedUntil - now);
    return soonest;
  }
}

/**
 * Login throttling by client address and by username. After `freeFailures` failures in the
 * window, each further failure doubles the wait. The per-username wait is capped at one minute,
 * so a stranger hammering the owner's name cannot lock the owner out for long; the per-address
 * wait grows to 15 minutes and only hurts the address that keeps failing.
 *
 * An attempt is counted as a failure when it starts (reserve), before its password is checked,
 * and taken back when it succeeds: otherwise concurrent attempts all pass the check before the
 * first one has failed, and the limits do not apply to them.
 */
export class LoginThrottle {
  private readonly byIp: FailureTable;
  private readonly byUser: FailureTable;
  // A count is forgotten after this long without a failure (measured from the last failure, so a
  // patient attacker who keeps trying never gets the free attempts back). Longer than the largest
  // wait, or simply waiting out the wait would reset the count.
  private static readonly USER_QUIET_MS = 15 * 60_000;
  private static readonly IP_QUIET_MS = 60 * 60_000;
  private static readonly USER_MAX_WAIT_MS = 60_000;
  private static readonly IP_MAX_WAIT_MS = 15 * 60_000;

  constructor(
    private readonly clock: Clock,
    freeFailures: number,
    ipFreeFailures = freeFailures * 4,
    capacity: ThrottleCapacity = DEFAULT_CAPACITY,
  ) {
    this.byIp = new FailureTable(ipFreeFailures, LoginThrottle.IP_MAX_WAIT_MS, LoginThrottle.IP_QUIET_MS, capacity);
    this.byUser = new FailureTable(freeFailures, LoginThrottle.USER_MAX_WAIT_MS, LoginThrottle.USER_QUIET_MS, capacity);
  }

  /**
   * Whether the address is in good standing: no wrong password from it and fewer than five attempts
   * counted in the current period (a client that only ever got "try again later" a few times keeps
   * it). Its password checks are served first; an address that has guessed wrong, or keeps sending,
   * waits in line behind them.
   */
  inGoodStanding(ip: string): boolean {
    const now = this.clock.now().getTime();
    const e = this.byIp.get(ip);
    return !e || now - e.lastAt > LoginThrottle.IP_QUIET_MS || (e.wrong === 0 && e.failures < 5);
  }

  /** Seconds to wait before another attempt, or 0. */
  retryAfter(ip: string, usernameKey: string): number {
    const now = this.clock.now().getTime();
    const wait = Math.max(this.byIp.remaining(ip, now), this.byUser.remaining(usernameKey, now));
    return wait > 0 ? Math.ceil(wait / 1000) : 0;
  }

  /**
   * Starts an attempt: refused (seconds to wait) while the address or the username must wait;
   * otherwise counted as a failure at once. Settle it with succeeded() or leave it counted.
   */
  reserve(ip: string, usernameKey: string): ReserveResult {
    const wait = this.retryAfter(ip, usernameKey);
    if (wait > 0) return { ok: false, retryAfter: wait };
    const now = this.clock.now().getTime();
    const ipLastAtBefore = this.byIp.get(ip)?.lastAt ?? now;
    const userLastAtBefore = this.byUser.get(usernameKey)?.lastAt ?? now;
    const ipEntry = this.byIp.bump(ip, now);
    if (!ipEntry) return { ok: false, retryAfter: Math.ceil(this.byIp.soonestUnblock(now) / 1000) };
    const userEntry = this.byUser.bump(usernameKey, now);
    if (!userEntry) {
      this.byIp.takeBack(ipEntry, now, ipLastAtBefore);
      return { ok: false, retryAfter: Math.ceil(this.byUser.soonestUnblock(now) / 1000) };
    }
    return {
      ok: true,
      reservation: { ipKey: ip, usernameKey, ip: ipEntry, user: userEntry, at: now, ipLastAtBefore, userLastAtBefore, settled: false },
    };
  }

  /**
   * The attempt's password was right: the username's count is cleared, and the attempt is taken
   * back from the address's count (which a success never clears: if it did, an attacker with an
   * account of their own could reset their address's count between guesses at someone else's).
   */
  succeeded(r: Reservation): void {
    if (r.settled) return;
    r.settled = true;
    this.byIp.takeBack(r.ip, r.at, r.ipLastAtBefore);
    this.byUser.delete(r.usernameKey);
  }

  /**
   * The attempt presented a valid API token: it is taken back from both counts, but the username's
   * earlier failures stay. A token in use (a phone syncing every few minutes) proves no knowledge of
   * the password, so it must not hand someone guessing that password fresh attempts, as clearing the
   * count (succeeded()) would.
   */
  accepted(r: Reservation): void {
    if (r.settled) return;
    r.settled = true;
    this.byIp.takeBack(r.ip, r.at, r.ipLastAtBefore);
    this.byUser.takeBack(r.user, r.at, r.userLastAtBefore);
  }

  /** The attempt's password was checked and wrong (it stays counted; the address loses good standing). */
  failed(r: Reservation): void {
    if (r.settled) return;
    r.settled = true;
    r.ip.wrong++;
  }

  /**
   * The attempt was never checked (no room to check it): the username's count is given back, so a
   * flood cannot lock a name out this way; the address keeps it, so the flood itself slows down.
   */
  notChecked(r: Reservation): void {
    if (r.settled) return;
    r.settled = true;
    this.byUser.takeBack(r.user, r.at, r.userLastAtBefore);
  }

  /** Counts a failure without a reservation (what reserve() does when the wait is 0). */
  recordFailure(ip: string, usernameKey: string): void {
    const now = this.clock.now().getTime();
    const e = this.byIp.bump(ip, now);
    if (e) e.wrong++;
    this.byUser.bump(usernameKey, now);
  }

  /** A success outside a reservation: clears the username's count only (see succeeded()). */
  recordSuccess(_ip: string, usernameKey: string): void {
    this.byUser.delete(usernameKey);
  }

  /** Keys held, per table (for tests and the memory bound). */
  get sizes(): { ip: number; user: number } {
    return { ip: this.byIp.size, user: this.byUser.size };
  }
}

/**
 * The key a client address is throttled under. An IPv6 address counts by its /64: a home or a
 * host is given a whole /64 and may pick any address in it, so counting single addresses would hand
 * one client 2^64 fresh allowances. IPv4 (also written as ::ffff:a.b.c.d) counts as it is. A value
 * that is no address (a proxy's odd header) is used as it is.
 */
export function addressKey(ip: string | null): string {
  if (ip === null || ip === "") return "unknown";
  let a = ip.trim().toLowerCase();
  if (a.startsWith("[") && a.includes("]")) a = a.slice(1, a.indexOf("]"));
  const zone = a.indexOf("%");
  if (zone >= 0) a = a.slice(0, zone);
  if (!a.includes(":")) return a;
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(a);
  if (mapped) return mapped[1]!;
  const halves = a.split("::");
  if (halves.length > 2) return a;
  const head = halves[0] ? halves[0].split(":") : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(":") : [];
  // An embedded IPv4 tail (…:1.2.3.4) is two groups, none of them in the first four.
  const tailGroups = tail.length && tail[tail.length - 1]!.includes(".") ? tail.length + 1 : tail.length;
  if (halves.length === 2 ? head.length + tailGroups > 7 : head.length !== 8) return a;
  const groups = halves.length === 2 ? [...head, ...Array<string>(8 - head.length - tailGroups).fill("0"), ...tail] : head;
  const first = groups.slice(0, 4);
  if (first.length < 4 || !first.every((g) => /^[0-9a-f]{1,4}$/.test(g))) return a;
  return `${first.map((g) => g.replace(/^0+(?=.)/, "")).join(":")}::/64`;
}
