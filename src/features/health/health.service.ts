import { unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Core } from "../../core/core";

/** Readiness is cached for a second: probes may come often, the checks touch the disk. */
export class HealthService {
  private cached: { at: number; problem: string | null } | null = null;
  private lastLogged: string | null = null;

  constructor(private readonly core: Core) {}

  /** null when ready, otherwise why not. */
  readiness(): string | null {
    const now = Date.now();
    if (this.cached && now - this.cached.at < 1000) return this.cached.problem;
    const problem = this.check();
    this.cached = { at: now, problem };
    if (problem !== this.lastLogged) {
      if (problem) this.core.logger.error("not ready", { reason: problem });
      else if (this.lastLogged) this.core.logger.info("ready again");
      this.lastLogged = problem;
    }
    return problem;
  }

  private check(): string | null {
    try {
      this.core.db.sqlite.query("SELECT 1").get();
    } catch {
      return "the database is not available";
    }
    const probe = join(this.core.dataDir, `.ready-probe-${process.pid}`);
    try {
      writeFileSync(probe, "ok");
      unlinkSync(probe);
    } catch {
      return "the data directory is not writable";
    }
    return null;
  }
}
