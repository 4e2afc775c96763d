// Sustained load on the compiled executable: GET /me with wrk (32 connections) for 8 rounds of 8 s,
// RSS after each round and after 3 s idle. A resident size that keeps climbing round after round
// would be a leak per request; a plateau is the heap's working size under load.
// Usage: bun run build && bun bench/platform-soak.ts [path, default /api/v1/me]
import { rmSync } from "node:fs";
import { EXE, freshDir, rssKiB, setupAndLogin, startServer, stopServer, wrk } from "./lib";

console.log(`executable: ${EXE || "bun src/main.ts (dist/app missing)"}`);
const dir = freshDir();
const s = await startServer(dir);
const auth = await setupAndLogin(s.base);
const path = process.argv[2] ?? "/api/v1/me";
let total = 0;
for (let i = 0; i < 8; i++) {
  const r = await wrk(`${s.base}${path}`, { cookie: auth.cookie }, { seconds: 8 });
  total += r.rps * 8;
  console.log(`after ${(i + 1) * 8} s (${(total / 1e6).toFixed(1)} M requests): ${r.rps.toFixed(0)} req/s, p99 ${r.p99ms.toFixed(2)} ms, RSS ${(rssKiB(s.proc.pid!) / 1024).toFixed(1)} MiB`);
}
await Bun.sleep(3000);
console.log(`after 3 s idle: RSS ${(rssKiB(s.proc.pid!) / 1024).toFixed(1)} MiB`);
await stopServer(s);
rmSync(dir, { recursive: true, force: true });
