import type { Core } from "../../core/core";
import type { AuthUser } from "../../core/auth/principal";
import { afterCommit, readTx, writeTx, type Conn } from "../../core/db";
import { notFound, validationFailed, type FieldProblem } from "../../core/errors";
import { newId } from "../../core/ids";
import { findUserById } from "../account/account.repo";
import { loadLunar, type LunarCalendar } from "../countdowns/countdowns.occurrence";
import {
  countRemindersOfTarget,
  deleteReminder,
  deleteRemindersOfTargets,
  deleteUserRemindersOfTargets,
  dueReminders,
  findReminder,
  findReminderById,
  insertReminder,
  remindersOfTarget,
  remindersOfTargets,
  remindersOfUser,
  updateReminder,
  type ReminderChanges,
  type ReminderRow,
} from "./reminders.repo";
import { enabledChannelIds, insertDeliveryOnce } from "./channels.repo";
import { taskIdsOfList } from "../tasks/tasks.repo";
import { NeedsLunar, nextFire, quietUntil, type Armed, type ReminderRule, type UserClock } from "./reminders.schedule";
import { loadTarget, type LoadedTarget, type TargetInfo, type TargetType } from "./reminders.targets";
import type { ReminderCreate, ReminderPatch } from "./reminders.schemas";
import { FIELDS, REMINDERS_PER_TARGET, reminderShapeProblems } from "./reminders.rules";

/** At most this many reminders per target (spec). */
/** A delivery recorded this long after its fire time is marked late. */
export const LATE_AFTER_MS = 60_000;

/** Reads one scheduler batch shares: each user's settings and enabled channels. */
interface FireMemo {
  users: Map<string, ReturnType<RemindersService["userClock"]>>;
  channels: Map<string, string[]>;
  /** A target read once for all its reminders firing at the same instant. */
  targets: Map<string, LoadedTarget | null>;
}

/** What a delivery carries to the receivers, fixed when it is recorded. */
export interface DeliveryPayload {
  reminder_id: string;
  target: TargetInfo;
}

/** The key of a snoozed occurrence: the occurrence it repeats and when. */
const snoozeKey = (occurrence: string, at: string) => `${occurrence}#snooze@${at}`;

/**
 * Reminders on tasks, habits and countdowns: CRUD, arming (next_fire_at) and what the scheduler
 * does when one comes due (record deliveries in the ledger, re-arm). Every change that moves a
 * reminder re-arms it inside the same transaction; `wake` then tells the scheduler to look at
 * the new earliest time.
 */
export class RemindersService {
  /** The lunar calendar, once a lunar countdown's reminder needed it (a hook cannot await). */
  private lunar: LunarCalendar | null = null;
  /** Set by the scheduler: called after a commit that may have moved the earliest fire time. */
  wake: () => void = () => {};

  constructor(private readonly core: Core) {}

  private nowIso(): string {
    return this.core.clock.now().toISOString();
  }

  async ensureLunar(): Promise<void> {
    this.lunar ??= await loadLunar();
  }

  userClock(c: Conn, userId: string): (UserClock & { quiet: { start: string; end: string } | null }) | null {
    const u = findUserById(c, userId);
    if (!u) return null;
    return { tz: u.timezone, reminderTime: u.reminderTime, quiet: u.quietStart !== null && u.quietEnd !== null ? { start: u.quietStart, end: u.quietEnd } : null };
  }

  private ruleOf(r: ReminderRow): ReminderRule {
    return { kind: r.kind, minutesBefore: r.minutes_before, at: r.at, time: r.time, daysBefore: r.days_before };
  }

  /**
   * Computes and stores the reminder's next fire time (after `now`). A pending snooze stays. A
   * lunar countdown's reminder met before the lunar calendar is loaded is marked due now: the
   * scheduler loads the calendar and arms it properly.
   */
  private arm(c: Conn, r: ReminderRow, target: LoadedTarget | null, user: UserClock, now: Date): ReminderChanges {
    let ch: ReminderChanges;
    if (r.snoozed_until !== null && r.snoozed_until > now.toISOString() && target?.state.active) {
      ch = { next_fire_at: r.snoozed_until, next_occurrence: snoozeKey(r.fired_occurrence ?? "", r.snoozed_until) };
    } else {
      let armed: Armed | null = null;
      try {
        armed = target ? nextFire(this.ruleOf(r), target.state, user, now, r.fired_occurrence, this.lunar) : null;
        ch = { next_fire_at: armed?.fireAt.toISOString() ?? null, next_occurrence: armed?.occurrence ?? null, snoozed_until: null };
      } catch (e) {
        if (!(e instanceof NeedsLunar)) throw e;
        ch = { next_fire_at: now.toISOString(), next_occurrence: null };
      }
    }
    updateReminder(c, r.id, ch);
    return ch;
  }

