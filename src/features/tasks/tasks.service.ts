import type { Core } from "../../core/core";
import { readSnapshot, writeTx, type Conn } from "../../core/db";
import type { AuthUser } from "../../core/auth/principal";
import type { RequestMeta } from "../../core/http";
import type { Page } from "../../core/cursor";
import {
  invalidCursor,
  invalidParent,
  invalidReference,
  notArchived,
  notFound,
  stateConflict,
  validationFailed,
  versionConflict,
  type FieldProblem,
} from "../../core/errors";
import { recordAudit } from "../audit/audit.repo";
import { findInbox, findList } from "../lists/lists.repo";
import type { ListPurgeHooks } from "../lists/lists.purge-hooks";
import {
  batchUpdate,
  bumpTasksTagged,
  countFtsMatches,
  countSubtasks,
  countTagLinks,
  deleteTasks,
  findSubtasks,
  findTaskWithList,
  findTasksWithList,
  findVisibleTask,
  insertTask,
  isSoleUser,
  isVisibleTask,
  listNames,
  ownedTagIds,
  ownsList,
  pageLiveTasks,
  pageTrash,
  replaceTags,
  setDeleted,
  subtaskIds,
  tagNames,
  taskIdsOfList,
  updateTaskIfVersion,
  updateTasks,
  type TaskChanges,
  type TaskFilter,
  type TaskRow,
  type TaskWithList,
} from "./tasks.repo";
import { presentTasks } from "./tasks.present";
import type { TagDeleteHooks } from "../tags/tags.delete-hooks";
import { runAfterCommit, type TaskPurgeHooks } from "./tasks.purge-hooks";
import { TaskRepeatHooks } from "./tasks.repeat-hooks";
import { TaskChangeHooks } from "./tasks.change-hooks";
import type { Task, TaskBatch, TaskCreate, TaskPatch, TaskQuery } from "./tasks.schemas";
import { ftsPhrase, normalizeSearch, searchTerms, taskSearchText, usesTrigramIndex } from "./tasks.search";
import { localMidnightUtc } from "../../core/time";
import { recurrenceOnSubtaskProblem } from "./tasks.rules";

/**
 * Below this many index matches (or tag links) a page starts from them, fetching and sorting at
 * most this many rows (~3 µs each); above it, walking the user's tasks newest first finds a page
 * of matches sooner. Measured on 100k tasks: 1,271 matches walk in 1.8 ms and drive in 3.9 ms;
 * 20 matches drive in 0.25 ms and walk in 6.6 ms.
 */
const DRIVE_CAP = 500;

/** Tasks, their tree, the trash: the rules. No HTTP here. */
export class TasksService {
  static readonly PAGE_ENDPOINT = "tasks";
  static readonly TRASH_ENDPOINT = "trash";

  /**
   * @param purgeHooks where features building on tasks register what a purge does to them.
   * @param listPurgeHooks purging a list purges its tasks: registered here (lists know nothing of tasks).
   * @param repeatHooks where recurrence registers at start-up (it builds on tasks): completing a
   *   recurring task moves it to its next occurrence, and it cannot become a subtask.
   */
  constructor(
    private readonly core: Core,
    private readonly purgeHooks: TaskPurgeHooks,
    listPurgeHooks: ListPurgeHooks,
    tagDeleteHooks: TagDeleteHooks,
    readonly repeatHooks: TaskRepeatHooks = new TaskRepeatHooks(),
    /** Where reminders register: told of every write that may move or end a task's reminders. */
    readonly changeHooks: TaskChangeHooks = new TaskChangeHooks(),
  ) {
    // A deleted tag leaves its tasks (task_tags cascade): their versions grow, as for any change of their tags.
    tagDeleteHooks.register((c, tagId, now) => bumpTasksTagged(c, tagId, now));
    // The list's tasks (subtasks included) go with it by FK cascade; the hooks of what builds on
    // tasks run first, and the audit entry counts them.
    listPurgeHooks.register((c, userId, listId) => {
      const taskIds = taskIdsOfList(c, listId);
      return { detail: { tasks: taskIds.length }, afterCommit: this.purgeHooks.beforePurge(c, userId, taskIds) };
    });
  }

  /** The root connection: reads outside a transaction, and where each use case opens its own. */
  private get db() {
    return this.core.db;
  }

  private now(): string {
    return this.core.clock.now().toISOString();
  }

  // ---- visibility --------------------------------------------------------------------------

