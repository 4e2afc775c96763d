import type { Config } from "../config";
import { Cursors } from "./cursor";
import type { Db } from "./db";
import { PasswordHasher } from "./auth/password";
import { SessionStore, type FindSession } from "./auth/session-store";
import { LoginThrottle } from "./auth/throttle";
import type { Logger } from "./log";
import type { ServerSecret } from "./secret";
import type { Clock } from "./time";
import { EventHub } from "./events";

/** The shared pieces every feature is built from. One per running server. */
export interface Core {
  db: Db;
  config: Config;
  clock: Clock;
  secret: ServerSecret;
  cursors: Cursors;
  sessions: SessionStore;
  hasher: PasswordHasher;
  throttle: LoginThrottle;
  logger: Logger;
  version: string;
  dataDir: string;
  /** Server-Sent Events: features publish after commit (core/events.ts). */
  events: EventHub;
}

/**
 * @param p.findSession the session lookup's statement, from the account feature (app.ts); absent
 *   where no request is served (the job worker).
 */
export function buildCore(p: { db: Db; config: Config; clock: Clock; secret: ServerSecret; logger: Logger; version: string; findSession?: FindSession }): Core {
  const { findSession, ...shared } = p;
  return {
    ...shared,
    dataDir: p.config.dataDir,
    cursors: new Cursors(p.secret),
    sessions: new SessionStore(
      p.db,
      p.clock,
      { idleSeconds: p.config.sessionIdleSeconds, absoluteSeconds: p.config.sessionAbsoluteSeconds },
      findSession ?? null,
    ),
    hasher: new PasswordHasher(p.config.argon2MemoryKiB, p.config.argon2TimeCost),
    throttle: new LoginThrottle(p.clock, p.config.loginFreeFailures),
    events: new EventHub(p.clock),
  };
}
