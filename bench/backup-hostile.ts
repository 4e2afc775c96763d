// Hostile preflights (issue 11 §1): archives made to make the preflight work long or answer huge.
// Each case runs in a fresh server process, so its peak RSS (VmHWM) is the case's own; health is
// polled every 50 ms during the upload and validation (its worst latency is printed). Cases:
//   unknown-keys   data/memos.json: 200 records, each with one unknown key of ~3.9 M characters
//                  (deflated ~160:1, under the 200:1 ratio cap: ~4.9 MB uploaded)
//   unknown-keys-1m  the same with keys of 1,000,000 characters (under the record size cap)
//   ones           data/tasks.json = [1,1,…] with 10 M records (stored: 20 MB)
//   empty-objects  data/tasks.json = [{},{},…] with 5 M records (stored: 15 MB)
//   manifest-600k  a 60 MB manifest listing 600,000 entries the archive does not hold (deflated)
//   deep           data/tasks.json: one record nested 1,000,000 levels deep (stored: 2 MB)
// Command: `APP_EXE= bun bench/backup-hostile.ts` (BENCH_CASES=ones,deep to pick cases).
import { Deflate } from "fflate";
import { freshDir, setupAndLogin, startServer, stopServer } from "./lib";
import { readFileSync, rmSync } from "node:fs";
import { buildZip, type RawEntry } from "../test/backup/zip-writer";

const ENV = { APP_ARGON2_MEMORY_KIB: "1024", APP_ARGON2_TIME_COST: "1" };
const enc = new TextEncoder();
const peakKiB = (pid: number) => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? NaN);
const sha256 = (b: Uint8Array) => new Bun.CryptoHasher("sha256").update(b).digest("hex");

interface Built {
  entry: RawEntry;
  size: number;
  sha: string;
}

/** A stored entry from its bytes. */
function stored(name: string, data: Uint8Array): Built {
  return { entry: { name, data, method: 0 }, size: data.byteLength, sha: sha256(data) };
}

/** A deflated entry from a generator of chunks (never holds the inflated whole). */
function deflated(name: string, chunks: Iterable<Uint8Array>): Built {
  const parts: Uint8Array[] = [];
  const d = new Deflate({ level: 6 }, (c) => parts.push(c));
  const sha = new Bun.CryptoHasher("sha256");
  let crc = 0;
  let size = 0;
  for (const c of chunks) {
    d.push(c);
    sha.update(c);
    crc = Bun.hash.crc32(c, crc);
    size += c.byteLength;
  }
  d.push(new Uint8Array(0), true);
  const raw = new Uint8Array(Buffer.concat(parts));
  return { entry: { name, data: new Uint8Array(0), raw, crc: crc >>> 0, size, method: 8 }, size, sha: sha.digest("hex") };
}

/** An empty account's export: every data entry an empty array. */
const KINDS = ["folders", "lists", "tags", "tasks", "recurrences", "recurrence_exceptions", "habits", "habit_logs", "habit_pauses", "countdowns", "memos", "attachments"];

function archive(replace: Record<string, Built>, manifestBytes?: Uint8Array): Uint8Array {
  const built: Built[] = KINDS.map((k) => replace[`data/${k}.json`] ?? stored(`data/${k}.json`, enc.encode("[]")));
  const counts = Object.fromEntries(KINDS.map((k) => [k, 0]));
  const manifest =
    manifestBytes ??
    enc.encode(
      JSON.stringify({
        format: "app-backup",
        version: 2,
        backup_id: Bun.randomUUIDv7(),
        created_at: new Date().toISOString(),
        app_version: "bench",
        source_user: { id: Bun.randomUUIDv7(), username: "bench" },
        counts,
        entries: Object.fromEntries(built.map((b) => [b.entry.name as string, { size: b.size, sha256: b.sha }])),
      }),
    );
  // Deflated: a stored manifest past 256 KiB met another bug (#11 §5, "a valid archive is refused").
  return buildZip([{ name: "manifest.json", data: manifest, method: 8 }, ...built.map((b) => b.entry)]);
}

function* memosWithUnknownKeys(n: number): Generator<Uint8Array> {
  yield enc.encode("[");
  for (let r = 0; r < 200; r++) {
    const key = new Uint8Array(n).fill(97);
    // A letter every 500 characters: deflates ~160:1, under the 200:1 cap.
    for (let i = 0; i < n; i += 500) key[i] = 97 + Math.floor(Math.random() * 26);
    const id = Bun.randomUUIDv7();
    yield enc.encode(`${r ? "," : ""}{"id":"${id}","content":"x","pinned":false,"version":1,"created_at":"2026-01-01T00:00:00.000Z","updated_at":"2026-01-01T00:00:00.000Z","deleted_at":null,"`);
    yield key;
    yield enc.encode('":1}');
  }
  yield enc.encode("]");
}