  /**
   * The user's visible task (isVisibleTask), or 404: a missing task, another user's, one in the
   * trash and one of an archived list all answer the same.
   */
  private visibleTask(c: Conn, userId: string, id: string): TaskWithList {
    const t = findVisibleTask(c, userId, id);
    if (!t) throw notFound("task");
    return t;
  }

  /** An active list of the user named in a body, else invalid_reference. */
  private requireActiveList(c: Conn, userId: string, listId: string, path = "list_id"): string {
    const l = findList(c, userId, listId);
    if (!l || l.deletedAt !== null) throw invalidReference([{ path, message: `no active list ${listId}` }], `list ${listId} does not exist or is archived`);
    return l.id;
  }

  /** A live top-level task of the user named as parent, else invalid_reference / invalid_parent. */
  private requireParent(c: Conn, userId: string, parentId: string): TaskWithList {
    const p = findVisibleTask(c, userId, parentId);
    if (!p) {
      throw invalidReference([{ path: "parent_id", message: `no task ${parentId}` }], `task ${parentId} does not exist`);
    }
    if (p.parent_id !== null) throw invalidParent("the parent is itself a subtask; nesting is one level deep");
    return p;
  }

  private requireTags(c: Conn, userId: string, tagIds: string[]): string[] {
    const unique = [...new Set(tagIds)];
    const owned = ownedTagIds(c, userId, unique);
    const errors: FieldProblem[] = [];
    tagIds.forEach((id, i) => {
      if (!owned.has(id)) errors.push({ path: `tag_ids.${i}`, message: `no tag ${id}` });
    });
    if (errors.length) throw invalidReference(errors, `unknown tags: ${[...new Set(errors.map((e) => e.message.slice(7)))].join(", ")}`);
    return unique;
  }

  /** The presented task (with tags and subtasks), read in the caller's transaction. */
  private present(c: Conn, userId: string, id: string): Task {
    const row = findTaskWithList(c, userId, id)!;
    return presentTasks(c, [row])[0]!;
  }

  // ---- reads -------------------------------------------------------------------------------

  /** The task as GET /tasks/{id} answers it; 404 when not visible. For other features too. */
  getTaskForUser(userId: string, id: string): Task {
    return readSnapshot(this.db, (c) => presentTasks(c, [this.visibleTask(c, userId, id)])[0]!);
  }

  page(user: AuthUser, q: TaskQuery): Page<Task> {
    let after: [string, string] | null = null;
    if (q.cursor) after = this.decodePair(TasksService.PAGE_ENDPOINT, user.id, q.cursor);
    const f: TaskFilter = {};
    if (q.list_id !== undefined) f.listId = q.list_id;
    if (q.tag_id !== undefined) f.tagId = q.tag_id;
    if (q.completed !== undefined) f.completed = q.completed === "true";
    if (q.due_before !== undefined) f.dueBefore = { date: q.due_before, instantBefore: localMidnightUtc(q.due_before, user.timezone, 1) };
    if (q.due_after !== undefined) f.dueAfter = { date: q.due_after, instantFrom: localMidnightUtc(q.due_after, user.timezone) };
    return readSnapshot(this.db, (c) => {
      // Another user's list or tag matches none of this user's tasks: answered without a walk whose
      // length (their tasks, their links) would tell anything about them.
      if ((f.listId !== undefined && !ownsList(c, user.id, f.listId)) || (f.tagId !== undefined && !ownedTagIds(c, user.id, [f.tagId]).size)) {
        return { items: [], next_cursor: null };
      }
      if (q.q !== undefined) {
        const terms = searchTerms(q.q);
        if (terms.length) {
          const lists = listNames(c, user.id).map((l) => ({ id: l.id, key: normalizeSearch(l.name) }));
          const tags = tagNames(c, user.id).map((t) => ({ id: t.id, key: normalizeSearch(t.name) }));
          f.terms = terms.map((term) => ({
            term,
            fts: usesTrigramIndex(term) ? ftsPhrase(term) : null,
            listIds: lists.filter((l) => l.key.includes(term)).map((l) => l.id),
            tagIds: tags.filter((t) => t.key.includes(term)).map((t) => t.id),
          }));
          // The trigram index holds every user's tasks, and what reading it costs grows with all
          // of its matches: it is used only while it holds this user's tasks alone, so one user's
          // search time never depends on what another wrote (issue 11). Then a term only the index
          // can satisfy (no list or tag name contains it) and that few tasks contain drives the
          // page from its matches; otherwise the walk goes newest first and stops at `limit`.
          f.ownIndex = isSoleUser(c, user.id);
          for (const t of f.ownIndex ? f.terms : []) {
            if (t.fts !== null && t.listIds.length === 0 && t.tagIds.length === 0 && countFtsMatches(c, t.fts, DRIVE_CAP) < DRIVE_CAP) {
              f.driveBy = t.fts;
              break;
            }
          }
        }
      }
      if (!f.driveBy && f.tagId !== undefined && countTagLinks(c, f.tagId, DRIVE_CAP) < DRIVE_CAP) f.driveByTag = true;
      const rows = pageLiveTasks(c, user.id, f, after, q.limit);
      return this.toPage(c, TasksService.PAGE_ENDPOINT, user.id, rows, q.limit, (r) => [r.created_at, r.id], false);
    });
  }

