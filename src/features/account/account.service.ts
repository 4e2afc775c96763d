import { writeTx, readTx, type Conn } from "../../core/db";
import type { Core } from "../../core/core";
import {
  AppError,
  alreadyInitialized,
  forbidden,
  invalidCredentials,
  nameTaken,
  notFound,
  rateLimited,
  stateConflict,
  validationFailed,
} from "../../core/errors";
import { newId } from "../../core/ids";
import type { CounterHandle } from "../../core/metrics";
import type { RequestMeta } from "../../core/http";
import type { Principal, SessionPrincipal } from "../../core/auth/principal";
import type { IssuedSession } from "../../core/auth/session-store";
import { HashQueueFull } from "../../core/auth/password";
import { passwordWeakness } from "../../core/auth/password-strength";
import { addressKey, type Reservation } from "../../core/auth/throttle";
import { recordAudit } from "../audit/audit.repo";
import { createInbox } from "../lists/lists.repo";
import { countUsers, findUserById, findUserByKey, insertUser, listUsers, updateUser, usernameKey, type UserRow } from "./account.repo";
import type { ChangePasswordBody, LoginBody, MePatch, NewUser } from "./account.schemas";
import { Password } from "./account.schemas";

export interface SignedIn {
  user: UserRow;
  session: IssuedSession;
}

/** Setup, login, logout, passwords and users: the rules, no HTTP. */
/** Called inside PATCH /me's transaction when the user's zone or reminder time changed. */
export type UserSettingsChanged = (c: Conn, userId: string) => void;

export class AccountService {
  private readonly loginFailures: CounterHandle<"reason">;
  private readonly settingsHooks: UserSettingsChanged[] = [];

  constructor(private readonly core: Core) {
    this.loginFailures = core.metrics.counter({
      name: "app_login_failures_total",
      help: "Sign-ins refused: invalid_credentials (unknown user or wrong password) or rate_limited (the throttle or a full password queue)",
      labelNames: ["reason"],
    });
    // Both series exist from the start (at 0), so rate() and increase() see the first failure.
    this.loginFailures.inc({ reason: "invalid_credentials" }, 0);
    this.loginFailures.inc({ reason: "rate_limited" }, 0);
  }

  /** Features whose schedule depends on the user's zone or reminder time (reminders) register here. */
  onSettingsChanged(hook: UserSettingsChanged): void {
    this.settingsHooks.push(hook);
  }

  isInitialized(): boolean {
    return countUsers(this.core.db) > 0;
  }

  /** Creates the first user (an admin) with its inbox and signs it in. Exactly one call can win. */
  async initialize(input: NewUser, meta: RequestMeta): Promise<SignedIn> {
    if (this.isInitialized()) throw alreadyInitialized();
    await this.requireStrong(input.password, [input.username, input.display_name ?? ""], "password");
    const ipKey = addressKey(meta.ip);
    const hash = await this.queued(() => this.core.hasher.hash(input.password, { ip: ipKey, priority: this.core.throttle.inGoodStanding(ipKey) }));
    return writeTx(this.core.db, (tx) => {
      // Checked again inside the write lock: concurrent initialize calls serialize here.
      if (countUsers(tx) > 0) throw alreadyInitialized();
      const user = this.insertNewUser(tx, input, hash, true);
      const session = this.core.sessions.issue(tx, user.id, meta.ip, meta.userAgent);
      recordAudit(tx, { userId: user.id, action: "setup", at: this.core.clock.now(), ip: meta.ip, userAgent: meta.userAgent, targetType: "user", targetId: user.id });
      return { user, session };
    });
  }

  /**
   * Unknown user and wrong password give the same answer after the same work (a dummy verify).
   * Throttled per client address and per username; the attempt is counted before its password is
   * checked, so concurrent attempts cannot all pass the throttle before the first one fails.
   */
  async login(input: LoginBody, meta: RequestMeta, presented: Principal | null): Promise<SignedIn> {
    try {
      return await this.checkLogin(input, meta, presented);
    } catch (e) {
      if (e instanceof AppError && (e.code === "invalid_credentials" || e.code === "rate_limited")) this.loginFailures.inc({ reason: e.code });
      throw e;
    }
  }

