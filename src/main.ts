#!/usr/bin/env bun
// First: Elysia reads NODE_ENV once, when it is first imported (see the module).
import "./core/production-mode";
import { isProduction } from "elysia/error";
import { chmodSync, existsSync, mkdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { Config, ConfigError, FLAGS, envName, loadConfig } from "./config";
import { DEFAULT_BUSY_TIMEOUT_MS, DatabaseError, migrate, openDatabase, type Db } from "./core/db";
import { ServerSecret } from "./core/secret";
import { Logger } from "./core/log";
import { createApp } from "./app";
import { APP_VERSION } from "./version";
import { AppError } from "./core/errors";

const HELP = `app ${APP_VERSION}: self-hosted personal productivity server

Usage:
  app [serve] [options]            start the server (default command)
  app reset-password <username>    set a user's password (read from standard input) and end its sessions
  app --version                    print the version
  app --help                       print this help

Options (each also read from an environment variable):
  --data-dir DIR      APP_DATA_DIR      where the database, attachments and secrets live (default ./data)
  --host HOST         APP_HOST          address to listen on (default 127.0.0.1)
  --port PORT         APP_PORT          port to listen on (default 8080)
  --trust-proxy       APP_TRUST_PROXY   trust X-Forwarded-For/-Proto/-Host from a reverse proxy (default false)
  --log-format FMT    APP_LOG_FORMAT    text | json | off (default text)
`;

const ENV_ONLY_HELP: Partial<Record<keyof Config, string>> = {
  sessionIdleSeconds: "a session unused this long ends (seconds; 14 days)",
  sessionAbsoluteSeconds: "a session ends this long after sign-in, used or not (seconds; 90 days)",
  argon2MemoryKiB: "argon2id memory per password hash (KiB)",
  argon2TimeCost: "argon2id passes per password hash",
  loginFreeFailures: "failed logins per username before waits are imposed",
  shutdownGraceMs: "how long SIGTERM waits for in-flight requests (ms)",
  attachmentMaxBytes: "largest attachment (bytes)",
  attachmentQuotaBytes: "bytes all of one user's attachments may take; 0 = no quota",
};

/** The settings read only from the environment, with their defaults (from the config schema itself). */
function envOnlyHelp(): string {
  const defaults = Config.parse({}) as Record<string, unknown>;
  const flagged = new Set(Object.values(FLAGS));
  const keys = (Object.keys(Config.shape) as (keyof Config)[]).filter((k) => !flagged.has(k));
  const lines = keys.map((k) => {
    const name = envName(k);
    return `  ${name.padEnd(32)}${ENV_ONLY_HELP[k] ? `${ENV_ONLY_HELP[k]}, ` : ""}default ${String(defaults[k])}`;
  });
  return `\nOther settings (environment only):\n${lines.join("\n")}\n`;
}

interface Parsed {
  command: "serve" | "reset-password" | "version" | "help";
  args: string[];
  flags: Partial<Record<keyof Config, string | boolean>>;
}

function parseArgs(argv: string[]): Parsed {
  const out: Parsed = { command: "serve", args: [], flags: {} };
  let commandSeen = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--version" || a === "-v") return { ...out, command: "version" };
    if (a === "--help" || a === "-h") return { ...out, command: "help" };
    if (a.startsWith("--")) {
      const [name, inline] = a.includes("=") ? [a.slice(0, a.indexOf("=")), a.slice(a.indexOf("=") + 1)] : [a, undefined];
      const key = FLAGS[name];
      if (!key) throw new ConfigError(`unknown option ${name} (see app --help)`);
      if (key === "trustProxy") {
        out.flags.trustProxy = inline ?? true;
        continue;
      }
      const value = inline ?? argv[++i];
      if (value === undefined) throw new ConfigError(`${name} needs a value`);
      out.flags[key] = value;
      continue;
    }
    if (!commandSeen && (a === "serve" || a === "reset-password")) {
      out.command = a;
      commandSeen = true;
      continue;
    }
    out.args.push(a);
  }
  // `serve` takes no arguments and `reset-password` exactly one: anything else is a typo.
  const allowed = out.command === "reset-password" ? 1 : 0;
  if (out.args.length > allowed) {
    const extra = out.args[allowed]!;
    throw new ConfigError(commandSeen || allowed ? `unexpected argument ${extra} (see app --help)` : `unknown command ${extra} (see app --help)`);
  }
  return out;
}

