// What /metrics costs a request: the same server with metrics off and on (APP_METRICS_TOKEN set),
// `GET /api/v1/me` (a static route) and `GET /api/v1/tasks/:id` (a dynamic one) under wrk, in
// alternating rounds (off, on, off, on, ...) so a busy neighbour hurts both sides alike; then the
// per-request work alone in this process (route-template lookup + counter + histogram), in ns; and
// what one scrape costs with every route of the app counted.
//
//   bun bench/metrics-overhead.ts [rounds=3] [seconds=5]      (needs wrk; uses dist/app when built)
//   bun bench/metrics-overhead.ts 0                           (the in-process figures only)
import { RouteTemplates, requestMetrics } from "../src/features/metrics/metrics.http";
import { Metrics } from "../src/core/metrics";
import { EXE, freshDir, median, setupAndLogin, startServer, stopServer, wrk, type WrkResult } from "./lib";

const rounds = Number(process.argv[2] ?? 3);
const seconds = Number(process.argv[3] ?? 5);
const TOKEN = "bench-metrics-token-0123456789abcdefABCDEF";

interface Side {
  me: WrkResult[];
  task: WrkResult[];
}
const sides: Record<"off" | "on", Side> = { off: { me: [], task: [] }, on: { me: [], task: [] } };

console.log(`program: ${EXE || "bun src/main.ts"}; ${rounds} rounds × ${seconds} s per endpoint and side (wrk, 2 threads, 32 connections)`);
for (let round = 0; round < rounds; round++) {
  for (const side of ["off", "on"] as const) {
    const dir = freshDir("app-bench-metrics-");
    const s = await startServer(dir, undefined, side === "on" ? { APP_METRICS_TOKEN: TOKEN } : {});
    try {
      const auth = await setupAndLogin(s.base);
      const created = await fetch(`${s.base}/api/v1/tasks`, { method: "POST", headers: auth.headers, body: JSON.stringify({ title: "bench" }) });
      const taskId = ((await created.json()) as { id: string }).id;
      const get = { cookie: auth.cookie };
      await wrk(`${s.base}/api/v1/me`, get, { seconds: 1 }); // warm-up
      const me = await wrk(`${s.base}/api/v1/me`, get, { seconds });
      const task = await wrk(`${s.base}/api/v1/tasks/${taskId}`, get, { seconds });
      sides[side].me.push(me);
      sides[side].task.push(task);
      if (side === "on") {
        const t0 = performance.now();
        const r = await fetch(`${s.base}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
        const body = await r.text();
        console.log(`round ${round + 1}: one scrape after the run: ${r.status}, ${(body.length / 1024).toFixed(1)} KiB in ${(performance.now() - t0).toFixed(1)} ms`);
      }
      console.log(`round ${round + 1} ${side}: /me ${me.rps.toFixed(0)} req/s p50 ${me.p50ms} ms p99 ${me.p99ms} ms; /tasks/:id ${task.rps.toFixed(0)} req/s p50 ${task.p50ms} ms p99 ${task.p99ms} ms`);
    } finally {
      await stopServer(s);
    }
  }
}

const row = (name: string, pick: (s: Side) => WrkResult[]) => {
  const f = (side: "off" | "on", k: keyof WrkResult) => median(pick(sides[side]).map((r) => r[k] as number));
  const rpsOff = f("off", "rps");
  const rpsOn = f("on", "rps");
  return `| ${name} | ${rpsOff.toFixed(0)} / ${rpsOn.toFixed(0)} (${(((rpsOn - rpsOff) / rpsOff) * 100).toFixed(1)}%) | ${f("off", "p50ms")} / ${f("on", "p50ms")} | ${f("off", "p99ms")} / ${f("on", "p99ms")} |`;
};
if (rounds > 0) {
  console.log("\nmedians of the rounds, off / on:");
  console.log("| endpoint | req/s | p50 ms | p99 ms |\n|---|---|---|---|");
  console.log(row("`GET /api/v1/me`", (s) => s.me));
  console.log(row("`GET /api/v1/tasks/:id`", (s) => s.task));
}

// The work added to each request, alone: the app's real route table.
const { makeTestApp } = await import("../test/helpers/app");
const app = makeTestApp();
const templates = new RouteTemplates(app.handle.app.routes);
const observer = requestMetrics(new Metrics(true), templates)!;
const paths = ["/api/v1/me", "/api/v1/tasks/01JB8Z3N6Q7W0000000000000A", "/api/v1/lists/01JB8Z3N6Q7W0000000000000B/tasks", "/some/page"];
const N = 1_000_000;
for (let i = 0; i < 100_000; i++) observer.observe("GET", paths[i & 3]!, 200, 0.001);
let t0 = performance.now();
for (let i = 0; i < N; i++) observer.observe("GET", paths[i & 3]!, 200, 0.001);
const observeNs = ((performance.now() - t0) * 1e6) / N;
t0 = performance.now();
for (let i = 0; i < N; i++) templates.find("GET", paths[i & 3]!);
const findNs = ((performance.now() - t0) * 1e6) / N;
console.log(`\nin process: observe() ${observeNs.toFixed(0)} ns per request, of which the route-template lookup ${findNs.toFixed(0)} ns`);
app.close();
