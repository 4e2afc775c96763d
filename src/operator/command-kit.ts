import { parseArgs, type ParseArgsConfig } from "node:util";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { loadConfig, type Config } from "../config";
import { DataDirLocked, dataDirInUse } from "../core/data-dir-lock";

/**
 * What every operator command (`app backup|restore|verify|users|doctor`, one module each, run by
 * operator.ts) shares: exit codes (README, "Operator CLI"), errors, and option parsing.
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

/** The exit codes as the help texts show them. */
export const EXIT_HELP = `Exit codes: 0 done; 1 failed; 2 wrong usage; 3 a server holds the data directory;
4 verification failed; 5 no space left on the device.`;
