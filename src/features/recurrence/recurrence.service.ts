import type { Core } from "../../core/core";
import { readTx, writeTx, type Conn } from "../../core/db";
import type { AuthUser } from "../../core/auth/principal";
import { invalidReference, notFound, stateConflict, validationFailed } from "../../core/errors";
import { UndoTokens } from "../../core/undo-token";
import { runAfterCommit, TaskPurgeHooks } from "../tasks/tasks.purge-hooks";
import { isSnapshots, restoreSnapshots, snapshotTasks, type TaskSnapshot } from "../tasks/tasks.undo";
import { newId } from "../../core/ids";
import {
  completeTaskItself,
  deleteTasks,
  findSubtasks,
  findTasksWithList,
  subtaskIds,
  findTagsOfTasks,
  findTaskWithList,
  findVisibleTask,
  insertTask,
  moveTaskToOccurrence,
  replaceTags,
  resetCompletedSubtasks,
  setTaskDueAt,
  type TaskWithList,
} from "../tasks/tasks.repo";
import { presentTasks } from "../tasks/tasks.present";
import type { Task } from "../tasks/tasks.schemas";
import type { RepeatingTasks, TaskRepeatHooks } from "../tasks/tasks.repeat-hooks";
import { TaskChangeHooks } from "../tasks/tasks.change-hooks";
import { recurrenceOnSubtaskProblem } from "../tasks/tasks.rules";
import { requireEditor } from "../lists/lists.access";
import { isDateOnly, nextAfterCompletion, parseRRule, seriesFor, type Series, SeriesError, type Unit } from "./recurrence.engine";
import { checkSchedule } from "./recurrence.rules";
import {
  deleteException,
  deleteExceptionsExcept,
  deleteRecurrence,
  findRecurrenceOfTask,
  findRecurrenceById,
  reassignRecurrences,
  insertException,
  insertRecurrence,
  listExceptions,
  recurringTaskIds,
  touchRecurrence,
  updateRecurrence,
  type RecurrenceRecord,
} from "./recurrence.repo";
import type { RecurrencePatch, RecurrenceCreate } from "./recurrence.schemas";

/** The kind an undo token of POST /recurrences/{id}/complete is bound to. */
const COMPLETION_UNDO = "recurrences.complete";
/** What a completion's undo token carries: the task and reset subtasks before, the copy made, the recurrence if it ended. */
interface CompletionUndo {
  tasks: TaskSnapshot[];
  copy: string | null;
  rec: [RecurrenceRecord, string[]] | null;
}

/** A recurrence with its skipped dates, as the presenter takes it. */
export interface RecurrenceView {
  rec: RecurrenceRecord;
  exceptions: string[];
}

export interface Completion {
  completed: Task;
  next: Task | null;
}

/**
 * Recurring tasks: RRULE schedules and repeat-after-completion, completing an occurrence,
 * skipping occurrences. The rules; no HTTP. Builds on the tasks repository and presenter: each use
 * case opens one transaction and hands its Conn to every repo call, the tasks feature's included.
 *
 * Decisions the contract leaves open:
 * - The series anchor (DTSTART) is the task's due_at when the recurrence is created, stored as
 *   `dtstart`; COUNT and INTERVAL phase count from it. Changing the rule (or switching to kind
 *   rrule) re-anchors it at the task's current due_at.
 * - When COUNT/UNTIL is exhausted, completing answers `completed` = the task itself (now
 *   completed; no copy is made, it would duplicate it) and `next` = null, and the recurrence is
 *   DELETED (its exceptions with it): GET /tasks/{id}/recurrence answers `null` afterwards.
 * - after_completion counts in the user's zone at the moment of completion (date and time of
 *   day); the recurrence's `timezone` is only used by an rrule (kept for a switch of kind).
 * - Exceptions are local dates in the recurrence's zone. Only kind rrule has occurrences to
 *   skip. The date must be an occurrence of the series on or after the current one; skipping
 *   the current one moves the task on (subtasks reset, as on completion); skipping the last one
 *   left is refused (complete it or delete the recurrence). Adding an existing exception is a
 *   no-op. Removing one moves the task back to that occurrence when the task had been moved
 *   past it only by skips.
 */
export class RecurrenceService implements RepeatingTasks {
  /**
   * Registers with the tasks feature, so that completing a recurring task through PATCH
   * /tasks/{id} or a batch runs the same completion as POST /recurrences/{id}/complete.
   */
  constructor(
    private readonly core: Core,
    repeatHooks: TaskRepeatHooks,
    private readonly purgeHooks: TaskPurgeHooks = new TaskPurgeHooks(),
    /** Told when a recurrence moves a task's due_at (complete, exceptions), so its reminders re-arm. */
    private readonly changeHooks: TaskChangeHooks = new TaskChangeHooks(),
  ) {
    repeatHooks.register(this);
    this.undoTokens = new UndoTokens(core.secret);
  }
  private readonly undoTokens: UndoTokens;

