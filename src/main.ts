#!/usr/bin/env bun
// First: Elysia reads NODE_ENV once, when it is first imported (see the module).
import "./core/production-mode";
import { isProduction } from "elysia/error";
import { chmodSync, existsSync, mkdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { Config, ConfigError, FLAGS, envName, loadConfig } from "./config";
import { parseCommandLine } from "./cli";
import { DataDirLocked, lockDataDir, type DataDirLock } from "./core/data-dir-lock";
import { RESTORE_JOURNAL } from "./transfer/snapshot/snapshot.manifest";
import { DEFAULT_BUSY_TIMEOUT_MS, DatabaseError, migrate, openDatabase, type Db } from "./core/db";
import { ServerSecret } from "./core/secret";
import { Logger } from "./core/log";
import { MAINTENANCE_INTERVAL_MS, hourlyMaintenance } from "./core/maintenance";
import { createApp } from "./app";
import { APP_VERSION } from "./version";
import { AppError } from "./core/errors";
import { lastResortResponse, titleOf } from "./core/problem";
import { promptPassword, readPasswordLine } from "./operator/password-input";

const USAGE = `app ${APP_VERSION}: self-hosted personal productivity server

Usage:
  app [serve] [options]            start the server (default command)
  app reset-password <username>    set a user's password and end its sessions: asked twice
                                   without echo on a terminal, else one line of standard input
  app import ticktick|todoist|ics FILE --user NAME [--dry-run]
                                   bring a TickTick backup CSV, a Todoist CSV or backup ZIP, or
                                   an iCalendar file into NAME's account; prints the preview
                                   (what is created, skipped or changed, with line numbers);
                                   --dry-run writes nothing
  app backup --out FILE            write a verified whole-instance snapshot (safe while serving)
  app verify FILE                  check a snapshot (hashes, database integrity)
  app restore FILE                 restore a whole instance into a stopped data directory
  app users list|create|disable|enable NAME
                                   list accounts; create, disable or enable one
  app doctor                       check the data directory and print fixes
                                   (each of these: app <command> --help; exit codes in the README)
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
  metricsToken: "bearer token for GET /metrics (Prometheus); unset, /metrics is off (404)",
  backupSchedule: "when scheduled snapshots run (cron expression; the admin's settings override)",
  backupScheduleEnabled: "whether scheduled snapshots run at all",
  backupUserArchives: "also put each user's app-backup v2 archive in every snapshot",
  backupTimezone: "zone of the schedule and of retention's days (empty: the server's zone)",
  backupDir: "local snapshot directory (empty: <data-dir>/backups)",
  backupKeepDaily: "snapshots kept: the newest of each of this many days",
  backupKeepWeekly: "snapshots kept: the newest of each of this many ISO weeks",
  backupKeepMonthly: "snapshots kept: the newest of each of this many months",
  backupS3Endpoint: "S3-compatible endpoint URL for off-site copies (empty: AWS)",
  backupS3Region: "region of the S3 endpoint",
  backupS3Bucket: "S3 bucket (empty: no off-site copies)",
  backupS3Prefix: "key prefix inside the bucket",
  backupS3AccessKeyId: "S3 access key id",
  backupS3SecretAccessKey: "S3 secret access key (never logged or shown)",
  reminderGraceSeconds: "a reminder missed by less than this while the server was down is delivered late; older: missed",
  publicUrl: "the server's public address, for the done/snooze links in notifications (default http://HOST:PORT)",
};

/** The value placeholder each flag takes in the help ("" for a switch). */
const FLAG_VALUE: Record<string, string> = { "--data-dir": "DIR", "--host": "HOST", "--port": "PORT", "--trust-proxy": "", "--log-format": "FMT" };

/** A default as people read it: "1209600 (14 days)", "26214400 (25 MiB)". */
function shownDefault(key: string, value: unknown): string {
  if (value === undefined) return "unset";
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

/** The serving process's hold on its data directory (kept referenced: a collected handle would let go of the lock). */
let dataDirLock: DataDirLock | null = null;

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
  if (parsed.command === "operator") {
    const { runOperatorCommand } = await import("./operator/operator");
    return runOperatorCommand(parsed.args[0]!, parsed.args.slice(1), parsed.flags);
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

  if (parsed.command === "import") {
    const [format, file] = parsed.args;
    if (!format || !file || parsed.importUser === undefined) throw new ConfigError("usage: app import ticktick|todoist|ics FILE --user NAME [--dry-run]");
    if (!existsSync(join(config.dataDir, "app.db"))) throw new ConfigError(`no database in ${config.dataDir} (is --data-dir right?)`);
    const { importCommand } = await import("./transfer/import/import.cli");
    const { db, secret } = openStore(config);
    try {
      // Not serving anyone: it may wait for a server's lock as long as a start-up does.
      const handle = createApp({ db, config, secret, logger: new Logger("off"), busyTimeoutMs: DEFAULT_BUSY_TIMEOUT_MS });
      try {
        console.log(await importCommand(handle.core, { format, file, username: parsed.importUser, dryRun: parsed.dryRun === true }));
      } finally {
        handle.close();
      }
    } finally {
      db.close();
    }
    return 0;
  }

  // Request lines are buffered (core/log.ts): whatever ends the process writes them out first.
  process.on("exit", () => logger.close());
  prepareDataDir(config.dataDir);
  // Held while the process lives (the kernel drops it however the process ends): a second server,
  // or `app restore`, on this directory is refused (core/data-dir-lock.ts).
  try {
    dataDirLock = lockDataDir(config.dataDir);
  } catch (e) {
    if (e instanceof DataDirLocked) throw new ConfigError(e.message);
    throw e;
  }
  // A whole-instance restore killed while it swapped the files: the database and the attachments may
  // not belong together (the start-up sweep would then delete rows or files); `app restore` finishes it.
  if (existsSync(join(config.dataDir, RESTORE_JOURNAL))) {
    throw new ConfigError(`an interrupted restore left ${join(config.dataDir, RESTORE_JOURNAL)}; run \`app restore <the same file> --data-dir ${config.dataDir}\` to finish it, then start again`);
  }
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

  // Scheduled whole-instance snapshots (transfer/snapshot): the timer waits for the next run.
  handle.snapshots.start();
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
    dataDirLock?.release();
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
