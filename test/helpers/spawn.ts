import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

/**
 * The server as users run it: `bun src/main.ts serve` (or the executable named by APP_EXE, e.g.
 * dist/app) on a fresh data directory and a port the system picks, driven over a real socket.
 */

const ROOT = resolve(import.meta.dir, "../..");

export interface SpawnedServer {
  base: string;
  port: number;
  /** The server's data directory (removed by stop()). */
  dir: string;
  /** Every line the server printed on stdout so far (JSON log lines). */
  lines: string[];
  stop(): Promise<void>;
}

/** The environment of the test process without APP_* settings, plus cheap argon2 parameters. */
export function serverEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("APP_")) env[k] = v;
  return { ...env, APP_ARGON2_MEMORY_KIB: "1024", APP_ARGON2_TIME_COST: "1", ...extra };
}

export async function spawnServer(opts: { env?: Record<string, string> } = {}): Promise<SpawnedServer> {
  const dir = mkdtempSync(join(tmpdir(), "app-server-"));
  const cmd = process.env.APP_EXE ? [resolve(ROOT, process.env.APP_EXE)] : [process.execPath, join(ROOT, "src/main.ts")];
  const proc = Bun.spawn([...cmd, "serve", "--data-dir", dir, "--port", "0", "--log-format", "json"], {
    env: serverEnv(opts.env),
    stdin: "ignore",
    stdout: "pipe",
    stderr: "inherit",
  });
  const lines: string[] = [];
  // stdout is read to its end (a closed pipe would end the server at its next log line).
  const base = await new Promise<string>((found, failed) => {
    let buf = "";
    const dec = new TextDecoder();
    void (async () => {
      for await (const chunk of proc.stdout as ReadableStream<Uint8Array>) {
        buf += dec.decode(chunk, { stream: true });
        let nl: number;
        while ((nl = buf.indexOf("\n")) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          lines.push(line);
          if (line.includes('"listening"')) found((JSON.parse(line) as { url: string }).url);
        }
      }
      failed(new Error(`the server ended before listening: ${lines.join("\n")}${buf}`));
    })();
  });
  return {
    base,
    port: Number(new URL(base).port),
    dir,
    lines,
    async stop() {
      proc.kill("SIGTERM");
      await proc.exited;
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
