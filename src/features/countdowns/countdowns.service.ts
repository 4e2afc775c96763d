import type { Core } from "../../core/core";
import type { AuthUser } from "../../core/auth/principal";
import { writeTx, type Conn } from "../../core/db";
import { ChangeHooks } from "../../core/change-hooks";
import { dayNumber } from "../../core/days";
import { notArchived, notFound, stateConflict, validationFailed } from "../../core/errors";
import { newId } from "../../core/ids";
import { today as todayOf } from "../../core/time";
import { deleteCountdown, findCountdown, insertCountdown, listCountdowns, unpinAll, updateCountdown, type CountdownRow } from "./countdowns.repo";
import type { CountdownCreate, CountdownPatch } from "./countdowns.schemas";
import { loadLunar, needsLunar, occurrence, type LunarCalendar, type Occurrence, countdownRule } from "./countdowns.occurrence";
import { lunarFieldsOf } from "./countdowns.rules";

/** A countdown with its next occurrence as of the user's today. */
export interface CountdownView {
  row: CountdownRow;
  occ: Occurrence;
}

/** Countdowns, anniversaries and birthdays; one pin per user; archive, restore, purge. */
export class CountdownsService {
  /** Told (inside the transaction) when a countdown's date, rule or state changes: reminders re-arm. */
  readonly changeHooks = new ChangeHooks();

  constructor(private readonly core: Core) {}

  private now(): string {
    return this.core.clock.now().toISOString();
  }

  /** The lunar calendar when one of `rows` needs it (loaded on first need), else null. */
  private async lunarFor(rows: readonly { calendar: "gregorian" | "lunar" }[]): Promise<LunarCalendar | null> {
    return rows.some(needsLunar) ? loadLunar() : null;
  }

  private view(row: CountdownRow, today: number, lunar: LunarCalendar | null): CountdownView {
    return {
      row,
      occ: occurrence(countdownRule(row), today, lunar),
    };
  }

  /** The view of one row (the lunar calendar loaded first when the row needs it). */
  private async viewOf(row: CountdownRow, user: AuthUser): Promise<CountdownView> {
    return this.view(row, this.todayOf(user), await this.lunarFor([row]));
  }

  private todayOf(user: AuthUser): number {
    return dayNumber(todayOf(this.core.clock, user.timezone));
  }

  private countdown(tx: Conn, user: AuthUser, id: string): CountdownRow {
    const r = findCountdown(tx, user.id, id);
    if (!r) throw notFound("countdown");
    return r;
  }

  private active(tx: Conn, user: AuthUser, id: string): CountdownRow {
    const r = this.countdown(tx, user, id);
    if (r.archivedAt !== null) throw notFound("countdown");
    return r;
  }

  /**
   * The lunar month/day of a date for the lunar calendar; 422 outside the supported lunar years.
   * `lunar` is loaded by the caller whenever `calendar` may be lunar (a transaction cannot await).
   */
  private lunarFields(date: string, calendar: "gregorian" | "lunar", lunar: LunarCalendar | null): Pick<CountdownRow, "lunarMonth" | "lunarDay" | "lunarLeap"> {
    const r = lunarFieldsOf(date, calendar, lunar);
    if (!r.ok) throw validationFailed([{ path: "date", message: r.message }]);
    return { lunarMonth: r.lunar?.month ?? null, lunarDay: r.lunar?.day ?? null, lunarLeap: r.lunar ? r.lunar.leap : null };
  }

  /**
   * Pinned first; then by next_date ascending; past one-offs last, most recent first. Ties by
   * name, then id, so the order is stable.
   */
  async list(user: AuthUser, archived: boolean): Promise<CountdownView[]> {
    const today = this.todayOf(user);
    const rows = listCountdowns(this.core.db, user.id, archived);
    const lunar = await this.lunarFor(rows);
    const views = rows.map((r) => this.view(r, today, lunar));
    return views.sort((a, b) => {
      if (a.row.pinned !== b.row.pinned) return a.row.pinned ? -1 : 1;
      const an = a.occ.next_date;
      const bn = b.occ.next_date;
      if (an !== null && bn !== null && an !== bn) return an < bn ? -1 : 1;
      if (an === null && bn !== null) return 1;
      if (an !== null && bn === null) return -1;
      if (an === null && bn === null && a.row.date !== b.row.date) return a.row.date > b.row.date ? -1 : 1;
      if (a.row.name !== b.row.name) return a.row.name < b.row.name ? -1 : 1;
      return a.row.id < b.row.id ? -1 : 1;
    });
  }

