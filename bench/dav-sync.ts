// CalDAV sync cost (issue 16): a 5,000-task list synced from scratch, then again after 10 changes
// made in the web app, the way the clients do it (docs/research/caldav-clients.md §2):
// - "ios": sync-collection (getetag), then calendar-multiget in batches of 100;
// - "tasks.org": PROPFIND getctag, calendar-query (getetag) of the whole list, calendar-multiget in batches of 30.
// Prints requests, response bytes and time per phase (wall time of the requests on loopback, i.e. server
// time plus the client's parsing), the slowest single request, and what another user's GET /api/v1/me
// waits while a phone syncs the whole list: the iOS initial sync, then one calendar-query asking for
// every object's data at once (the heaviest single request a client can send for a list). Run: bun bench/dav-sync.ts   (APP_EXE=dist/app to use the executable)
import { freshDir, median, percentile, setupAndLogin, startServer, stopServer } from "./lib";
import { rmSync } from "node:fs";

const N = Number(process.env.DAV_BENCH_TASKS ?? 5000);
const CHANGES = 10;
const dir = freshDir();
const s = await startServer(dir);
// A failure stops the server too (else it outlives the script, holding the terminal's pipe).
process.on("exit", () => s.proc.kill());
const auth = await setupAndLogin(s.base);
const api = async (method: string, path: string, body?: unknown) => {
  const r = await fetch(`${s.base}/api/v1${path}`, { method, headers: auth.headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${await r.text()}`);
  return r.status === 204 ? null : r.json();
};
const token = (await api("POST", "/tokens", { name: "bench", scopes: ["caldav"] })) as { secret: string };
const basic = `Basic ${Buffer.from(`bench:${token.secret}`).toString("base64")}`;
const list = (await api("POST", "/lists", { name: "Big" })) as { id: string };
const coll = `/dav/calendars/bench/${list.id}/`;

const seedT0 = performance.now();
const ids: string[] = [];
for (let i = 0; i < N; i += 50) {
  const batch = await Promise.all(
    Array.from({ length: Math.min(50, N - i) }, (_, k) => api("POST", "/tasks", { title: `task ${i + k}`, list_id: list.id, due_at: k % 3 === 0 ? "2026-12-01" : null, priority: k % 4 }) as Promise<{ id: string }>),
  );
  ids.push(...batch.map((t) => t.id));
}
console.log(`seeded ${N} tasks in ${((performance.now() - seedT0) / 1000).toFixed(1)} s`);

interface Tally {
  requests: number;
  bytes: number;
  ms: number;
  /** The slowest single request. */
  max?: number;
}
async function dav(t: Tally, method: string, path: string, body: string, depth = "1"): Promise<string> {
  const t0 = performance.now();
  const r = await fetch(`${s.base}${path}`, { method, headers: { authorization: basic, depth, "content-type": "application/xml" }, body });
  const text = await r.text();
  const ms = performance.now() - t0;
  t.ms += ms;
  t.max = Math.max(t.max ?? 0, ms);
  t.requests++;
  t.bytes += Buffer.byteLength(text);
  if (r.status !== 207) throw new Error(`${method} ${path}: ${r.status} ${text.slice(0, 200)}`);
  return text;
}
const hrefsOf = (xml: string) => [...xml.matchAll(/<d:response><d:href>([^<]*)<\/d:href><d:propstat>/g)].map((m) => m[1]!);
const tokenOf = (xml: string) => /<d:sync-token>([^<]*)<\/d:sync-token>/.exec(xml)![1]!;
const multiget = (hrefs: string[]) =>
  `<c:calendar-multiget xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><d:getetag/><c:calendar-data/></d:prop>${hrefs.map((h) => `<d:href>${h}</d:href>`).join("")}</c:calendar-multiget>`;
const sync = (tok: string) => `<d:sync-collection xmlns:d="DAV:"><d:sync-token>${tok}</d:sync-token><d:sync-level>1</d:sync-level><d:prop><d:getetag/></d:prop></d:sync-collection>`;
const query = `<c:calendar-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><d:getetag/></d:prop><c:filter><c:comp-filter name="VCALENDAR"><c:comp-filter name="VTODO"/></c:comp-filter></c:filter></c:calendar-query>`;
const ctag = `<d:propfind xmlns:d="DAV:" xmlns:cs="http://calendarserver.org/ns/"><d:prop><cs:getctag/><d:sync-token/></d:prop></d:propfind>`;

async function fetchAll(t: Tally, hrefs: string[], per: number): Promise<number> {
  let got = 0;
  for (let i = 0; i < hrefs.length; i += per) got += hrefsOf(await dav(t, "REPORT", coll, multiget(hrefs.slice(i, i + per)))).length;
  return got;
}

const row = (name: string, t: Tally, items: number) =>
  console.log(
    `${name.padEnd(34)} ${String(t.requests).padStart(5)} req ${(t.bytes / 1024).toFixed(0).padStart(7)} KiB ${t.ms.toFixed(0).padStart(7)} ms, slowest ${(t.max ?? 0).toFixed(0)} ms  (${items} objects)`,
  );

// Initial sync, both ways.
const iosInit: Tally = { requests: 0, bytes: 0, ms: 0 };
const s0 = await dav(iosInit, "REPORT", coll, sync(""));
const iosToken = tokenOf(s0);
row("ios initial (sync + multiget/100)", iosInit, await fetchAll(iosInit, hrefsOf(s0), 100));
const todoInit: Tally = { requests: 0, bytes: 0, ms: 0 };
await dav(todoInit, "PROPFIND", coll, ctag, "0");
const q0 = await dav(todoInit, "REPORT", coll, query);
row("tasks.org initial (query + mget/30)", todoInit, await fetchAll(todoInit, hrefsOf(q0), 30));

// Ten changes in the web app.
for (let i = 0; i < CHANGES; i++) {
  const t = (await api("GET", `/tasks/${ids[(i * 97) % ids.length]!}`)) as { id: string; version: number };
  await api("PATCH", `/tasks/${t.id}`, { version: t.version, title: `changed ${i}` });
}

const iosInc: Tally = { requests: 0, bytes: 0, ms: 0 };
await dav(iosInc, "PROPFIND", coll, ctag, "0");
const s1 = await dav(iosInc, "REPORT", coll, sync(iosToken));
row("ios incremental (ctag + sync + mget)", iosInc, await fetchAll(iosInc, hrefsOf(s1), 100));
const todoInc: Tally = { requests: 0, bytes: 0, ms: 0 };
await dav(todoInc, "PROPFIND", coll, ctag, "0");
const q1 = await dav(todoInc, "REPORT", coll, query);
// tasks.org fetches only the hrefs whose etag changed: the ten edited ones.
const before = new Map([...q0.matchAll(/<d:href>([^<]*)<\/d:href><d:propstat><d:prop><d:getetag>([^<]*)</g)].map((m) => [m[1]!, m[2]!]));
const changed = [...q1.matchAll(/<d:href>([^<]*)<\/d:href><d:propstat><d:prop><d:getetag>([^<]*)</g)].filter((m) => before.get(m[1]!) !== m[2]).map((m) => m[1]!);
row("tasks.org incremental (ctag+query+mget)", todoInc, await fetchAll(todoInc, changed, 30));

// Another user meanwhile: GET /api/v1/me one after another (a second account, its own session), alone
// for 2 s, then during an iOS initial sync and during one calendar-query with every object's data.
const other = await (async () => {
  const r = await fetch(`${s.base}/api/v1/users`, { method: "POST", headers: auth.headers, body: JSON.stringify({ username: "other", password: "other-password-1" }) });
  if (r.status !== 201) throw new Error(`POST /users: ${r.status} ${await r.text()}`);
  const login = await fetch(`${s.base}/api/v1/auth/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ username: "other", password: "other-password-1" }) });
  return login.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
})();
const pinger = async (stop: () => boolean): Promise<number[]> => {
  const out: number[] = [];
  while (!stop()) {
    const t0 = performance.now();
    await (await fetch(`${s.base}/api/v1/me`, { headers: { cookie: other } })).arrayBuffer();
    out.push(performance.now() - t0);
  }
  return out;
};
const line = (xs: number[]) => `median ${median(xs).toFixed(1)} ms, p95 ${percentile(xs, 95).toFixed(1)} ms, max ${Math.max(...xs).toFixed(1)} ms (${xs.length} requests)`;
const aloneUntil = performance.now() + 2000;
console.log(`GET /me alone: ${line(await pinger(() => performance.now() > aloneUntil))}`);
let done = false;
let pinging = pinger(() => done);
const again: Tally = { requests: 0, bytes: 0, ms: 0 };
const s2 = await dav(again, "REPORT", coll, sync(""));
await fetchAll(again, hrefsOf(s2), 100);
done = true;
console.log(`GET /me during an iOS initial sync (${again.requests} requests, slowest ${(again.max ?? 0).toFixed(0)} ms): ${line(await pinging)}`);
const whole = `<c:calendar-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav"><d:prop><d:getetag/><c:calendar-data/></d:prop><c:filter><c:comp-filter name="VCALENDAR"><c:comp-filter name="VTODO"/></c:comp-filter></c:filter></c:calendar-query>`;
done = false;
pinging = pinger(() => done);
const one: Tally = { requests: 0, bytes: 0, ms: 0 };
for (let i = 0; i < 3; i++) await dav(one, "REPORT", coll, whole);
done = true;
console.log(`GET /me during 3 calendar-queries with all data (${(one.bytes / 3 / 1024).toFixed(0)} KiB each, slowest ${(one.max ?? 0).toFixed(0)} ms): ${line(await pinging)}`);

await stopServer(s);
rmSync(dir, { recursive: true, force: true });
