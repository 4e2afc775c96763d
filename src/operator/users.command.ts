import { createApp } from "../app";
import { DEFAULT_BUSY_TIMEOUT_MS, migrate, openDatabase } from "../core/db";
import { AppError } from "../core/errors";
import { Logger } from "../core/log";
import { ServerSecret } from "../core/secret";
import type { Principal } from "../core/auth/principal";
import { NewUser } from "../features/account/account.schemas";
import { promptPassword, readPasswordLine } from "./password-input";
import { CommandFailed, EXIT, EXIT_HELP, parseCommandArgs, requireDatabase, UsageError, type OperatorCommand } from "./command-kit";

export const usersCommand: OperatorCommand = {
  usage: `Usage:
  app users list [--data-dir DIR]                 every account: id, username, admin, created
  app users create USERNAME [--data-dir DIR]      a new (non-admin) account; the password is asked
                                                  twice on a terminal, else read as one line of
                                                  standard input
  app users disable USERNAME [--data-dir DIR]     the account can no longer sign in and all its
                                                  sessions end at once; its data stays (the last
                                                  active administrator cannot be disabled)
  app users enable USERNAME [--data-dir DIR]      undoes disable

All are safe while the server runs (they wait briefly for its write lock; a disabled account's
sessions stop working with its next request). create is recorded in the oldest administrator's
audit log, as if that administrator had made the account; disable and enable in the account's own.

${EXIT_HELP}`,
  async run(argv, { config, out }) {
    const { positionals } = parseCommandArgs(argv, {}, config);
    const [sub, ...rest] = positionals;
    if (sub !== "list" && sub !== "create" && sub !== "disable" && sub !== "enable") {
      throw new UsageError(sub ? `unknown users command ${sub}` : "a users command is required (list, create, disable or enable)");
    }
    if (sub === "list" && rest.length) throw new UsageError(`unexpected argument ${rest[0]}`);
    if (sub !== "list" && rest.length !== 1) throw new UsageError(rest.length ? `unexpected argument ${rest[1]}` : "USERNAME is required");
    requireDatabase(config.dataDir);
    const password = sub === "create" ? (process.stdin.isTTY ? await promptPassword() : await readPasswordLine()) : "";
    const db = openDatabase(`${config.dataDir}/app.db`);
    try {
      migrate(db);
      const secret = ServerSecret.loadOrCreate(config.dataDir);
      const app = createApp({ db, config, secret, logger: new Logger("off"), busyTimeoutMs: DEFAULT_BUSY_TIMEOUT_MS });
      try {
        const admins = app.account.operatorListUsers();
        if (sub === "list") {
          out(["id", "username", "admin", "created_at", "disabled_at"].join("\t"));
          for (const u of admins) out([u.id, u.username, u.isAdmin ? "yes" : "no", u.createdAt, u.disabledAt ?? "-"].join("\t"));
          return EXIT.ok;
        }
        if (sub === "disable" || sub === "enable") {
          try {
            const u = app.account.operatorSetDisabled(rest[0]!, sub === "disable");
            out(sub === "disable" ? `disabled ${u.username}; its sessions and API tokens have ended` : `enabled ${u.username}`);
            return EXIT.ok;
          } catch (e) {
            if (e instanceof AppError) throw new CommandFailed(`${e.detail ?? e.code}; nothing changed`, EXIT.failed);
            throw e;
          }
        }
        const admin = admins.find((u) => u.isAdmin);
        if (!admin) throw new CommandFailed("no administrator exists yet: set the server up first (the web app's first page)", EXIT.failed);
        const principal: Principal = {
          user: { id: admin.id, username: admin.username, timezone: admin.timezone, isAdmin: true, displayName: admin.displayName, createdAt: admin.createdAt },
          via: "session",
          sessionId: "",
          tokenHash: "",
        };
        const input = NewUser.safeParse({ username: rest[0]!, password });
        if (!input.success) throw new CommandFailed(`${input.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}; nothing changed`, EXIT.failed);
        try {
          const u = await app.account.createUser(principal, input.data, { ip: null, userAgent: "app users create", secure: false });
          out(`created user ${u.username} (${u.id})`);
          return EXIT.ok;
        } catch (e) {
          if (e instanceof AppError) {
            const fields = (e.errors ?? []).map((f) => `${f.path}: ${f.message}`).join("; ");
            throw new CommandFailed(`${e.detail ?? e.code}${fields ? ` (${fields})` : ""}; nothing changed`, EXIT.failed);
          }
          throw e;
        }
      } finally {
        app.close();
      }
    } finally {
      db.close();
    }
  },
};