  trashPage(user: AuthUser, limit: number, cursor: string | undefined): Page<Task> {
    const after = cursor ? this.decodePair(TasksService.TRASH_ENDPOINT, user.id, cursor) : null;
    return readSnapshot(this.db, (c) => {
      const rows = pageTrash(c, user.id, after, limit);
      return this.toPage(c, TasksService.TRASH_ENDPOINT, user.id, rows, limit, (r) => [r.deleted_at!, r.id], true);
    });
  }

  private decodePair(endpoint: string, userId: string, cursor: string): [string, string] {
    const key = this.core.cursors.decode(endpoint, userId, cursor);
    if (key.length !== 2 || typeof key[0] !== "string" || typeof key[1] !== "string") throw invalidCursor();
    return [key[0], key[1]];
  }

  private toPage(
    c: Conn,
    endpoint: string,
    userId: string,
    rows: TaskRow[],
    limit: number,
    keyOf: (r: TaskRow) => [string, string],
    withDeletedSubtasks: boolean,
  ): Page<Task> {
    const more = rows.length > limit;
    const pageRows = more ? rows.slice(0, limit) : rows;
    const last = pageRows[pageRows.length - 1];
    return {
      items: presentTasks(c, pageRows, withDeletedSubtasks),
      next_cursor: more && last ? this.core.cursors.encode(endpoint, userId, keyOf(last)) : null,
    };
  }

  // ---- writes ------------------------------------------------------------------------------

  create(user: AuthUser, input: TaskCreate): Task {
    return writeTx(this.db, (tx) => {
      const now = this.now();
      let listId: string;
      const parentId = input.parent_id ?? null;
      if (parentId !== null) {
        const parent = this.requireParent(tx, user.id, parentId);
        if (input.list_id !== undefined && input.list_id !== parent.list_id) {
          this.requireActiveList(tx, user.id, input.list_id);
          throw invalidParent("a subtask must be in its parent's list");
        }
        listId = parent.list_id;
      } else if (input.list_id !== undefined) {
        listId = this.requireActiveList(tx, user.id, input.list_id);
      } else {
        const inbox = findInbox(tx, user.id);
        if (!inbox) throw notFound("inbox");
        listId = inbox.id;
      }
      const tagIds = input.tag_ids ? this.requireTags(tx, user.id, input.tag_ids) : [];
      const completed = input.completed ?? false;
      const id = insertTask(tx, {
        userId: user.id,
        listId,
        parentId,
        title: input.title,
        description: input.description ?? "",
        completed,
        completedAt: completed ? now : null,
        dueAt: input.due_at ?? null,
        priority: input.priority ?? 0,
        now,
      });
      if (tagIds.length) replaceTags(tx, [id], tagIds);
      return this.present(tx, user.id, id);
    });
  }

