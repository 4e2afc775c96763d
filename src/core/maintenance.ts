import type { Core } from "./core";

/**
 * What a long-running server does every hour: sweep expired and revoked sessions (the table stays
 * small over years), and refresh the query planner's statistics (`PRAGMA optimize`, SQLite's
 * advice for long-lived connections), so a server that runs for months does not plan with the
 * statistics of the day it last stopped, or with none on a new database. Each step fails alone.
 */
export function hourlyMaintenance(core: Core): void {
  try {
    core.sessions.sweep();
  } catch (e) {
    core.logger.warn("session sweep failed", { error: (e as Error).message });
  }
  try {
    core.db.sqlite.run("PRAGMA optimize");
  } catch (e) {
    core.logger.warn("statistics refresh failed", { error: (e as Error).message });
  }
}

export const MAINTENANCE_INTERVAL_MS = 3600_000;
