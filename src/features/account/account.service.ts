import { writeTx, readTx } from "../../core/db";
import type { Core } from "../../core/core";
import {
  alreadyInitialized,
  forbidden,
  invalidCredentials,
  nameTaken,
  notFound,
  rateLimited,
  validationFailed,
} from "../../core/errors";
import { newId } from "../../core/ids";
import type { RequestMeta } from "../../core/http";
import type { Principal } from "../../core/auth/principal";
import type { IssuedSession } from "../../core/auth/session-store";
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
export class AccountService {
  constructor(private readonly core: Core) {}

  isInitialized(): boolean {
    return countUsers(this.core.db.orm) > 0;
  }

  /** Creates the first user (an admin) with its inbox and signs it in. Exactly one call can win. */
  async initialize(input: NewUser, meta: RequestMeta): Promise<SignedIn> {
    if (this.isInitialized()) throw alreadyInitialized();
    const hash = await this.core.hasher.hash(input.password);
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
   * Throttled per client address and per username.
   */
  async login(input: LoginBody, meta: RequestMeta, presented: Principal | null): Promise<SignedIn> {
    const key = usernameKey(input.username.trim());
    const ipKey = meta.ip ?? "unknown";
    const wait = this.core.throttle.retryAfter(ipKey, key);
    if (wait > 0) throw rateLimited(wait);
    const user = findUserByKey(this.core.db.orm, key);
    const ok = user ? await this.core.hasher.verify(input.password, user.passwordHash) : await this.core.hasher.verifyDummy(input.password);
    if (!user || !ok) {
      this.core.throttle.recordFailure(ipKey, key);
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
    this.core.throttle.recordSuccess(ipKey, key);
    return writeTx(this.core.db, (tx) => {
      // A new token on every login; the session the browser came with (if any) ends.
      if (presented) this.core.sessions.revoke(tx, presented.user.id, presented.sessionId);
      const session = this.core.sessions.issue(tx, user.id, meta.ip, meta.userAgent);
      recordAudit(tx, { userId: user.id, action: "login", at: this.core.clock.now(), ip: meta.ip, userAgent: meta.userAgent, targetType: "session", targetId: session.id });
      return { user, session };
    });
  }

  logout(p: Principal, meta: RequestMeta): void {
    writeTx(this.core.db, (tx) => {
      this.core.sessions.revoke(tx, p.user.id, p.sessionId);
      recordAudit(tx, { userId: p.user.id, action: "logout", at: this.core.clock.now(), ip: meta.ip, userAgent: meta.userAgent, targetType: "session", targetId: p.sessionId });
    });
  }

  /** Every session of the user ends; the caller gets a fresh one (a new token). */
  async changePassword(p: Principal, input: ChangePasswordBody, meta: RequestMeta): Promise<IssuedSession> {
    const user = findUserById(this.core.db.orm, p.user.id);
    if (!user) throw notFound("user");
    const ipKey = meta.ip ?? "unknown";
    const wait = this.core.throttle.retryAfter(ipKey, user.usernameKey);
    if (wait > 0) throw rateLimited(wait);
    if (!(await this.core.hasher.verify(input.current_password, user.passwordHash))) {
      this.core.throttle.recordFailure(ipKey, user.usernameKey);
      throw invalidCredentials();
    }
    const hash = await this.core.hasher.hash(input.new_password);
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
    const user = findUserByKey(this.core.db.orm, usernameKey(username.trim()));
    if (!user) throw notFound("user");
    const hash = await this.core.hasher.hash(newPassword);
    writeTx(this.core.db, (tx) => {
      const now = this.core.clock.now();
      updateUser(tx, user.id, { passwordHash: hash, updatedAt: now.toISOString() });
      this.core.sessions.revokeAllExcept(tx, user.id, null);
      recordAudit(tx, { userId: user.id, action: "password_reset", at: now, ip: null, userAgent: "app reset-password", targetType: "user", targetId: user.id });
    });
  }

  me(p: Principal): UserRow {
    const user = findUserById(this.core.db.orm, p.user.id);
    if (!user) throw notFound("user");
    return user;
  }

  updateMe(p: Principal, patch: MePatch): UserRow {
    return writeTx(this.core.db, (tx) => {
      const set: Partial<UserRow> = { updatedAt: this.core.clock.now().toISOString() };
      if (patch.display_name !== undefined) set.displayName = patch.display_name;
      if (patch.timezone !== undefined) set.timezone = patch.timezone;
      updateUser(tx, p.user.id, set);
      const user = findUserById(tx, p.user.id);
      if (!user) throw notFound("user");
      return user;
    });
  }

  async createUser(p: Principal, input: NewUser, meta: RequestMeta): Promise<UserRow> {
    if (!p.user.isAdmin) throw forbidden();
    const key = usernameKey(input.username);
    if (findUserByKey(this.core.db.orm, key)) throw nameTaken("the username is already taken", "username");
    const hash = await this.core.hasher.hash(input.password);
    return writeTx(this.core.db, (tx) => {
      if (findUserByKey(tx, key)) throw nameTaken("the username is already taken", "username");
      const user = this.insertNewUser(tx, input, hash, false);
      recordAudit(tx, { userId: p.user.id, action: "user_created", at: this.core.clock.now(), ip: meta.ip, userAgent: meta.userAgent, targetType: "user", targetId: user.id, detail: { username: user.username } });
      return user;
    });
  }

  getUser(p: Principal, id: string): UserRow {
    if (!p.user.isAdmin) throw forbidden();
    const user = findUserById(this.core.db.orm, id);
    if (!user) throw notFound("user");
    return user;
  }

  listUsers(p: Principal): UserRow[] {
    if (!p.user.isAdmin) throw forbidden();
    return readTx(this.core.db, (tx) => listUsers(tx));
  }

  private insertNewUser(tx: Parameters<Parameters<typeof writeTx>[1]>[0], input: NewUser, hash: string, isAdmin: boolean): UserRow {
    const now = this.core.clock.now().toISOString();
    const row: UserRow = {
      id: newId(),
      username: input.username,
      usernameKey: usernameKey(input.username),
      displayName: input.display_name ?? input.username,
      timezone: input.timezone ?? "UTC",
      isAdmin,
      passwordHash: hash,
      createdAt: now,
      updatedAt: now,
    };
    insertUser(tx, row);
    createInbox(tx, row.id, new Date(now));
    return row;
  }
}
