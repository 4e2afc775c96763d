#!/usr/bin/env bun
// First: Elysia reads NODE_ENV once, when it is first imported (see the module).
import "./core/production-mode";
import { isProduction } from "elysia/error";
import { chmodSync, existsSync, mkdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { Config, ConfigError, FLAGS, envName, loadConfig } from "./config";
import { parseCommandLine } from "./cli";
import { DEFAULT_BUSY_TIMEOUT_MS, DatabaseError, migrate, openDatabase, type Db } from "./core/db";
import { ServerSecret } from "./core/secret";
import { Logger } from "./core/log";
import { MAINTENANCE_INTERVAL_MS, hourlyMaintenance } from "./core/maintenance";
import { createApp } from "./app";
import { APP_VERSION } from "./version";
import { AppError } from "./core/errors";
import { lastResortResponse, titleOf } from "./core/problem";

const USAGE = `app ${APP_VERSION}: self-hosted personal productivity server

Usage:
  app [serve] [options]            start the server (default command)
  app reset-password <username>    set a user's password and end its sessions: asked twice
                                   without echo on a terminal, else one line of standard input
  app --version                    print the version
  app --help                       print this help
`;

/** What each setting means, for --help. A Record over every key: a new setting needs its line. */
const SETTING_HELP: Record<keyof Config, string> = {
  dataDir: "where the database, attachments and secrets live",
  host: "address to listen on; 0.0.0.0 serves the LAN (plain http)",
  port: "port to listen on",
  trustProxy: "trust X-Forwarded-For/-Proto/-Host from a reverse proxy",
  logFormat: "request log lines on stdout: text, json or off",
  sessionIdleSeconds: "a session unused this many seconds ends",
  sessionAbsoluteSeconds: "a session ends this many seconds after sign-in, used or not",
  argon2MemoryKiB: "argon2id memory per password hash, in KiB",
  argon2TimeCost: "argon2id passes per password hash",
  loginFreeFailures: "failed logins per username before waits are imposed",
  shutdownGraceMs: "milliseconds SIGTERM waits for requests in flight",
  attachmentMaxBytes: "largest attachment, in bytes",
  attachmentQuotaBytes: "bytes all of one user's attachments may take (0: no quota)",
  backupTokenSeconds: "seconds a backup preflight token stays valid",
  backupPendingMax: "pending backup uploads per user (checked, not yet restored)",
  backupStagedMaxBytes: "bytes of pending backup uploads per user",
  backupArchiveMaxBytes: "largest backup archive accepted, in bytes",
  backupMaxEntries: "most entries in a backup archive",
  backupMaxRatio: "highest compression ratio of one archive entry past 1 MiB",
  backupMaxInflatedBytes: "most bytes a backup archive may hold uncompressed",
  reminderGraceSeconds: "a reminder missed by less than this while the server was down is delivered late; older: missed",
  publicUrl: "the server's public address, for the done/snooze links in notifications (default http://HOST:PORT)",
};

/** The value placeholder each flag takes in the help ("" for a switch). */
const FLAG_VALUE: Record<string, string> = { "--data-dir": "DIR", "--host": "HOST", "--port": "PORT", "--trust-proxy": "", "--log-format": "FMT" };

/** A default as people read it: "1209600 (14 days)", "26214400 (25 MiB)". */
function shownDefault(key: string, value: unknown): string {
  if (typeof value !== "number" || value === 0) return String(value);
  const unit = (n: number, names: [number, string][]) => {
    for (const [size, name] of names) if (n >= size && n % size === 0) return ` (${n / size} ${name})`;
    return "";
  };
  const bytes: [number, string][] = [[1024 ** 3, "GiB"], [1024 ** 2, "MiB"]];
  if (key.endsWith("Bytes")) return `${value}${unit(value, bytes)}`;
  if (key.endsWith("KiB")) return `${value}${unit(value * 1024, bytes)}`;
  if (key.endsWith("Seconds")) return `${value}${unit(value, [[86400, "days"], [3600, "hours"], [60, "minutes"]])}`;
  return String(value);
}

/** The help: usage, then every setting with its flag or variable, meaning and default (from the config schema itself). */
function help(): string {
  const defaults = Config.parse({}) as Record<string, unknown>;
  const flagOf = new Map(Object.entries(FLAGS).map(([flag, key]) => [key, flag]));
  const keys = Object.keys(Config.shape) as (keyof Config)[];
  const line = (k: keyof Config, left: string) => `  ${left}${SETTING_HELP[k]}; default ${shownDefault(k, defaults[k])}`;
  const flagged = keys
    .filter((k) => flagOf.has(k))
    .map((k) => {
      const flag = flagOf.get(k)!;
      return line(k, `${`${flag} ${FLAG_VALUE[flag] ?? "VALUE"}`.trimEnd().padEnd(20)}${envName(k).padEnd(18)}`);
    });
  const envOnly = keys.filter((k) => !flagOf.has(k)).map((k) => line(k, envName(k).padEnd(32)));
  return `${USAGE}
Options (each also read from an environment variable; flags win):
${flagged.join("\n")}

Other settings (environment only):
${envOnly.join("\n")}
`;
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

/** The longest line `reset-password` reads (a password is at most 1024 characters, 4 bytes each). */
const PASSWORD_LINE_MAX_BYTES = 4096 + 2;

/** The first line of standard input (a pipe or a file), without its line ending; nothing after it is read. */
async function readPasswordLine(): Promise<string> {
  const reader = Bun.stdin.stream().getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let complete = false;
  try {
    while (!complete) {
      const { done, value } = await reader.read();
      if (done) break;
      const nl = value.indexOf(0x0a);
      chunks.push(nl === -1 ? value : value.subarray(0, nl));
      size += nl === -1 ? value.length : nl;
      complete = nl !== -1;
      if (size > PASSWORD_LINE_MAX_BYTES) throw new ConfigError("the first line of standard input is too long for a password");
    }
  } finally {
    void reader.cancel().catch(() => {});
  }
  const line = new TextDecoder().decode(Buffer.concat(chunks)).replace(/\r$/, "");
  if (line === "") throw new ConfigError("no password on standard input (one line: the new password); nothing changed");
  return line;
}

/**
 * Asks for the password twice on the terminal, without echo: raw mode, so every key arrives as typed
 * and nothing is shown. Enter ends a line; Backspace and Ctrl-U edit it; Ctrl-C or Ctrl-D cancel.
 * The prompts go to standard error, so standard output stays the result line.
 */
async function promptPassword(): Promise<string> {
  const stdin = process.stdin;
  const dec = new TextDecoder();
  let pending = "";
  let ended = false;
  let wake: (() => void) | null = null;
  const onData = (chunk: Buffer) => {
    pending += dec.decode(chunk, { stream: true });
    wake?.();
  };
  const onEnd = () => {
    ended = true;
    wake?.();
  };
  const readLine = async (prompt: string): Promise<string> => {
    process.stderr.write(prompt);
    let line = "";
    for (;;) {
      while (pending === "") {
        if (ended) throw new ConfigError("cancelled; nothing changed");
        await new Promise<void>((r) => (wake = r));
        wake = null;
      }
      // An escape sequence (arrow keys, function keys) is dropped whole.
      const esc = /^\x1b(?:\[[0-9;?]*[@-~]|O.)?/.exec(pending);
      if (esc) {
        pending = pending.slice(esc[0].length);
        continue;
      }
      const ch = String.fromCodePoint(pending.codePointAt(0)!);
      pending = pending.slice(ch.length);
      if (ch === "\r" || ch === "\n") {
        if (ch === "\r" && pending.startsWith("\n")) pending = pending.slice(1);
        process.stderr.write("\n");
        return line;
      }
      if (ch === "\u0003" || (ch === "\u0004" && line === "")) {
        process.stderr.write("\n");
        throw new ConfigError("cancelled; nothing changed");
      }
      if (ch === "\u007f" || ch === "\b") line = Array.from(line).slice(0, -1).join("");
      else if (ch === "\u0015") line = "";
      else if (ch >= " ") line += ch;
    }
  };
  stdin.setRawMode(true);
  stdin.on("data", onData);
  stdin.on("end", onEnd);
  stdin.resume();
  try {
    const first = await readLine("New password: ");
    if (first === "") throw new ConfigError("no password given; nothing changed");
    const second = await readLine("Repeat: ");
    if (first !== second) throw new ConfigError("the two passwords differ; nothing changed");
    return first;
  } finally {
    stdin.setRawMode(false);
    stdin.off("data", onData);
    stdin.off("end", onEnd);
    stdin.pause();
  }
}

async function main(): Promise<number> {
  const parsed = parseCommandLine(process.argv.slice(2));
  if (parsed.command === "version") {
    console.log(APP_VERSION);
    return 0;
  }
  if (parsed.command === "help") {
    console.log(help());
    return 0;
  }
  const config = loadConfig(parsed.flags, process.env);
  config.dataDir = resolve(config.dataDir);
  const logger = new Logger(config.logFormat === "off" ? "off" : config.logFormat);

  if (parsed.command === "reset-password") {
    const username = parsed.args[0];
    if (!username) throw new ConfigError("usage: app reset-password <username> (the new password is asked on a terminal, else read from standard input)");
    // Never create an empty store here: a wrong --data-dir should say so, not report "user not found".
    if (!existsSync(join(config.dataDir, "app.db"))) throw new ConfigError(`no database in ${config.dataDir} (is --data-dir right?)`);
    const password = process.stdin.isTTY ? await promptPassword() : await readPasswordLine();
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
    // Only what escapes handle.fetch (which answers every error itself) arrives here.
    error: (e) => lastResortResponse(e, logger),
  });
  // Serving from here on: the executable starts with JavaScriptCore's tier-up thresholds scaled up
  // (build.ts, --compile-jit-policy) so the run-once start-up code (module bodies, schema building,
  // route registration) is not JIT-compiled; requests get the normal policy.
  Bun.unsafe.setJITPolicy(1);

  // Reminders: links in notifications point at the public address; then the scheduler's timer.
  handle.channels.publicUrl = config.publicUrl || `http://${config.host.includes(":") ? `[${config.host}]` : config.host}:${server.port}`;
  handle.scheduler.start();

  // Hourly upkeep: expired sessions, planner statistics (core/maintenance.ts).
  const sweep = setInterval(() => hourlyMaintenance(handle.core), MAINTENANCE_INTERVAL_MS);
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
      console.error(`app: ${e.detail ?? titleOf(e.code, e.variant)}${fields ? ` (${fields})` : ""}`);
    } else {
      console.error(`app: ${(e as Error)?.message ?? e}`);
    }
    process.exit(1);
  },
);

export { envName };
