import type { Core } from "../../core/core";
import type { AuthUser } from "../../core/auth/principal";
import { readTx, writeTx, type Conn } from "../../core/db";
import { ChangeHooks } from "../../core/change-hooks";
import { dateOfDay, dayNumber, mondayOf } from "../../core/days";
import { notArchived, notFound, stateConflict, validationFailed } from "../../core/errors";
import { newId } from "../../core/ids";
import { today as todayOf } from "../../core/time";
import {
  deleteHabit,
  deleteLog,
  earliestLogDate,
  deletePause,
  findHabit,
  findLog,
  findPause,
  insertHabit,
  insertPause,
  listHabits,
  listLogs,
  listPauses,
  logsOfActiveHabits,
  logValuesUpTo,
  nextPosition,
  pausesOfActiveHabits,
  pauseSpans,
  setPositions,
  updateHabit,
  updatePause,
  upsertLog,
  type HabitLogRow,
  type HabitPauseRow,
  type HabitRow,
} from "./habits.repo";
import type { HabitCreate, HabitPatch, HabitWeek, LogBody, PauseCreate, PausePatch } from "./habits.schemas";
import { habitStats, weekDays, type Frequency, type HabitFacts, type HabitStats, type PauseSpan } from "./habits.schedule";
import { presentHabit } from "./habits.present";
import { logBeforeStartProblem, overlapMessage, overlappingPause } from "./habits.rules";

const spanOf = (p: { start_date: string; end_date: string | null }): PauseSpan => ({
  start: dayNumber(p.start_date),
  end: p.end_date === null ? null : dayNumber(p.end_date),
});

/** Habits, their logs and pauses, the weekly grid and statistics. Archived habits are read-only. */
export class HabitsService {
  /** Told (inside the transaction) when a habit's schedule, state, logs or pauses change: reminders re-arm. */
  readonly changeHooks = new ChangeHooks();

  constructor(private readonly core: Core) {}

  private today(user: AuthUser): string {
    return todayOf(this.core.clock, user.timezone);
  }

  private now(): string {
    return this.core.clock.now().toISOString();
  }

  /** The user's habit in any state, else 404. */
  private habit(tx: Conn, user: AuthUser, id: string): HabitRow {
    const h = findHabit(tx, user.id, id);
    if (!h) throw notFound("habit");
    return h;
  }

  /** The user's active habit, else 404 (an archived habit is read-only). */
  private activeHabit(tx: Conn, user: AuthUser, id: string): HabitRow {
    const h = this.habit(tx, user, id);
    if (h.archivedAt !== null) throw notFound("habit");
    return h;
  }

  list(user: AuthUser, archived: boolean): HabitRow[] {
    return listHabits(this.core.db, user.id, archived);
  }

  get(user: AuthUser, id: string): HabitRow {
    return this.habit(this.core.db, user, id);
  }

  create(user: AuthUser, input: HabitCreate): HabitRow {
    const startDate = input.start_date ?? this.today(user);
    return writeTx(this.core.db, (tx) => {
      const now = this.now();
      const row: HabitRow = {
        id: newId(),
        userId: user.id,
        name: input.name,
        icon: input.icon ?? null,
        color: input.color ?? null,
        frequency: JSON.stringify(input.frequency),
        goal: input.goal,
        unit: input.unit ?? null,
        startDate,
        position: nextPosition(tx, user.id),
        archivedAt: null,
        createdAt: now,
        updatedAt: now,
      };
      insertHabit(tx, row);
      return row;
    });
  }

  update(user: AuthUser, id: string, patch: HabitPatch): HabitRow {
    return writeTx(this.core.db, (tx) => {
      this.activeHabit(tx, user, id);
      const set: Partial<HabitRow> = { updatedAt: this.now() };
      if (patch.name !== undefined) set.name = patch.name;
      if (patch.icon !== undefined) set.icon = patch.icon;
      if (patch.color !== undefined) set.color = patch.color;
      if (patch.frequency !== undefined) set.frequency = JSON.stringify(patch.frequency);
      if (patch.goal !== undefined) set.goal = patch.goal;
      if (patch.unit !== undefined) set.unit = patch.unit;
      if (patch.start_date !== undefined) {
        // No log lies before start_date (contract §12): moving it past logged days is refused,
        // so the grid, the stats and the charts always show the same days.
        const earliest = earliestLogDate(tx, id);
        if (earliest !== null && logBeforeStartProblem(earliest, patch.start_date) !== null) {
          throw validationFailed(
            [{ path: "start_date", message: `the habit has logs from ${earliest} on; choose ${earliest} or earlier, or delete the earlier logs first` }],
            `start_date would leave logs before it (the earliest is ${earliest})`,
          );
        }
        set.startDate = patch.start_date;
      }
      updateHabit(tx, user.id, id, set);
      this.changeHooks.changed(tx, user.id, [id]);
      return this.habit(tx, user, id);
    });
  }