  /** Re-arms every reminder of these targets (hooks from tasks, habits, countdowns). */
  rearmTargets(c: Conn, type: TargetType, ids: string[]): void {
    const now = this.core.clock.now();
    const users = new Map<string, ReturnType<RemindersService["userClock"]>>();
    // A target's several reminders share one read of it (a batch of 500 tasks may hold 5,000).
    const targets = new Map<string, LoadedTarget | null>();
    for (const r of remindersOfTargets(c, type, ids)) {
      if (!users.has(r.user_id)) users.set(r.user_id, this.userClock(c, r.user_id));
      const u = users.get(r.user_id);
      if (!u) continue;
      const key = `${r.user_id}:${r.target_id}`;
      if (!targets.has(key)) targets.set(key, loadTarget(c, r.user_id, r.target_type, r.target_id, u.tz, now));
      const t = targets.get(key)!;
      // A purged habit or countdown, or a task its reminder's user no longer sees (moved out of a shared list): its reminders go with it.
      if (t === null) deleteReminder(c, r.id);
      else this.arm(c, r, t, u, now);
    }
    queueMicrotask(() => this.wake());
  }

  /** The targets are gone for good (task purge, habit/countdown purge): their reminders go too. */
  dropTargets(c: Conn, type: TargetType, ids: string[]): void {
    deleteRemindersOfTargets(c, type, ids);
  }

  /**
   * The user left a shared list or was removed from it (sharing's memberGone hook): reminders are
   * personal, and theirs on the list's tasks go (the other members' stay).
   */
  dropUserOnList(c: Conn, userId: string, listId: string): void {
    deleteUserRemindersOfTargets(c, userId, "task", taskIdsOfList(c, listId));
  }

  /** The user's zone or reminder time changed: every reminder of theirs is computed again. */
  rearmUser(c: Conn, userId: string): void {
    const now = this.core.clock.now();
    const u = this.userClock(c, userId);
    if (!u) return;
    const targets = new Map<string, LoadedTarget | null>();
    for (const r of remindersOfUser(c, userId)) {
      const key = `${r.target_type}:${r.target_id}`;
      if (!targets.has(key)) targets.set(key, loadTarget(c, userId, r.target_type, r.target_id, u.tz, now));
      this.arm(c, r, targets.get(key)!, u, now);
    }
    queueMicrotask(() => this.wake());
  }

  /** The scheduler looks at the new earliest time once the change is committed (inside a caller's transaction: after its commit). */
  private wakeAfterCommit(): void {
    afterCommit(this.core.db, () => this.wake(), (e) => this.core.logger.error("reminder scheduler wake failed", { error: String(e) }));
  }

  // ---- CRUD ---------------------------------------------------------------------------------------

  /** The target, if it is the user's and visible (a task in the trash or an archived list is not). */
  private target(c: Conn, user: AuthUser, type: TargetType, id: string): LoadedTarget {
    const t = loadTarget(c, user.id, type, id, user.timezone, this.core.clock.now());
    // A task in the trash or an archived list answers like a missing one (the tasks' visibility rule).
    if (!t || !t.visible) throw notFound(type);
    return t;
  }

  list(user: AuthUser, type: TargetType, targetId: string): ReminderRow[] {
    return readTx(this.core.db, (c) => {
      this.target(c, user, type, targetId);
      return remindersOfTarget(c, user.id, type, targetId);
    });
  }

  /** A new reminder; a countdown's waits for the lunar calendar to load first (its fire time is a lunar date's). */
  async create(user: AuthUser, type: TargetType, targetId: string, input: ReminderCreate): Promise<ReminderRow> {
    if (type === "countdown") await this.ensureLunar();
    return this.insertArmed(user, type, targetId, input);
  }

  /**
   * create() without an await, for a use case that must stay in one synchronous transaction (a
   * CalDAV PUT's alarms): a task's or habit's reminder never needs the lunar calendar.
   */
  createNow(user: AuthUser, type: Exclude<TargetType, "countdown">, targetId: string, input: ReminderCreate): ReminderRow {
    return this.insertArmed(user, type, targetId, input);
  }

