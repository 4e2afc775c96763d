// What an API token costs a request: GET /me with the session cookie against the same with
// `Authorization: Bearer` (the guard's HMAC of the secret, the token + user lookup, the login
// throttle's reserve/accept, a last-use write at most once a minute), on the compiled executable.
// Runs alternate (session, bearer, session, bearer) so drift on a shared machine shows.
// Usage: bun bench/tokens.ts [seconds per run, default 8]
import { rmSync } from "node:fs";
import { EXE, freshDir, setupAndLogin, startServer, stopServer, wrk } from "./lib";

const seconds = Number(process.argv[2] ?? 8);
console.log(`executable: ${EXE || "bun src/main.ts (dist/app missing)"}`);
const dir = freshDir();
const s = await startServer(dir);
try {
  const auth = await setupAndLogin(s.base);
  const r = await fetch(`${s.base}/api/v1/tokens`, { method: "POST", headers: auth.headers, body: JSON.stringify({ name: "bench", scopes: ["read"] }) });
  if (r.status !== 201) throw new Error(`token: ${r.status} ${await r.text()}`);
  const { secret } = (await r.json()) as { secret: string };
  const check = await fetch(`${s.base}/api/v1/me`, { headers: { authorization: `Bearer ${secret}` } });
  if (check.status !== 200) throw new Error(`bearer GET /me: ${check.status}`);
  const url = `${s.base}/api/v1/me`;
  const runs: { via: string; rps: number; p50ms: number; p99ms: number; errors: string }[] = [];
  for (let i = 0; i < 2; i++) {
    runs.push({ via: "session", ...(await wrk(url, { cookie: auth.cookie }, { seconds })) });
    runs.push({ via: "bearer", ...(await wrk(url, { authorization: `Bearer ${secret}` }, { seconds })) });
  }
  console.log(`GET /me, 32 connections, ${seconds} s per run (wrk):`);
  for (const x of runs) console.log(`  ${x.via.padEnd(7)} ${x.rps.toFixed(0)} req/s, p50 ${x.p50ms.toFixed(2)} ms, p99 ${x.p99ms.toFixed(2)} ms, non-2xx ${x.errors}`);
  const best = (via: string) => Math.max(...runs.filter((x) => x.via === via).map((x) => x.rps));
  console.log(`  bearer / session (best runs): ${((best("bearer") / best("session")) * 100).toFixed(0)}%`);
} finally {
  await stopServer(s);
  rmSync(dir, { recursive: true, force: true });
}
