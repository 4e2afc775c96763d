/**
 * Which snapshots to keep: the newest of each of the last N days, M ISO weeks and K months that
 * have a snapshot (the days, weeks and months of the configured zone), as restic's and borg's
 * keep-daily/weekly/monthly do; and always the newest snapshot, whatever the numbers say. Only
 * verified snapshots are ever listed here (a name without `.part`), so pruning never counts a
 * half-written one as a keeper, and runs only after the new snapshot was verified.
 */

export interface Policy {
  daily: number;
  weekly: number;
  monthly: number;
}

export interface Dated {
  name: string;
  at: Date;
}

function keysOf(at: Date, zone: string): { day: string; week: string; month: string } {
  const d = Temporal.Instant.fromEpochMilliseconds(at.getTime()).toZonedDateTimeISO(zone).toPlainDate();
  return { day: d.toString(), week: `${d.yearOfWeek}-W${d.weekOfYear}`, month: d.toString().slice(0, 7) };
}

/** The names to keep of `all` (any order). */
export function toKeep(all: Dated[], policy: Policy, zone: string): Set<string> {
  const sorted = [...all].sort((a, b) => b.at.getTime() - a.at.getTime() || (a.name < b.name ? 1 : -1));
  const keep = new Set<string>();
  if (sorted.length) keep.add(sorted[0]!.name);
  for (const kind of ["day", "week", "month"] as const) {
    const limit = kind === "day" ? policy.daily : kind === "week" ? policy.weekly : policy.monthly;
    let last: string | null = null;
    let kept = 0;
    for (const s of sorted) {
      if (kept >= limit) break;
      const k = keysOf(s.at, zone)[kind];
      if (k === last) continue;
      last = k;
      keep.add(s.name);
      kept++;
    }
  }
  return keep;
}

/** The names of `all` to delete (the complement of toKeep). */
export function toPrune(all: Dated[], policy: Policy, zone: string): string[] {
  const keep = toKeep(all, policy, zone);
  return all.filter((s) => !keep.has(s.name)).map((s) => s.name);
}