  /**
   * PATCH: checks, then one compare-and-set UPDATE on the version. `completed: true` on a
   * recurring task that is not completed completes its current occurrence (the recurrence's own
   * completion, through the repeat hook) after the other fields are applied, so they describe
   * the occurrence completed and carry on to the next; the version still grows by one.
   */
  update(user: AuthUser, id: string, p: TaskPatch): Task {
    return writeTx(this.db, (tx) => {
      const at = this.core.clock.now();
      const now = at.toISOString();
      const cur = this.visibleTask(tx, user.id, id);
      if (cur.version !== p.version) throw versionConflict("task", cur.version, p.version);
      const repeats = this.repeatHooks.repeating(tx, user.id, [id]).has(id);
      const ch: TaskChanges = {};
      if (p.title !== undefined) ch.title = p.title;
      if (p.description !== undefined) ch.description = p.description;
      if (ch.title !== undefined || ch.description !== undefined) ch.searchText = taskSearchText(ch.title ?? cur.title, ch.description ?? cur.description);

      // The tree: one level, a subtask in its parent's list, on every path.
      let newList = cur.list_id;
      if (p.list_id !== undefined && p.list_id !== cur.list_id) newList = this.requireActiveList(tx, user.id, p.list_id);
      const newParent = p.parent_id !== undefined ? p.parent_id : cur.parent_id;
      if (p.parent_id !== undefined && p.parent_id !== null && p.parent_id !== cur.parent_id) {
        if (p.parent_id === id) throw invalidParent("a task cannot be its own parent");
        const parent = this.requireParent(tx, user.id, p.parent_id);
        if (countSubtasks(tx, id) > 0) throw invalidParent("the task has subtasks; nesting is one level deep");
        // Only top-level tasks recur (as creating a recurrence on a subtask is refused).
        if (repeats && recurrenceOnSubtaskProblem(p.parent_id) !== null) {
          throw validationFailed(
            [{ path: "parent_id", message: "a recurring task cannot become a subtask; delete its recurrence first" }],
            "a task with a recurrence cannot become a subtask",
          );
        }
        if (p.list_id === undefined) newList = parent.list_id;
        else if (parent.list_id !== newList) throw invalidParent("a subtask must be in its parent's list");
      } else if (newParent !== null && newList !== cur.list_id) {
        // A subtask moving on its own would leave its parent's list.
        const parent = findTaskWithList(tx, user.id, newParent);
        if (!parent || parent.list_id !== newList) throw invalidParent("a subtask must be in its parent's list; move the parent instead");
      }
      if (newList !== cur.list_id) ch.listId = newList;
      if (p.parent_id !== undefined && p.parent_id !== cur.parent_id) ch.parentId = p.parent_id;

      const completesOccurrence = p.completed === true && cur.completed === 0 && repeats;
      if (p.completed !== undefined && !completesOccurrence) {
        ch.completed = p.completed;
        ch.completedAt = p.completed ? (cur.completed === 1 ? cur.completed_at : now) : null;
      }
      if (p.due_at !== undefined) ch.dueAt = p.due_at;
      if (p.priority !== undefined) ch.priority = p.priority;
      const tagIds = p.tag_ids !== undefined ? this.requireTags(tx, user.id, p.tag_ids) : undefined;

      if (!updateTaskIfVersion(tx, user.id, id, p.version, ch, now)) {
        const stored = findTaskWithList(tx, user.id, id);
        throw versionConflict("task", stored?.version ?? 0, p.version);
      }
      // A top-level task's subtasks move with it.
      if (ch.listId !== undefined && newParent === null) updateTasks(tx, user.id, subtaskIds(tx, [id]), { listId: ch.listId }, now);
      if (tagIds !== undefined) replaceTags(tx, [id], tagIds);
      if (completesOccurrence) this.repeatHooks.completeOccurrence(tx, user, id, at);
      if (p.due_at !== undefined || p.completed !== undefined) this.changeHooks.changed(tx, user.id, [id]);
      return this.present(tx, user.id, id);
    });
  }

  /** Moves the task (and its live subtasks) to the trash. */
  softDelete(user: AuthUser, id: string): void {
    writeTx(this.db, (tx) => {
      const cur = this.visibleTask(tx, user.id, id);
      const subs = cur.parent_id === null ? findSubtasks(tx, [id], false).map((s) => s.id) : [];
      setDeleted(tx, user.id, [id, ...subs], this.now(), this.now());
      this.changeHooks.changed(tx, user.id, [id, ...subs]);
    });
  }

  /** Brings the task and its deleted direct subtasks back. */
  restore(user: AuthUser, id: string): Task {
    return writeTx(this.db, (tx) => {
      const cur = findTaskWithList(tx, user.id, id);
      if (!cur || cur.list_deleted_at !== null) throw notFound("task");
      if (cur.deleted_at === null) throw stateConflict("the task is not in the trash");
      if (cur.parent_id !== null) {
        const parent = findTaskWithList(tx, user.id, cur.parent_id);
        if (!parent || parent.deleted_at !== null) throw stateConflict("the parent task is still deleted; restore the parent first");
      }
      const subs = cur.parent_id === null ? findSubtasks(tx, [id], true).filter((s) => s.deleted_at !== null).map((s) => s.id) : [];
      const now = this.now();
      setDeleted(tx, user.id, [id, ...subs], null, now);
      this.changeHooks.changed(tx, user.id, [id, ...subs]);
      return this.present(tx, user.id, id);
    });
  }

