import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { Config, envName } from "../../src/config";
import { AppProcess, cleanEnv, FROM_SOURCE } from "../helpers/spawn";

// docs/spec/contract.md §11: the program. Each test runs `bun src/main.ts` as a subprocess on a temporary data
// directory and a port the system picks (--port 0; the port is read from the "listening" line).

const MAIN = resolve(import.meta.dir, "../../src/main.ts");
const roots: string[] = [];
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

function tempRoot(): string {
  const d = mkdtempSync(join(tmpdir(), "app-cli-"));
  roots.push(d);
  return d;
}

/** Lower argon2 costs for speed, unless a test wants the defaults (slow enough to be in flight). */
const FAST_ENV = { APP_ARGON2_MEMORY_KIB: "1024", APP_ARGON2_TIME_COST: "1" };

/** Runs the program to completion. */
async function run(args: string[], o: { env?: Record<string, string>; stdin?: string; cwd?: string } = {}) {
  const p = Bun.spawn([process.execPath, MAIN, ...args], {
    env: cleanEnv(o.env),
    cwd: o.cwd,
    stdin: o.stdin !== undefined ? new Blob([o.stdin]) : "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, stdout, stderr };
}

/** A running server from the sources (the one spawn helper, test/helpers/spawn.ts). */
const Server = {
  start: (args: string[], env: Record<string, string> = {}): Promise<AppProcess> => AppProcess.start(args, { env: cleanEnv(env), program: FROM_SOURCE }),
};
type Server = AppProcess;

function cookiesFrom(res: Response): { cookie: string; csrf: string; session: string } {
  const jar = new Map<string, string>();
  for (const c of res.headers.getSetCookie()) {
    const [pair] = c.split(";");
    const eq = pair!.indexOf("=");
    jar.set(pair!.slice(0, eq), pair!.slice(eq + 1));
  }
  return { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join("; "), csrf: jar.get("app_csrf") ?? "", session: jar.get("app_session") ?? "" };
}

const OWNER = { username: "owner", password: "correct horse battery" };

async function initialize(s: Server, creds = OWNER): Promise<{ cookie: string; csrf: string; session: string }> {
  const r = await s.fetch("/api/v1/setup/initialize", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(creds) });
  expect(r.status).toBe(201);
  return cookiesFrom(r);
}

describe("command line", () => {
  test("--version prints the version and exits 0", async () => {
    const r = await run(["--version"]);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(pkg.version);
  });

  test("--help prints usage with every flag and its variable, exits 0", async () => {
    const r = await run(["--help"]);
    expect(r.code).toBe(0);
    for (const s of ["serve", "reset-password", "--version", "--data-dir", "APP_DATA_DIR", "--host", "APP_HOST", "--port", "APP_PORT", "--trust-proxy", "APP_TRUST_PROXY"]) {
      expect(r.stdout).toContain(s);
    }
  });

  test("--help lists every APP_* setting with its default (the documented defaults)", async () => {
    const r = await run(["--help"]);
    const defaults = Config.parse({}) as Record<string, unknown>;
    for (const key of Object.keys(Config.shape) as (keyof typeof Config.shape)[]) {
      const line = r.stdout.split("\n").find((l) => l.includes(envName(key)));
      expect({ key, line: line !== undefined }).toEqual({ key, line: true });
      if (key !== "dataDir" && key !== "host" && key !== "port" && key !== "trustProxy" && key !== "logFormat") {
        // A setting without a default (APP_METRICS_TOKEN) says so.
        expect(line).toContain(defaults[key] === undefined ? "default unset" : String(defaults[key]));
      }
    }
  });

  test("--help describes every setting of the config schema (a new setting cannot ship without a description)", async () => {
    const r = await run(["--help"]);
    expect(r.code).toBe(0);
    const lines = r.stdout.split("\n");
    const descriptions = new Map<string, string>();
    for (const key of Object.keys(Config.shape) as (keyof typeof Config.shape)[]) {
      const env = envName(key);
      expect({ key, env }).toEqual({ key, env: expect.stringMatching(/^APP_[A-Z0-9_]+$/) });
      const line = lines.find((l) => l.split(/\s+/).includes(env)) ?? "";
      // "  [--flag VALUE]  APP_NAME  <description>; default <value>": the description is what is left.
      const description = line
        .slice(line.indexOf(env) + env.length)
        .replace(/;?\s*default .*$/, "")
        .trim();
      expect({ env, description }).toEqual({ env, description: expect.stringMatching(/[a-z]{3,}.*\s.*[a-z]{3,}/) });
      descriptions.set(env, description);
    }
    // Each its own, not one text pasted everywhere.
    expect(new Set(descriptions.values()).size).toBe(descriptions.size);
  });

  test("the README's configuration table lists every setting of the config schema", () => {
    const readme = readFileSync(resolve(import.meta.dir, "../../README.md"), "utf8");
    const table = readme.slice(readme.indexOf("## Configuration"), readme.indexOf("\n## ", readme.indexOf("## Configuration") + 1));
    for (const key of Object.keys(Config.shape) as (keyof typeof Config.shape)[]) {
      expect({ key, listed: table.includes(`\`${envName(key)}\``) }).toEqual({ key, listed: true });
    }
  });

  test("an unknown flag exits non-zero with a clear message and starts nothing", async () => {
    const root = tempRoot();
    const r = await run(["--bogus-flag", "--data-dir", join(root, "d")]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("unknown option --bogus-flag");
    expect(existsSync(join(root, "d"))).toBe(false);
  });

  test("a flag without its value, and an invalid port, exit non-zero with a message", async () => {
    const a = await run(["--port"]);
    expect(a.code).not.toBe(0);
    expect(a.stderr).toContain("--port");
    const b = await run(["--port", "70000", "--data-dir", join(tempRoot(), "d")]);
    expect(b.code).not.toBe(0);
    expect(b.stderr).toMatch(/port/i);
    const c = await run(["frobnicate"]);
    expect(c.code).not.toBe(0);
    expect(c.stderr).toContain("frobnicate");
  });
});

describe("serve", () => {
  test("creates the data directory 0700 (with secret.key 0600 and the database), serves, stops on SIGTERM with exit 0", async () => {
    const root = tempRoot();
    const dataDir = join(root, "nested", "data");
    const s = await Server.start(["--data-dir", dataDir, "--port", "0", "--host", "127.0.0.1"], FAST_ENV);
    try {
      expect(statSync(dataDir).mode & 0o777).toBe(0o700);
      expect(statSync(join(dataDir, "secret.key")).mode & 0o777).toBe(0o600);
      expect(existsSync(join(dataDir, "app.db"))).toBe(true);
      const live = await s.fetch("/api/v1/health/live");
      expect(live.status).toBe(200);
      expect(await live.json()).toEqual({ status: "ok" });
      expect((await s.fetch("/api/v1/health/ready")).status).toBe(200);
    } finally {
      expect(await s.stop()).toBe(0);
    }
    expect(s.lines.some((l) => /stopped/.test(l))).toBe(true);
    // The database was closed cleanly: no WAL left behind with unmerged pages, and it reopens.
    const db = new Database(join(dataDir, "app.db"));
    expect(db.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
    db.close();
  });

  test("an existing data directory is tightened to 0700; APP_TRUST_PROXY=true is read from the environment", async () => {
    const dataDir = join(tempRoot(), "d");
    mkdirSync(dataDir, { mode: 0o755 });
    const s = await Server.start(["--data-dir", dataDir, "--port", "0"], { ...FAST_ENV, APP_TRUST_PROXY: "true" });
    try {
      expect(statSync(dataDir).mode & 0o777).toBe(0o700);
      const r = await s.fetch("/api/v1/setup/initialize", {
        method: "POST",
        headers: { "content-type": "application/json", "x-forwarded-proto": "https" },
        body: JSON.stringify(OWNER),
      });
      expect(r.status).toBe(201);
      for (const c of r.headers.getSetCookie()) expect(c).toContain("Secure");
    } finally {
      expect(await s.stop()).toBe(0);
    }
  });

  test("SIGINT stops it cleanly too (exit 0)", async () => {
    const s = await Server.start(["--data-dir", join(tempRoot(), "d"), "--port", "0"], FAST_ENV);
    expect((await s.fetch("/api/v1/health/live")).status).toBe(200);
    s.proc.kill("SIGINT");
    expect(await s.proc.exited).toBe(0);
    expect(s.lines.some((l) => /stopped/.test(l))).toBe(true);
  });

  test("APP_* variables configure it; flags win over variables", async () => {
    const root = tempRoot();
    const envDir = join(root, "from-env");
    const s = await Server.start([], { ...FAST_ENV, APP_DATA_DIR: envDir, APP_PORT: "0", APP_HOST: "127.0.0.1", APP_LOG_FORMAT: "json" });
    try {
      expect(existsSync(join(envDir, "app.db"))).toBe(true);
      const listening = JSON.parse(s.lines.find((l) => l.includes("listening"))!) as Record<string, unknown>;
      expect(listening.data_dir).toBe(envDir);
    } finally {
      expect(await s.stop()).toBe(0);
    }
    const flagDir = join(root, "from-flag");
    const t = await Server.start(["--data-dir", flagDir, "--log-format", "text", "--port", "0"], {
      ...FAST_ENV,
      APP_DATA_DIR: join(root, "not-this-one"),
      APP_LOG_FORMAT: "json",
      APP_PORT: "1",
    });
    try {
      expect(existsSync(join(flagDir, "app.db"))).toBe(true);
      expect(existsSync(join(root, "not-this-one"))).toBe(false);
      expect(() => JSON.parse(t.lines.find((l) => l.includes("listening"))!)).toThrow();
      expect(t.base).toStartWith("http://127.0.0.1:");
    } finally {
      expect(await t.stop()).toBe(0);
    }
  });

  test("an invalid APP_* value exits non-zero naming it", async () => {
    const r = await run([], { env: { APP_PORT: "not-a-port", APP_DATA_DIR: join(tempRoot(), "d") } });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/port/i);
  });

  test("--trust-proxy / APP_TRUST_PROXY: Secure cookies and the client address from a trusted proxy only", async () => {
    const root = tempRoot();
    const s = await Server.start(["--data-dir", join(root, "d"), "--port", "0", "--trust-proxy", "--log-format", "json"], FAST_ENV);
    try {
      const r = await s.fetch("/api/v1/setup/initialize", {
        method: "POST",
        headers: { "content-type": "application/json", "x-forwarded-proto": "https", "x-forwarded-for": "203.0.113.50" },
        body: JSON.stringify(OWNER),
      });
      expect(r.status).toBe(201);
      for (const c of r.headers.getSetCookie()) expect(c).toContain("Secure");
      await s.waitFor(/"path":"\/api\/v1\/setup\/initialize"/);
      expect(s.lines.find((l) => l.includes("/api/v1/setup/initialize"))).toContain('"ip":"203.0.113.50"');
    } finally {
      expect(await s.stop()).toBe(0);
    }
    const t = await Server.start(["--data-dir", join(root, "e"), "--port", "0", "--log-format", "json"], FAST_ENV);
    try {
      const r = await t.fetch("/api/v1/setup/initialize", {
        method: "POST",
        headers: { "content-type": "application/json", "x-forwarded-proto": "https", "x-forwarded-for": "203.0.113.50" },
        body: JSON.stringify(OWNER),
      });
      expect(r.status).toBe(201);
      for (const c of r.headers.getSetCookie()) expect(c).not.toContain("Secure");
      await t.waitFor(/"path":"\/api\/v1\/setup\/initialize"/);
      expect(t.lines.find((l) => l.includes("/api/v1/setup/initialize"))).not.toContain("203.0.113.50");
    } finally {
      expect(await t.stop()).toBe(0);
    }
  });
});

describe("the data directory is the only place written", () => {
  test("serving, signing in and using the API writes nothing to the working directory, HOME or TMPDIR", async () => {
    const root = tempRoot();
    const cwd = join(root, "cwd");
    const home = join(root, "home");
    const tmp = join(root, "tmp");
    const dataDir = join(root, "data");
    for (const d of [cwd, home, tmp]) mkdirSync(d);
    const server = await AppProcess.start(["--data-dir", dataDir, "--port", "0", "--log-format", "json"], {
      cwd,
      env: cleanEnv({ ...FAST_ENV, HOME: home, TMPDIR: tmp, BUN_RUNTIME_TRANSPILER_CACHE_PATH: "0" }),
      program: FROM_SOURCE,
    });
    const { base, proc } = server;
    const init = await fetch(base + "/api/v1/setup/initialize", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(OWNER) });
    expect(init.status).toBe(201);
    const { cookie, csrf } = cookiesFrom(init);
    expect((await fetch(base + "/api/v1/me", { headers: { cookie } })).status).toBe(200);
    expect((await fetch(base + "/api/v1/auth/logout", { method: "POST", headers: { cookie, "x-csrf-token": csrf } })).status).toBe(204);
    expect((await fetch(base + "/api/v1/health/ready")).status).toBe(200);
    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
    expect(readdirSync(cwd)).toEqual([]);
    expect(readdirSync(home)).toEqual([]);
    expect(readdirSync(tmp)).toEqual([]);
    expect(readdirSync(dataDir).sort()).toEqual(expect.arrayContaining(["app.db", "secret.key"]));
    // The README's data-directory table names everything that is there.
    const readme = readFileSync(resolve(import.meta.dir, "../../README.md"), "utf8");
    const section = readme.slice(readme.indexOf("## Where data lives"));
    const table = section.slice(0, section.indexOf("\n\n", section.indexOf("| file |")));
    const named = new Set([...table.matchAll(/^\| ([^|]+) \|/gm)].flatMap((m) => [...m[1]!.matchAll(/`([^`]+)`/g)].map((n) => n[1]!)));
    for (const entry of readdirSync(dataDir, { withFileTypes: true })) {
      const name = entry.isDirectory() ? `${entry.name}/` : entry.name;
      expect({ name, inReadme: named.has(name) }).toEqual({ name, inReadme: true });
    }
  });
});

describe("refusing to start", () => {
  test("a database from a newer version: exit non-zero, clear message, database untouched", async () => {
    const root = tempRoot();
    const dataDir = join(root, "d");
    mkdirSync(dataDir);
    const db = new Database(join(dataDir, "app.db"));
    db.run("CREATE TABLE keep_me (x)");
    db.run("PRAGMA user_version = 9999");
    db.close();
    const before = readFileSync(join(dataDir, "app.db"));
    const r = await run(["--data-dir", dataDir, "--port", "0"], { env: FAST_ENV });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("newer version");
    expect(r.stderr).not.toMatch(/\n\s+at /); // a message, not a stack trace
    const after = new Database(join(dataDir, "app.db"));
    expect(after.query("PRAGMA user_version").get()).toEqual({ user_version: 9999 });
    expect(after.query("SELECT name FROM sqlite_master WHERE type='table'").all()).toEqual([{ name: "keep_me" }]);
    after.close();
    expect(readFileSync(join(dataDir, "app.db")).length).toBe(before.length);
  });

  test("a database file that is not SQLite: exit non-zero, clear message, file byte for byte untouched", async () => {
    const root = tempRoot();
    const dataDir = join(root, "d");
    mkdirSync(dataDir);
    const bytes = Buffer.from("PK\u0003\u0004 this is a zip, or a shopping list, but not SQLite\n".repeat(100));
    writeFileSync(join(dataDir, "app.db"), bytes);
    const r = await run(["--data-dir", dataDir, "--port", "0"], { env: FAST_ENV });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("not a usable SQLite database");
    expect(r.stderr).toContain(join(dataDir, "app.db"));
    expect(readFileSync(join(dataDir, "app.db")).equals(bytes)).toBe(true);
    expect(existsSync(join(dataDir, "app.db-wal"))).toBe(false);
  });

  test("a data directory that cannot be created (a path under a regular file): exit non-zero, clear message", async () => {
    const root = tempRoot();
    writeFileSync(join(root, "plainfile"), "x");
    const dataDir = join(root, "plainfile", "data");
    const r = await run(["--data-dir", dataDir, "--port", "0"], { env: FAST_ENV });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("data directory");
    expect(r.stderr).toContain(dataDir);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  test("a data directory path that is a regular file: exit non-zero, clear message", async () => {
    const root = tempRoot();
    writeFileSync(join(root, "plainfile"), "x");
    const r = await run(["--data-dir", join(root, "plainfile"), "--port", "0"], { env: FAST_ENV });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("not a directory");
    expect(readFileSync(join(root, "plainfile"), "utf8")).toBe("x");
  });

  test("a port already in use: exit non-zero with a message", async () => {
    const blocker = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("busy") });
    try {
      const r = await run(["--data-dir", join(tempRoot(), "d"), "--port", String(blocker.port), "--host", "127.0.0.1"], { env: FAST_ENV });
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(/port|address|in use/i);
    } finally {
      blocker.stop(true);
    }
  });
});

describe("SIGTERM drains in-flight requests", () => {
  test("a login whose body is still arriving when SIGTERM comes completes; then the process exits 0", async () => {
    const root = tempRoot();
    // Default argon2 parameters: the login itself takes a noticeable time too.
    const s = await Server.start(["--data-dir", join(root, "d"), "--port", "0", "--log-format", "json"]);
    await initialize(s);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const enc = new TextEncoder();
    let sentFirst!: () => void;
    const firstSent = new Promise<void>((r) => (sentFirst = r));
    let step = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(ctrl) {
        if (step === 0) {
          step = 1;
          ctrl.enqueue(enc.encode('{"username":"owner",'));
          sentFirst();
          return;
        }
        await gate;
        ctrl.enqueue(enc.encode('"password":"correct horse battery"}'));
        ctrl.close();
      },
    });
    const pending = fetch(s.base + "/api/v1/auth/login", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
      duplex: "half",
    });
    await firstSent;
    // Give the request time to reach the handler (ordering, not a timing assertion).
    await Bun.sleep(300);
    s.proc.kill("SIGTERM");
    await s.waitFor(/stopping/);
    release();
    const res = await pending;
    expect(res.status).toBe(200);
    expect(((await res.json()) as { user: { username: string } }).user.username).toBe("owner");
    expect(await s.proc.exited).toBe(0);
    const loginLine = s.lines.findIndex((l) => l.includes('"path":"/api/v1/auth/login"'));
    const stoppedLine = s.lines.findIndex((l) => l.includes('"stopped"'));
    expect(loginLine).toBeGreaterThan(-1);
    expect(stoppedLine).toBeGreaterThan(loginLine);
  }, 60_000);
});

describe("reset-password", () => {
  test("sets the password from stdin and ends the user's sessions, also while the server runs", async () => {
    const root = tempRoot();
    const dataDir = join(root, "d");
    const s = await Server.start(["--data-dir", dataDir, "--port", "0"], FAST_ENV);
    try {
      const sess = await initialize(s);
      expect((await s.fetch("/api/v1/me", { headers: { cookie: sess.cookie } })).status).toBe(200);

      const r = await run(["reset-password", "owner", "--data-dir", dataDir], { env: FAST_ENV, stdin: "a new long password\n" });
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("owner");
      expect(r.stdout + r.stderr).not.toContain("a new long password");

      expect((await s.fetch("/api/v1/me", { headers: { cookie: sess.cookie } })).status).toBe(401);
      const old = await s.fetch("/api/v1/auth/login", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(OWNER) });
      expect(old.status).toBe(401);
      const ok = await s.fetch("/api/v1/auth/login", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ username: "OWNER", password: "a new long password" }),
      });
      expect(ok.status).toBe(200);
    } finally {
      expect(await s.stop()).toBe(0);
    }
    const db = new Database(join(dataDir, "app.db"));
    const audit = db.query("SELECT action FROM audit_logs WHERE action = 'password_reset'").all();
    expect(audit).toHaveLength(1);
    db.close();
  });

  test("a short password, an unknown user, or no username: exit non-zero, nothing changed", async () => {
    const root = tempRoot();
    const dataDir = join(root, "d");
    const s = await Server.start(["--data-dir", dataDir, "--port", "0"], FAST_ENV);
    let sess: { cookie: string };
    try {
      sess = await initialize(s);
    } finally {
      expect(await s.stop()).toBe(0);
    }
    const hashOf = () => {
      const db = new Database(join(dataDir, "app.db"));
      const row = db.query("SELECT password_hash FROM users").get();
      const live = db.query("SELECT count(*) AS n FROM sessions WHERE revoked_at IS NULL").get();
      db.close();
      return { row, live };
    };
    const before = hashOf();
    const short = await run(["reset-password", "owner", "--data-dir", dataDir], { env: FAST_ENV, stdin: "short\n" });
    expect(short.code).not.toBe(0);
    expect(short.stderr).toMatch(/8/);
    const unknown = await run(["reset-password", "nobody", "--data-dir", dataDir], { env: FAST_ENV, stdin: "long enough password\n" });
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain("not found");
    const nowhere = join(root, "typo");
    const wrongDir = await run(["reset-password", "owner", "--data-dir", nowhere], { env: FAST_ENV, stdin: "long enough password\n" });
    expect(wrongDir.code).not.toBe(0);
    expect(wrongDir.stderr).toContain("no database");
    expect(existsSync(nowhere)).toBe(false);
    const missing = await run(["reset-password", "--data-dir", dataDir], { env: FAST_ENV, stdin: "long enough password\n" });
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain("usage");
    expect(hashOf()).toEqual(before);
    expect(sess!.cookie).toContain("app_session=");
  });
});

/** A data directory with the OWNER account (made by a server that has stopped again). */
async function storeWithOwner(): Promise<string> {
  const dataDir = join(tempRoot(), "d");
  const s = await Server.start(["--data-dir", dataDir, "--port", "0"], FAST_ENV);
  try {
    await initialize(s);
  } finally {
    expect(await s.stop()).toBe(0);
  }
  return dataDir;
}

/** The stored password hash and the number of live sessions. */
function credentialsOf(dataDir: string) {
  const db = new Database(join(dataDir, "app.db"));
  const hash = db.query("SELECT password_hash AS h FROM users").get();
  const live = db.query("SELECT count(*) AS n FROM sessions WHERE revoked_at IS NULL").get();
  db.close();
  return { hash, live };
}

/** Whether a password signs OWNER in (the server is started for it and stopped). */
async function signsIn(dataDir: string, password: string): Promise<boolean> {
  const s = await Server.start(["--data-dir", dataDir, "--port", "0"], FAST_ENV);
  try {
    const r = await s.fetch("/api/v1/auth/login", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ username: OWNER.username, password }) });
    return r.status === 200;
  } finally {
    expect(await s.stop()).toBe(0);
  }
}

describe("reset-password from a pipe or a file", () => {
  test("reads the first line only: the rest of the input is not part of the password", async () => {
    const dataDir = await storeWithOwner();
    const r = await run(["reset-password", "owner", "--data-dir", dataDir], { env: FAST_ENV, stdin: "first line passphrase\r\nsecond line\n" });
    expect(r.code).toBe(0);
    expect(r.stdout + r.stderr).not.toContain("New password");
    expect(await signsIn(dataDir, "first line passphrase")).toBe(true);
  });

  test("a file redirected to standard input works (the README's way); an empty input or an endless line changes nothing", async () => {
    const dataDir = await storeWithOwner();
    const file = join(tempRoot(), "newpass.txt");
    writeFileSync(file, "passphrase from a file\n", { mode: 0o600 });
    const p = Bun.spawn([process.execPath, MAIN, "reset-password", "owner", "--data-dir", dataDir], { env: cleanEnv(FAST_ENV), stdin: Bun.file(file), stdout: "pipe", stderr: "pipe" });
    expect(await p.exited).toBe(0);
    expect(await signsIn(dataDir, "passphrase from a file")).toBe(true);
    const before = credentialsOf(dataDir);
    const empty = await run(["reset-password", "owner", "--data-dir", dataDir], { env: FAST_ENV, stdin: "" });
    expect(empty.code).not.toBe(0);
    expect(empty.stderr).toContain("no password on standard input");
    expect(credentialsOf(dataDir)).toEqual(before);
    const huge = await run(["reset-password", "owner", "--data-dir", dataDir], { env: FAST_ENV, stdin: "x".repeat(100_000) });
    expect(huge.code).not.toBe(0);
    expect(huge.stderr).toContain("too long");
    expect(credentialsOf(dataDir)).toEqual(before);
  });
});

// On a terminal the password is asked twice without echo. Driven through a real pseudo-terminal
// (Bun.spawn's `terminal` option): what the program and the terminal's own echo print is what a
// person would see.
const havePty = typeof (Bun as { Terminal?: unknown }).Terminal === "function" && process.platform !== "win32";
if (!havePty) console.warn("cli.test.ts: reset-password terminal tests skipped (this Bun has no pseudo-terminal support)");

/** The program on a pseudo-terminal: `screen` is everything the terminal showed so far. */
function onTerminal(args: string[]) {
  let screen = "";
  const dec = new TextDecoder();
  let closed!: () => void;
  const terminalClosed = new Promise<void>((r) => (closed = r));
  const proc = Bun.spawn([process.execPath, MAIN, ...args], {
    env: cleanEnv(FAST_ENV),
    terminal: { cols: 120, rows: 30, data: (_t, d) => void (screen += dec.decode(d, { stream: true })), exit: () => closed() },
  });
  let exited = false;
  void proc.exited.then(() => (exited = true));
  return {
    proc,
    screen: () => screen,
    /** The exit code, once the program has ended and the terminal has shown all it wrote. */
    async exitCode(): Promise<number> {
      const code = await proc.exited;
      await terminalClosed;
      return code;
    },
    type: (text: string) => void proc.terminal!.write(text),
    async waitFor(text: string): Promise<void> {
      // A deadline only so that a hang fails with the screen in the message; not a timing check.
      for (let i = 0; i < 2000 && !screen.includes(text); i++) {
        if (exited) break;
        await Bun.sleep(10);
      }
      if (!screen.includes(text)) throw new Error(`the terminal never showed ${JSON.stringify(text)}; it showed ${JSON.stringify(screen)}`);
    },
  };
}

describe.skipIf(!havePty)("reset-password on a terminal", () => {
  test("asks twice without echo (Backspace edits), then sets the password and ends the sessions", async () => {
    const dataDir = await storeWithOwner();
    expect(credentialsOf(dataDir).live).toEqual({ n: 1 });
    const t = onTerminal(["reset-password", "owner", "--data-dir", dataDir]);
    await t.waitFor("New password:");
    // A typo fixed with Backspace, as typed key by key.
    t.type("terminal passphrase!");
    t.type("\x7f");
    t.type("\r");
    await t.waitFor("Repeat:");
    t.type("terminal passphrase\r");
    expect(await t.exitCode()).toBe(0);
    expect(t.screen()).toContain("password of owner changed");
    expect(t.screen()).not.toContain("terminal passphrase");
    expect(t.screen()).not.toContain("passphrase");
    expect(t.screen()).not.toMatch(/\*{4}/);
    expect(credentialsOf(dataDir).live).toEqual({ n: 0 });
    expect(await signsIn(dataDir, "terminal passphrase")).toBe(true);
  }, 60_000);

  test("two different entries are refused and nothing changes; Ctrl-C cancels", async () => {
    const dataDir = await storeWithOwner();
    const before = credentialsOf(dataDir);
    const t = onTerminal(["reset-password", "owner", "--data-dir", dataDir]);
    await t.waitFor("New password:");
    t.type("first passphrase here\r");
    await t.waitFor("Repeat:");
    t.type("other passphrase here\r");
    expect(await t.exitCode()).not.toBe(0);
    expect(t.screen()).toContain("the two passwords differ; nothing changed");
    expect(t.screen()).not.toContain("passphrase");
    expect(credentialsOf(dataDir)).toEqual(before);

    const c = onTerminal(["reset-password", "owner", "--data-dir", dataDir]);
    await c.waitFor("New password:");
    c.type("half typed");
    c.type("\x03");
    expect(await c.exitCode()).not.toBe(0);
    expect(c.screen()).toContain("cancelled");
    expect(credentialsOf(dataDir)).toEqual(before);
    expect(await signsIn(dataDir, OWNER.password)).toBe(true);
  }, 60_000);
});

/** The README's systemd unit, as written there. */
function readmeUnit(): string {
  const readme = readFileSync(resolve(import.meta.dir, "../../README.md"), "utf8");
  const section = readme.slice(readme.indexOf("## Running as a systemd service"));
  const start = section.indexOf("```ini\n") + "```ini\n".length;
  return section.slice(start, section.indexOf("```", start));
}

const systemdAnalyze = Bun.which("systemd-analyze");
if (!systemdAnalyze) console.warn("cli.test.ts: systemd-analyze verify of the README's unit skipped (apt-get install -y systemd)");

describe("the README's systemd unit", () => {
  test("its ExecStart starts the server (data directory and port changed for the test)", async () => {
    const unit = readmeUnit();
    const execStart = /^ExecStart=(\S+) (.*)$/m.exec(unit);
    expect(execStart?.[1]).toBe("/usr/local/bin/app");
    const args = execStart![2]!.split(/\s+/);
    const dataDir = join(tempRoot(), "state");
    const at = (flag: string) => {
      const i = args.indexOf(flag);
      expect({ flag, present: i !== -1 }).toEqual({ flag, present: true });
      return i + 1;
    };
    // The unit's data directory is its StateDirectory and ReadWritePaths.
    const stateDir = /^StateDirectory=(\S+)$/m.exec(unit)?.[1];
    expect(args[at("--data-dir")]).toBe(`/var/lib/${stateDir}`);
    expect(unit).toContain(`ReadWritePaths=/var/lib/${stateDir}\n`);
    expect(args[at("--host")]).toBe("127.0.0.1");
    args[at("--data-dir")] = dataDir;
    args[at("--port")] = "0";
    const s = await Server.start(args, FAST_ENV);
    try {
      expect((await s.fetch("/api/v1/health/ready")).status).toBe(200);
      expect(existsSync(join(dataDir, "app.db"))).toBe(true);
    } finally {
      expect(await s.stop()).toBe(0);
    }
  });

  test.skipIf(!systemdAnalyze)("systemd-analyze verify finds nothing to say about it", async () => {
    const root = tempRoot();
    // verify insists that ExecStart's program exists: a stand-in at a path of the test's own.
    const exe = join(root, "app");
    writeFileSync(exe, "#!/bin/sh\n", { mode: 0o755 });
    const unit = readmeUnit();
    expect(unit).toContain("ExecStart=/usr/local/bin/app ");
    const file = join(root, "app-server.service");
    writeFileSync(file, unit.replace("ExecStart=/usr/local/bin/app ", `ExecStart=${exe} `));
    const p = Bun.spawnSync([systemdAnalyze!, "verify", file], { stdout: "pipe", stderr: "pipe" });
    const said = (p.stdout.toString() + p.stderr.toString()).split("\n").filter((l) => l.includes("app-server.service"));
    expect({ code: p.exitCode, said }).toEqual({ code: 0, said: [] });
  });
});

describe("request log", () => {
  test("one line per request with method, path without query, status, duration, request id, user id; never a secret", async () => {
    const root = tempRoot();
    const s = await Server.start(["--data-dir", join(root, "d"), "--port", "0", "--log-format", "json"], FAST_ENV);
    const secrets: string[] = [OWNER.password, "second secret password"];
    try {
      const sess = await initialize(s);
      secrets.push(sess.session, sess.csrf);
      const me = await s.fetch("/api/v1/me?secret_query=hunter2", { headers: { cookie: sess.cookie } });
      expect(me.status).toBe(200);
      const userId = ((await me.json()) as { id: string }).id;
      const meId = me.headers.get("x-request-id")!;
      const cp = await s.fetch("/api/v1/auth/change-password", {
        method: "POST",
        headers: { "content-type": "application/json", cookie: sess.cookie, "x-csrf-token": sess.csrf },
        body: JSON.stringify({ current_password: OWNER.password, new_password: "second secret password" }),
      });
      expect(cp.status).toBe(204);
      const rotated = cookiesFrom(cp);
      secrets.push(rotated.session, rotated.csrf);
      const bad = await s.fetch("/api/v1/auth/login", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ username: "owner", password: "wrong-password-x" }) });
      expect(bad.status).toBe(401);
      secrets.push("wrong-password-x");
      const nf = await s.fetch("/api/v1/nowhere", { headers: { cookie: rotated.cookie } });
      expect(nf.status).toBe(404);
      await s.waitFor(/"path":"\/api\/v1\/nowhere"/);

      const requests = s.lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === "request");
      expect(requests.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([
        "POST /api/v1/setup/initialize 201",
        "GET /api/v1/me 200",
        "POST /api/v1/auth/change-password 204",
        "POST /api/v1/auth/login 401",
        "GET /api/v1/nowhere 404",
      ]);
      for (const r of requests) {
        expect(typeof r.duration_ms).toBe("number");
        expect(r.request_id).toBeString();
        expect(r.time).toBeString();
      }
      const meLine = requests[1]!;
      expect(meLine.request_id).toBe(meId);
      expect(meLine.user_id).toBe(userId);
      expect(requests[0]!.user_id).toBeNull();
      expect(new Set(requests.map((r) => r.request_id)).size).toBe(requests.length);
    } finally {
      expect(await s.stop()).toBe(0);
    }
    const all = s.lines.join("\n") + s.stderr;
    expect(all).not.toContain("hunter2");
    for (const x of secrets) {
      expect(x.length).toBeGreaterThan(0);
      expect(all).not.toContain(x);
    }
    for (const l of s.lines) expect(() => JSON.parse(l)).not.toThrow();
  });

  test("text format: one readable line per request", async () => {
    const root = tempRoot();
    const s = await Server.start(["--data-dir", join(root, "d"), "--port", "0"], FAST_ENV);
    try {
      const r = await s.fetch("/api/v1/health/live?x=1");
      const id = r.headers.get("x-request-id")!;
      const line = await s.waitFor(/GET \/api\/v1\/health\/live/);
      expect(line).toContain(" 200 ");
      expect(line).toContain(id);
      expect(line).not.toContain("x=1");
      expect(line).toMatch(/\d+(\.\d+)?ms/);
    } finally {
      expect(await s.stop()).toBe(0);
    }
  });

  test("request lines are written within a second without further requests (buffered, not held)", async () => {
    const root = tempRoot();
    const s = await Server.start(["--data-dir", join(root, "d"), "--port", "0"], FAST_ENV);
    try {
      const r = await s.fetch("/api/v1/health/live?one");
      const id = r.headers.get("x-request-id")!;
      // No further request, no shutdown: the periodic flush alone must bring the line.
      const line = await Promise.race([s.waitFor(new RegExp(id)), Bun.sleep(5000).then(() => "not written within 5 s")]);
      expect(line).toContain("/api/v1/health/live");
    } finally {
      expect(await s.stop()).toBe(0);
    }
  });

  test("SIGTERM right after a burst of requests: every request line reaches a slow reader (nothing lost at exit)", async () => {
    const root = tempRoot();
    const proc = Bun.spawn([process.execPath, MAIN, "--data-dir", join(root, "d"), "--port", "0", "--log-format", "json"], {
      env: cleanEnv(FAST_ENV),
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    // A reader that takes its time, like a busy journald: the pipe fills while requests are served.
    const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
    const dec = new TextDecoder();
    let text = "";
    let base = "";
    while (!base) {
      const { done, value } = await reader.read();
      if (done) throw new Error("exited before listening");
      text += dec.decode(value, { stream: true });
      base = /"url":"(http:[^"]+)"/.exec(text)?.[1] ?? "";
    }
    const slowRead = (async () => {
      for (;;) {
        await Bun.sleep(100);
        const { done, value } = await reader.read();
        if (done) break;
        text += dec.decode(value, { stream: true });
      }
    })();
    await Bun.sleep(300); // the reader now pauses between chunks
    const N = 3000;
    const ids = new Set<string>();
    for (let i = 0; i < N; i += 50) {
      const batch = await Promise.all(Array.from({ length: 50 }, () => fetch(`${base}/api/v1/health/live`)));
      for (const r of batch) ids.add(r.headers.get("x-request-id")!);
    }
    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
    await slowRead;
    const logged = new Set(
      text
        .split("\n")
        .filter((l) => l.includes('"msg":"request"'))
        .map((l) => (JSON.parse(l) as { request_id: string }).request_id),
    );
    const missing = [...ids].filter((id) => !logged.has(id));
    expect(missing.length).toBe(0);
    expect(text).toContain('"msg":"stopped"');
  }, 60_000);

  test("--log-format off: no request lines", async () => {
    const root = tempRoot();
    // Nothing tells the port when logging is off: pick a free one first.
    const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
    const port = probe.port;
    probe.stop(true);
    const proc = Bun.spawn([process.execPath, MAIN, "--data-dir", join(root, "d"), "--port", String(port), "--log-format", "off"], {
      env: cleanEnv(FAST_ENV),
      stdout: "pipe",
      stderr: "pipe",
    });
    let live: Response | null = null;
    for (let i = 0; i < 200 && !live; i++) {
      live = await fetch(`http://127.0.0.1:${port}/api/v1/health/live`).catch(() => null);
      if (!live) await Bun.sleep(25);
    }
    expect(live?.status).toBe(200);
    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
    const out = await new Response(proc.stdout).text();
    expect(out).not.toContain("/api/v1/health/live");
  });
});
