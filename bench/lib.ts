// Shared bench helpers: start the server under test, sign in, read RSS, run wrk.
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { existsSync, readFileSync } from "node:fs";

export const EXE = process.env.APP_EXE ?? (existsSync("dist/app") ? "dist/app" : "");

export function freshDir(prefix = "app-bench-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function freePort(): number {
  return 30000 + Math.floor(Math.random() * 20000);
}

export interface Server {
  proc: ReturnType<typeof Bun.spawn>;
  port: number;
  base: string;
  readyMs: number;
}

/** Spawns the compiled executable (or `bun src/main.ts` when dist/app is missing) and waits for ready. */
export async function startServer(dataDir: string, port = freePort(), env: Record<string, string> = {}): Promise<Server> {
  const cmd = EXE ? [EXE] : ["bun", "src/main.ts"];
  const t0 = performance.now();
  // Request logging is off unless the caller asks for a format (APP_LOG_FORMAT in `env`); then stdout
  // is a pipe read to its end by this process, as journald reads a service's output.
  const logFormat = env.APP_LOG_FORMAT ?? "off";
  const proc = Bun.spawn([...cmd, "serve", "--data-dir", dataDir, "--port", String(port), "--log-format", logFormat], {
    stdout: logFormat === "off" ? "ignore" : "pipe",
    stderr: "inherit",
    env: { ...process.env, ...env },
  });
  if (logFormat !== "off") void drain(proc.stdout as ReadableStream<Uint8Array>);
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 2000; i++) {
    try {
      const r = await fetch(`${base}/api/v1/health/ready`);
      if (r.status === 200) return { proc, port, base, readyMs: performance.now() - t0 };
    } catch {
      /* not yet */
    }
    await Bun.sleep(2);
  }
  proc.kill();
  throw new Error("server did not become ready");
}

async function drain(stream: ReadableStream<Uint8Array>): Promise<void> {
  for await (const _ of stream) {
    /* read and dropped */
  }
}

export async function stopServer(s: Server): Promise<void> {
  s.proc.kill("SIGTERM");
  await s.proc.exited;
}

export function rssKiB(pid: number): number {
  const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) : NaN;
}

/** Times `work` against a server and samples its RSS every 5 ms meanwhile (300 ms after the previous request settled): the figures import-ticktick.ts and legacy.ts print. */
export async function measured<T>(s: Server, work: () => Promise<T>): Promise<{ seconds: number; baseMiB: number; peakMiB: number; result: T }> {
  await Bun.sleep(300);
  const base = rssKiB(s.proc.pid);
  let peak = base;
  const timer = setInterval(() => {
    const r = rssKiB(s.proc.pid);
    if (r > peak) peak = r;
  }, 5);
  const t0 = performance.now();
  const result = await work();
  const seconds = (performance.now() - t0) / 1000;
  clearInterval(timer);
  peak = Math.max(peak, rssKiB(s.proc.pid));
  return { seconds, baseMiB: base / 1024, peakMiB: peak / 1024, result };
}

export interface Auth {
  cookie: string;
  csrf: string;
  headers: Record<string, string>;
}

/** First-run setup on a fresh server; returns the cookies and CSRF header of the admin session. */
export async function setupAndLogin(base: string, username = "bench", password = "bench-password-1"): Promise<Auth> {
  const r = await fetch(`${base}/api/v1/setup/initialize`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username, password }),
  });
  if (r.status !== 201 && r.status !== 409) throw new Error(`setup: ${r.status}`);
  const l = r.status === 201 ? r : await fetch(`${base}/api/v1/auth/login`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ username, password }) });
  const cookies = l.headers.getSetCookie().map((c) => c.split(";")[0]!);
  const cookie = cookies.join("; ");
  const csrf = cookies.find((c) => c.startsWith("app_csrf="))!.slice("app_csrf=".length);
  return { cookie, csrf, headers: { cookie, "x-csrf-token": csrf, "content-type": "application/json" } };
}

export interface WrkResult {
  rps: number;
  p50ms: number;
  p99ms: number;
  errors: string;
}

function toMs(v: string): number {
  const m = /([\d.]+)(us|ms|s)/.exec(v);
  if (!m) return NaN;
  const n = Number(m[1]);
  return m[2] === "us" ? n / 1000 : m[2] === "s" ? n * 1000 : n;
}

/** wrk on loopback, 32 connections by default. */
export async function wrk(url: string, headers: Record<string, string>, opts: { connections?: number; seconds?: number; threads?: number } = {}): Promise<WrkResult> {
  const args = ["wrk", `-t${opts.threads ?? 2}`, `-c${opts.connections ?? 32}`, `-d${opts.seconds ?? 8}s`, "--latency"];
  for (const [k, v] of Object.entries(headers)) args.push("-H", `${k}: ${v}`);
  args.push(url);
  const p = Bun.spawn(args, { stdout: "pipe", stderr: "pipe" });
  const out = await new Response(p.stdout).text();
  await p.exited;
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN);
  const p50 = toMs(/\s50%\s+(\S+)/.exec(out)?.[1] ?? "");
  const p99 = toMs(/\s99%\s+(\S+)/.exec(out)?.[1] ?? "");
  const errors = /Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? "0";
  return { rps, p50ms: p50, p99ms: p99, errors };
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
}

/**
 * The app of the source tree at `root` (this checkout, or an older commit exported elsewhere) built
 * in this process on its own copy of the seeded data directory `src`, for in-process A/B runs of two
 * trees (tasks-inproc.ts, search-isolation.ts). `name` keeps the copies apart.
 */
export async function appOfTree(root: string, src: string, name: string) {
  const { createApp } = await import(join(root, "src/app.ts"));
  const { Config } = await import(join(root, "src/config.ts"));
  const { openDatabase } = await import(join(root, "src/core/db.ts"));
  const { Logger } = await import(join(root, "src/core/log.ts"));
  const { ServerSecret } = await import(join(root, "src/core/secret.ts"));
  const dir = `${src}-${name}-${process.pid}`;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (const f of ["app.db", "app.db-wal", "app.db-shm", "secret.key"]) {
    try {
      copyFileSync(join(src, f), join(dir, f));
    } catch {
      /* the WAL files may be absent */
    }
  }
  // Modules of another source tree, imported by path: their types are not this tree's.
  const db = openDatabase(join(dir, "app.db")) as { sqlite: import("bun:sqlite").Database; close(): void };
  const app = createApp({ db, config: Config.parse({ dataDir: dir, logFormat: "off" }), secret: ServerSecret.loadOrCreate(dir), logger: new Logger("off") }) as {
    fetch(r: Request): Promise<Response>;
  };
  return { app, db, dir };
}

/**
 * Signs in through an in-process app (app.fetch, as appOfTree builds it): the Cookie header a
 * browser would send next, and the CSRF token for writes. Throws unless the login is 200.
 */
export async function signInInProcess(
  app: { fetch(r: Request): Promise<Response> },
  username: string,
  password: string,
): Promise<{ cookie: string; csrf: string }> {
  const login = await app.fetch(
    new Request("http://localhost/api/v1/auth/login", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ username, password }) }),
  );
  if (login.status !== 200) throw new Error(`login ${username}: ${login.status}`);
  const cookies = (login.headers.getSetCookie() as string[]).map((c) => c.split(";")[0]!);
  return { cookie: cookies.join("; "), csrf: cookies.find((c) => c.startsWith("app_csrf="))?.slice("app_csrf=".length) ?? "" };
}