  /** The root connection, where each use case opens its transaction. */
  private get db() {
    return this.core.db;
  }

  private view(c: Conn, rec: RecurrenceRecord): RecurrenceView {
    return { rec, exceptions: listExceptions(c, rec.id) };
  }

  /**
   * The user's recurrence whose task is visible (the tasks feature's rule), with that task; a
   * recurrence of a task in the trash or in an archived list is answered like a missing one.
   */
  private visible(c: Conn, userId: string, id: string, write = false): { rec: RecurrenceRecord; task: TaskWithList } {
    // Reached through its task: the task's visibility (and the user's role on its list) decides.
    const rec = findRecurrenceById(c, id);
    const task = rec && findVisibleTask(c, userId, rec.task_id);
    if (!rec || !task) throw notFound("recurrence");
    if (write) requireEditor(task.role);
    return { rec, task };
  }

  /** The series of a kind-rrule recurrence (its stored rule is valid: it was checked on write). */
  private seriesOf(rec: RecurrenceRecord): Series {
    const parsed = parseRRule(rec.rrule ?? "", isDateOnly(rec.dtstart ?? ""));
    if (!parsed.ok || rec.dtstart === null) throw stateConflict("the stored schedule is not usable; set a new rrule");
    return seriesFor(parsed.rule, rec.dtstart, rec.timezone);
  }

  /** A checked series for a rule about to be stored, or 422 on `rrule`. */
  private newSeries(rrule: string, dtstart: string, timezone: string): Series {
    const checked = checkSchedule(rrule, dtstart, timezone);
    if (!checked.ok) throw validationFailed([{ path: "rrule", message: checked.message }], `invalid rrule: ${checked.message}`);
    return checked.series;
  }

  private expand<T>(f: () => T): T {
    try {
      return f();
    } catch (e) {
      if (e instanceof SeriesError) throw stateConflict(`the schedule cannot be expanded: ${e.message}`);
      throw e;
    }
  }

  // ---- reads -------------------------------------------------------------------------------

  get(user: AuthUser, id: string): RecurrenceView {
    return readTx(this.db, (c) => this.view(c, this.visible(c, user.id, id).rec));
  }

  /**
   * GET /tasks/{task_id}/recurrence: null when the task exists and does not recur (a normal answer,
   * not an error: every task dialog asks); 404 only when the task is not visible.
   */
  getOfTask(user: AuthUser, taskId: string): RecurrenceView | null {
    return readTx(this.db, (c) => {
      if (!findVisibleTask(c, user.id, taskId)) throw notFound("task");
      const rec = findRecurrenceOfTask(c, taskId);
      return rec ? this.view(c, rec) : null;
    });
  }

  // ---- writes ------------------------------------------------------------------------------

  create(user: AuthUser, input: RecurrenceCreate): RecurrenceView {
    return writeTx(this.db, (tx) => {
      const task = findVisibleTask(tx, user.id, input.task_id);
      if (!task) throw invalidReference([{ path: "task_id", message: `no task ${input.task_id}` }], `task ${input.task_id} does not exist`);
      requireEditor(task.role);
      if (recurrenceOnSubtaskProblem(task.parent_id) !== null) throw validationFailed([{ path: "task_id", message: "a subtask cannot recur" }], "only top-level tasks recur");
      if (input.kind === "rrule" && task.due_at === null) {
        throw validationFailed([{ path: "task_id", message: "the task has no due_at" }], "an rrule recurrence needs a task with a due_at (its first occurrence)");
      }
      if (findRecurrenceOfTask(tx, task.id)) throw stateConflict("the task already has a recurrence; change it with PATCH");
      const timezone = input.timezone ?? user.timezone;
      let rrule: string | null = null;
      if (input.kind === "rrule") rrule = this.newSeries(input.rrule!, task.due_at!, timezone).parsed.text;
      const now = this.core.clock.now().toISOString();
      const rec: RecurrenceRecord = {
        id: newId(),
        user_id: task.user_id,
        task_id: task.id,
        kind: input.kind,
        rrule,
        interval: input.kind === "after_completion" ? input.interval! : null,
        unit: input.kind === "after_completion" ? (input.unit as Unit) : null,
        timezone,
        dtstart: input.kind === "rrule" ? task.due_at : null,
        created_at: now,
        updated_at: now,
      };
      insertRecurrence(tx, rec);
      return { rec, exceptions: [] };
    });
  }

