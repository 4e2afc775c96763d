import { existsSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { APP_VERSION } from "../version";
import { SnapshotError, writeSnapshot } from "../transfer/snapshot/snapshot.write";
import { SnapshotInvalid } from "../transfer/snapshot/snapshot.verify";
import { CommandFailed, EXIT, EXIT_HELP, parseCommandArgs, requireDatabase, UsageError, type OperatorCommand } from "./command-kit";

export const backupCommand: OperatorCommand = {
  usage: `Usage: app backup --out FILE [--data-dir DIR]

Writes a whole-instance snapshot (the database copied with SQLite's VACUUM INTO, the server secret
and every attachment file, with a manifest of SHA-256s) to FILE, a ZIP archive. Safe while the
server runs: the copy is one consistent read. The archive is written under a temporary name,
read back and verified (hashes, PRAGMA integrity_check) and only then given its name; FILE must
not exist yet.

${EXIT_HELP}`,
  async run(argv, { config, out }) {
    const { values, positionals } = parseCommandArgs(argv, { out: { type: "string", short: "o" } }, config);
    if (positionals.length) throw new UsageError(`unexpected argument ${positionals[0]}`);
    if (typeof values.out !== "string" || values.out === "") throw new UsageError("--out FILE is required");
    const outPath = resolve(values.out);
    if (existsSync(outPath)) throw new UsageError(`${outPath} exists already; choose another name`);
    if (!existsSync(dirname(outPath)) || !statSync(dirname(outPath)).isDirectory()) throw new UsageError(`the directory of ${outPath} does not exist`);
    requireDatabase(config.dataDir);
    try {
      const s = writeSnapshot({ dataDir: config.dataDir, outPath, now: new Date(), appVersion: APP_VERSION });
      out(`snapshot written and verified: ${s.path}`);
      out(`bytes ${s.bytes}, sha256 ${s.sha256}, attachments ${s.manifest.attachments}, schema ${s.manifest.schema_version}`);
      return EXIT.ok;
    } catch (e) {
      if (e instanceof SnapshotInvalid) throw new CommandFailed(`the written snapshot failed verification and was removed: ${e.message}`, EXIT.invalid);
      if (e instanceof SnapshotError) throw new CommandFailed(e.message, EXIT.failed);
      throw e;
    }
  },
};
