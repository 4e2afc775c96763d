/**
 * Rules on a habit's data that hold however it is written: by the API (habits.service.ts) or by a
 * restore (backup). One copy, called by both.
 */

export interface PausePeriod {
  id: string;
  startDate: string;
  endDate: string | null;
}

const OPEN_END = "9999-12-31";

/** Pauses of one habit never overlap: the first of `pauses` (other than `except`) that `start..end` overlaps, or null. */
export function overlappingPause<P extends PausePeriod>(pauses: Iterable<P>, start: string, end: string | null, except: string | null): P | null {
  for (const p of pauses) {
    if (p.id === except) continue;
    if (start <= (p.endDate ?? OPEN_END) && p.startDate <= (end ?? OPEN_END)) return p;
  }
  return null;
}

/** How an overlap is reported (the API's 409 detail; a restore's problem message). */
export function overlapMessage(p: PausePeriod): string {
  return `the pause overlaps pause ${p.id} (${p.startDate} to ${p.endDate ?? "open-ended"})`;
}
