import { unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Core } from "../../core/core";
import { SCHEMA_VERSION } from "../../core/db";

/** Readiness is cached for a second: probes may come often, the checks touch the disk. */
export class HealthService {
  private cached: { at: number; problem: string | null } | null = null;
  private lastLogged: string | null = null;

  private readonly details = new Map<string, () => unknown>();

  constructor(private readonly core: Core) {}

  /**
   * Adds a section to the ready answer's body (`backups`: the last snapshot per destination). Details
   * inform; they never change readiness. One that fails is answered as `{ "error": … }`.
   */
  addDetail(name: string, read: () => unknown): void {
    this.details.set(name, read);
  }

  detailsNow(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [name, read] of this.details) {
      try {
        out[name] = read();
      } catch (e) {
        out[name] = { error: (e as Error).message };
      }
    }
    return out;
  }

  /** null when ready, otherwise why not. */
  readiness(): string | null {
    const now = this.core.clock.now().getTime();
    if (this.cached && now >= this.cached.at && now - this.cached.at < 1000) return this.cached.problem;
    const problem = this.check();
    this.cached = { at: now, problem };
    if (problem !== this.lastLogged) {
      if (problem) this.core.logger.error("not ready", { reason: problem, data_dir: this.core.dataDir });
      else if (this.lastLogged) this.core.logger.info("ready again", { data_dir: this.core.dataDir });
      this.lastLogged = problem;
    }
    return problem;
  }

  private check(): string | null {
    try {
      const v = this.core.db.sqlite.query<{ user_version: number }, []>("PRAGMA user_version").get();
      if (v?.user_version !== SCHEMA_VERSION) return "the database is not migrated to this version";
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