/** Creates the data directory (0700) and checks it is a writable directory. */
function prepareDataDir(dir: string): void {
  if (!existsSync(dir)) {
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
    } catch (e) {
      throw new ConfigError(`cannot create the data directory ${dir}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
  }
  const st = statSync(dir);
  if (!st.isDirectory()) throw new ConfigError(`data directory ${dir} is not a directory`);
  try {
    chmodSync(dir, 0o700);
  } catch {
    /* not ours to change; the write probe below says whether we can use it */
  }
}

function openStore(config: Config): { db: Db; secret: ServerSecret } {
  const dir = resolve(config.dataDir);
  prepareDataDir(dir);
  const secret = ServerSecret.loadOrCreate(dir);
  const db = openDatabase(join(dir, "app.db"));
  try {
    migrate(db);
  } catch (e) {
    db.close();
    throw e;
  }
  return { db, secret };
}

async function readStdin(): Promise<string> {
  const text = await new Response(Bun.stdin.stream()).text();
  return text.replace(/\r?\n$/, "");
}

async function main(): Promise<number> {
  const parsed = parseArgs(process.argv.slice(2));
  if (parsed.command === "version") {
    console.log(APP_VERSION);
    return 0;
  }
  if (parsed.command === "help") {
    console.log(HELP + envOnlyHelp());
    return 0;
  }
  const config = loadConfig(parsed.flags, process.env);
  config.dataDir = resolve(config.dataDir);
  const logger = new Logger(config.logFormat === "off" ? "off" : config.logFormat);

  if (parsed.command === "reset-password") {
    const username = parsed.args[0];
    if (!username) throw new ConfigError("usage: app reset-password <username> (new password on standard input)");
    // Never create an empty store here: a wrong --data-dir should say so, not report "user not found".
    if (!existsSync(join(config.dataDir, "app.db"))) throw new ConfigError(`no database in ${config.dataDir} (is --data-dir right?)`);
    const password = await readStdin();
    const { db, secret } = openStore(config);
    try {
      // Not serving anyone: it may wait for a server's lock as long as a start-up does.
      const { account } = createApp({ db, config, secret, logger: new Logger("off"), busyTimeoutMs: DEFAULT_BUSY_TIMEOUT_MS });
      await account.resetPassword(username, password);
      console.log(`password of ${username} changed; its sessions have ended`);
    } finally {
      db.close();
    }
    return 0;
  }

  // Request lines are buffered (core/log.ts): whatever ends the process writes them out first.
  process.on("exit", () => logger.close());
  const { db, secret } = openStore(config);
  const handle = createApp({ db, config, secret, logger });
  // Before serving: leftovers of uploads cut short by a crash, files without rows and rows without files.
  const swept = handle.attachments.sweepOrphans();
  if (swept.temporaryFiles || swept.filesWithoutRow || swept.rowsWithoutFile.length) {
    logger.warn("attachment sweep", { temporary_files: swept.temporaryFiles, files_without_row: swept.filesWithoutRow, rows_without_file: swept.rowsWithoutFile });
  }
  const server = Bun.serve({
    hostname: config.host,
    port: config.port,
    // The largest body any endpoint takes (a backup archive); each route counts its own limit
    // while streaming, so this only stops what no route would accept.
    maxRequestBodySize: 2 * 1024 * 1024 * 1024 + 16 * 1024 * 1024,
    idleTimeout: 60,
    fetch: (req, srv) => handle.fetch(req, srv),
    error(e) {
      logger.error("server error", { error: e.message });
      return new Response(JSON.stringify({ type: "about:blank", title: "Internal server error", status: 500, code: "internal_error" }), {
        status: 500,
        headers: { "content-type": "application/problem+json" },
      });
    },
  });
  // Serving from here on: the executable starts with JavaScriptCore's tier-up thresholds scaled up
  // (build.ts, --compile-jit-policy) so the run-once start-up code (module bodies, schema building,
  // route registration) is not JIT-compiled; requests get the normal policy.
  Bun.unsafe.setJITPolicy(1);

  // Expired and revoked sessions are swept hourly so the table stays small over years.
  const sweep = setInterval(() => {
    try {
      handle.core.sessions.sweep();
    } catch (e) {
      logger.warn("session sweep failed", { error: (e as Error).message });
    }
  }, 3600_000);
  sweep.unref();

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info("stopping", { signal });
    clearInterval(sweep);
    // Stop accepting; let in-flight requests finish within the grace period.
    const drained = server.stop(false);
    const timer = new Promise((r) => setTimeout(r, config.shutdownGraceMs).unref());
    await Promise.race([drained, timer]);
    server.stop(true);
    handle.close();
    db.close();
    logger.info("stopped");
    logger.close();
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
  // Announced only once a signal would be handled: whoever waits for this line may stop us at once.
  logger.info("listening", {
    url: `http://${config.host}:${server.port}`,
    data_dir: config.dataDir,
    version: APP_VERSION,
    elysia_mode: isProduction ? "production" : "development",
  });
  return -1;
}

main().then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (e) => {
    if (e instanceof ConfigError || e instanceof DatabaseError) {
      console.error(`app: ${e.message}`);
    } else if (e instanceof AppError) {
      const fields = (e.errors ?? []).map((f) => `${f.path}: ${f.message}`).join("; ");
      console.error(`app: ${e.detail ?? e.title}${fields ? ` (${fields})` : ""}`);
    } else {
      console.error(`app: ${(e as Error)?.message ?? e}`);
    }
    process.exit(1);
  },
);

export { envName };