function repeated(unit: string, n: number): Uint8Array {
  const u = enc.encode(unit);
  const out = new Uint8Array(2 + u.byteLength * n - 1);
  out[0] = 0x5b;
  for (let i = 0; i < n; i++) out.set(u.subarray(0, i === n - 1 ? u.byteLength - 1 : u.byteLength), 1 + i * u.byteLength);
  out[out.byteLength - 1] = 0x5d;
  return out;
}

function manifest600k(): Uint8Array {
  const parts: string[] = [];
  const sha = "0".repeat(64);
  for (let i = 0; i < 600_000; i++) parts.push(`"a/${i}":{"size":1,"sha256":"${sha}"}`);
  const counts = Object.fromEntries(KINDS.map((k) => [k, 0]));
  return enc.encode(
    `{"format":"app-backup","version":2,"backup_id":"${Bun.randomUUIDv7()}","created_at":"2026-01-01T00:00:00.000Z","app_version":"bench","source_user":{"id":"${Bun.randomUUIDv7()}","username":"b"},"counts":${JSON.stringify(counts)},"entries":{${parts.join(",")}}}`,
  );
}

const CASES: Record<string, () => Uint8Array> = {
  "unknown-keys": () => archive({ "data/memos.json": deflated("data/memos.json", memosWithUnknownKeys(3_900_000)) }),
  // Just under the record size cap (1 Mi characters): every record is read and refused on its own.
  "unknown-keys-1m": () => archive({ "data/memos.json": deflated("data/memos.json", memosWithUnknownKeys(1_000_000)) }),
  ones: () => archive({ "data/tasks.json": stored("data/tasks.json", repeated("1,", 10_000_000)) }),
  "empty-objects": () => archive({ "data/tasks.json": stored("data/tasks.json", repeated("{},", 5_000_000)) }),
  "manifest-600k": () => archive({}, manifest600k()),
  deep: () => archive({ "data/tasks.json": stored("data/tasks.json", enc.encode(`[${"[".repeat(1_000_000)}${"]".repeat(1_000_000)}]`)) }),
};

const pick = process.env.BENCH_CASES?.split(",") ?? Object.keys(CASES);
console.log("| case | upload | status | time | peak RSS | answer | worst health | first problem |");
console.log("|---|---|---|---|---|---|---|---|");
for (const name of pick) {
  const zip = CASES[name]!();
  Bun.gc(true);
  const dir = freshDir(`app-bench-hostile-${name}-`);
  const s = await startServer(dir, undefined, ENV);
  try {
    const auth = await setupAndLogin(s.base);
    const fd = new FormData();
    fd.append("file", new Blob([zip as Uint8Array<ArrayBuffer>], { type: "application/zip" }), "backup.zip");
    let polling = true;
    let worst = 0;
    const poll = (async () => {
      while (polling) {
        const t = performance.now();
        await fetch(`${s.base}/api/v1/health/live`).then((r) => r.arrayBuffer());
        worst = Math.max(worst, performance.now() - t);
        await Bun.sleep(50);
      }
    })();
    const t0 = performance.now();
    const res = await fetch(`${s.base}/api/v1/backup/preflight?mode=replace`, {
      method: "POST",
      headers: { cookie: auth.cookie, "x-csrf-token": auth.csrf },
      body: fd,
    });
    // Counted as it streams: the answer may be far too large to hold.
    let bytes = 0;
    let head = "";
    for await (const c of res.body!) {
      if (head.length < 300) head += new TextDecoder().decode(c.subarray(0, 300));
      bytes += c.byteLength;
    }
    const secs = (performance.now() - t0) / 1000;
    polling = false;
    await poll;
    const code = /"code":"([a-z_]+)"/.exec(head)?.[1] ?? "";
    const first = /"errors":\[\{"path":"([^"]{0,60})[^"]*","message":"([^"]{0,60})/.exec(head);
    console.log(
      `| ${name} | ${(zip.byteLength / 1e6).toFixed(1)} MB | ${res.status} ${code} | ${secs.toFixed(2)} s | ${(peakKiB(s.proc.pid) / 1024).toFixed(0)} MiB | ${bytes < 1e6 ? `${(bytes / 1024).toFixed(1)} KiB` : `${(bytes / 1048576).toFixed(0)} MiB`} | ${worst.toFixed(0)} ms | ${first ? `${first[1]}: ${first[2]}` : ""} |`,
    );
  } finally {
    await stopServer(s);
    rmSync(dir, { recursive: true, force: true });
  }
}