  update(user: AuthUser, id: string, p: RecurrencePatch): RecurrenceView {
    return writeTx(this.db, (tx) => {
      const { rec: cur, task } = this.visible(tx, user.id, id, true);
      const kind = p.kind ?? cur.kind;
      const timezone = p.timezone ?? cur.timezone;
      const now = this.core.clock.now().toISOString();
      const next: Omit<RecurrenceRecord, "id" | "user_id" | "task_id" | "created_at"> = { ...cur, kind, timezone, updated_at: now };
      let keep: string[] = [];
      const stray =
        kind === "after_completion"
          ? p.rrule !== undefined && p.rrule !== null
            ? ["rrule"]
            : []
          : (["interval", "unit"] as const).filter((f) => p[f] !== undefined && p[f] !== null);
      if (stray.length) throw validationFailed(stray.map((path) => ({ path, message: `not a field of kind ${kind}` })));
      if (kind === "after_completion") {
        const interval = p.interval ?? (cur.kind === "after_completion" ? cur.interval : null);
        const unit = p.unit ?? (cur.kind === "after_completion" ? cur.unit : null);
        const missing = [...(interval === null ? ["interval"] : []), ...(unit === null ? ["unit"] : [])];
        if (missing.length) throw validationFailed(missing.map((path) => ({ path, message: "required for kind after_completion" })));
        Object.assign(next, { rrule: null, dtstart: null, interval, unit: unit as Unit });
      } else {
        const rrule = p.rrule ?? (cur.kind === "rrule" ? cur.rrule : null);
        if (rrule === null) throw validationFailed([{ path: "rrule", message: "required for kind rrule" }]);
        // A new rule (or a switch to rrule) starts at the task's current due_at.
        const reanchor = cur.kind !== "rrule" || (p.rrule !== undefined && p.rrule !== null);
        const dtstart = reanchor ? task.due_at : cur.dtstart;
        if (dtstart === null) {
          throw validationFailed([{ path: "rrule", message: "the task has no due_at" }], "an rrule recurrence needs a task with a due_at (its first occurrence)");
        }
        const series = this.newSeries(rrule, dtstart, timezone);
        Object.assign(next, { rrule: series.parsed.text, dtstart, interval: null, unit: null });
        // Exceptions stay only where the new schedule still has an occurrence to skip.
        keep = this.expand(() => listExceptions(tx, cur.id).filter((d) => series.occurrencesOn(d).length > 0));
      }
      updateRecurrence(tx, cur.id, next);
      deleteExceptionsExcept(tx, cur.id, keep);
      return this.view(tx, { ...cur, ...next });
    });
  }

  remove(user: AuthUser, id: string): void {
    writeTx(this.db, (tx) => {
      deleteRecurrence(tx, this.visible(tx, user.id, id, true).rec.id);
    });
  }

  /** POST /recurrences/{id}/complete: the current occurrence, in a transaction of its own. */
  /** `withUndo`: also answer an undo token (?undo=true), else the contract's `{ completed, next }` alone. */
  complete(user: AuthUser, id: string, withUndo = false): Completion & { undo_token?: string } {
    const at = this.core.clock.now();
    return writeTx(this.db, (tx) => {
      const { rec, task } = this.visible(tx, user.id, id, true);
      // The state before, for the undo: the task and the subtasks the completion resets (each grows by one).
      const resetIds = findSubtasks(tx, [task.id], false)
        .filter((s) => s.completed === 1)
        .map((s) => s.id);
      const before: CompletionUndo = { tasks: snapshotTasks(tx, user.id, [task.id, ...resetIds], false), copy: null, rec: [rec, listExceptions(tx, rec.id)] };
      const done = this.completeCurrent(tx, user, rec, task, at, 1);
      if (done.next !== null) {
        before.copy = done.completedId;
        before.rec = null; // the series goes on: the recurrence is untouched
      }
      this.changeHooks.changed(tx, user.id, [task.id]);
      const answer = { completed: this.presentTask(tx, user.id, done.completedId), next: done.next ? this.presentTask(tx, user.id, task.id) : null };
      return withUndo ? { ...answer, undo_token: this.undoTokens.encode(COMPLETION_UNDO, user.id, at, before) } : answer;
    });
  }