  private insertArmed(user: AuthUser, type: TargetType, targetId: string, input: ReminderCreate): ReminderRow {
    const problems = reminderShapeProblems(type, input.kind, input);
    if (problems.length) throw validationFailed(problems, `a ${input.kind} reminder on a ${type} takes ${FIELDS[input.kind].join(" and ")}`);
    const row = writeTx(this.core.db, (tx) => {
      const t = this.target(tx, user, type, targetId);
      if (countRemindersOfTarget(tx, user.id, type, targetId) >= REMINDERS_PER_TARGET) {
        throw validationFailed([{ path: "kind", message: `at most ${REMINDERS_PER_TARGET} reminders per ${type}` }], `the ${type} already has ${REMINDERS_PER_TARGET} reminders`);
      }
      const now = this.nowIso();
      const r: ReminderRow = {
        id: newId(),
        user_id: user.id,
        target_type: type,
        target_id: targetId,
        kind: input.kind,
        minutes_before: input.kind === "before_due" ? input.minutes_before! : null,
        at: input.kind === "at" ? input.at! : null,
        time: input.kind === "daily" || input.kind === "days_before" ? input.time! : null,
        days_before: input.kind === "days_before" ? input.days_before! : null,
        next_fire_at: null,
        next_occurrence: null,
        fired_occurrence: null,
        snoozed_until: null,
        created_at: now,
        updated_at: now,
      };
      insertReminder(tx, r);
      const u = this.userClock(tx, user.id)!;
      return { ...r, ...this.arm(tx, r, t, u, this.core.clock.now()) };
    });
    this.wakeAfterCommit();
    return row;
  }

  async update(user: AuthUser, id: string, patch: ReminderPatch): Promise<ReminderRow> {
    const pre = findReminder(this.core.db, user.id, id);
    if (!pre) throw notFound("reminder");
    if (pre.target_type === "countdown") await this.ensureLunar();
    const row = writeTx(this.core.db, (tx) => {
      const cur = findReminder(tx, user.id, id);
      if (!cur) throw notFound("reminder");
      const problems: FieldProblem[] = [];
      for (const k of Object.keys(patch) as (keyof ReminderPatch)[]) {
        if (!FIELDS[cur.kind].includes(k)) problems.push({ path: k, message: `a ${cur.kind} reminder has no ${k}` });
      }
      if (problems.length) throw validationFailed(problems, `a ${cur.kind} reminder takes ${FIELDS[cur.kind].join(" and ")}`);
      const t = this.target(tx, user, cur.target_type, cur.target_id);
      const ch: ReminderChanges = { updated_at: this.nowIso() };
      if (patch.minutes_before !== undefined) ch.minutes_before = patch.minutes_before;
      if (patch.at !== undefined) ch.at = patch.at;
      if (patch.time !== undefined) ch.time = patch.time;
      if (patch.days_before !== undefined) ch.days_before = patch.days_before;
      updateReminder(tx, id, ch);
      const next = { ...cur, ...ch } as ReminderRow;
      return { ...next, ...this.arm(tx, next, t, this.userClock(tx, user.id)!, this.core.clock.now()) };
    });
    this.wakeAfterCommit();
    return row;
  }

  remove(user: AuthUser, id: string): void {
    writeTx(this.core.db, (tx) => {
      if (!findReminder(tx, user.id, id)) throw notFound("reminder");
      deleteReminder(tx, id);
    });
  }

  /** Snooze from a notification: fires again `minutes` from now for the occurrence last fired. */
  snooze(c: Conn, reminderId: string, minutes: number): boolean {
    const r = findReminderById(c, reminderId);
    if (!r || r.fired_occurrence === null) return false;
    const until = new Date(this.core.clock.now().getTime() + minutes * 60_000).toISOString();
    updateReminder(c, r.id, { snoozed_until: until, next_fire_at: until, next_occurrence: snoozeKey(r.fired_occurrence, until) });
    queueMicrotask(() => this.wake());
    return true;
  }

  // ---- the scheduler's side -----------------------------------------------------------------------

  /** Whether a due reminder needs the lunar calendar loaded first. */
  dueNeedsLunar(now: Date, limit: number): boolean {
    return this.lunar === null && dueReminders(this.core.db, now.toISOString(), limit).some((r) => r.target_type === "countdown");
  }

