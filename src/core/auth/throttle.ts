import type { Clock } from "../time";

interface Entry {
  failures: number;
  lastAt: number;
  blockedUntil: number;
}

/**
 * Login throttling by client address and by username. After `freeFailures` failures in the
 * window, each further failure doubles the wait. The per-username wait is capped at one minute,
 * so a stranger hammering the owner's name cannot lock the owner out for long; the per-address
 * wait grows to 15 minutes and only hurts the address that keeps failing.
 */
export class LoginThrottle {
  private readonly byIp = new Map<string, Entry>();
  private readonly byUser = new Map<string, Entry>();
  // A count is forgotten after this long without a failure (measured from the last failure, so a
  // patient attacker who keeps trying never gets the free attempts back). Longer than the largest
  // wait, or simply waiting out the wait would reset the count.
  private static readonly USER_QUIET_MS = 15 * 60_000;
  private static readonly IP_QUIET_MS = 60 * 60_000;
  private static readonly USER_MAX_WAIT_MS = 60_000;
  private static readonly IP_MAX_WAIT_MS = 15 * 60_000;

  constructor(
    private readonly clock: Clock,
    private readonly freeFailures: number,
    private readonly ipFreeFailures = freeFailures * 4,
  ) {}

  /** Seconds to wait before another attempt, or 0. */
  retryAfter(ip: string, usernameKey: string): number {
    const now = this.clock.now().getTime();
    const wait = Math.max(this.remaining(this.byIp.get(ip), now), this.remaining(this.byUser.get(usernameKey), now));
    return wait > 0 ? Math.ceil(wait / 1000) : 0;
  }

  private remaining(e: Entry | undefined, now: number): number {
    if (!e) return 0;
    return Math.max(0, e.blockedUntil - now);
  }

  recordFailure(ip: string, usernameKey: string): void {
    const now = this.clock.now().getTime();
    this.bump(this.byIp, ip, now, this.ipFreeFailures, LoginThrottle.IP_MAX_WAIT_MS, LoginThrottle.IP_QUIET_MS);
    this.bump(this.byUser, usernameKey, now, this.freeFailures, LoginThrottle.USER_MAX_WAIT_MS, LoginThrottle.USER_QUIET_MS);
    this.prune(now);
  }

  /**
   * A success clears the username's count only: if it cleared the address's too, an attacker with
   * an account of their own could reset their address's count between guesses at someone else's.
   */
  recordSuccess(_ip: string, usernameKey: string): void {
    this.byUser.delete(usernameKey);
  }

  private bump(map: Map<string, Entry>, key: string, now: number, free: number, maxWait: number, quiet: number): void {
    let e = map.get(key);
    if (!e || now - e.lastAt > quiet) {
      e = { failures: 0, lastAt: now, blockedUntil: 0 };
      map.set(key, e);
    }
    e.failures++;
    e.lastAt = now;
    if (e.failures >= free) {
      const wait = Math.min(maxWait, 1000 * 2 ** (e.failures - free));
      e.blockedUntil = now + wait;
    }
  }

  // Bounded memory under a storm of random usernames/addresses.
  private prune(now: number): void {
    for (const [map, quiet] of [
      [this.byIp, LoginThrottle.IP_QUIET_MS],
      [this.byUser, LoginThrottle.USER_QUIET_MS],
    ] as const) {
      if (map.size < 10_000) continue;
      for (const [k, e] of map) if (now - e.lastAt > quiet && e.blockedUntil < now) map.delete(k);
      if (map.size >= 10_000) {
        const drop = map.size - 5_000;
        let i = 0;
        for (const k of map.keys()) {
          if (i++ >= drop) break;
          map.delete(k);
        }
      }
    }
  }
}
