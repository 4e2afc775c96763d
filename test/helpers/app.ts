import { expect } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp, type AppHandle } from "../../src/app";
import { Config } from "../../src/config";
import { migrate, openDatabase, type Db } from "../../src/core/db";
import { Logger } from "../../src/core/log";
import { ServerSecret } from "../../src/core/secret";
import { FixedClock, systemClock, type Clock } from "../../src/core/time";

export interface TestApp {
  handle: AppHandle;
  db: Db;
  dir: string;
  clock: Clock;
  logs: string[];
  /** A client with its own cookie jar. `base` is the origin requests go to (default http://localhost). */
  client(opts?: { ip?: string; base?: string }): TestClient;
  close(): void;
}

/**
 * A real app on a real SQLite file, built by the real migrations, in a fresh temporary data
 * directory. argon2 runs with small parameters so tests stay fast; everything else is as shipped.
 */
export function makeTestApp(opts: { clock?: Clock | FixedClock; config?: Partial<Config> } = {}): TestApp {
  const dir = mkdtempSync(join(tmpdir(), "app-test-"));
  const config = Config.parse({ dataDir: dir, logFormat: "off", argon2MemoryKiB: 1024, argon2TimeCost: 1, ...opts.config });
  const db = openDatabase(join(dir, "app.db"));
  migrate(db);
  const secret = ServerSecret.loadOrCreate(dir);
  const logs: string[] = [];
  const logger = new Logger("json", (l) => logs.push(l));
  const clock = opts.clock ?? systemClock;
  const handle = createApp({ db, config, secret, clock, logger });
  return {
    handle,
    db,
    dir,
    clock,
    // Request lines are buffered by the logger (core/log.ts); what a test reads is everything so far.
    get logs() {
      logger.flush();
      return logs;
    },
    client: (o) => new TestClient(handle, o?.ip ?? "127.0.0.1", o?.base),
    close() {
      handle.close();
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface TestResponse {
  status: number;
  headers: Headers;
  text: string;
  // Test bodies are JSON of any shape; each test asserts on the fields it cares about.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

export interface RequestOptions {
  json?: unknown;
  body?: RequestInit["body"];
  headers?: Record<string, string>;
  /** Send X-CSRF-Token from the jar (default true for writes). */
  csrf?: boolean;
}

/** Talks to the app through its real fetch handler (request context, guard, logging), with a cookie jar. */
export class TestClient {
  readonly jar = new Map<string, string>();

  constructor(
    private readonly handle: AppHandle,
    private readonly ip: string,
    private readonly base = "http://localhost",
  ) {}

  /** The CSRF cookie's value: `__Host-app_csrf` (set over HTTPS) or `app_csrf` (plain http). */
  get csrfCookie(): string | undefined {
    return this.jar.get("__Host-app_csrf") ?? this.jar.get("app_csrf");
  }

  async request(method: string, path: string, o: RequestOptions = {}): Promise<TestResponse> {
    const headers: Record<string, string> = { ...o.headers };
    if (this.jar.size && !("cookie" in headers)) headers["cookie"] = [...this.jar].map(([k, v]) => `${k}=${v}`).join("; ");
    const write = !["GET", "HEAD"].includes(method);
    const csrf = this.csrfCookie;
    if (write && o.csrf !== false && csrf !== undefined && !("x-csrf-token" in headers)) headers["x-csrf-token"] = csrf;
    let body = o.body;
    if (o.json !== undefined) {
      body = JSON.stringify(o.json);
      headers["content-type"] ??= "application/json";
    }
    const req = new Request(`${this.base}${path}`, { method, headers, body });
    const res = await this.handle.fetch(req, { requestIP: () => ({ address: this.ip }) });
    for (const c of res.headers.getSetCookie()) {
      const cookie = Bun.Cookie.parse(c);
      if (cookie.value === "" || (cookie.maxAge !== undefined && cookie.maxAge <= 0)) this.jar.delete(cookie.name);
      else this.jar.set(cookie.name, cookie.value);
    }
    const text = await res.text();
    let parsed: unknown = undefined;
    if (text && (res.headers.get("content-type") ?? "").includes("json")) parsed = JSON.parse(text);
    return { status: res.status, headers: res.headers, text, body: parsed };
  }

  get(path: string, o?: RequestOptions) {
    return this.request("GET", path, o);
  }
  post(path: string, json?: unknown, o: RequestOptions = {}) {
    return this.request("POST", path, { ...o, json });
  }
  patch(path: string, json?: unknown, o: RequestOptions = {}) {
    return this.request("PATCH", path, { ...o, json });
  }
  put(path: string, json?: unknown, o: RequestOptions = {}) {
    return this.request("PUT", path, { ...o, json });
  }
  delete(path: string, o?: RequestOptions) {
    return this.request("DELETE", path, o);
  }
}

export const ADMIN = { username: "owner", password: "correct horse battery" };

/** Runs first-run setup; the returned client is signed in as the admin. */
export async function setupAdmin(app: TestApp, extra: Record<string, unknown> = {}): Promise<TestClient> {
  const c = app.client();
  const r = await c.post("/api/v1/setup/initialize", { ...ADMIN, ...extra });
  if (r.status !== 201) throw new Error(`setup failed: ${r.status} ${r.text}`);
  return c;
}

/** Creates another user through the admin API and returns a client signed in as it. */
export async function signedInUser(app: TestApp, admin: TestClient, username: string, extra: Record<string, unknown> = {}): Promise<TestClient> {
  const password = `${username}-password`;
  const r = await admin.post("/api/v1/users", { username, password, ...extra });
  if (r.status !== 201) throw new Error(`user creation failed: ${r.status} ${r.text}`);
  const c = app.client();
  const l = await c.post("/api/v1/auth/login", { username, password });
  if (l.status !== 200) throw new Error(`login failed: ${l.status} ${l.text}`);
  return c;
}

/**
 * Every row of every table, sorted: compare before and after a rejected request to prove that
 * nothing changed. `ignore` leaves out tables that a rejected request may legitimately touch
 * (the audit log, session last-seen times).
 */
export function dump(db: Db, ignore: string[] = ["audit_logs", "sessions", "__drizzle_migrations"]): Record<string, unknown[]> {
  return dumpSqlite(db.sqlite, ignore);
}

/** dump() of a bun:sqlite connection (e.g. a read-only one to the database of a server running as a process). */
export function dumpSqlite(sqlite: Db["sqlite"], ignore: string[] = ["audit_logs", "sessions", "__drizzle_migrations"]): Record<string, unknown[]> {
  const db = { sqlite };
  const tables = db.sqlite
    .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
    .all()
    .map((r) => r.name)
    .filter((n) => !ignore.includes(n) && !n.includes("_fts"));
  const out: Record<string, unknown[]> = {};
  for (const t of tables) {
    const rows = db.sqlite.query(`SELECT * FROM "${t}"`).all() as Record<string, unknown>[];
    out[t] = rows.map((r) => JSON.stringify(r)).sort();
  }
  return out;
}

/** Runs a request that must be rejected and proves the database did not change. */
export async function rejected(app: TestApp, run: () => Promise<TestResponse>, status: number, code: string): Promise<TestResponse> {
  const before = dump(app.db);
  const r = await run();
  if (r.status !== status || r.body?.code !== code) throw new Error(`expected ${status} ${code}, got ${r.status} ${r.text}`);
  expect(r.headers.get("content-type")).toContain("application/problem+json");
  expect(dump(app.db)).toEqual(before);
  return r;
}

export { FixedClock };
