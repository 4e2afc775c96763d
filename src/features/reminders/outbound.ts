import http from "node:http";
import https from "node:https";
import { lookup as dnsLookup } from "node:dns";
import { BlockList, isIP } from "node:net";
import type { LookupFunction } from "node:net";

/**
 * The outbound door: every request the server makes on a user's behalf (webhook, ntfy, Web Push)
 * goes through here, and nowhere else. Rules:
 * - http and https only; no redirect is followed (a 3xx is an answer like any other: not 2xx);
 * - the destination is checked against the administrator's rule AFTER DNS resolution, inside the
 *   socket's own lookup, so the address checked is the address connected to (no DNS-rebinding
 *   window between a check and a second resolution);
 * - a short timeout for the whole exchange, and at most READ_CAP bytes of the answer are read;
 *   only the status is kept (nothing of the receiver's body reaches a user or a log).
 * node:http is used rather than fetch for its `lookup` hook, which fetch lacks.
 */

export type OutboundRule = { mode: "any" } | { mode: "public" } | { mode: "allowlist"; allow: string[] };

export const DEFAULT_TIMEOUT_MS = 10_000;
/** Bytes of an answer read before the connection is dropped. */
export const READ_CAP = 64 * 1024;

export class OutboundRefused extends Error {}

/** Addresses "public addresses only" refuses: loopback, private, link-local, CGNAT, multicast, reserved, and IPv6 equivalents. */
const NOT_PUBLIC = (() => {
  const b = new BlockList();
  for (const [net, bits] of [
    ["0.0.0.0", 8],
    ["10.0.0.0", 8],
    ["100.64.0.0", 10],
    ["127.0.0.0", 8],
    ["169.254.0.0", 16],
    ["172.16.0.0", 12],
    ["192.0.0.0", 24],
    ["192.0.2.0", 24],
    ["192.168.0.0", 16],
    ["198.18.0.0", 15],
    ["198.51.100.0", 24],
    ["203.0.113.0", 24],
    ["224.0.0.0", 4],
    ["240.0.0.0", 4],
  ] as const)
    b.addSubnet(net, bits, "ipv4");
  for (const [net, bits] of [
    ["::", 128],
    ["::1", 128],
    ["64:ff9b::", 96],
    ["100::", 64],
    ["2001:db8::", 32],
    ["fc00::", 7],
    ["fe80::", 10],
    ["ff00::", 8],
  ] as const)
    b.addSubnet(net, bits, "ipv6");
  return b;
})();

/**
 * An IPv4-mapped IPv6 address (::ffff:a.b.c.d, or ::ffff:7f00:1) is judged as the IPv4 address it
 * carries. (No ::ffff:0:0/96 rule in the list: node's BlockList checks IPv4 addresses against IPv6
 * rules as mapped ones, so such a rule would refuse every IPv4 address.)
 */
function unmapped(address: string): { address: string; family: "ipv4" | "ipv6" } {
  const m = /^(?:0{0,4}:){0,5}:?ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (m) return { address: m[1]!, family: "ipv4" };
  const h = /^(?:0{0,4}:){0,5}:?ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (h) {
    const hi = parseInt(h[1]!, 16);
    const lo = parseInt(h[2]!, 16);
    return { address: `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`, family: "ipv4" };
  }
  return { address, family: isIP(address) === 6 ? "ipv6" : "ipv4" };
}

export function isPublicAddress(address: string): boolean {
  const a = unmapped(address);
  return !NOT_PUBLIC.check(a.address, a.family);
}

/** Whether an allow-list entry admits this host (name, `*.suffix`) or resolved address (literal or CIDR). */
function allowListAdmits(allow: string[], host: string, address: string | null): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, "");
  for (const raw of allow) {
    const e = raw.trim().toLowerCase();
    if (!e) continue;
    if (e.startsWith("*.")) {
      if (h.endsWith(e.slice(1))) return true;
      continue;
    }
    const slash = e.indexOf("/");
    if (slash > 0 && address !== null) {
      const net = e.slice(0, slash);
      const bits = Number(e.slice(slash + 1));
      const fam = isIP(net);
      if (fam && Number.isInteger(bits)) {
        const b = new BlockList();
        try {
          b.addSubnet(net, bits, fam === 6 ? "ipv6" : "ipv4");
          const a = unmapped(address);
          if (b.check(a.address, a.family)) return true;
        } catch {
          /* a malformed entry admits nothing */
        }
      }
      continue;
    }
    if (e === h || (address !== null && e === address.toLowerCase())) return true;
  }
  return false;
}

