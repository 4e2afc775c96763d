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

/**
 * A habit's logs lie on or after its start_date (contract §12: the grid, the stats and the charts
 * then always show the same days). Why a log on `date` cannot be kept for a habit starting on
 * `startDate`, or null.
 */
export function logBeforeStartProblem(date: string, startDate: string): string | null {
  return date < startDate ? `${date} is before the habit's start date (${startDate}); move the start date back to ${date} to log it` : null;
}
