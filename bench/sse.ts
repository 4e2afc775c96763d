// GET /api/v1/events under load (issue 19): 200 idle Server-Sent Event streams (10 members of a
// shared list, 20 streams each) while the owner makes 50 changes per second; prints the server's
// RSS (idle, with the streams open, after the changes, after they close), the delivery latency
// (PATCH sent → event read on each stream) and GET /me latency meanwhile (the streams must not
// block request handling). `bun bench/sse.ts` (dist/app when built; APP_EXE= for the sources).
import { freshDir, percentile, rssKiB, setupAndLogin, startServer, stopServer } from "./lib";

const STREAMS_PER_USER = 20;
const USERS = 10;
const RATE = 50;
const SECONDS = Number(process.env.SSE_SECONDS ?? 20);

const dir = freshDir("app-bench-sse-");
const server = await startServer(dir);
const base = server.base;
const admin = await setupAndLogin(base);
const api = async (auth: { headers: Record<string, string> }, method: string, path: string, body?: unknown) => {
  const r = await fetch(`${base}/api/v1${path}`, { method, headers: auth.headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : null };
};
const mib = (k: number) => `${(k / 1024).toFixed(1)} MiB`;

const list = (await api(admin, "POST", "/lists", { name: "Shared" })).body.id as string;
const members: { cookie: string; headers: Record<string, string> }[] = [];
for (let i = 0; i < USERS; i++) {
  const username = `member${i}`;
  const password = `sse-bench-${i}-correct-horse`;
  await api(admin, "POST", "/users", { username, password });
  const l = await fetch(`${base}/api/v1/auth/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ username, password }) });
  const cookies = l.headers.getSetCookie().map((c) => c.split(";")[0]!);
  const cookie = cookies.join("; ");
  const csrf = cookies.find((c) => c.startsWith("app_csrf="))!.slice("app_csrf=".length);
  const auth = { cookie, headers: { cookie, "x-csrf-token": csrf, "content-type": "application/json" } };
  const inv = await api(admin, "POST", `/lists/${list}/invitations`, { username, role: "editor" });
  await api(auth, "POST", `/invitations/${inv.body.id}/accept`);
  members.push(auth);
}
const tasks: { id: string; version: number }[] = [];
for (let i = 0; i < 100; i++) tasks.push({ id: (await api(admin, "POST", "/tasks", { title: `t${i}`, list_id: list })).body.id, version: 1 });

await Bun.sleep(1000);
const rssIdle = rssKiB(server.proc.pid);

const sentAt = new Map<string, number>();
const latencies: number[] = [];
let received = 0;
let bytes = 0;
const controllers: AbortController[] = [];
/** One stream per member parses every event (latency); the others only read their bytes, so the load generator stays light. */
async function read(cookie: string, parse: boolean): Promise<void> {
  const ac = new AbortController();
  controllers.push(ac);
  const r = await fetch(`${base}/api/v1/events`, { headers: { cookie }, signal: ac.signal });
  if (r.status !== 200) throw new Error(`events: ${r.status}`);
  const dec = new TextDecoder();
  let buf = "";
  try {
    for await (const chunk of r.body!) {
      if (!parse) {
        bytes += chunk.byteLength;
        continue;
      }
      buf += dec.decode(chunk, { stream: true });
      let i: number;
      while ((i = buf.indexOf("\n\n")) >= 0) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (!data) continue;
        const e = JSON.parse(data) as { id: string; version: number };
        const t = sentAt.get(`${e.id}:${e.version}`);
        if (t !== undefined) {
          latencies.push(performance.now() - t);
          received++;
        }
      }
    }
  } catch {
    // aborted at the end
  }
}
const readers: Promise<void>[] = [];
for (const m of members) for (let s = 0; s < STREAMS_PER_USER; s++) readers.push(read(m.cookie, s === 0));
await Bun.sleep(3000);
const rssStreams = rssKiB(server.proc.pid);

// 50 changes per second, and GET /me timed meanwhile.
const meLatencies: number[] = [];
let stop = false;
const prober = (async () => {
  while (!stop) {
    const t = performance.now();
    await fetch(`${base}/api/v1/me`, { headers: { cookie: admin.cookie } }).then((r) => r.arrayBuffer());
    meLatencies.push(performance.now() - t);
    await Bun.sleep(20);
  }
})();
const t0 = performance.now();
let sent = 0;
let failed = 0;
const inflight: Promise<void>[] = [];
// Sent on schedule without waiting for the previous answer (100 tasks in turn: two changes of one
// task are 2 s apart, so each PATCH names the version the previous one made).
while (performance.now() - t0 < SECONDS * 1000) {
  const due = Math.floor(((performance.now() - t0) / 1000) * RATE);
  while (sent < due) {
    const t = tasks[sent % tasks.length]!;
    const version = t.version++;
    sentAt.set(`${t.id}:${version + 1}`, performance.now());
    inflight.push(api(admin, "PATCH", `/tasks/${t.id}`, { version, priority: sent % 4 }).then((r) => void (r.status !== 200 && failed++)));
    sent++;
  }
  await Bun.sleep(5);
}
await Promise.all(inflight);
await Bun.sleep(1000);
stop = true;
await prober;
const rssAfter = rssKiB(server.proc.pid);
for (const c of controllers) c.abort();
await Promise.allSettled(readers);
await Bun.sleep(1000);
const rssClosed = rssKiB(server.proc.pid);
await stopServer(server);

const expected = sent * USERS;
console.log(`streams: ${USERS * STREAMS_PER_USER}; changes: ${sent} in ${SECONDS} s (${(sent / SECONDS).toFixed(1)}/s, ${failed} failed); events parsed on the ${USERS} timed streams: ${received} of ${expected}; ${(bytes / 1048576).toFixed(1)} MiB read on the other ${USERS * (STREAMS_PER_USER - 1)}`);
console.log(`RSS idle (no stream): ${mib(rssIdle)}; 200 streams open: ${mib(rssStreams)}; after the changes: ${mib(rssAfter)}; streams closed: ${mib(rssClosed)}`);
console.log(`delivery latency (PATCH sent → event read): p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms, max ${Math.max(...latencies).toFixed(1)} ms`);
console.log(`GET /me meanwhile: p50 ${percentile(meLatencies, 50).toFixed(1)} ms, p99 ${percentile(meLatencies, 99).toFixed(1)} ms (${meLatencies.length} requests)`);