  async get(user: AuthUser, id: string): Promise<CountdownView> {
    return this.viewOf(this.countdown(this.core.db, user, id), user);
  }

  async create(user: AuthUser, input: CountdownCreate): Promise<CountdownView> {
    const lunar = this.lunarFields(input.date, input.calendar, await this.lunarFor([input]));
    const row = writeTx(this.core.db, (tx) => {
      const now = this.now();
      const row: CountdownRow = {
        id: newId(),
        userId: user.id,
        name: input.name,
        date: input.date,
        type: input.type,
        repeat: input.repeat,
        icon: input.icon ?? null,
        calendar: input.calendar,
        ...lunar,
        pinned: false,
        archivedAt: null,
        createdAt: now,
        updatedAt: now,
      };
      insertCountdown(tx, row);
      return row;
    });
    return this.viewOf(row, user);
  }

  async update(user: AuthUser, id: string, patch: CountdownPatch): Promise<CountdownView> {
    // A new date or calendar recomputes the lunar fields inside the transaction, which cannot
    // await: load the calendar first unless the countdown is being made Gregorian.
    const lunar = (patch.date !== undefined && patch.calendar !== "gregorian") || patch.calendar === "lunar" ? await loadLunar() : null;
    const row = writeTx(this.core.db, (tx) => {
      const current = this.active(tx, user, id);
      const set: Partial<CountdownRow> = { updatedAt: this.now() };
      if (patch.name !== undefined) set.name = patch.name;
      if (patch.type !== undefined) set.type = patch.type;
      if (patch.repeat !== undefined) set.repeat = patch.repeat;
      if (patch.icon !== undefined) set.icon = patch.icon;
      if (patch.date !== undefined) set.date = patch.date;
      if (patch.calendar !== undefined) set.calendar = patch.calendar;
      if (patch.date !== undefined || patch.calendar !== undefined) {
        Object.assign(set, this.lunarFields(patch.date ?? current.date, patch.calendar ?? current.calendar, lunar));
      }
      updateCountdown(tx, user.id, id, set);
      this.changeHooks.changed(tx, user.id, [id]);
      return this.countdown(tx, user, id);
    });
    return this.viewOf(row, user);
  }

  /** Pins this countdown and unpins any other (one pin per user). */
  async pin(user: AuthUser, id: string): Promise<CountdownView> {
    const row = writeTx(this.core.db, (tx) => {
      const r = this.active(tx, user, id);
      if (r.pinned) return r;
      const now = this.now();
      unpinAll(tx, user.id, now);
      updateCountdown(tx, user.id, id, { pinned: true, updatedAt: now });
      return this.countdown(tx, user, id);
    });
    return this.viewOf(row, user);
  }

  async unpin(user: AuthUser, id: string): Promise<CountdownView> {
    const row = writeTx(this.core.db, (tx) => {
      const r = this.countdown(tx, user, id);
      if (!r.pinned) return r;
      updateCountdown(tx, user.id, id, { pinned: false, updatedAt: this.now() });
      return this.countdown(tx, user, id);
    });
    return this.viewOf(row, user);
  }

  /** Archiving unpins; archiving an archived countdown changes nothing. */
  archive(user: AuthUser, id: string): void {
    writeTx(this.core.db, (tx) => {
      const r = this.countdown(tx, user, id);
      if (r.archivedAt !== null) return;
      const now = this.now();
      updateCountdown(tx, user.id, id, { archivedAt: now, pinned: false, updatedAt: now });
      this.changeHooks.changed(tx, user.id, [id]);
    });
  }

  async restore(user: AuthUser, id: string): Promise<CountdownView> {
    const row = writeTx(this.core.db, (tx) => {
      const r = this.countdown(tx, user, id);
      // Restore applies to an archived countdown only (contract §12).
      if (r.archivedAt === null) throw stateConflict("the countdown is not archived");
      updateCountdown(tx, user.id, id, { archivedAt: null, updatedAt: this.now() });
      this.changeHooks.changed(tx, user.id, [id]);
      return this.countdown(tx, user, id);
    });
    return this.viewOf(row, user);
  }

  purge(user: AuthUser, id: string): void {
    writeTx(this.core.db, (tx) => {
      const r = this.countdown(tx, user, id);
      if (r.archivedAt === null) throw notArchived("countdown");
      deleteCountdown(tx, user.id, id);
      this.changeHooks.changed(tx, user.id, [id]);
    });
  }
}
