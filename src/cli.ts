import { parseArgs } from "node:util";
import { Config, ConfigError, FLAGS } from "./config";

/**
 * The operator commands (src/operator/): everything after their name is theirs to parse (their own
 * options, --help), the flags before it are the global ones. Listed here, not imported, so that
 * starting a server loads none of them.
 */
export const OPERATOR_COMMANDS: ReadonlySet<string> = new Set(["backup", "restore", "verify", "users", "doctor"]);

/** What the command line asks for: a command, its arguments, and settings given as flags. */
export interface CommandLine {
  command: "serve" | "reset-password" | "import" | "version" | "help" | "operator";
  args: string[];
  flags: Partial<Record<keyof Config, string | boolean>>;
  /** `import`'s own options: the account to import into, and whether to write nothing. */
  importUser?: string;
  dryRun?: boolean;
}

// The flags of config.ts (a switch for --trust-proxy, a value for the others), plus --version/-v
// and --help/-h. Only the long spellings are options: `-x` and `-vh` are arguments, as they always were.
const OPTIONS = {
  ...Object.fromEntries(Object.entries(FLAGS).map(([flag, key]) => [flag.slice(2), { type: key === "trustProxy" ? "boolean" : "string" }] as const)),
  version: { type: "boolean", short: "v" },
  help: { type: "boolean", short: "h" },
  user: { type: "string" },
  "dry-run": { type: "boolean" },
} as const;

/**
 * Reads the command line with node:util's parseArgs (non-strict, so every token arrives in order and
 * the messages stay ours), left to right: --version or --help answers at once; an unknown option, a
 * flag without its value or a stray argument is a ConfigError that names it.
 */
export function parseCommandLine(argv: string[]): CommandLine {
  const out: CommandLine = { command: "serve", args: [], flags: {} };
  let commandSeen = false;
  const positional = (a: string) => {
    if (!commandSeen && (a === "serve" || a === "reset-password" || a === "import")) {
      out.command = a;
      commandSeen = true;
    } else out.args.push(a);
  };
  let shortGroupAt = -1;
  for (const token of parseArgs({ args: argv, options: OPTIONS, strict: false, allowPositionals: true, tokens: true }).tokens) {
    if (token.kind === "positional") {
      if (!commandSeen && OPERATOR_COMMANDS.has(token.value)) return { ...out, command: "operator", args: argv.slice(token.index) };
      positional(token.value);
      continue;
    }
    // `--` ends no options here: it is an option nobody knows.
    if (token.kind === "option-terminator") throw new ConfigError("unknown option -- (see app --help)");
    const word = argv[token.index]!;
    if (!word.startsWith("--")) {
      // A single dash: exactly -v or -h, else the whole word (`-x`, `-vh`, one token per letter) is an argument.
      if (word === "-v") return { ...out, command: "version" };
      if (word === "-h") return { ...out, command: "help" };
      if (shortGroupAt !== token.index) positional(word);
      shortGroupAt = token.index;
      continue;
    }
    const name = token.rawName.split("=")[0]!; // "--=x" names the option "--"
    if (!token.inlineValue && token.name === "version") return { ...out, command: "version" };
    if (!token.inlineValue && token.name === "help") return { ...out, command: "help" };
    if (name === "--user") {
      if (token.value === undefined) throw new ConfigError("--user needs a value");
      out.importUser = token.value;
      continue;
    }
    if (name === "--dry-run") {
      if (token.inlineValue) throw new ConfigError("--dry-run takes no value");
      out.dryRun = true;
      continue;
    }
    const key = FLAGS[name];
    if (!key) throw new ConfigError(`unknown option ${name} (see app --help)`);
    if (key === "trustProxy") {
      out.flags.trustProxy = token.value ?? true;
      continue;
    }
    if (token.value === undefined) throw new ConfigError(`${name} needs a value`);
    out.flags[key] = token.value;
  }
  if (out.command !== "import" && (out.importUser !== undefined || out.dryRun)) throw new ConfigError(`${out.importUser !== undefined ? "--user" : "--dry-run"} belongs to the import command (see app --help)`);
  // `serve` takes no arguments, `reset-password` exactly one, `import` two: anything else is a typo.
  const allowed = out.command === "reset-password" ? 1 : out.command === "import" ? 2 : 0;
  if (out.args.length > allowed) {
    const extra = out.args[allowed]!;
    throw new ConfigError(commandSeen || allowed ? `unexpected argument ${extra} (see app --help)` : `unknown command ${extra} (see app --help)`);
  }
  return out;
}