  /**
   * All checks first, then the writes, in one transaction; each task's version grows by one.
   * `completed: true` completes the current occurrence of each recurring task not yet completed,
   * as PATCH does, after the batch's other changes (and after the plain tasks named with it, so
   * a completed subtask is recorded as such in the copy).
   */
  batch(user: AuthUser, b: TaskBatch): { updated: number } {
    const ids = [...new Set(b.task_ids)];
    return writeTx(this.db, (tx) => {
      const at = this.core.clock.now();
      const now = at.toISOString();
      const rows = new Map(findTasksWithList(tx, user.id, ids).map((r) => [r.id, r]));
      const errors: FieldProblem[] = [];
      const missing: string[] = [];
      b.task_ids.forEach((id, i) => {
        if (!isVisibleTask(rows.get(id))) {
          errors.push({ path: `task_ids.${i}`, message: `no task ${id}` });
          missing.push(id);
        }
      });
      let listId: string | undefined;
      if (b.list_id !== undefined) {
        const l = findList(tx, user.id, b.list_id);
        if (!l || l.deletedAt !== null) errors.push({ path: "list_id", message: `no active list ${b.list_id}` });
        else listId = l.id;
      }
      let tagIds: string[] | undefined;
      if (b.tag_ids !== undefined) {
        const owned = ownedTagIds(tx, user.id, b.tag_ids);
        b.tag_ids.forEach((id, i) => {
          if (!owned.has(id)) errors.push({ path: `tag_ids.${i}`, message: `no tag ${id}` });
        });
        tagIds = [...new Set(b.tag_ids)];
      }
      if (errors.length) {
        throw invalidReference(errors, `unknown or foreign ids: ${[...new Set(errors.map((e) => e.message.replace(/^no (active )?\w+ /, "")))].join(", ")}`);
      }
      const named = new Set(ids);
      const topLevel = ids.filter((id) => rows.get(id)!.parent_id === null);

      if (b.soft_delete) {
        const subs = findSubtasks(tx, topLevel, false)
          .map((s) => s.id)
          .filter((s) => !named.has(s));
        setDeleted(tx, user.id, [...ids, ...subs], now, now);
        this.changeHooks.changed(tx, user.id, [...ids, ...subs]);
        return { updated: ids.length };
      }

      let followers: string[] = [];
      if (listId !== undefined) {
        // A subtask moves only with its parent; alone it would leave its parent's list.
        for (const id of ids) {
          const r = rows.get(id)!;
          if (r.parent_id !== null && r.list_id !== listId && !named.has(r.parent_id)) {
            throw invalidParent(`subtask ${id} must stay in its parent's list; move the parent instead`);
          }
        }
        followers = subtaskIds(tx, topLevel).filter((s) => !named.has(s));
      }
      const occurrences = b.completed === true ? this.repeatHooks.repeating(tx, user.id, ids.filter((id) => rows.get(id)!.completed === 0)) : new Set<string>();
      const plain = occurrences.size ? ids.filter((id) => !occurrences.has(id)) : ids;
      if (plain.length) batchUpdate(tx, user.id, plain, { listId, dueAt: b.due_at, completed: b.completed }, now);
      if (occurrences.size) batchUpdate(tx, user.id, [...occurrences], { listId, dueAt: b.due_at }, now);
      if (followers.length && listId !== undefined) updateTasks(tx, user.id, followers, { listId }, now);
      if (tagIds !== undefined) replaceTags(tx, ids, tagIds);
      for (const id of ids) if (occurrences.has(id)) this.repeatHooks.completeOccurrence(tx, user, id, at);
      if (b.due_at !== undefined || b.completed !== undefined) this.changeHooks.changed(tx, user.id, ids);
      return { updated: ids.length };
    });
  }

  /** DELETE /trash/{id}: removes a task in the trash for good, with its subtasks. */
  purge(user: AuthUser, id: string, meta: RequestMeta): void {
    const after = writeTx(this.db, (tx) => {
      const cur = findTaskWithList(tx, user.id, id);
      if (!cur || cur.list_deleted_at !== null) throw notFound("task");
      if (cur.deleted_at === null) throw notArchived("task");
      const all = [id, ...subtaskIds(tx, [id])];
      const callbacks = this.purgeHooks.beforePurge(tx, user.id, all);
      deleteTasks(tx, user.id, all);
      recordAudit(tx, {
        userId: user.id,
        action: "task_purged",
        at: this.core.clock.now(),
        ip: meta.ip,
        userAgent: meta.userAgent,
        targetType: "task",
        targetId: id,
        detail: { title: cur.title.slice(0, 100), subtasks: all.length - 1 },
      });
      return callbacks;
    });
    runAfterCommit(after, (e) => this.core.logger.error("after-purge hook failed", { error: String(e) }));
  }
}