  /**
   * One short transaction: up to `limit` reminders due by `now`, and no more than `budgetMs` of
   * work (the event loop is blocked meanwhile), are checked against their target's current state
   * (a task completed or moved since it was armed is re-armed instead), their deliveries recorded
   * in the ledger (one per enabled channel; INSERT ... ON CONFLICT DO NOTHING keeps it at one per
   * (reminder, occurrence, channel) however often this runs), and re-armed for their next
   * occurrence. Answers how many it handled and whether more may be due.
   */
  fireDue(now: Date, graceMs: number, limit: number, budgetMs = Infinity): { handled: number; more: boolean } {
    return writeTx(this.core.db, (tx) => {
      const t0 = performance.now();
      const due = dueReminders(tx, now.toISOString(), limit);
      // Reads shared by the batch's reminders (many fire for one user, several for one target).
      const memo: FireMemo = { users: new Map(), channels: new Map(), targets: new Map() };
      let handled = 0;
      for (const r of due) {
        this.fireOne(tx, r, now, graceMs, memo);
        handled++;
        if (performance.now() - t0 > budgetMs) break;
      }
      return { handled, more: handled < due.length || due.length === limit };
    });
  }

  private fireOne(c: Conn, r: ReminderRow, now: Date, graceMs: number, memo: FireMemo): void {
    if (!memo.users.has(r.user_id)) memo.users.set(r.user_id, this.userClock(c, r.user_id));
    const u = memo.users.get(r.user_id)!;
    const fireAt = new Date(r.next_fire_at!);
    const key = `${r.user_id}:${r.target_type}:${r.target_id}:${r.next_fire_at}`;
    if (u && !memo.targets.has(key)) memo.targets.set(key, loadTarget(c, r.user_id, r.target_type, r.target_id, u.tz, fireAt));
    const target = u ? memo.targets.get(key)! : null;
    if (!u || !target) {
      // The target is gone (a purged habit or countdown): so is its reminder.
      deleteReminder(c, r.id);
      return;
    }
    const snoozed = r.next_occurrence !== null && r.next_occurrence.includes("#snooze@");
    let valid: boolean;
    if (r.next_occurrence === null) valid = false;
    else if (snoozed) valid = target.state.active;
    else {
      const check = nextFire(this.ruleOf(r), target.state, u, fireAt, r.fired_occurrence, this.lunar);
      valid = check !== null && check.occurrence === r.next_occurrence && check.fireAt.getTime() === fireAt.getTime();
    }
    if (!valid) {
      this.arm(c, { ...r, snoozed_until: null }, target, u, now);
      return;
    }
    const late = now.getTime() - fireAt.getTime();
    const missed = late > graceMs;
    const waitUntil = missed ? null : quietUntil(new Date(Math.max(now.getTime(), fireAt.getTime())), u.quiet, u.tz);
    const payload: DeliveryPayload = { reminder_id: r.id, target: target.info };
    const createdAt = now.toISOString();
    if (!memo.channels.has(r.user_id)) memo.channels.set(r.user_id, enabledChannelIds(c, r.user_id));
    for (const channelId of memo.channels.get(r.user_id)!) {
      insertDeliveryOnce(c, {
        id: newId(),
        user_id: r.user_id,
        reminder_id: r.id,
        channel_id: channelId,
        occurrence: r.next_occurrence!,
        fire_at: r.next_fire_at!,
        status: missed ? "missed" : "pending",
        // Waiting out quiet hours is not lateness (spec).
        late: !missed && waitUntil === null && late > LATE_AFTER_MS ? 1 : 0,
        attempts: 0,
        next_attempt_at: missed ? null : (waitUntil ?? now).toISOString(),
        last_error: missed ? "the server was down past the grace period" : null,
        delivered_at: null,
        payload: JSON.stringify(payload),
        created_at: createdAt,
      });
    }
    // Never armed again for this occurrence; the next one after it (occurrences missed past the
    // grace while the server was down are skipped, not each recorded).
    const base = snoozed ? r.fired_occurrence : r.next_occurrence;
    const after = new Date(Math.max(fireAt.getTime() + 1, now.getTime() - graceMs));
    this.arm(c, { ...r, fired_occurrence: base, snoozed_until: null }, target, u, after);
    updateReminder(c, r.id, { fired_occurrence: base });
  }
}