  /**
   * POST /recurrences/completions/undo: the completion taken back in one transaction. The task
   * returns to the occurrence it was on (its due_at, completed state and subtasks as they were), the
   * completed copy is removed for good (it never existed), and when that completion had ended the
   * series, the recurrence comes back as it was (same id, rule, DTSTART, zone and skipped dates).
   */
  undoCompletion(user: AuthUser, token: string): { restored: number } {
    const after = writeTx(this.db, (tx) => {
      const now = this.core.clock.now();
      const u = this.undoTokens.decode(COMPLETION_UNDO, user.id, token, now) as CompletionUndo;
      if (!u || typeof u !== "object" || !isSnapshots(u.tasks) || (u.copy !== null && typeof u.copy !== "string")) {
        throw validationFailed([{ path: "undo_token", message: "not an undo token for this" }], "the undo token is not valid");
      }
      let callbacks: (() => void)[] = [];
      if (u.copy !== null) {
        const ids = [u.copy, ...subtaskIds(tx, [u.copy])];
        const rows = findTasksWithList(tx, user.id, ids);
        // The copy as the completion made it (version 1, not in the trash), else someone has worked on it since.
        if (rows.length !== ids.length || rows.some((r) => r.version !== 1 || r.deleted_at !== null)) {
          throw stateConflict("the completed copy was changed since; nothing was undone");
        }
        // A shared list's copy is its owner's row (lists.access); only who may edit the list undoes it.
        const owner = rows[0]!.user_id;
        requireEditor(rows[0]!.role);
        callbacks = this.purgeHooks.beforePurge(tx, owner, ids);
        deleteTasks(tx, owner, ids);
      }
      restoreSnapshots(tx, user.id, u.tasks, now.toISOString());
      if (u.rec !== null) {
        const [rec, exceptions] = u.rec;
        if (findRecurrenceOfTask(tx, rec.task_id)) throw stateConflict("the task has a recurrence again; nothing was undone");
        insertRecurrence(tx, rec);
        for (const d of exceptions) insertException(tx, rec.id, d, rec.updated_at);
      }
      // The task is back on its occurrence: its reminders re-arm for it.
      this.changeHooks.changed(tx, user.id, u.tasks.map((t) => t[0]));
      return { restored: u.tasks.length, callbacks };
    });
    runAfterCommit(this.core.db, after.callbacks, (e) => this.core.logger.error("after-purge hook failed", { error: String(e) }));
    return { restored: after.restored };
  }

  // ---- RepeatingTasks (the tasks feature's hook) -------------------------------------------------

  repeating(c: Conn, userId: string, taskIds: string[]): Set<string> {
    return new Set(recurringTaskIds(c, userId, taskIds));
  }

  reassign(c: Conn, taskIds: string[], ownerId: string): void {
    reassignRecurrences(c, taskIds, ownerId);
  }

  /** PATCH /tasks/{id} and POST /tasks/batch with `completed: true`, inside their transaction (`c`). */
  completeOccurrence(c: Conn, user: AuthUser, taskId: string, at: Date): void {
    const rec = findRecurrenceOfTask(c, taskId);
    const task = findTaskWithList(c, user.id, taskId);
    if (!rec || !task || rec.user_id !== task.user_id) throw new Error(`completeOccurrence: task ${taskId} does not recur`);
    this.completeCurrent(c, user, rec, task, at, 0);
  }

