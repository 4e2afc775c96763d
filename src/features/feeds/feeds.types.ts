/**
 * What one feed shows, worked out by feeds.content.ts from the features' data and written as
 * iCalendar by src/transfer/feeds/feeds.ics.ts (a format adapter: it holds no rule of its own).
 * Dates are YYYY-MM-DD; instants are RFC 3339 UTC strings.
 */
export interface FeedTask {
  id: string;
  title: string;
  description: string;
  /** A date (an all-day item) or an instant (a timed one). */
  dueAt: string;
  priority: number;
  completed: boolean;
  completedAt: string | null;
  createdAt: string;
  updatedAt: string;
  tags: string[];
  /** The list's name (shared lists: so a subscriber sees where a task comes from). */
  listName: string;
  /** A later occurrence of a repeating task (computed, not stored): `dueAt` is that occurrence's. */
  occurrence: boolean;
}

export interface FeedCountdownDay {
  countdownId: string;
  name: string;
  type: "countdown" | "anniversary" | "birthday";
  /** The Gregorian date this occurrence falls on (lunar ones already converted). */
  date: string;
  /** Years at this occurrence (anniversaries, birthdays), as GET /countdowns counts them. */
  count: number | null;
  calendar: "gregorian" | "lunar";
  updatedAt: string;
}

export interface FeedHabitReminder {
  habitId: string;
  reminderId: string;
  name: string;
  /** The local day the reminder fires for, and the instant it fires (the user's zone applied). */
  date: string;
  at: string;
  updatedAt: string;
}

export interface FeedContent {
  /** X-WR-CALNAME: what the subscriber's calendar app names the calendar. */
  name: string;
  /** X-WR-TIMEZONE: the user's zone (a display hint; every time in the feed is UTC or a date). */
  timezone: string;
  taskFormat: "events" | "todos";
  tasks: FeedTask[];
  countdowns: FeedCountdownDay[];
  habits: FeedHabitReminder[];
}

/** Writes a feed's content as an iCalendar document (injected by app.ts: features do not import src/transfer). */
export type FeedRenderer = (content: FeedContent) => Promise<string>;
/** The renderer, loaded on first use (ical.js is not held by a server whose feeds nobody fetches). */
export type LoadFeedRenderer = () => Promise<FeedRenderer>;
