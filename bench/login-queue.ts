// A real login while attackers hammer the login endpoint (issue 11 §2), on the compiled executable
// with the shipped argon2id cost (64 MiB, t=2) and --trust-proxy (attacker addresses from
// X-Forwarded-For). Prints figures; asserts nothing.
//
//  1. alone: a real login, 7 times in a row (median).
//  2. burst: 60 wrong logins from 60 addresses for 60 unknown names written at once (sixty open
//     connections), then a real login (the issue's measurement: 14.5 s before the queue was bounded).
//     Its answer and latency, then how long until it gets in when it follows Retry-After.
//  3. flood: N attackers (default 60) loop wrong logins for D seconds (default 10): each from its own
//     address; or from a new IPv6 address of one /64 and a new name every time (one client to the
//     throttle, which counts IPv6 by /64); or from a new IPv4 address and name every time (a botnet:
//     what no address throttle can tell from real users). A real user signs in every 500 ms following
//     Retry-After: latency of each answer and time until signed in.
//  4. the dummy hash: the first login of an unknown user on a fresh server, then the next 7.
//
// Usage: bun bench/login-queue.ts [attackers=60] [seconds=10]   (APP_EXE=path to run another build)
import { rmSync } from "node:fs";
import { EXE, freshDir, median, percentile, rssKiB, startServer, stopServer } from "./lib";
import { connect } from "../test/helpers/server";

const ATTACKERS = Number(process.argv[2] ?? 60);
const SECONDS = Number(process.argv[3] ?? 10);
const OWNER = { username: "owner", password: "plum orbit canvas 42" };

console.log(`executable: ${EXE || "bun src/main.ts (dist/app missing)"}; argon2id 64 MiB t=2; ${ATTACKERS} attackers, ${SECONDS} s floods`);

interface Answer {
  status: number;
  ms: number;
  retryAfter: number;
}

async function login(base: string, username: string, password: string, address: string): Promise<Answer> {
  const t = performance.now();
  const r = await fetch(`${base}/api/v1/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-forwarded-for": address },
    body: JSON.stringify({ username, password }),
  });
  await r.arrayBuffer();
  return { status: r.status, ms: performance.now() - t, retryAfter: Number(r.headers.get("retry-after") ?? 0) };
}

/** Logs in, following Retry-After on 429; the time until 200 and every answer on the way. */
async function signInPatiently(base: string, address: string, deadlineMs: number): Promise<{ totalMs: number; answers: Answer[]; ok: boolean }> {
  const t = performance.now();
  const answers: Answer[] = [];
  while (performance.now() - t < deadlineMs) {
    const a = await login(base, OWNER.username, OWNER.password, address);
    answers.push(a);
    if (a.status === 200) return { totalMs: performance.now() - t, answers, ok: true };
    if (a.status !== 429) throw new Error(`real login answered ${a.status}`);
    await Bun.sleep(Math.max(1, a.retryAfter) * 1000);
  }
  return { totalMs: performance.now() - t, answers, ok: false };
}

const fmt = (ms: number) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(0)} ms`);
const counts = (xs: number[]) => {
  const m = new Map<number, number>();
  for (const x of xs) m.set(x, (m.get(x) ?? 0) + 1);
  return [...m].sort((a, b) => a[0] - b[0]).map(([k, v]) => `${k}×${v}`).join(" ");
};

async function server() {
  const dir = freshDir();
  const s = await startServer(dir, undefined, { APP_TRUST_PROXY: "true" });
  const r = await fetch(`${s.base}/api/v1/setup/initialize`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(OWNER) });
  if (r.status !== 201) throw new Error(`setup ${r.status}: ${await r.text()}`);
  return { s, dir };
}

// 1. Alone.
{
  const { s, dir } = await server();
  const xs: number[] = [];
  for (let i = 0; i < 7; i++) xs.push((await login(s.base, OWNER.username, OWNER.password, "192.168.1.20")).ms);
  console.log(`1. real login alone: median ${fmt(median(xs))} (min ${fmt(Math.min(...xs))}, max ${fmt(Math.max(...xs))})`);
  await stopServer(s);
  rmSync(dir, { recursive: true, force: true });
}

