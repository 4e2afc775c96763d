/**
 * Calendar-date arithmetic on day numbers (days since 1970-01-01), so streaks, weekly grids and
 * countdowns never go through a time zone: a YYYY-MM-DD string is a date, not an instant.
 */
const DAY_MS = 86_400_000;

/** Day number of a YYYY-MM-DD date (validate it first with isCalendarDate). */
export function dayNumber(date: string): number {
  const y = Number(date.slice(0, 4));
  const m = Number(date.slice(5, 7));
  const d = Number(date.slice(8, 10));
  return Math.round(Date.UTC(y, m - 1, d) / DAY_MS);
}

/** YYYY-MM-DD of a day number (years 0001..9999). */
export function dateOfDay(day: number): string {
  const dt = new Date(day * DAY_MS);
  const y = dt.getUTCFullYear();
  const m = dt.getUTCMonth() + 1;
  const d = dt.getUTCDate();
  return `${String(y).padStart(4, "0")}-${m < 10 ? "0" : ""}${m}-${d < 10 ? "0" : ""}${d}`;
}

/** ISO weekday, 1 = Monday … 7 = Sunday (1970-01-01 was a Thursday). */
export function isoWeekday(day: number): number {
  return ((((day + 3) % 7) + 7) % 7) + 1;
}

/** The Monday of the ISO week containing `day`. */
export function mondayOf(day: number): number {
  return day - isoWeekday(day) + 1;
}

export function addDays(date: string, n: number): string {
  return dateOfDay(dayNumber(date) + n);
}