  /** `ids` must be exactly the active habits (no duplicates); they get positions 0..n-1. */
  reorder(user: AuthUser, ids: string[]): HabitRow[] {
    return writeTx(this.core.db, (tx) => {
      const active = listHabits(tx, user.id, false);
      const want = new Set(active.map((h) => h.id));
      const given = new Set(ids);
      if (given.size !== ids.length) throw validationFailed([{ path: "ids", message: "ids must not repeat" }]);
      if (given.size !== want.size || ids.some((i) => !want.has(i))) {
        throw validationFailed([{ path: "ids", message: "ids must be exactly the ids of the active habits" }]);
      }
      setPositions(tx, user.id, ids, this.now());
      return listHabits(tx, user.id, false);
    });
  }

  /** Archiving an archived habit changes nothing. */
  archive(user: AuthUser, id: string): void {
    writeTx(this.core.db, (tx) => {
      const h = this.habit(tx, user, id);
      if (h.archivedAt !== null) return;
      const now = this.now();
      updateHabit(tx, user.id, id, { archivedAt: now, updatedAt: now });
      this.changeHooks.changed(tx, user.id, [id]);
    });
  }

  /** A restored habit goes to the end of the list; an active habit is 409 (contract §12). */
  restore(user: AuthUser, id: string): HabitRow {
    return writeTx(this.core.db, (tx) => {
      const h = this.habit(tx, user, id);
      if (h.archivedAt === null) throw stateConflict("the habit is not archived");
      updateHabit(tx, user.id, id, { archivedAt: null, position: nextPosition(tx, user.id), updatedAt: this.now() });
      this.changeHooks.changed(tx, user.id, [id]);
      return this.habit(tx, user, id);
    });
  }

  purge(user: AuthUser, id: string): void {
    writeTx(this.core.db, (tx) => {
      const h = this.habit(tx, user, id);
      if (h.archivedAt === null) throw notArchived("habit");
      deleteHabit(tx, user.id, id);
      this.changeHooks.changed(tx, user.id, [id]);
    });
  }

  // ---- logs

  listLogs(user: AuthUser, id: string, from: string | undefined, to: string | undefined): HabitLogRow[] {
    return readTx(this.core.db, (tx) => {
      this.habit(tx, user, id);
      return listLogs(tx, id, from, to);
    });
  }

  getLog(user: AuthUser, id: string, date: string): HabitLogRow {
    return readTx(this.core.db, (tx) => {
      this.habit(tx, user, id);
      const log = findLog(tx, id, date);
      if (!log) throw notFound("log");
      return log;
    });
  }

  /**
   * One log per habit and day; a day after the user's today is refused, and so is a day before
   * the habit's start_date (contract §12), named on `start_date` so a client can offer to move
   * the start date back to that day.
   */
  putLog(user: AuthUser, id: string, date: string, body: LogBody): HabitLogRow {
    const today = this.today(user);
    return writeTx(this.core.db, (tx) => {
      const h = this.activeHabit(tx, user, id);
      if (date > today) throw validationFailed([{ path: "date", message: `must not be after today (${today})` }], "a log cannot be in the future");
      const beforeStart = logBeforeStartProblem(date, h.startDate);
      if (beforeStart !== null) throw validationFailed([{ path: "start_date", message: beforeStart }], "a log cannot be before the habit's start_date");
      const now = this.now();
      upsertLog(tx, { habitId: id, userId: user.id, date, value: body.value, note: body.note ?? null, createdAt: now, updatedAt: now });
      this.changeHooks.changed(tx, user.id, [id]);
      return { habitId: id, userId: user.id, date, value: body.value, note: body.note ?? null, createdAt: now, updatedAt: now };
    });
  }

  deleteLog(user: AuthUser, id: string, date: string): void {
    writeTx(this.core.db, (tx) => {
      this.activeHabit(tx, user, id);
      if (!deleteLog(tx, id, date)) throw notFound("log");
      this.changeHooks.changed(tx, user.id, [id]);
    });
  }

  // ---- pauses

  listPauses(user: AuthUser, id: string): HabitPauseRow[] {
    return readTx(this.core.db, (tx) => {
      this.habit(tx, user, id);
      return listPauses(tx, id);
    });
  }

  getPause(user: AuthUser, id: string, pauseId: string): HabitPauseRow {
    return readTx(this.core.db, (tx) => {
      this.habit(tx, user, id);
      const p = findPause(tx, id, pauseId);
      if (!p) throw notFound("pause");
      return p;
    });
  }

