import { resolve } from "node:path";
import { loadConfig, type Config } from "../config";
import { isStorageFull } from "../core/errors";
import { CommandFailed, EXIT, UsageError, type OperatorCommand } from "./command-kit";

/** The operator commands, each loaded only when asked for: `app serve` loads none of them. */
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