  /**
   * The one completion of a recurring task, in the caller's transaction: records a completed
   * copy (new id, no recurrence, subtasks and tags copied as they were) and moves the task to the
   * next occurrence with its subtasks reset. With COUNT/UNTIL exhausted the task itself is
   * completed and the recurrence ends. `grow`: how much this adds to the task's version (0 when
   * the caller's write in the same change already added one).
   */
  private completeCurrent(c: Conn, user: AuthUser, rec: RecurrenceRecord, task: TaskWithList, at: Date, grow: 0 | 1): { completedId: string; next: string | null } {
    const now = at.toISOString();
    if (recurrenceOnSubtaskProblem(task.parent_id) !== null) throw stateConflict("the task has become a subtask; a subtask cannot recur");
    let next: string | null;
    if (rec.kind === "rrule") {
      if (task.due_at === null) throw stateConflict("the task has no due_at; set one (or delete the recurrence) before completing");
      const series = this.seriesOf(rec);
      const exceptions = new Set(listExceptions(c, rec.id));
      next = this.expand(() => series.nextAfter(task.due_at!, exceptions));
    } else {
      // The user's zone now, not the one stored with the recurrence (contract §12): "today"
      // is where the user is when they complete it.
      next = nextAfterCompletion(task.due_at, at, user.timezone, rec.interval!, rec.unit!);
    }

    if (next === null) {
      completeTaskItself(c, task.id, now, grow);
      deleteRecurrence(c, rec.id);
      return { completedId: task.id, next: null };
    }

    const subtasks = findSubtasks(c, [task.id], false);
    const tags = new Map<string, string[]>();
    for (const t of findTagsOfTasks(c, [task.id, ...subtasks.map((s) => s.id)])) {
      const arr = tags.get(t.task_id);
      if (arr) arr.push(t.id);
      else tags.set(t.task_id, [t.id]);
    }
    const copyId = insertTask(c, {
      userId: task.user_id,
      createdBy: user.id,
      listId: task.list_id,
      parentId: null,
      title: task.title,
      description: task.description,
      completed: true,
      completedAt: now,
      dueAt: task.due_at,
      priority: task.priority,
      now,
    });
    // Every member's own tags go to the copy as they were (tags are personal: each sees theirs).
    replaceTags(c, [copyId], tags.get(task.id) ?? [], user.id);
    for (const s of subtasks) {
      const subCopy = insertTask(c, {
        userId: task.user_id,
        createdBy: s.created_by,
        listId: task.list_id,
        parentId: copyId,
        title: s.title,
        description: s.description,
        completed: s.completed === 1,
        completedAt: s.completed_at,
        dueAt: s.due_at,
        priority: s.priority,
        now,
      });
      replaceTags(c, [subCopy], tags.get(s.id) ?? [], user.id);
    }
    moveTaskToOccurrence(c, task.id, next, now, grow);
    resetCompletedSubtasks(c, task.id, now);
    return { completedId: copyId, next };
  }

  /** Skips one occurrence; skipping the current one moves the task on to the next. */
  addException(user: AuthUser, id: string, date: string): RecurrenceView {
    return writeTx(this.db, (tx) => {
      const { rec, task } = this.visible(tx, user.id, id, true);
      if (rec.kind !== "rrule") throw stateConflict("only an rrule recurrence has scheduled occurrences to skip");
      if (task.due_at === null) throw stateConflict("the task has no due_at; set one before skipping occurrences");
      const exceptions = new Set(listExceptions(tx, rec.id));
      if (exceptions.has(date)) return this.view(tx, rec);
      const series = this.seriesOf(rec);
      if (this.expand(() => series.occurrencesOn(date)).length === 0) {
        throw validationFailed([{ path: "date", message: "the series has no occurrence on this date" }], `no occurrence on ${date}`);
      }
      const currentDate = series.dateKey(task.due_at);
      if (date < currentDate) {
        throw validationFailed([{ path: "date", message: `before the current occurrence (${currentDate})` }], "past occurrences cannot be skipped");
      }
      const now = this.core.clock.now().toISOString();
      insertException(tx, rec.id, date, now);
      if (date === currentDate) {
        exceptions.add(date);
        const next = this.expand(() => series.nextAfter(task.due_at!, exceptions));
        if (next === null) throw stateConflict("this is the last occurrence of the series; complete it or delete the recurrence instead");
        setTaskDueAt(tx, task.id, next, now);
        resetCompletedSubtasks(tx, task.id, now);
        this.changeHooks.changed(tx, user.id, [task.id]);
      }
      touchRecurrence(tx, rec.id, now);
      return this.view(tx, { ...rec, updated_at: now });
    });
  }

  /**
   * Undoes a skip. When the task had been moved past that date only by skips (every occurrence
   * between it and the task's due_at is skipped), the task moves back to it.
   */
  removeException(user: AuthUser, id: string, date: string): void {
    writeTx(this.db, (tx) => {
      const { rec, task } = this.visible(tx, user.id, id, true);
      if (!deleteException(tx, rec.id, date)) throw notFound("exception");
      const now = this.core.clock.now().toISOString();
      if (rec.kind === "rrule" && task.due_at !== null) {
        const series = this.seriesOf(rec);
        const exceptions = new Set(listExceptions(tx, rec.id));
        const back = this.expand(() => {
          const on = series.occurrencesOn(date);
          if (on.length === 0 || series.compare(on[0]!, task.due_at!) >= 0) return null;
          return series.nextAfter(on[on.length - 1]!, exceptions) === task.due_at ? on[0]! : null;
        });
        if (back !== null) {
          setTaskDueAt(tx, task.id, back, now);
          this.changeHooks.changed(tx, user.id, [task.id]);
        }
      }
      touchRecurrence(tx, rec.id, now);
    });
  }

  // ---- helpers -----------------------------------------------------------------------------

  private presentTask(c: Conn, userId: string, taskId: string): Task {
    return presentTasks(c, userId, [findTaskWithList(c, userId, taskId)!])[0]!;
  }
}