  /** Pauses of one habit never overlap (409 state_conflict naming the other pause). */
  private assertNoOverlap(tx: Conn, habitId: string, start: string, end: string | null, except: string | null): void {
    const other = overlappingPause(listPauses(tx, habitId), start, end, except);
    if (other) throw stateConflict(overlapMessage(other));
  }

  createPause(user: AuthUser, id: string, input: PauseCreate): HabitPauseRow {
    return writeTx(this.core.db, (tx) => {
      this.activeHabit(tx, user, id);
      this.assertNoOverlap(tx, id, input.start_date, input.end_date, null);
      const now = this.now();
      const row: HabitPauseRow = { id: newId(), habitId: id, userId: user.id, startDate: input.start_date, endDate: input.end_date, createdAt: now, updatedAt: now };
      insertPause(tx, row);
      this.changeHooks.changed(tx, user.id, [id]);
      return row;
    });
  }

  updatePause(user: AuthUser, id: string, pauseId: string, patch: PausePatch): HabitPauseRow {
    return writeTx(this.core.db, (tx) => {
      this.activeHabit(tx, user, id);
      const p = findPause(tx, id, pauseId);
      if (!p) throw notFound("pause");
      const start = patch.start_date ?? p.startDate;
      const end = patch.end_date === undefined ? p.endDate : patch.end_date;
      if (end !== null && end < start) throw validationFailed([{ path: "end_date", message: "end_date must not be before start_date" }]);
      this.assertNoOverlap(tx, id, start, end, pauseId);
      updatePause(tx, pauseId, { startDate: start, endDate: end, updatedAt: this.now() });
      this.changeHooks.changed(tx, user.id, [id]);
      return findPause(tx, id, pauseId)!;
    });
  }

  deletePause(user: AuthUser, id: string, pauseId: string): void {
    writeTx(this.core.db, (tx) => {
      this.activeHabit(tx, user, id);
      if (!findPause(tx, id, pauseId)) throw notFound("pause");
      deletePause(tx, pauseId);
      this.changeHooks.changed(tx, user.id, [id]);
    });
  }

  // ---- grid and statistics

  /** Seven days from `start` (default: Monday of the user's current week) for every active habit. */
  week(user: AuthUser, start: string | undefined): HabitWeek {
    const todayStr = this.today(user);
    const today = dayNumber(todayStr);
    const first = start ? dayNumber(start) : mondayOf(today);
    // times_per_week days need their whole ISO weeks to tell "missed" from "not scheduled".
    const from = dateOfDay(mondayOf(first));
    const to = dateOfDay(mondayOf(first + 6) + 6);
    const { habits, logs, pauses } = readTx(this.core.db, (tx) => ({
      habits: listHabits(tx, user.id, false),
      logs: logsOfActiveHabits(tx, user.id, from, to),
      pauses: pausesOfActiveHabits(tx, user.id),
    }));
    const values = new Map<string, Map<number, number>>();
    for (const l of logs) {
      let m = values.get(l.habit_id);
      if (!m) values.set(l.habit_id, (m = new Map()));
      m.set(dayNumber(l.date), l.value);
    }
    const spans = new Map<string, PauseSpan[]>();
    for (const p of pauses) {
      let a = spans.get(p.habit_id);
      if (!a) spans.set(p.habit_id, (a = []));
      a.push(spanOf(p));
    }
    return {
      start: dateOfDay(first),
      items: habits.map((h) => ({
        habit: presentHabit(h),
        days: weekDays(this.facts(h, values.get(h.id) ?? new Map(), spans.get(h.id) ?? []), first, today).map((d) => ({
          date: dateOfDay(d.day),
          status: d.status,
          value: d.value,
        })),
      })),
    };
  }

  stats(user: AuthUser, id: string): HabitStats {
    const todayStr = this.today(user);
    const { h, logs, pauses } = readTx(this.core.db, (tx) => ({
      h: this.habit(tx, user, id),
      logs: logValuesUpTo(tx, id, todayStr),
      pauses: pauseSpans(tx, id),
    }));
    const values = new Map<number, number>();
    for (const l of logs) values.set(dayNumber(l.date), l.value);
    return habitStats(this.facts(h, values, pauses.map(spanOf)), dayNumber(todayStr));
  }

  private facts(h: HabitRow, values: Map<number, number>, pauses: PauseSpan[]): HabitFacts {
    return { frequency: JSON.parse(h.frequency) as Frequency, goal: h.goal, startDay: dayNumber(h.startDate), pauses, values };
  }
}
