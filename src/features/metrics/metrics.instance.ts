import { statSync } from "node:fs";
import type { MetricsRegistry } from "../../core/metrics";

/**
 * What the whole instance reports: the database and its write-ahead log on disk, the event loop's
 * lag, the process's memory, and the version. Features add their own (attachment bytes, login
 * failures, and at merge backup age/result and reminders) where their data lives.
 */

/** How often the event loop's lag is sampled: a timer's lateness, twice a second. */
export const LAG_SAMPLE_MS = 500;

/** Upper bounds in seconds: a bun:sqlite query blocks the loop (core/db.ts), a big one for seconds. */
const LAG_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

function fileBytes(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0; // the WAL is absent after a clean close, until the first write
  }
}

export interface InstanceMetrics {
  stop(): void;
}

export function instanceMetrics(metrics: MetricsRegistry, p: { databaseFile: string; version: string }): InstanceMetrics {
  if (!metrics.enabled) return { stop() {} };
  metrics.gauge({ name: "app_info", help: "Always 1; the version the server runs is its label", labelNames: ["version"], collect: () => [{ labels: { version: p.version }, value: 1 }] });
  metrics.gauge({ name: "app_sqlite_database_bytes", help: "Size of the SQLite database file", collect: () => fileBytes(p.databaseFile) });
  metrics.gauge({
    name: "app_sqlite_wal_bytes",
    help: "Size of the SQLite write-ahead log (checkpoints copy it into the database; it shrinks when truncated)",
    collect: () => fileBytes(`${p.databaseFile}-wal`),
  });
  metrics.gauge({ name: "process_resident_memory_bytes", help: "Resident memory size in bytes", collect: () => process.memoryUsage.rss() });
  const startedAt = Math.round((Date.now() - performance.now()) / 1000);
  metrics.gauge({ name: "process_start_time_seconds", help: "Start time of the process since unix epoch in seconds", collect: () => startedAt });

  // Event-loop lag: how late a timer fires. While bun:sqlite runs a query (or anything else holds
  // the loop) no request is served; a histogram shows how often, a gauge the worst since the last scrape.
  const lag = metrics.histogram({ name: "app_event_loop_lag_seconds", help: `Lateness of a timer the server sets every ${LAG_SAMPLE_MS} ms`, buckets: LAG_BUCKETS });
  let worst = 0;
  metrics.gauge({
    name: "app_event_loop_lag_max_seconds",
    help: "The largest event-loop lag sampled since the previous scrape",
    collect: () => {
      const w = worst;
      worst = 0;
      return w;
    },
  });
  let timer: ReturnType<typeof setTimeout> | null = null;
  const sample = () => {
    const due = performance.now() + LAG_SAMPLE_MS;
    timer = setTimeout(() => {
      const late = Math.max(0, performance.now() - due) / 1000;
      lag.observe({}, late);
      if (late > worst) worst = late;
      sample();
    }, LAG_SAMPLE_MS);
    timer.unref();
  };
  sample();
  return {
    stop() {
      if (timer) clearTimeout(timer);
      timer = null;
    },
  };
}
