import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { lockDataDir, DataDirLocked } from "../core/data-dir-lock";
import { mkdirSync } from "node:fs";
import { SnapshotInvalid } from "../transfer/snapshot/snapshot.verify";
import { finishPendingRestore, restoreSnapshot } from "../transfer/snapshot/snapshot.restore";
import { CommandFailed, EXIT, EXIT_HELP, parseCommandArgs, UsageError, type OperatorCommand } from "./command-kit";

export const restoreCommand: OperatorCommand = {
  usage: `Usage: app restore FILE [--data-dir DIR]

Restores a whole instance (database, server secret, attachments) from a snapshot into the data
directory. The server must be stopped: the command refuses while one holds the directory. The
snapshot is verified in full first; nothing changes unless every check passes. What the directory
held before is moved to DIR/pre-restore-<time>/ (delete it once the restored server looks right).
A restore interrupted while it swapped the files (kill, power loss) is finished by the next run of
this command; the server refuses to start until then.

${EXIT_HELP}`,
  async run(argv, { config, out }) {
    const { positionals } = parseCommandArgs(argv, {}, config);
    if (positionals.length !== 1) throw new UsageError(positionals.length ? `unexpected argument ${positionals[1]}` : "FILE is required");
    const file = resolve(positionals[0]!);
    if (!existsSync(file)) throw new CommandFailed(`${file} does not exist`, EXIT.failed);
    mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
    let lock;
    try {
      lock = lockDataDir(config.dataDir);
    } catch (e) {
      if (e instanceof DataDirLocked) throw new CommandFailed(e.message, EXIT.inUse);
      throw e;
    }
    try {
      // A restore killed during its swap is finished first (its snapshot was verified before the swap began).
      const pending = finishPendingRestore(config.dataDir);
      if (pending) {
        out(`finished the interrupted restore of ${pending.archive}; the contents before it are in ${pending.previous}`);
        if (resolve(pending.archive) === file) return EXIT.ok;
      }
      const r = restoreSnapshot(file, config.dataDir, new Date());
      out(`restored ${file} into ${config.dataDir}`);
      out(`snapshot of ${r.manifest.created_at} (app ${r.manifest.app_version}, schema ${r.manifest.schema_version}, ${r.manifest.attachments} attachments)`);
      if (r.previous) out(`the previous contents are in ${r.previous}`);
      return EXIT.ok;
    } catch (e) {
      if (e instanceof SnapshotInvalid) {
        for (const p of e.problems) out(`problem: ${p}`);
        throw new CommandFailed(`${file} failed verification; nothing was changed`, EXIT.invalid);
      }
      throw e;
    } finally {
      lock.release();
    }
  },
};
