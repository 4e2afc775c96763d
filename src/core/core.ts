import type { Config } from "../config";
import { Cursors } from "./cursor";
import { afterCommit, type Db } from "./db";
import { PasswordHasher } from "./auth/password";
import { SessionStore, type FindSession } from "./auth/session-store";
import { LoginThrottle } from "./auth/throttle";
import type { Logger } from "./log";
import { Metrics } from "./metrics";
import type { ServerSecret } from "./secret";
import type { Clock } from "./time";
import { DEFAULT_EVENT_LIMITS, EventHub } from "./events";

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
  /** Prometheus metrics: features register their own here (core/metrics.ts); no-ops when off. */
  metrics: Metrics;
  version: string;
  dataDir: string;
  /** Server-Sent Events: features publish after commit (core/events.ts). */
  events: EventHub;
}

/**
 * @param p.findSession the session lookup's statement, from the account feature (app.ts); absent
 *   where no request is served (the job worker).
 * @param p.metrics the app's metrics (app.ts); absent, metrics are off (the job worker, the CLI).
 */
export function buildCore(p: { db: Db; config: Config; clock: Clock; secret: ServerSecret; logger: Logger; version: string; findSession?: FindSession; metrics?: Metrics }): Core {
  const { findSession, metrics, ...shared } = p;
  return {
    ...shared,
    metrics: metrics ?? Metrics.off(),
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
    // An event published inside a transaction is sent after its outermost commit, never on a rollback.
    events: new EventHub(p.clock, DEFAULT_EVENT_LIMITS, (publish) => afterCommit(p.db, publish, (e) => p.logger.error("event publish failed", { error: String(e) }))),
  };
}
