import { parseArgs, type ParseArgsConfig } from "node:util";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { loadConfig, type Config } from "../config";
import { DataDirLocked, dataDirInUse } from "../core/data-dir-lock";
import { isStorageFull } from "../core/errors";

/**
 * The operator commands (`app backup|restore|verify|users|doctor`): each in its own module, each
 * with `--help`, run without a server. Their exit codes (README, "Operator CLI"):
 */
export const EXIT = {
  ok: 0,
  /** Something failed that is not one of the cases below (the message says what). */
  failed: 1,
  /** Wrong usage: an unknown option, a missing argument, an output file that exists. */
  usage: 2,
  /** A server holds the data directory and the command is not safe while it runs. */
  inUse: 3,
  /** The snapshot (or the data directory, for doctor) failed verification. */
  invalid: 4,
  /** No space left on the device while writing. */
  noSpace: 5,
} as const;

export class UsageError extends Error {}
/** An expected failure with its exit code and message (no stack printed). */
export class CommandFailed extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

export interface CommandContext {
  /** Settings from the global flags and the environment (the data directory above all). */
  config: Config;
  out: (line: string) => void;
  err: (line: string) => void;
}

export interface OperatorCommand {
  usage: string;
  run(argv: string[], ctx: CommandContext): Promise<number>;
}

/** parseArgs (strict) with the options every operator command takes: --data-dir and --help. */
export function parseCommandArgs<O extends NonNullable<ParseArgsConfig["options"]>>(argv: string[], options: O, config: Config) {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: { ...options, "data-dir": { type: "string" }, help: { type: "boolean", short: "h" } }, strict: true, allowPositionals: true });
  } catch (e) {
    throw new UsageError((e as Error).message.replace(/\. To specify.*$/s, ""));
  }
  const dataDir = (parsed.values as Record<string, unknown>)["data-dir"];
  if (typeof dataDir === "string") config.dataDir = resolve(dataDir);
  return parsed;
}

/** Refuses when a server holds the data directory (commands that are not safe online). */
export function refuseWhileServing(dataDir: string): void {
  if (dataDirInUse(dataDir)) throw new CommandFailed(new DataDirLocked(dataDir).message, EXIT.inUse);
}

/** The data directory must hold a database (a wrong --data-dir says so instead of making one). */
export function requireDatabase(dataDir: string): void {
  if (!existsSync(join(dataDir, "app.db"))) throw new CommandFailed(`no database in ${dataDir} (is --data-dir right?)`, EXIT.failed);
}

const COMMANDS: Record<string, () => Promise<OperatorCommand>> = {
  backup: async () => (await import("./backup.command")).backupCommand,
  verify: async () => (await import("./verify.command")).verifyCommand,
  restore: async () => (await import("./restore.command")).restoreCommand,
  users: async () => (await import("./users.command")).usersCommand,
  doctor: async () => (await import("./doctor.command")).doctorCommand,
};


/** Runs operator command `name` with its own arguments; returns the exit code. */
export async function runOperatorCommand(name: string, argv: string[], flags: Partial<Record<keyof Config, string | boolean>>): Promise<number> {
  const out = (l: string) => process.stdout.write(`${l}\n`);
  const err = (l: string) => process.stderr.write(`${l}\n`);
  const command = await COMMANDS[name]!();
  try {
    const config = loadConfig(flags, process.env);
    config.dataDir = resolve(config.dataDir);
    if (argv.includes("--help") || argv.includes("-h")) {
      out(command.usage);
      return EXIT.ok;
    }
    return await command.run(argv, { config, out, err });
  } catch (e) {
    if (e instanceof UsageError) {
      err(`app ${name}: ${e.message}`);
      err(`see app ${name} --help`);
      return EXIT.usage;
    }
    if (e instanceof CommandFailed) {
      err(`app ${name}: ${e.message}`);
      return e.exitCode;
    }
    if (isStorageFull(e)) {
      err(`app ${name}: no space left on the device (${(e as Error).message}); nothing was kept`);
      return EXIT.noSpace;
    }
    err(`app ${name}: ${(e as Error)?.message ?? String(e)}`);
    return EXIT.failed;
  }
}

/** The exit codes as the help texts show them. */
export const EXIT_HELP = `Exit codes: 0 done; 1 failed; 2 wrong usage; 3 a server holds the data directory;
4 verification failed; 5 no space left on the device.`;
