import { Cron } from "croner";

/**
 * When scheduled snapshots run: a cron expression read by croner (a maintained library; no parser
 * of ours) in the configured zone. Only the computation lives here, as a pure function of "after",
 * so the schedule is tested with a controlled clock, DST days included: a time that does not exist
 * on a spring-forward day runs at the first instant after the gap, an hour that occurs twice on a
 * fall-back day runs once.
 */

/** Why `expr`/`zone` cannot be used, or null when they can. */
export function scheduleProblem(expr: string, zone: string): string | null {
  if (!isTimeZone(zone)) return `unknown time zone ${JSON.stringify(zone)}`;
  try {
    const c = new Cron(expr, { timezone: zone, paused: true });
    if (!c.nextRun(new Date())) return "the schedule never runs";
    return null;
  } catch (e) {
    return `not a cron expression: ${(e as Error).message}`;
  }
}

export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en", { timeZone: zone });
    return zone !== "";
  } catch {
    return false;
  }
}

/** The zone the server runs in (TZ, else the system's), for a schedule that names none. */
export function serverZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
}

/** The first run strictly after `after`, or null if the expression never runs again. */
export function nextRunAfter(expr: string, zone: string, after: Date): Date | null {
  return new Cron(expr, { timezone: zone, paused: true }).nextRun(after);
}
