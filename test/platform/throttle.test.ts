import { describe, expect, test } from "bun:test";
import { LoginThrottle, addressKey } from "../../src/core/auth/throttle";
import { FixedClock } from "../../src/core/time";

// core/auth/throttle.ts on its own: waits grow, are capped, end, and memory stays bounded.

describe("LoginThrottle", () => {
  test("free failures, then doubling waits; per-username capped at 60 s", () => {
    const clock = new FixedClock(new Date("2026-01-01T00:00:00Z"));
    const t = new LoginThrottle(clock, 5);
    const waits: number[] = [];
    for (let i = 0; i < 12; i++) {
      // Each attempt from a new address, once the previous wait has passed.
      clock.advance(t.retryAfter(`ip${i}`, "owner") * 1000);
      expect(t.retryAfter(`ip${i}`, "owner")).toBe(0);
      t.recordFailure(`ip${i}`, "owner");
      waits.push(t.retryAfter(`ip-other-${i}`, "owner"));
    }
    expect(waits.slice(0, 4)).toEqual([0, 0, 0, 0]);
    expect(waits[4]).toBe(1);
    expect(waits[5]).toBe(2);
    expect(waits[6]).toBe(4);
    expect(Math.max(...waits)).toBe(60);
    // Another username is not affected.
    expect(t.retryAfter("ip-x", "someone-else")).toBe(0);
  });

  test("per address: more free failures, waits up to 15 minutes, any username", () => {
    const clock = new FixedClock(new Date("2026-01-01T00:00:00Z"));
    const t = new LoginThrottle(clock, 5);
    let max = 0;
    for (let i = 0; i < 60; i++) {
      clock.advance(t.retryAfter("1.2.3.4", `user${i}`) * 1000);
      t.recordFailure("1.2.3.4", `user${i}`);
      max = Math.max(max, t.retryAfter("1.2.3.4", `fresh${i}`));
    }
    expect(max).toBe(15 * 60);
    expect(t.retryAfter("5.6.7.8", "fresh")).toBe(0);
  });

  test("a patient attacker who waits out every wait never gets the free attempts back", () => {
    const clock = new FixedClock(new Date("2026-01-01T00:00:00Z"));
    const t = new LoginThrottle(clock, 5);
    let attempts = 0;
    const end = clock.now().getTime() + 24 * 3600_000;
    while (clock.now().getTime() < end) {
      const wait = t.retryAfter(`ip${attempts}`, "owner");
      clock.advance(Math.max(wait * 1000, 1));
      t.recordFailure(`ip${attempts}`, "owner");
      attempts++;
    }
    // About one guess a minute at most (5 free, then waits doubling to the 60 s cap).
    expect(attempts).toBeLessThanOrEqual(24 * 60 + 10);
  });

  test("a count is forgotten after a quiet period", () => {
    const clock = new FixedClock(new Date("2026-01-01T00:00:00Z"));
    const t = new LoginThrottle(clock, 2);
    for (let i = 0; i < 4; i++) {
      clock.advance(t.retryAfter("ip", "owner") * 1000);
      t.recordFailure(`ip${i}`, "owner");
    }
    expect(t.retryAfter("x", "owner")).toBeGreaterThan(0);
    clock.advance(16 * 60_000);
    expect(t.retryAfter("x", "owner")).toBe(0);
    t.recordFailure("ip9", "owner");
    // Counting starts again: one failure is free again.
    expect(t.retryAfter("x", "owner")).toBe(0);
  });

  test("success clears the username's count, not the address's", () => {
    const clock = new FixedClock(new Date("2026-01-01T00:00:00Z"));
    const t = new LoginThrottle(clock, 2, 3);
    t.recordFailure("ip", "a");
    t.recordFailure("ip", "b");
    t.recordSuccess("ip", "a");
    t.recordFailure("ip", "c");
    expect(t.retryAfter("ip", "d")).toBeGreaterThan(0);
    expect(t.retryAfter("other-ip", "a")).toBe(0);
  });

  test("a storm of random addresses and usernames keeps memory bounded", () => {
    const clock = new FixedClock(new Date("2026-01-01T00:00:00Z"));
    const t = new LoginThrottle(clock, 5);
    for (let i = 0; i < 30_000; i++) t.recordFailure(`10.${i >> 16}.${(i >> 8) & 255}.${i & 255}`, `name${i}`);
    // The maps are private; their size is the property under test.
    const maps = t as unknown as { byIp: Map<string, unknown>; byUser: Map<string, unknown> };
    expect(maps.byIp.size).toBeLessThanOrEqual(10_000);
    expect(maps.byUser.size).toBeLessThanOrEqual(10_000);
  });

  test("pruning never drops a key that is still blocked, however many keys come after it", () => {
    const clock = new FixedClock(new Date("2026-01-01T00:00:00Z"));
    const t = new LoginThrottle(clock, 5);
    // The owner's name and one address are blocked first (the oldest keys in the tables)...
    for (let i = 0; i < 5; i++) t.recordFailure(`10.0.0.${i}`, "owner");
    for (let i = 0; i < 20; i++) t.recordFailure("192.0.2.1", `probe${i}`);
    expect(t.retryAfter("fresh-ip", "owner")).toBeGreaterThan(0);
    expect(t.retryAfter("192.0.2.1", "fresh-name")).toBeGreaterThan(0);
    // ...then a storm of one failure each from new addresses for new names, far past the soft limit.
    for (let i = 0; i < 30_000; i++) t.recordFailure(`10.${1 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`, `name${i}`);
    // Before: the oldest keys were dropped first, blocked or not, and both were free again.
    expect(t.retryAfter("fresh-ip", "owner")).toBeGreaterThan(0);
    expect(t.retryAfter("192.0.2.1", "fresh-name")).toBeGreaterThan(0);
  });

  test("a table full of blocked keys refuses new keys rather than forget one; they are accepted again once blocks end", () => {
    const clock = new FixedClock(new Date("2026-01-01T00:00:00Z"));
    const t = new LoginThrottle(clock, 1, 1, { softKeys: 10, hardKeys: 20 });
    // free = 1: every failure blocks its address and its name.
    for (let i = 0; i < 20; i++) expect(t.reserve(`ip${i}`, `name${i}`).ok).toBe(true);
    expect(t.sizes).toEqual({ ip: 20, user: 20 });
    const refused = t.reserve("ip-new", "name-new");
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.retryAfter).toBeGreaterThanOrEqual(1);
    expect(t.sizes).toEqual({ ip: 20, user: 20 });
    for (let i = 0; i < 20; i++) expect(t.retryAfter(`ip${i}`, "x")).toBeGreaterThan(0);
    // Once the waits are over, pruning makes room.
    clock.advance(16 * 60_000);
    expect(t.reserve("ip-new", "name-new").ok).toBe(true);
    expect(t.sizes.ip).toBeLessThanOrEqual(10);
  });

  test("reserve counts the attempt at once; succeeded() clears the name and takes the attempt back from the address", () => {
    const clock = new FixedClock(new Date("2026-01-01T00:00:00Z"));
    const t = new LoginThrottle(clock, 3, 4);
    const pending = [0, 1, 2].map(() => t.reserve("ip", "owner"));
    expect(pending.every((r) => r.ok)).toBe(true);
    // Three in flight, none finished: the name's three free attempts are used up already.
    expect(t.reserve("ip", "owner").ok).toBe(false);
    const first = pending[0]!;
    if (first.ok) t.succeeded(first.reservation);
    expect(t.retryAfter("other-ip", "owner")).toBe(0);
    // The address holds the two that failed plus none for the success: two more before its limit (4).
    expect(t.reserve("ip", "a").ok).toBe(true);
    expect(t.reserve("ip", "b").ok).toBe(true);
    expect(t.reserve("ip", "c").ok).toBe(false);
  });

  test("notChecked() gives the name its attempt back and leaves the address's count", () => {
    const clock = new FixedClock(new Date("2026-01-01T00:00:00Z"));
    const t = new LoginThrottle(clock, 1, 2);
    const r = t.reserve("ip", "owner");
    expect(t.retryAfter("x", "owner")).toBeGreaterThan(0);
    if (r.ok) t.notChecked(r.reservation);
    expect(t.retryAfter("x", "owner")).toBe(0);
    t.reserve("ip", "other");
    // Two counted on the address (the unchecked one and this one): its limit (2) is reached.
    expect(t.retryAfter("ip", "fresh")).toBeGreaterThan(0);
  });

  test("addresses are counted as IPv4 as they are, IPv6 by their /64", () => {
    expect(addressKey("192.168.1.20")).toBe("192.168.1.20");
    expect(addressKey("::ffff:192.168.1.20")).toBe("192.168.1.20");
    expect(addressKey("2001:db8:1:2::1")).toBe("2001:db8:1:2::/64");
    expect(addressKey("2001:0DB8:0001:0002:aaaa:bbbb:cccc:dddd")).toBe("2001:db8:1:2::/64");
    expect(addressKey("[2001:db8:1:2::5]")).toBe("2001:db8:1:2::/64");
    expect(addressKey("fe80::1%eth0")).toBe("fe80:0:0:0::/64");
    expect(addressKey("2001:db8::")).toBe("2001:db8:0:0::/64");
    expect(addressKey("::1")).toBe("0:0:0:0::/64");
    expect(addressKey(null)).toBe("unknown");
    expect(addressKey("not an address")).toBe("not an address");
    expect(addressKey("1:2:3:4:5:6:7:8:9::")).toBe("1:2:3:4:5:6:7:8:9::");
  });
});
