import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Subprocess } from "bun";

/**
 * The program as users run it, as a child process: `bun src/main.ts` (or the executable named by
 * APP_EXE, e.g. dist/app), with the test's own APP_* variables never inherited. The one way tests
 * start the program: AppProcess for any command line (it collects stdout lines and waits for one),
 * spawnServer for a server on a fresh data directory and a port the system picks.
 */

const ROOT = resolve(import.meta.dir, "../..");

/** `bun src/main.ts`: the sources, whatever APP_EXE says (tests of the source tree itself). */
export const FROM_SOURCE: readonly string[] = [process.execPath, join(ROOT, "src/main.ts")];

/** The program under test: the executable APP_EXE names, else the sources. */
export function programUnderTest(exe = process.env.APP_EXE): string[] {
  return exe ? [resolve(ROOT, exe)] : [...FROM_SOURCE];
}

/** The environment of the test process without APP_* settings, plus `extra`. */
export function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("APP_")) env[k] = v;
  return { ...env, ...extra };
}

/** Cheap argon2 parameters: a password hash in milliseconds instead of a quarter second. */
export const FAST_ARGON2 = { APP_ARGON2_MEMORY_KIB: "1024", APP_ARGON2_TIME_COST: "1" } as const;

/** cleanEnv with cheap argon2 parameters (what a test server usually wants). */
export function serverEnv(extra: Record<string, string> = {}): Record<string, string> {
  return cleanEnv({ ...FAST_ARGON2, ...extra });
}

export interface StartOptions {
  /** The whole environment of the child (default: cleanEnv()). */
  env?: Record<string, string>;
  /** The program (default: programUnderTest()). */
  program?: readonly string[];
  cwd?: string;
  /** Where the child's stderr goes: collected (`stderr` getter) or the test's own. */
  stderr?: "pipe" | "inherit";
  /** A file-size limit on the process (`ulimit -f`, 512-byte blocks). */
  fileBlocks?: number;
  /** The line that says the program is up (default: the "listening" log line); null: do not wait. */
  ready?: RegExp | null;
}

/** A running program: every stdout line (read to its end: a closed pipe would end the server at its next log line). */
export class AppProcess {
  readonly lines: string[] = [];
  private waiters: { re: RegExp; resolve: (l: string) => void }[] = [];
  private stderrText = "";
  /** The URL of the "listening" line (http://host:port), once started as a server. */
  base = "";
  private constructor(readonly proc: Subprocess<"ignore", "pipe", "pipe" | "inherit">) {}

