import net from "node:net";
import type { TestApp } from "./app";

/**
 * A test app (real SQLite file, real migrations, a clock the test may hold) behind a real listening
 * socket: the same Bun.serve → handle.fetch path as src/main.ts, so requests arrive as bytes on a
 * connection, concurrently when the test sends them so.
 */
export interface ServedApp {
  port: number;
  base: string;
  stop(): void;
}

export function serve(app: TestApp): ServedApp {
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (req, srv) => app.handle.fetch(req, srv) });
  const port = server.port!;
  return { port, base: `http://127.0.0.1:${port}`, stop: () => void server.stop(true) };
}

export interface RawAnswer {
  status: number;
  headers: Map<string, string[]>;
  body: string;
  // problem+json or JSON bodies of any shape; tests assert the fields they need.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
  /** Milliseconds from writing the request to the end of the answer. */
  ms: number;
}

export interface RawRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  json?: unknown;
}

/** A connection opened before its request is written, so many can be written in one go. */
export interface OpenConnection {
  send(): Promise<RawAnswer>;
}

/**
 * Opens a TCP connection and resolves once it is connected; `send()` then writes one HTTP/1.1
 * request (Connection: close) and reads the answer to the end. Opening all connections first and
 * then calling every `send()` in one loop puts all the requests on the wire at the same moment.
 */
export function connect(port: number, req: RawRequest): Promise<OpenConnection> {
  return new Promise((resolveOpen, rejectOpen) => {
    const sock = net.connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    let done: ((a: RawAnswer) => void) | null = null;
    let failed: ((e: Error) => void) | null = null;
    let started = 0;
    sock.on("data", (d: Buffer) => chunks.push(d));
    sock.on("end", () => {
      if (done) done(parse(Buffer.concat(chunks).toString("latin1"), performance.now() - started));
    });
    sock.on("error", (e) => (failed ? failed(e) : rejectOpen(e)));
    sock.on("connect", () =>
      resolveOpen({
        send: () =>
          new Promise<RawAnswer>((res, rej) => {
            done = res;
            failed = rej;
            const body = req.json === undefined ? "" : JSON.stringify(req.json);
            const headers: Record<string, string> = { host: `127.0.0.1:${port}`, connection: "close", ...req.headers };
            if (req.json !== undefined) {
              headers["content-type"] ??= "application/json";
              headers["content-length"] = String(Buffer.byteLength(body));
            }
            const head = [`${req.method} ${req.path} HTTP/1.1`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), "", ""].join("\r\n");
            started = performance.now();
            sock.write(head + body);
          }),
      }),
    );
  });
}

/** One request on its own connection. */
export async function rawRequest(port: number, req: RawRequest): Promise<RawAnswer> {
  return (await connect(port, req)).send();
}

/** Many requests, all written at the same moment (every connection opened first). */
export async function concurrently(port: number, reqs: RawRequest[]): Promise<RawAnswer[]> {
  const open = await Promise.all(reqs.map((r) => connect(port, r)));
  return Promise.all(open.map((c) => c.send()));
}

function parse(text: string, ms: number): RawAnswer {
  const split = text.indexOf("\r\n\r\n");
  const head = text.slice(0, split).split("\r\n");
  let body = text.slice(split + 4);
  const status = Number(head[0]!.split(" ")[1]);
  const headers = new Map<string, string[]>();
  for (const line of head.slice(1)) {
    const i = line.indexOf(":");
    const k = line.slice(0, i).trim().toLowerCase();
    headers.set(k, [...(headers.get(k) ?? []), line.slice(i + 1).trim()]);
  }
  // Framing is in bytes (read as latin1, one character per byte); the body itself is UTF-8.
  if (headers.get("transfer-encoding")?.[0] === "chunked") body = dechunk(body);
  body = Buffer.from(body, "latin1").toString("utf8");
  let json: unknown = undefined;
  if ((headers.get("content-type")?.[0] ?? "").includes("json") && body) json = JSON.parse(body);
  return { status, headers, body, json, ms };
}

function dechunk(s: string): string {
  let out = "";
  let i = 0;
  for (;;) {
    const eol = s.indexOf("\r\n", i);
    if (eol < 0) break;
    const n = parseInt(s.slice(i, eol), 16);
    if (!n) break;
    out += s.slice(eol + 2, eol + 2 + n);
    i = eol + 2 + n + 2;
  }
  return out;
}

/** The cookies an answer sets, as name → value (cleared ones as ""). */
export function setCookies(a: RawAnswer): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of a.headers.get("set-cookie") ?? []) {
    const c = Bun.Cookie.parse(line);
    out.set(c.name, c.value);
  }
  return out;
}

/** A Cookie header from name → value pairs. */
export function cookieHeader(jar: Map<string, string>): string {
  return [...jar].filter(([, v]) => v !== "").map(([k, v]) => `${k}=${v}`).join("; ");
}

/**
 * A client over the real socket with its own cookie jar; writes carry the CSRF header taken from
 * the jar (`__Host-app_csrf` or `app_csrf`), as the web app does.
 */
export class SocketClient {
  readonly jar = new Map<string, string>();

  constructor(
    private readonly base: string,
    private readonly extraHeaders: Record<string, string> = {},
  ) {}

  // JSON bodies of any shape; each test asserts the fields it needs.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async request(method: string, path: string, json?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; json: any; text: string }> {
    const h: Record<string, string> = { ...this.extraHeaders, ...headers };
    if (this.jar.size && !("cookie" in h)) h["cookie"] = cookieHeader(this.jar);
    const csrf = this.jar.get("__Host-app_csrf") ?? this.jar.get("app_csrf");
    if (method !== "GET" && csrf && !("x-csrf-token" in h)) h["x-csrf-token"] = csrf;
    if (json !== undefined) h["content-type"] = "application/json";
    const res = await fetch(this.base + path, { method, headers: h, body: json === undefined ? undefined : JSON.stringify(json) });
    for (const line of res.headers.getSetCookie()) {
      const c = Bun.Cookie.parse(line);
      if (c.value === "" || (c.maxAge !== undefined && c.maxAge <= 0)) this.jar.delete(c.name);
      else this.jar.set(c.name, c.value);
    }
    const text = await res.text();
    return { status: res.status, headers: res.headers, text, json: text && (res.headers.get("content-type") ?? "").includes("json") ? JSON.parse(text) : undefined };
  }

  get(path: string, headers?: Record<string, string>) {
    return this.request("GET", path, undefined, headers);
  }
  post(path: string, json?: unknown, headers?: Record<string, string>) {
    return this.request("POST", path, json, headers);
  }
  delete(path: string, headers?: Record<string, string>) {
    return this.request("DELETE", path, undefined, headers);
  }
}
