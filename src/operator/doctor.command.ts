import { Database } from "bun:sqlite";
import { accessSync, constants, existsSync, readdirSync, statSync, statfsSync } from "node:fs";
import { join } from "node:path";
import { dataDirInUse } from "../core/data-dir-lock";
import { SCHEMA_VERSION } from "../core/db";
import { allIds } from "../features/attachments/attachments.repo";
import { connOf } from "../transfer/snapshot/snapshot.conn";
import { pendingRestore, restoreLeftovers } from "../transfer/snapshot/snapshot.restore";
import { CommandFailed, EXIT, EXIT_HELP, parseCommandArgs, UsageError, type OperatorCommand } from "./command-kit";

/** A finding: `problem` fails the check (exit 4), `warning` does not; each says how to fix it. */
interface Finding {
  level: "ok" | "warning" | "problem";
  check: string;
  message: string;
  fix?: string;
}

/** Free space below this is a warning (a snapshot needs about the database's size again). */
const LOW_SPACE_BYTES = 1024 ** 3;
/** The earliest plausible "now": a box without a real-time clock that booted without network says 1970 or its image's date. */
const EARLIEST_PLAUSIBLE = Date.parse("2026-01-01T00:00:00Z");
/** Writes this far in the future mean the clock went back. */
const FUTURE_SLACK_MS = 10 * 60_000;

