import { describe, expect, test } from "bun:test";
import { LoginThrottle } from "../../src/core/auth/throttle";
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
});
