import { describe, expect, test } from "bun:test";
import { isPublicAddress, refusal } from "../../src/features/reminders/outbound";
import { quietUntil } from "../../src/features/reminders/reminders.schedule";

describe("the outbound rule's address classes", () => {
  test("public-only refuses loopback, private, link-local, CGNAT, multicast, reserved, IPv4-mapped and IPv6 local ranges", () => {
    for (const a of ["127.0.0.1", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "224.0.0.1", "255.255.255.255", "192.0.2.5", "::1", "::", "fe80::1", "fd00::1", "fc00::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:7f00:1", "0:0:0:0:0:ffff:7f00:1", "2001:db8::1", "ff02::1"]) {
      expect({ a, pub: isPublicAddress(a) }).toEqual({ a, pub: false });
    }
    for (const a of ["1.1.1.1", "8.8.8.8", "172.32.0.1", "100.128.0.1", "2606:4700::1111", "::ffff:1.1.1.1"]) {
      expect({ a, pub: isPublicAddress(a) }).toEqual({ a, pub: true });
    }
  });

  test("allow-list: names, wildcards, addresses and CIDR ranges", () => {
    const rule = { mode: "allowlist" as const, allow: ["ntfy.example.org", "*.hooks.example.net", "192.168.1.0/24", "2001:db8::7"] };
    expect(refusal(rule, "ntfy.example.org", "203.0.113.9")).toBeNull();
    expect(refusal(rule, "a.hooks.example.net", "203.0.113.9")).toBeNull();
    expect(refusal(rule, "hooks.example.net.evil.org", "203.0.113.9")).not.toBeNull();
    expect(refusal(rule, "nas.local", "192.168.1.20")).toBeNull();
    expect(refusal(rule, "nas.local", "192.168.2.20")).not.toBeNull();
    expect(refusal(rule, "v6", "2001:db8::7")).toBeNull();
    expect(refusal({ mode: "any" }, "x", "127.0.0.1")).toBeNull();
  });
});

describe("quiet hours", () => {
  const q = { start: "22:00", end: "07:00" };
  test("spanning midnight, in the user's zone, across a DST change", () => {
    expect(quietUntil(new Date("2026-11-25T21:30:00Z"), q, "Europe/Berlin")?.toISOString()).toBe("2026-11-26T06:00:00.000Z");
    expect(quietUntil(new Date("2026-11-26T05:59:00Z"), q, "Europe/Berlin")?.toISOString()).toBe("2026-11-26T06:00:00.000Z");
    expect(quietUntil(new Date("2026-11-26T06:00:00Z"), q, "Europe/Berlin")).toBeNull();
    expect(quietUntil(new Date("2026-11-26T12:00:00Z"), q, "Europe/Berlin")).toBeNull();
    // The night of 2027-03-27/28 is an hour shorter: 07:00 CEST is 05:00Z.
    expect(quietUntil(new Date("2027-03-27T23:00:00Z"), q, "Europe/Berlin")?.toISOString()).toBe("2027-03-28T05:00:00.000Z");
    expect(quietUntil(new Date("2026-11-26T12:30:00Z"), { start: "12:00", end: "13:00" }, "UTC")?.toISOString()).toBe("2026-11-26T13:00:00.000Z");
    expect(quietUntil(new Date("2026-11-26T12:30:00Z"), null, "UTC")).toBeNull();
  });
});