  private async checkLogin(input: LoginBody, meta: RequestMeta, presented: Principal | null): Promise<SignedIn> {
    const key = usernameKey(input.username.trim());
    const ipKey = addressKey(meta.ip);
    // Checks from an address that has not been failing are served first (see PasswordHasher).
    const priority = this.core.throttle.inGoodStanding(ipKey);
    const attempt = this.reserveAttempt(ipKey, key);
    const user = findUserByKey(this.core.db, key);
    const lane = { ip: ipKey, user: key, priority };
    const ok = await this.queued(
      () => (user ? this.core.hasher.verify(input.password, user.passwordHash, lane) : this.core.hasher.verifyDummy(input.password, lane)),
      attempt,
    );
    // A disabled account answers as a wrong password would (after the same work): nothing is revealed.
    if (!user || !ok || user.disabledAt !== null) {
      this.core.throttle.failed(attempt);
      writeTx(this.core.db, (tx) =>
        recordAudit(tx, {
          userId: user?.id ?? null,
          action: "login_failed",
          at: this.core.clock.now(),
          ip: meta.ip,
          userAgent: meta.userAgent,
          detail: { username: input.username.slice(0, 64) },
        }),
      );
      throw invalidCredentials();
    }
    this.core.throttle.succeeded(attempt);
    return writeTx(this.core.db, (tx) => {
      // A new token on every login; the session the browser came with (if any) ends.
      if (presented?.via === "session") this.core.sessions.revoke(tx, presented.user.id, presented.sessionId);
      const session = this.core.sessions.issue(tx, user.id, meta.ip, meta.userAgent);
      recordAudit(tx, { userId: user.id, action: "login", at: this.core.clock.now(), ip: meta.ip, userAgent: meta.userAgent, targetType: "session", targetId: session.id });
      return { user, session };
    });
  }

  logout(p: SessionPrincipal, meta: RequestMeta): void {
    writeTx(this.core.db, (tx) => {
      this.core.sessions.revoke(tx, p.user.id, p.sessionId);
      recordAudit(tx, { userId: p.user.id, action: "logout", at: this.core.clock.now(), ip: meta.ip, userAgent: meta.userAgent, targetType: "session", targetId: p.sessionId });
    });
  }

  /**
   * Every session of the user ends; the caller gets a fresh one (a new token). The current password
   * is checked like a login (the same throttle, counted before the check); the new one must pass
   * the strength rule.
   */
  async changePassword(p: SessionPrincipal, input: ChangePasswordBody, meta: RequestMeta): Promise<IssuedSession> {
    const user = findUserById(this.core.db, p.user.id);
    if (!user) throw notFound("user");
    const ipKey = addressKey(meta.ip);
    const priority = this.core.throttle.inGoodStanding(ipKey);
    const attempt = this.reserveAttempt(ipKey, user.usernameKey);
    const lane = { ip: ipKey, user: user.usernameKey, priority };
    if (!(await this.queued(() => this.core.hasher.verify(input.current_password, user.passwordHash, lane), attempt))) {
      this.core.throttle.failed(attempt);
      throw invalidCredentials();
    }
    this.core.throttle.succeeded(attempt);
    await this.requireStrong(input.new_password, [user.username, user.displayName], "new_password");
    const hash = await this.queued(() => this.core.hasher.hash(input.new_password, lane));
    return writeTx(this.core.db, (tx) => {
      const now = this.core.clock.now();
      updateUser(tx, user.id, { passwordHash: hash, updatedAt: now.toISOString() });
      this.core.sessions.revokeAllExcept(tx, user.id, null);
      const session = this.core.sessions.issue(tx, user.id, meta.ip, meta.userAgent);
      recordAudit(tx, { userId: user.id, action: "password_changed", at: now, ip: meta.ip, userAgent: meta.userAgent, targetType: "user", targetId: user.id });
      return session;
    });
  }

  /** For the `reset-password` command: a locked-out operator on the server itself. */
  async resetPassword(username: string, newPassword: string): Promise<void> {
    const parsed = Password.safeParse(newPassword);
    if (!parsed.success) throw validationFailed([{ path: "password", message: parsed.error.issues[0]?.message ?? "invalid" }]);
    const user = findUserByKey(this.core.db, usernameKey(username.trim()));
    if (!user) throw notFound("user");
    await this.requireStrong(newPassword, [user.username, user.displayName], "password");
    const hash = await this.core.hasher.hash(newPassword);
    writeTx(this.core.db, (tx) => {
      const now = this.core.clock.now();
      updateUser(tx, user.id, { passwordHash: hash, updatedAt: now.toISOString() });
      this.core.sessions.revokeAllExcept(tx, user.id, null);
      recordAudit(tx, { userId: user.id, action: "password_reset", at: now, ip: null, userAgent: "app reset-password", targetType: "user", targetId: user.id });
    });
  }

  me(p: Principal): UserRow {
    const user = findUserById(this.core.db, p.user.id);
    if (!user) throw notFound("user");
    return user;
  }

  updateMe(p: Principal, patch: MePatch): UserRow {
    return writeTx(this.core.db, (tx) => {
      const set: Partial<UserRow> = { updatedAt: this.core.clock.now().toISOString() };
      if (patch.display_name !== undefined) set.displayName = patch.display_name;
      if (patch.timezone !== undefined) set.timezone = patch.timezone;
      if (patch.reminder_time !== undefined) set.reminderTime = patch.reminder_time;
      if (patch.quiet_hours !== undefined) {
        set.quietStart = patch.quiet_hours?.start ?? null;
        set.quietEnd = patch.quiet_hours?.end ?? null;
      }
      updateUser(tx, p.user.id, set);
      // A new zone or reminder time moves the user's armed reminders (the reminders feature re-arms them).
      if (patch.timezone !== undefined || patch.reminder_time !== undefined) for (const h of this.settingsHooks) h(tx, p.user.id);
      const user = findUserById(tx, p.user.id);
      if (!user) throw notFound("user");
      return user;
    });
  }