/** Checks one resolved address of `host` against the rule; the reason when refused. */
export function refusal(rule: OutboundRule, host: string, address: string): string | null {
  if (rule.mode === "any") return null;
  if (rule.mode === "public") return isPublicAddress(address) ? null : `${host} resolves to ${address}, which is not a public address`;
  return allowListAdmits(rule.allow, host, address) ? null : `${host} is not on the administrator's allow-list`;
}

/** Syntax and scheme: what can be said of a URL without resolving it (channel creation answers 422 on it). */
export function checkUrlShape(raw: string): URL {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new OutboundRefused("not a valid URL");
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") throw new OutboundRefused("only http and https URLs are allowed");
  if (u.username || u.password) throw new OutboundRefused("credentials in the URL are not allowed");
  return u;
}

export interface OutboundResponse {
  status: number;
}

/** A lookup that answers only addresses the rule admits (and says why when none is left). */
function checkedLookup(rule: OutboundRule, host: string): LookupFunction {
  return ((hostname: string, options: unknown, callback: (err: Error | null, addresses: { address: string; family: number }[] | string, family?: number) => void) => {
    dnsLookup(hostname, { all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      let why: string | null = null;
      const ok = addresses.filter((a) => {
        const r = refusal(rule, host, a.address);
        why ??= r;
        return r === null;
      });
      if (ok.length === 0) return callback(new OutboundRefused(why ?? `${host} did not resolve`), []);
      const wantsAll = typeof options === "object" && options !== null && (options as { all?: boolean }).all;
      if (wantsAll) callback(null, ok);
      else callback(null, ok[0]!.address, ok[0]!.family);
    });
  }) as unknown as LookupFunction;
}

/**
 * POSTs `body` to `url` through the door. Resolves with the status (any status: the caller decides
 * what counts as delivered); rejects with OutboundRefused (the rule), or an Error for a network
 * failure or the timeout.
 */
export async function outboundPost(rule: OutboundRule, url: string, headers: Record<string, string>, body: string | Uint8Array, timeoutMs = DEFAULT_TIMEOUT_MS): Promise<OutboundResponse> {
  const u = checkUrlShape(url);
  const host = u.hostname.replace(/^\[|\]$/g, "");
  // An address literal is never looked up: check it here.
  if (isIP(host)) {
    const r = refusal(rule, host, host);
    if (r) throw new OutboundRefused(r);
  } else if (rule.mode === "allowlist" && !allowListAdmits(rule.allow, host, null) && !rule.allow.some((e) => e.includes("/"))) {
    throw new OutboundRefused(`${host} is not on the administrator's allow-list`);
  }
  const mod = u.protocol === "https:" ? https : http;
  const payload = typeof body === "string" ? Buffer.from(body) : Buffer.from(body);
  return await new Promise<OutboundResponse>((resolve, reject) => {
    let settled = false;
    const done = (f: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      f();
    };
    const req = mod.request(
      {
        protocol: u.protocol,
        hostname: host,
        port: u.port || undefined,
        path: `${u.pathname}${u.search}`,
        method: "POST",
        headers: { ...headers, "content-length": String(payload.length), "user-agent": "app-reminders" },
        lookup: isIP(host) ? undefined : checkedLookup(rule, host),
        servername: isIP(host) ? undefined : host,
      },
      (res) => {
        let read = 0;
        res.on("data", (chunk: Buffer) => {
          read += chunk.length;
          // Enough of an answer whose body is never used: stop reading, keep the status.
          if (read > READ_CAP) {
            res.destroy();
            done(() => resolve({ status: res.statusCode ?? 0 }));
          }
        });
        res.on("end", () => done(() => resolve({ status: res.statusCode ?? 0 })));
        res.on("error", (e) => done(() => reject(e)));
        res.on("close", () => done(() => resolve({ status: res.statusCode ?? 0 })));
      },
    );
    const timer = setTimeout(() => {
      req.destroy();
      done(() => reject(new Error(`no answer within ${Math.round(timeoutMs / 1000)} s`)));
    }, timeoutMs);
    req.on("error", (e) => done(() => reject(e)));
    req.end(payload);
  });
}