export function diagnose(dataDir: string, now: Date): Finding[] {
  const f: Finding[] = [];
  const add = (level: Finding["level"], check: string, message: string, fix?: string) => f.push({ level, check, message, fix });
  if (!existsSync(dataDir) || !statSync(dataDir).isDirectory()) {
    add("problem", "data directory", `${dataDir} is not a directory`, "pass the right --data-dir (or APP_DATA_DIR)");
    return f;
  }
  // Permissions: the directory holds password hashes and the server secret.
  const mode = statSync(dataDir).mode & 0o777;
  if (mode & 0o077) add("warning", "permissions", `${dataDir} is readable by others (mode ${mode.toString(8)})`, `chmod 700 ${dataDir}`);
  else add("ok", "permissions", `${dataDir} is private (mode ${mode.toString(8)})`);
  try {
    accessSync(dataDir, constants.W_OK);
  } catch {
    add("problem", "permissions", `${dataDir} is not writable by this user`, `run as the server's user, or chown -R <server user> ${dataDir}`);
  }
  const secret = join(dataDir, "secret.key");
  if (existsSync(secret) && statSync(secret).mode & 0o077) add("warning", "permissions", `${secret} is readable by others`, `chmod 600 ${secret}`);
  add("ok", "server", dataDirInUse(dataDir) ? "a server is running on this directory (checks read a consistent snapshot)" : "no server is running on this directory");

  const pending = pendingRestore(dataDir);
  if (pending) add("problem", "restore", `a restore of ${pending.archive} was interrupted while it swapped the files; the server will not start`, `app restore ${pending.archive} --data-dir ${dataDir}`);
  const dbPath = join(dataDir, "app.db");
  if (!existsSync(dbPath)) {
    add("problem", "database", `no database at ${dbPath}`, "pass the right --data-dir, or restore a snapshot: app restore FILE");
    return f;
  }
  let db: Database | null = null;
  try {
    db = new Database(dbPath, { readonly: true });
    db.run("PRAGMA busy_timeout = 5000");
    db.run("BEGIN");
    const rows = db.query("PRAGMA integrity_check").all() as { integrity_check: string }[];
    if (rows.length === 1 && rows[0]!.integrity_check === "ok") add("ok", "integrity", "PRAGMA integrity_check: ok");
    else add("problem", "integrity", `PRAGMA integrity_check: ${rows.slice(0, 3).map((r) => r.integrity_check).join("; ")}`, "stop the server and restore the newest verified snapshot: app restore FILE");
    const fk = db.query("PRAGMA foreign_key_check").all();
    if (fk.length) add("problem", "integrity", `${fk.length} rows break a foreign key`, "restore the newest verified snapshot: app restore FILE");
    const v = (db.query("PRAGMA user_version").get() as { user_version: number }).user_version;
    if (v === SCHEMA_VERSION) add("ok", "schema", `schema version ${v} (this build's)`);
    else if (v < SCHEMA_VERSION) add("warning", "schema", `schema version ${v}; this build migrates it to ${SCHEMA_VERSION} when the server starts`, "start the server once (it migrates on start)");
    else add("problem", "schema", `schema version ${v} is newer than this build knows (${SCHEMA_VERSION})`, "run the newer version of app that wrote it");
    // Orphans: attachment files without a row, rows without a file.
    const ids = new Set(allIds(connOf(db)));
    db.run("COMMIT");
    const dir = join(dataDir, "attachments");
    const names = existsSync(dir) ? readdirSync(dir) : [];
    const files = new Set(names);
    const withoutRow = names.filter((n) => !ids.has(n));
    const withoutFile = [...ids].filter((id) => !files.has(id));
    if (withoutRow.length) add("warning", "attachments", `${withoutRow.length} files in attachments/ belong to no attachment (e.g. ${withoutRow[0]})`, "the server removes them at its next start");
    if (withoutFile.length) add("problem", "attachments", `${withoutFile.length} attachments have no file (e.g. ${withoutFile[0]})`, "restore the files from a snapshot; the server drops these rows at its next start");
    if (!withoutRow.length && !withoutFile.length) add("ok", "attachments", `${ids.size} attachments, every file present`);
  } catch (e) {
    add("problem", "database", `cannot read ${dbPath}: ${(e as Error).message}`, "check the file's owner and permissions; restore a snapshot if it is damaged");
  } finally {
    db?.close(false);
  }

  try {
    const s = statfsSync(dataDir);
    const free = Number(s.bavail) * Number(s.bsize);
    const dbSize = statSync(dbPath).size;
    if (free < Math.max(LOW_SPACE_BYTES, dbSize * 2)) add("warning", "free space", `${free} bytes free on the data directory's file system`, "free some space or move the data directory: snapshots need about the database's size again");
    else add("ok", "free space", `${free} bytes free`);
  } catch (e) {
    add("warning", "free space", `cannot read the free space: ${(e as Error).message}`);
  }

  // Clock: a box without a real-time clock may start in 1970; a clock set back makes files from the future.
  const t = now.getTime();
  if (t < EARLIEST_PLAUSIBLE) add("problem", "clock", `the system clock says ${now.toISOString()}`, "set the clock (enable NTP: timedatectl set-ntp true)");
  else {
    const newest = ["app.db", "app.db-wal"].map((n) => join(dataDir, n)).filter(existsSync).map((p) => statSync(p).mtimeMs);
    const latest = Math.max(...newest);
    if (latest - t > FUTURE_SLACK_MS) add("problem", "clock", `the database was written at ${new Date(latest).toISOString()}, after the clock's ${now.toISOString()}`, "the clock went back: set it right (enable NTP) before the server runs again");
    else add("ok", "clock", `the clock says ${now.toISOString()}`);
  }

  const leftovers = [...restoreLeftovers(dataDir).map((n) => join(dataDir, n))];
  const work = join(dataDir, "backup", "snapshots");
  if (existsSync(work)) for (const n of readdirSync(work)) leftovers.push(join(work, n));
  if (leftovers.length) add("warning", "leftovers", `${leftovers.length} leftovers of interrupted snapshots or restores (e.g. ${leftovers[0]})`, "remove them while no backup runs: rm -r <path>");
  return f;
}

export const doctorCommand: OperatorCommand = {
  usage: `Usage: app doctor [--data-dir DIR]

Checks the data directory and prints each finding with a fix: permissions, whether a server runs
on it, the database's integrity (PRAGMA integrity_check, foreign_key_check) and schema version,
attachment files without rows and rows without files, free space, the system clock (unset, or set
back behind the database's last write), and leftovers of interrupted snapshots or restores.
Read-only and safe while the server runs.

Exit codes: 0 no problems (warnings may be printed); 4 problems found; 2 wrong usage; 1 failed.`,
  async run(argv, { config, out }) {
    const { positionals } = parseCommandArgs(argv, {}, config);
    if (positionals.length) throw new UsageError(`unexpected argument ${positionals[0]}`);
    const findings = diagnose(config.dataDir, new Date());
    for (const x of findings) {
      out(`${x.level.padEnd(7)} ${x.check}: ${x.message}`);
      if (x.fix) out(`        fix: ${x.fix}`);
    }
    const problems = findings.filter((x) => x.level === "problem").length;
    const warnings = findings.filter((x) => x.level === "warning").length;
    out(`${problems} problems, ${warnings} warnings`);
    if (problems) throw new CommandFailed(`${problems} problems found in ${config.dataDir}`, EXIT.invalid);
    return EXIT.ok;
  },
};