  /** Starts the program with `args` and, unless `ready` is null, waits for its ready line. */
  static async start(args: string[], o: StartOptions = {}): Promise<AppProcess> {
    const cmd = [...(o.program ?? programUnderTest()), ...args];
    const argv = o.fileBlocks ? ["sh", "-c", `ulimit -f ${o.fileBlocks}; exec "$@"`, "sh", ...cmd] : cmd;
    const proc = Bun.spawn(argv, { env: o.env ?? cleanEnv(), cwd: o.cwd, stdin: "ignore", stdout: "pipe", stderr: o.stderr ?? "pipe" });
    const s = new AppProcess(proc);
    void s.pump(proc.stdout);
    if (proc.stderr instanceof ReadableStream) void new Response(proc.stderr).text().then((t) => (s.stderrText = t));
    const ready = o.ready === undefined ? /listening/ : o.ready;
    if (ready) {
      const line = await Promise.race([
        s.waitFor(ready),
        proc.exited.then((c) => {
          throw new Error(`the program exited with ${c} before it was ready: ${s.stderrText} ${s.lines.join("\n")}`);
        }),
      ]);
      const m = /(http:\/\/[^\s"]+)/.exec(line);
      if (m) s.base = m[1]!;
    }
    return s;
  }

  private async pump(stream: ReadableStream<Uint8Array>): Promise<void> {
    const dec = new TextDecoder();
    let buf = "";
    for await (const chunk of stream) {
      buf += dec.decode(chunk, { stream: true });
      let i: number;
      while ((i = buf.indexOf("\n")) !== -1) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        this.lines.push(line);
        this.waiters = this.waiters.filter((w) => {
          if (w.re.test(line)) {
            w.resolve(line);
            return false;
          }
          return true;
        });
      }
    }
  }

  /** The first stdout line matching `re`, already printed or still to come. */
  waitFor(re: RegExp): Promise<string> {
    const found = this.lines.find((l) => re.test(l));
    if (found) return Promise.resolve(found);
    return new Promise((resolve) => this.waiters.push({ re, resolve }));
  }

  /** What the program wrote on stderr (complete once it has exited; with stderr: "pipe"). */
  get stderr(): string {
    return this.stderrText;
  }

  get port(): number {
    return Number(new URL(this.base).port);
  }

  fetch(path: string, init: RequestInit = {}): Promise<Response> {
    return fetch(this.base + path, init);
  }

  /** SIGTERM, then its exit code. */
  async stop(): Promise<number> {
    this.proc.kill("SIGTERM");
    return await this.proc.exited;
  }
}

export interface SpawnedServer {
  base: string;
  port: number;
  /** The server's data directory (removed by stop()). */
  dir: string;
  /** Every line the server printed on stdout so far (JSON log lines). */
  lines: string[];
  proc: AppProcess["proc"];
  stop(): Promise<void>;
}

/** `serve` on a fresh data directory, port 0, JSON log lines, cheap argon2 (plus `env`). */
export async function spawnServer(opts: { env?: Record<string, string>; args?: string[]; stderr?: "pipe" | "inherit" } = {}): Promise<SpawnedServer> {
  const dir = mkdtempSync(join(tmpdir(), "app-server-"));
  const p = await AppProcess.start(["serve", "--data-dir", dir, "--port", "0", "--log-format", "json", ...(opts.args ?? [])], {
    env: serverEnv(opts.env),
    stderr: opts.stderr ?? "inherit",
  });
  return {
    base: p.base,
    port: p.port,
    dir,
    lines: p.lines,
    proc: p.proc,
    async stop() {
      await p.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface RawResponse {
  status: number;
  headers: Map<string, string>;
  body: string;
}

/**
 * Sends `head` (request line and headers, without the blank line) and `body` on a fresh
 * connection, exactly as written: no Host is added, so odd or empty Host values reach the server.
 */
export function rawRequest(port: number, head: string, body: Uint8Array | string = ""): Promise<RawResponse> {
  return new Promise((done, fail) => {
    const s = connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    s.on("data", (d: Buffer) => chunks.push(d));
    s.on("error", fail);
    s.on("end", () => {
      const all = Buffer.concat(chunks);
      const split = all.indexOf("\r\n\r\n");
      if (split < 0) return fail(new Error(`no response head: ${all.toString("latin1").slice(0, 200)}`));
      const [statusLine, ...headerLines] = all.subarray(0, split).toString("latin1").split("\r\n");
      const headers = new Map<string, string>();
      for (const l of headerLines) {
        const c = l.indexOf(":");
        headers.set(l.slice(0, c).trim().toLowerCase(), l.slice(c + 1).trim());
      }
      let rest = all.subarray(split + 4);
      if (headers.get("transfer-encoding")?.toLowerCase() === "chunked") {
        const parts: Buffer[] = [];
        for (;;) {
          const eol = rest.indexOf("\r\n");
          const size = parseInt(rest.subarray(0, eol).toString("latin1"), 16);
          if (!size) break;
          parts.push(rest.subarray(eol + 2, eol + 2 + size));
          rest = rest.subarray(eol + 2 + size + 2);
        }
        rest = Buffer.concat(parts);
      }
      done({ status: Number(statusLine!.split(" ")[1]), headers, body: rest.toString("utf8") });
    });
    const payload = typeof body === "string" ? Buffer.from(body) : Buffer.from(body);
    const extra = payload.length ? `Content-Length: ${payload.length}\r\n` : "";
    s.write(`${head}\r\n${extra}Connection: close\r\n\r\n`);
    if (payload.length) s.write(payload);
  });
}

/** A signed-in session on a spawned server: first-run setup, then cookie and CSRF headers. */
export async function setupOwner(base: string): Promise<{ cookie: string; csrf: string; headers: Record<string, string> }> {
  const r = await fetch(`${base}/api/v1/setup/initialize`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: "owner", password: "h11-Owner-passphrase-4821" }),
  });
  if (r.status !== 201) throw new Error(`setup: ${r.status} ${await r.text()}`);
  const cookies = r.headers.getSetCookie().map((c) => c.split(";")[0]!);
  const cookie = cookies.join("; ");
  const csrf = cookies.find((c) => /^[^=]*csrf=/.test(c))!.split("=")[1]!;
  return { cookie, csrf, headers: { cookie, "x-csrf-token": csrf } };
}