// 2. The burst: sixty connections opened, their requests written in one go, then the real login's.
{
  const { s, dir } = await server();
  const body = (username: string, password: string, address: string) => ({
    method: "POST",
    path: "/api/v1/auth/login",
    json: { username, password },
    headers: { "x-forwarded-for": address },
  });
  // A server that has been up a while: one unknown-user login already answered (the build before
  // issue 11 made its dummy hash then, and made every unknown login wait for it until it existed).
  await login(s.base, "warm-up", "wrong password", "10.8.9.9");
  const open = await Promise.all([
    ...Array.from({ length: 60 }, (_, i) => connect(s.port, body(`nobody${i}`, "wrong password", `10.9.0.${i + 1}`))),
    connect(s.port, body(OWNER.username, OWNER.password, "192.168.1.20")),
  ]);
  const sent = open.map((c) => c.send());
  const answers = await Promise.all(sent);
  const owner = answers[60]!;
  const done = answers.slice(0, 60);
  const retryAfter = Number(owner.headers.get("retry-after")?.[0] ?? 0);
  console.log(`2. burst of 60 wrong logins, then a real one: answered ${owner.status} in ${fmt(owner.ms)}${retryAfter ? ` (Retry-After ${retryAfter})` : ""}; attackers ${counts(done.map((a) => a.status))}, slowest attacker answer ${fmt(Math.max(...done.map((a) => a.ms)))}`);
  if (owner.status !== 200) {
    await Bun.sleep(Math.max(1, retryAfter) * 1000);
    const p = await signInPatiently(s.base, "192.168.1.20", 60_000);
    console.log(`   following Retry-After it was signed in ${p.ok ? `after ${fmt(owner.ms + retryAfter * 1000 + p.totalMs)}` : "never (60 s)"} (${p.answers.length} more attempts)`);
  }
  await stopServer(s);
  rmSync(dir, { recursive: true, force: true });
}

// 3. The floods.
for (const mode of ["fixed", "ipv6", "botnet"] as const) {
  const { s, dir } = await server();
  let stop = false;
  const statuses: number[] = [];
  let fresh = 0;
  const attacker = async (i: number) => {
    while (!stop) {
      const n = mode === "fixed" ? i : ++fresh;
      const address =
        mode === "fixed" ? `10.9.${i >> 8}.${(i & 255) + 1}` : mode === "ipv6" ? `2001:db8::${n.toString(16)}` : `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
      const a = await login(s.base, `nobody${n}`, "wrong password", address);
      statuses.push(a.status);
    }
  };
  const flood = Array.from({ length: ATTACKERS }, (_, i) => attacker(i));
  await Bun.sleep(500);
  const lat: number[] = [];
  const until: number[] = [];
  let failed = 0;
  const end = performance.now() + SECONDS * 1000;
  let peakRss = 0;
  while (performance.now() < end) {
    const p = await signInPatiently(s.base, "192.168.1.20", Math.max(1000, end - performance.now()));
    for (const a of p.answers) lat.push(a.ms);
    if (p.ok) until.push(p.totalMs);
    else failed++;
    peakRss = Math.max(peakRss, rssKiB(s.proc.pid!));
    await Bun.sleep(500);
  }
  stop = true;
  await Promise.all(flood);
  console.log(
    `3. flood (${mode === "fixed" ? `${ATTACKERS} fixed addresses` : mode === "ipv6" ? "a new IPv6 address of one /64 and a new name per request" : "a new IPv4 address and name per request"}): real user's answers p50 ${fmt(percentile(lat, 50))}, p99 ${fmt(percentile(lat, 99))}, max ${fmt(Math.max(...lat))} (${lat.length} answers); signed in ${until.length}× , time to signed in median ${until.length ? fmt(median(until)) : "-"}, max ${until.length ? fmt(Math.max(...until)) : "-"}${failed ? `, ${failed} rounds never got in` : ""}; attackers' answers ${counts(statuses)}; server RSS peak ${(peakRss / 1024).toFixed(0)} MiB`,
  );
  await stopServer(s);
  rmSync(dir, { recursive: true, force: true });
}

// 4. The dummy hash.
{
  const { s, dir } = await server();
  const first = await login(s.base, "nobody-first", "wrong password", "10.8.0.1");
  const next: number[] = [];
  for (let i = 0; i < 7; i++) next.push((await login(s.base, `nobody-${i}`, "wrong password", `10.8.1.${i}`)).ms);
  const wrong: number[] = [];
  for (let i = 0; i < 4; i++) wrong.push((await login(s.base, OWNER.username, `wrong ${i}`, `10.8.2.${i}`)).ms);
  console.log(`4. unknown user: first login ${fmt(first.ms)}, next 7 median ${fmt(median(next))}; wrong password for the real user, median of 4: ${fmt(median(wrong))}`);
  await stopServer(s);
  rmSync(dir, { recursive: true, force: true });
}
