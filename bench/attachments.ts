// Upload and download of a 25 MiB attachment over loopback: throughput and the server's peak
// RSS growth during each transfer (sampled from /proc every 2 ms).
// Usage: bun bench/attachments.ts        (dist/app when built; APP_EXE= bun bench/attachments.ts runs bun src/main.ts)
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { EXE, freshDir, median, rssKiB, setupAndLogin, startServer, stopServer } from "./lib";

const SIZE = 25 * 1024 * 1024;
const ROUNDS = 5;

const dir = freshDir();
const server = await startServer(dir);
const auth = await setupAndLogin(server.base);
const task = (await (await fetch(`${server.base}/api/v1/tasks`, { method: "POST", headers: auth.headers, body: JSON.stringify({ title: "bench" }) })).json()) as { id: string };

// The file: a PNG signature then pseudo-random bytes (binary, so no text scan), on disk so the
// client streams it too.
const file = join(dir, "bench-upload.png");
const data = new Uint8Array(SIZE);
let x = 2463534242;
for (let i = 0; i < SIZE; i++) {
  x ^= x << 13;
  x ^= x >>> 17;
  x ^= x << 5;
  data[i] = x & 0xff;
}
data.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 0);
writeFileSync(file, data);
const boundary = "----bench-boundary-5f1c2e";
const head = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="bench.png"\r\nContent-Type: image/png\r\n\r\n`;
const tail = `\r\n--${boundary}--\r\n`;

/** Runs `work` while sampling the server's RSS; returns seconds and the peak growth in KiB. */
async function measured<T>(work: () => Promise<T>): Promise<{ seconds: number; peakGrowthKiB: number; result: T }> {
  Bun.gc(true);
  await Bun.sleep(200);
  const base = rssKiB(server.proc.pid);
  let peak = base;
  const timer = setInterval(() => {
    const r = rssKiB(server.proc.pid);
    if (r > peak) peak = r;
  }, 2);
  const t0 = performance.now();
  const result = await work();
  const seconds = (performance.now() - t0) / 1000;
  clearInterval(timer);
  peak = Math.max(peak, rssKiB(server.proc.pid));
  return { seconds, peakGrowthKiB: peak - base, result };
}

const up: { mbps: number; growth: number }[] = [];
const down: { mbps: number; growth: number }[] = [];
let lastId = "";
for (let round = 0; round < ROUNDS; round++) {
  const u = await measured(async () => {
    // A Blob made of [string, BunFile, string] loses the file part in Bun's fetch (size 6), so
    // the body is a stream: head, the file read in chunks, tail (sent chunked).
    const body = new ReadableStream<Uint8Array>({
      async start(ctrl) {
        ctrl.enqueue(new TextEncoder().encode(head));
        for await (const c of Bun.file(file).stream()) ctrl.enqueue(c);
        ctrl.enqueue(new TextEncoder().encode(tail));
        ctrl.close();
      },
    });
    const r = await fetch(`${server.base}/api/v1/tasks/${task.id}/attachments`, {
      method: "POST",
      headers: { cookie: auth.cookie, "x-csrf-token": auth.csrf, "content-type": `multipart/form-data; boundary=${boundary}` },
      body,
    });
    const j = (await r.json()) as { id: string; size: number };
    if (r.status !== 201 || j.size !== SIZE) throw new Error(`upload failed: ${r.status} ${JSON.stringify(j)}`);
    return j.id;
  });
  lastId = u.result;
  up.push({ mbps: SIZE / 1e6 / u.seconds, growth: u.peakGrowthKiB });
  const d = await measured(async () => {
    const r = await fetch(`${server.base}/api/v1/attachments/${lastId}`, { headers: { cookie: auth.cookie } });
    let n = 0;
    for await (const chunk of r.body!) n += chunk.byteLength;
    if (r.status !== 200 || n !== SIZE) throw new Error(`download failed: ${r.status} ${n}`);
    return n;
  });
  down.push({ mbps: SIZE / 1e6 / d.seconds, growth: d.peakGrowthKiB });
}

const fmt = (xs: { mbps: number; growth: number }[]) =>
  `median ${median(xs.map((v) => v.mbps)).toFixed(0)} MB/s (min ${Math.min(...xs.map((v) => v.mbps)).toFixed(0)}), ` +
  `peak RSS growth median ${(median(xs.map((v) => v.growth)) / 1024).toFixed(1)} MiB, max ${(Math.max(...xs.map((v) => v.growth)) / 1024).toFixed(1)} MiB`;
console.log(`server: ${EXE || "bun src/main.ts"}; ${ROUNDS} rounds of a ${SIZE / 1024 / 1024} MiB file`);
console.log(`upload:   ${fmt(up)}`);
console.log(`download: ${fmt(down)}`);
console.log(`server RSS after: ${(rssKiB(server.proc.pid) / 1024).toFixed(1)} MiB`);
await stopServer(server);
rmSync(dir, { recursive: true, force: true });