  async createUser(p: Principal, input: NewUser, meta: RequestMeta): Promise<UserRow> {
    if (!p.user.isAdmin) throw forbidden();
    const key = usernameKey(input.username);
    if (findUserByKey(this.core.db, key)) throw nameTaken("the username is already taken", "username");
    await this.requireStrong(input.password, [input.username, input.display_name ?? ""], "password");
    // No per-address lane: an administrator creating accounts is not the flood the lanes are for.
    const hash = await this.queued(() => this.core.hasher.hash(input.password, { priority: true }));
    return writeTx(this.core.db, (tx) => {
      if (findUserByKey(tx, key)) throw nameTaken("the username is already taken", "username");
      const user = this.insertNewUser(tx, input, hash, false);
      recordAudit(tx, { userId: p.user.id, action: "user_created", at: this.core.clock.now(), ip: meta.ip, userAgent: meta.userAgent, targetType: "user", targetId: user.id, detail: { username: user.username } });
      return user;
    });
  }

  getUser(p: Principal, id: string): UserRow {
    if (!p.user.isAdmin) throw forbidden();
    const user = findUserById(this.core.db, id);
    if (!user) throw notFound("user");
    return user;
  }

  listUsers(p: Principal): UserRow[] {
    if (!p.user.isAdmin) throw forbidden();
    return readTx(this.core.db, (tx) => listUsers(tx));
  }

  /**
   * Disables (or enables again) an account, for the operator CLI (`app users disable|enable`): a
   * disabled account cannot sign in and every session of it ends at once; its data stays. The last
   * active administrator cannot be disabled (nobody could manage the server any more).
   */
  operatorSetDisabled(username: string, disabled: boolean): UserRow {
    return writeTx(this.core.db, (tx) => {
      const user = findUserByKey(tx, usernameKey(username.trim()));
      if (!user) throw notFound("user");
      if ((user.disabledAt !== null) === disabled) return user;
      if (disabled && user.isAdmin && !listUsers(tx).some((u) => u.id !== user.id && u.isAdmin && u.disabledAt === null)) {
        throw stateConflict("the last active administrator cannot be disabled");
      }
      const now = this.core.clock.now();
      updateUser(tx, user.id, { disabledAt: disabled ? now.toISOString() : null, updatedAt: now.toISOString() });
      if (disabled) this.core.sessions.revokeAllExcept(tx, user.id, null);
      recordAudit(tx, { userId: user.id, action: disabled ? "user_disabled" : "user_enabled", at: now, ip: null, userAgent: `app users ${disabled ? "disable" : "enable"}`, targetType: "user", targetId: user.id });
      return { ...user, disabledAt: disabled ? now.toISOString() : null };
    });
  }

  /** Every account, oldest first, for the operator CLI (`app users`): whoever runs it owns the machine. */
  operatorListUsers(): UserRow[] {
    return readTx(this.core.db, (tx) => listUsers(tx));
  }

  /** Counts a sign-in attempt before its password is checked; 429 while the address or name must wait. */
  private reserveAttempt(ipKey: string, key: string): Reservation {
    const r = this.core.throttle.reserve(ipKey, key);
    if (!r.ok) throw rateLimited(r.retryAfter);
    return r.reservation;
  }

  /**
   * Runs an argon2 computation through the bounded queue: a full queue is 429 at once. An attempt
   * that was never checked gives its username count back (the address keeps it).
   */
  private async queued<T>(run: () => Promise<T>, attempt?: Reservation): Promise<T> {
    try {
      return await run();
    } catch (e) {
      if (!(e instanceof HashQueueFull)) throw e;
      if (attempt) this.core.throttle.notChecked(attempt);
      throw rateLimited(e.retryAfterSeconds, "too many passwords are being checked right now; try again shortly");
    }
  }

  /** The strength rule (core/auth/password-strength.ts): 422 on the password's field, saying why. */
  private async requireStrong(password: string, userInputs: string[], path: string): Promise<void> {
    const weakness = await passwordWeakness(password, userInputs);
    if (weakness) throw validationFailed([{ path, message: weakness }], `the password is ${weakness}`);
  }

  private insertNewUser(tx: Conn, input: NewUser, hash: string, isAdmin: boolean): UserRow {
    const now = this.core.clock.now().toISOString();
    const row: UserRow = {
      id: newId(),
      username: input.username,
      usernameKey: usernameKey(input.username),
      displayName: input.display_name ?? input.username,
      timezone: input.timezone ?? "UTC",
      isAdmin,
      reminderTime: "09:00",
      quietStart: null,
      quietEnd: null,
      passwordHash: hash,
      disabledAt: null,
      createdAt: now,
      updatedAt: now,
    };
    insertUser(tx, row);
    createInbox(tx, row.id, new Date(now));
    return row;
  }
}
