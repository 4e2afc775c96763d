// The task page on a freshly seeded account: 10,000 tasks created through the API moments before
// (as a new user importing by script would), measured on the same server process that took the
// writes, then after a restart, each beside the bare reference (bench/bare-tasks.ts) on the same
// data. Usage: bun bench/tasks-fresh.ts
import { rmSync, mkdirSync } from "node:fs";
import { EXE, freePort, setupAndLogin, startServer, stopServer, wrk, type Server } from "./lib";

const dir = process.env.BENCH_DIR ?? "/tmp/app-bench-fresh";
const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const THREADS = Number(process.env.BENCH_WRK_THREADS ?? (navigator.hardwareConcurrency <= 2 ? 1 : 2));
const N = Number(process.env.BENCH_TASKS ?? 10_000);
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true, mode: 0o700 });
console.log(`executable: ${EXE || "bun src/main.ts"}; ${SECONDS} s per run; wrk -t${THREADS} -c32`);

let app: Server = await startServer(dir);
let auth = await setupAndLogin(app.base);
const post = (path: string, body: unknown) => fetch(`${app.base}/api/v1${path}`, { method: "POST", headers: auth.headers, body: JSON.stringify(body) }).then(async (r) => {
  if (r.status >= 300) throw new Error(`${path}: ${r.status} ${await r.text()}`);
  return (await r.json()) as { id: string };
});
const t0 = performance.now();
const lists: string[] = [];
for (let i = 0; i < 10; i++) lists.push((await post("/lists", { name: `List ${i}` })).id);
const tags: string[] = [];
for (let i = 0; i < 20; i++) tags.push((await post("/tags", { name: `tag-${i}`, color: "#336699" })).id);
let seed = 7;
const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const tops: { id: string; list: string }[] = [];
for (let i = 0; i < N; i += 8) {
  await Promise.all(
    Array.from({ length: Math.min(8, N - i) }, async (_, k) => {
      const j = i + k;
      const parent = j % 10 === 9 && tops.length ? tops[tops.length - 1 - Math.floor(rnd() * Math.min(50, tops.length))]! : null;
      const list = parent ? parent.list : lists[Math.floor(rnd() * lists.length)]!;
      const body: Record<string, unknown> = {
        title: `Task ${j} ${["buy milk", "write report", "call bob", "plan trip"][j % 4]}`,
        list_id: list,
        tag_ids: [tags[Math.floor(rnd() * tags.length)]!],
        ...(rnd() < 0.4 ? { due_at: "2026-12-0" + (1 + (j % 9)) } : {}),
        ...(parent ? { parent_id: parent.id } : {}),
      };
      const t = await post("/tasks", body);
      if (!parent) tops.push({ id: t.id, list });
    }),
  );
}
console.log(`seeded ${N} tasks through the API in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

async function compare(label: string) {
  const port = freePort();
  const bare = Bun.spawn(["bun", "bench/bare-tasks.ts", dir, String(port)], { stdout: "ignore", stderr: "inherit" });
  for (let i = 0; i < 500; i++) {
    if (await fetch(`http://127.0.0.1:${port}/?limit=1`).then((r) => r.ok, () => false)) break;
    await Bun.sleep(10);
  }
  const appUrl = `${app.base}/api/v1/tasks?limit=50`;
  const bareUrl = `http://127.0.0.1:${port}/?limit=50`;
  await wrk(appUrl, { cookie: auth.cookie }, { seconds: 2, threads: THREADS });
  await wrk(bareUrl, {}, { seconds: 2, threads: THREADS });
  const out: string[] = [];
  for (let r = 0; r < 2; r++) {
    const a = await wrk(appUrl, { cookie: auth.cookie }, { seconds: SECONDS, threads: THREADS });
    const b = await wrk(bareUrl, {}, { seconds: SECONDS, threads: THREADS });
    out.push(`app ${a.rps.toFixed(0)} req/s p99 ${a.p99ms.toFixed(1)} ms | bare ${b.rps.toFixed(0)} req/s p99 ${b.p99ms.toFixed(1)} ms | ${((a.rps / b.rps) * 100).toFixed(0)}%`);
  }
  bare.kill();
  await bare.exited;
  console.log(`${label}:\n  ${out.join("\n  ")}`);
}

await compare("same process, right after seeding");
await stopServer(app);
app = await startServer(dir);
auth = await setupAndLogin(app.base);
await compare("after a restart");
await stopServer(app);
