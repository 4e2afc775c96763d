import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { newId } from "../core/ids";
import { SnapshotInvalid, verifySnapshot } from "../transfer/snapshot/snapshot.verify";
import { CommandFailed, EXIT, EXIT_HELP, parseCommandArgs, UsageError, type OperatorCommand } from "./command-kit";

export const verifyCommand: OperatorCommand = {
  usage: `Usage: app verify FILE

Checks a snapshot written by app backup or the scheduled backups: every entry's CRC-32, size and
SHA-256 against the manifest, nothing missing or extra, and the database copy opened and checked
with PRAGMA integrity_check and foreign_key_check. Needs no data directory; safe any time.

${EXIT_HELP}`,
  async run(argv, { config, out }) {
    const { positionals } = parseCommandArgs(argv, {}, config);
    if (positionals.length !== 1) throw new UsageError(positionals.length ? `unexpected argument ${positionals[1]}` : "FILE is required");
    const file = resolve(positionals[0]!);
    if (!existsSync(file)) throw new CommandFailed(`${file} does not exist`, EXIT.failed);
    try {
      const v = verifySnapshot(file, join(tmpdir(), `app-verify-${newId()}`));
      out(`ok: ${file}`);
      out(`created ${v.manifest.created_at} by app ${v.manifest.app_version}, schema ${v.manifest.schema_version}, ${v.manifest.files.length} files, ${v.manifest.attachments} attachments, sha256 ${v.sha256}`);
      return EXIT.ok;
    } catch (e) {
      if (e instanceof SnapshotInvalid) {
        for (const p of e.problems) out(`problem: ${p}`);
        throw new CommandFailed(`${file} failed verification (${e.problems.length} problems)`, EXIT.invalid);
      }
      throw e;
    }
  },
};
