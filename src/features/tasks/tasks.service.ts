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
import { findInbox, findListFor, listHead } from "../lists/lists.repo";
import { canEdit, requireEditor, requireOwner, roleOnList, visibleScopes, type TaskScope } from "../lists/lists.access";
import type { ListPurgeHooks } from "../lists/lists.purge-hooks";
import {
  addTags,
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
  pageLiveTasks,
  pageLiveScopes,
  scopesWindowBound,
  SCOPES_PER_STATEMENT,
  pageListSorted,
  pageTrash,
  ranksAtEnd,
  SORT_KEY_LENGTH,
  type ListOrder,
  replaceTags,
  removeTags,
  setRanks,
  siblingsNear,
  updateRankOnly,
  setDeleted,
  subtaskIds,
  tagNames,
  taskIdsOfList,
  tasksOverOwnTagLimit,
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
import { TAG_IDS_MAX, type Task, type TaskBatch, type TaskCreate, type TaskMove, type TaskPatch, type TaskQuery } from "./tasks.schemas";
import { placeAt, rankAfter, type Ranked } from "./tasks.rank";
import { ftsPhrase, normalizeSearch, searchTerms, taskSearchText, usesTrigramIndex } from "./tasks.search";
import { localMidnightUtc } from "../../core/time";
import { recurrenceOnSubtaskProblem } from "./tasks.rules";
import { isSnapshots, restoreSnapshots, snapshotTasks } from "./tasks.undo";
import { UndoTokens } from "../../core/undo-token";

/**
 * Below this many index matches (or tag links) a page starts from them, fetching and sorting at
 * most this many rows (~3 µs each); above it, walking the user's tasks newest first finds a page
 * of matches sooner. Measured on 100k tasks: 1,271 matches walk in 1.8 ms and drive in 3.9 ms;
 * 20 matches drive in 0.25 ms and walk in 6.6 ms.
 */
const DRIVE_CAP = 500;

/** Tasks, their tree, the trash: the rules. No HTTP here. */
/** The kind an undo token of POST /tasks/batch is bound to. */
const BATCH_UNDO = "tasks.batch";

export class TasksService {
  static readonly PAGE_ENDPOINT = "tasks";
  private readonly undoTokens: UndoTokens;
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
    this.undoTokens = new UndoTokens(core.secret);
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

  /** A visible task the user may change (owner or editor of its list), else 404 / 403 forbidden. */
  private editableTask(c: Conn, userId: string, id: string): TaskWithList {
    const t = this.visibleTask(c, userId, id);
    requireEditor(t.role);
    return t;
  }

  /**
   * An active list the user may put tasks in (theirs, or shared with them as editor), named in a
   * body: invisible or archived is invalid_reference, a list they only view is 403 forbidden.
   * Returns the list and its owner (whose user_id the task's rows carry).
   */
  private requireActiveList(c: Conn, userId: string, listId: string, path = "list_id"): { id: string; ownerId: string } {
    const l = listHead(c, listId);
    const role = l && roleOnList(c, userId, l);
    if (!l || !role || l.deletedAt !== null) throw invalidReference([{ path, message: `no active list ${listId}` }], `list ${listId} does not exist or is archived`);
    requireEditor(role);
    return { id: l.id, ownerId: l.ownerId };
  }

  /** A live top-level task the user may edit, named as parent, else invalid_reference / invalid_parent / forbidden. */
  private requireParent(c: Conn, userId: string, parentId: string): TaskWithList {
    const p = findVisibleTask(c, userId, parentId);
    if (!p) {
      throw invalidReference([{ path: "parent_id", message: `no task ${parentId}` }], `task ${parentId} does not exist`);
    }
    requireEditor(p.role);
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
    return presentTasks(c, userId, [row])[0]!;
  }

  // ---- reads -------------------------------------------------------------------------------

  /** The task as GET /tasks/{id} answers it; 404 when not visible. For other features too. */
  getTaskForUser(userId: string, id: string): Task {
    return readSnapshot(this.db, (c) => presentTasks(c, userId, [this.visibleTask(c, userId, id)])[0]!);
  }

  page(user: AuthUser, q: TaskQuery): Page<Task> {
    if (q.sort !== undefined && q.sort !== "created") return this.sortedListPage(user, q, q.sort);
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
      let scopes = visibleScopes(c, user.id);
      if (f.listId !== undefined) {
        const l = listHead(c, f.listId);
        const role = l && roleOnList(c, user.id, l);
        scopes = !role ? [] : role === "owner" ? scopes.filter((s) => s.kind === "own") : scopes.filter((s) => s.kind === "list" && s.listId === f.listId);
      }
      if (scopes.length === 0 || (f.tagId !== undefined && !ownedTagIds(c, user.id, [f.tagId]).size)) {
        return { items: [], next_cursor: null };
      }
      if (q.q !== undefined) {
        const terms = searchTerms(q.q);
        if (terms.length) {
          const lists = listNames(c, user.id).map((l) => ({ id: l.id, key: normalizeSearch(l.name) }));
          for (const s of scopes) if (s.kind === "list") lists.push({ id: s.listId, key: normalizeSearch(listHead(c, s.listId)!.name) });
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
      const rows = TasksService.pageVisible(c, scopes, f, after, q.limit);
      return this.toPage(c, TasksService.PAGE_ENDPOINT, user.id, rows, q.limit, (r) => [r.created_at, r.id], false);
    });
  }

  /**
   * A list's page in the order its `sort` names (anything but newest first): only with `list_id`,
   * and with no filter but `completed` (the order is the list's; searches stay newest first).
   */
  private sortedListPage(user: AuthUser, q: TaskQuery, sort: ListOrder): Page<Task> {
    const errors: FieldProblem[] = [];
    if (q.list_id === undefined) errors.push({ path: "sort", message: `sort=${sort} needs list_id` });
    for (const f of ["q", "tag_id", "due_before", "due_after"] as const) {
      if (q[f] !== undefined) errors.push({ path: f, message: `not with sort=${sort} (only list_id, completed, limit, cursor)` });
    }
    if (errors.length) throw validationFailed(errors, `sort=${sort} pages one list, with at most the completed filter`);
    let after: (string | number)[] | null = null;
    if (q.cursor) {
      const key = this.core.cursors.decode(TasksService.PAGE_ENDPOINT, user.id, q.cursor);
      if (key[0] !== sort || key.length !== SORT_KEY_LENGTH[sort] + 1 || !key.slice(1).every((v) => typeof v === "string" || typeof v === "number")) throw invalidCursor();
      after = key.slice(1) as (string | number)[];
    }
    const completed = q.completed === undefined ? undefined : q.completed === "true";
    return readSnapshot(this.db, (c) => {
      // A list the user may not see (lists.access), or an archived one, shows nothing (as the newest-first page).
      const list = findListFor(c, user.id, q.list_id!);
      if (!list || list.deletedAt !== null) return { items: [], next_cursor: null };
      const rows = pageListSorted(c, q.list_id!, sort, completed, after, q.limit);
      const more = rows.length > q.limit;
      const pageRows = more ? rows.slice(0, q.limit) : rows;
      const last = pageRows[pageRows.length - 1];
      return {
        items: presentTasks(c, user.id, pageRows),
        next_cursor: more && last ? this.core.cursors.encode(TasksService.PAGE_ENDPOINT, user.id, [sort, ...(JSON.parse(last.k) as (string | number)[])]) : null,
      };
    });
  }

  /**
   * THE "tasks visible to this user" page (GET /tasks, search; the smart views and the calendar
   * walk the same lists.access scopes in tasks.views.repo.ts): the scopes of
   * lists.access.visibleScopes (the user's own rows, then each list shared with them), newest
   * first by the keyset. A user without memberships has one scope: exactly the single-owner
   * statement of before. Otherwise one compound statement walks every scope's index at once
   * (tasks.repo pageLiveScopes, merged lazily by SQLite): a plain page reads about `limit + 1`
   * rows whatever the scopes hold. A filter can leave a scope with few matches (a rare word in one
   * list), and the merge would walk that scope to its next match however far below the page it
   * lies (a whole list, for a word it lacks): filtered pages therefore go window by window, each
   * window bounded so that no scope has more than W rows in it (tasks.repo scopesWindowBound), so
   * no scope is walked far below the page's last row; W follows the matches found so far.
   */
  static pageVisible(c: Conn, scopes: TaskScope[], f: TaskFilter, after: [string, string] | null, limit: number): TaskRow[] {
    if (scopes.length === 1) return pageLiveTasks(c, scopes[0]!, f, after, limit);
    const key = (r: TaskRow): [string, string] => [r.created_at, r.id];
    // A rare tag's links drive each scope's page (at most DRIVE_CAP of them, see page()); so would a
    // rare term's index matches, though a user with shared lists is never the server's sole user.
    if (f.driveByTag || f.driveBy) return mergeByKey(scopes.map((s) => pageLiveTasks(c, s, f, after, limit)), key, limit + 1);
    if (scopes.length > SCOPES_PER_STATEMENT) {
      const groups: TaskScope[][] = [];
      for (let i = 0; i < scopes.length; i += SCOPES_PER_STATEMENT) groups.push(scopes.slice(i, i + SCOPES_PER_STATEMENT));
      return mergeByKey(groups.map((g) => TasksService.pageScopes(c, g, f, after, limit)), key, limit + 1);
    }
    return TasksService.pageScopes(c, scopes, f, after, limit);
  }

  private static pageScopes(c: Conn, scopes: TaskScope[], f: TaskFilter, after: [string, string] | null, limit: number): TaskRow[] {
    const filtered = f.completed !== undefined || f.tagId !== undefined || f.dueBefore !== undefined || f.dueAfter !== undefined || (f.terms?.length ?? 0) > 0;
    if (!filtered) return pageLiveScopes(c, scopes, f, after, null, limit);
    const want = limit + 1;
    const out: TaskRow[] = [];
    let upper = after;
    // Each window holds the next `n` rows of the busiest scope and at most `n` of every other
    // (scopesWindowBound). The first: a search is expected to match a few rows in ten, the other
    // filters most.
    let n = (f.terms?.length ? 4 : 1) * want;
    for (let round = 0; ; round++) {
      // At most two windows. After a first window without a single match the filter is rare in
      // every scope, each of which is then walked until its next match, most likely its end: the
      // rest goes in one statement without the windows' bounds. The same after a second window
      // that fell short (the estimate was wrong): then a scope poor in matches may again be walked
      // below the page, as a plain merge would.
      const lower = round < 2 && (round === 0 || out.length > 0) ? scopesWindowBound(c, scopes, upper, n) : null;
      // Without a match yet, the rest starts again from the page's own cursor: SQLite tests a
      // row-value bound on every row it walks (~4 VM steps a row over the whole rest), more than
      // walking the first window's rows again.
      if (lower === null && out.length === 0) return pageLiveScopes(c, scopes, f, after, null, limit);
      const rows = pageLiveScopes(c, scopes, f, upper, lower, want - out.length - 1);
      for (const r of rows) out.push(r);
      if (out.length >= want || lower === null) return out;
      upper = lower;
      // The second window is sized for the matches still missing at the rate seen in the first,
      // a quarter more, so that it usually ends the page.
      if (out.length > 0) n = Math.ceil(((want - out.length) * n * 1.25) / out.length) + 8;
    }
  }

  /** The trash: the user's own deleted tasks and those of the lists shared with them as editor. */
  trashPage(user: AuthUser, limit: number, cursor: string | undefined): Page<Task> {
    const after = cursor ? this.decodePair(TasksService.TRASH_ENDPOINT, user.id, cursor) : null;
    return readSnapshot(this.db, (c) => {
      const scopes = visibleScopes(c, user.id).filter((s) => s.kind === "own" || canEdit(s.role));
      const rows =
        scopes.length === 1
          ? pageTrash(c, scopes[0]!, after, limit)
          : mergeByKey(
              scopes.map((s) => pageTrash(c, s, after, limit)),
              (r) => [r.deleted_at!, r.id],
              limit + 1,
            );
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
      items: presentTasks(c, userId, pageRows, withDeletedSubtasks),
      next_cursor: more && last ? this.core.cursors.encode(endpoint, userId, keyOf(last)) : null,
    };
  }

  // ---- writes ------------------------------------------------------------------------------

  /** After the commit: tell the open event streams of everyone who sees these tasks' lists. */
  private announce(tasks: { id: string; list_id: string; version: number }[], type: "task.changed" | "task.deleted" = "task.changed"): void {
    this.core.events.publishAll(tasks.map((t) => ({ type, id: t.id, list_id: t.list_id, version: t.version })));
  }

  create(user: AuthUser, input: TaskCreate): Task {
    const task = this.createTx(user, input);
    this.announce([task]);
    return task;
  }

  private createTx(user: AuthUser, input: TaskCreate): Task {
    return writeTx(this.db, (tx) => {
      const now = this.now();
      let listId: string;
      let ownerId = user.id;
      const parentId = input.parent_id ?? null;
      if (parentId !== null) {
        const parent = this.requireParent(tx, user.id, parentId);
        if (input.list_id !== undefined && input.list_id !== parent.list_id) {
          this.requireActiveList(tx, user.id, input.list_id);
          throw invalidParent("a subtask must be in its parent's list");
        }
        listId = parent.list_id;
        ownerId = parent.user_id;
      } else if (input.list_id !== undefined) {
        ({ id: listId, ownerId } = this.requireActiveList(tx, user.id, input.list_id));
      } else {
        const inbox = findInbox(tx, user.id);
        if (!inbox) throw notFound("inbox");
        listId = inbox.id;
      }
      const tagIds = input.tag_ids ? this.requireTags(tx, user.id, input.tag_ids) : [];
      const completed = input.completed ?? false;
      const id = insertTask(tx, {
        userId: ownerId,
        createdBy: user.id,
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
      if (tagIds.length) replaceTags(tx, [id], tagIds, user.id);
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
    let movedFrom: string | null = null;
    const task = writeTx(this.db, (tx) => {
      const at = this.core.clock.now();
      const now = at.toISOString();
      const cur = this.visibleTask(tx, user.id, id);
      // Tags are personal: a viewer may label a task they see with their own tags, nothing more.
      const onlyTags = Object.keys(p).every((k) => k === "tag_ids" || k === "version");
      if (!onlyTags) requireEditor(cur.role);
      if (cur.version !== p.version) throw versionConflict("task", cur.version, p.version);
      const repeats = this.repeatHooks.repeating(tx, cur.user_id, [id]).has(id);
      const ch: TaskChanges = {};
      if (p.title !== undefined) ch.title = p.title;
      if (p.description !== undefined) ch.description = p.description;
      if (ch.title !== undefined || ch.description !== undefined) ch.searchText = taskSearchText(ch.title ?? cur.title, ch.description ?? cur.description);

      // The tree: one level, a subtask in its parent's list, on every path.
      let newList = cur.list_id;
      let newOwner = cur.user_id;
      if (p.list_id !== undefined && p.list_id !== cur.list_id) ({ id: newList, ownerId: newOwner } = this.requireActiveList(tx, user.id, p.list_id));
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
        if (p.list_id === undefined) {
          newList = parent.list_id;
          newOwner = parent.user_id;
        } else if (parent.list_id !== newList) throw invalidParent("a subtask must be in its parent's list");
      } else if (newParent !== null && newList !== cur.list_id) {
        // A subtask moving on its own would leave its parent's list.
        const parent = findTaskWithList(tx, user.id, newParent);
        if (!parent || parent.list_id !== newList) throw invalidParent("a subtask must be in its parent's list; move the parent instead");
      }
      if (newList !== cur.list_id) {
        ch.listId = newList;
        movedFrom = cur.list_id;
      }
      if (newOwner !== cur.user_id) ch.ownerId = newOwner;
      if (p.parent_id !== undefined && p.parent_id !== cur.parent_id) ch.parentId = p.parent_id;
      // Joining other siblings (another list, another parent, or top level): at their end.
      if (ch.listId !== undefined || ch.parentId !== undefined) ch.rank = ranksAtEnd(tx, { listId: newList, parentId: newParent }, [id])[0]!.rank;

      const completesOccurrence = p.completed === true && cur.completed === 0 && repeats;
      if (p.completed !== undefined && !completesOccurrence) {
        ch.completed = p.completed;
        ch.completedAt = p.completed ? (cur.completed === 1 ? cur.completed_at : now) : null;
        ch.completedBy = p.completed ? (cur.completed === 1 ? cur.completed_by : user.id) : null;
      }
      if (p.due_at !== undefined) ch.dueAt = p.due_at;
      if (p.priority !== undefined) ch.priority = p.priority;
      const tagIds = p.tag_ids !== undefined ? this.requireTags(tx, user.id, p.tag_ids) : undefined;

      if (!updateTaskIfVersion(tx, cur.user_id, id, p.version, ch, now)) {
        const stored = findTaskWithList(tx, user.id, id);
        throw versionConflict("task", stored?.version ?? 0, p.version);
      }
      // A top-level task's subtasks move with it (into another owner's list: their rows become that owner's).
      if (ch.listId !== undefined && newParent === null) {
        const subs = subtaskIds(tx, [id]);
        updateTasks(tx, cur.user_id, subs, ch.ownerId !== undefined ? { listId: ch.listId, ownerId: ch.ownerId } : { listId: ch.listId }, now);
        if (ch.ownerId !== undefined) this.repeatHooks.reassign(tx, [id, ...subs], ch.ownerId);
      } else if (ch.ownerId !== undefined) this.repeatHooks.reassign(tx, [id], ch.ownerId);
      if (tagIds !== undefined) replaceTags(tx, [id], tagIds, user.id);
      if (completesOccurrence) this.repeatHooks.completeOccurrence(tx, user, id, at);
      // A move to another list changes who sees the task: reminders of those who no longer do go (rearm).
      if (p.due_at !== undefined || p.completed !== undefined || ch.listId !== undefined) this.changeHooks.changed(tx, user.id, [id, ...(ch.listId !== undefined && newParent === null ? subtaskIds(tx, [id]) : [])]);
      return this.present(tx, user.id, id);
    });
    // Who sees only the old list hears that the task left it.
    if (movedFrom !== null) this.announce([{ id, list_id: movedFrom, version: task.version }], "task.deleted");
    this.announce([task]);
    return task;
  }

  /**
   * Manual order: places the task just before or after a sibling (a task of the same list and
   * parent), or first or last among its siblings. One new rank between the two neighbours; only
   * when they tie or the key would grow past RANK_MAX do a few neighbours get fresh ranks too
   * (placeAt). The task's version (and a re-ranked neighbour's) grows by one.
   */
  move(user: AuthUser, id: string, m: TaskMove): Task {
    const task = writeTx(this.db, (tx) => {
      const now = this.now();
      const cur = this.editableTask(tx, user.id, id);
      const scope = { listId: cur.list_id, parentId: cur.parent_id };
      const anchorId = m.before_id ?? m.after_id;
      let anchor: TaskWithList | null = null;
      if (anchorId !== undefined) {
        const path = m.before_id !== undefined ? "before_id" : "after_id";
        anchor = findVisibleTask(tx, user.id, anchorId);
        if (!anchor) throw invalidReference([{ path, message: `no task ${anchorId}` }], `task ${anchorId} does not exist`);
        if (anchor.id === id) throw invalidReference([{ path, message: "a task cannot be placed next to itself" }], "a task cannot be placed next to itself");
        if (anchor.list_id !== cur.list_id || anchor.parent_id !== cur.parent_id) {
          throw invalidReference([{ path, message: `task ${anchorId} is not a sibling (same list and parent)` }], `task ${anchorId} is not in the same list and parent`);
        }
      }
      const changes: Ranked[] = [];
      if (m.to === "last") {
        const others = siblingsNear(tx, scope, null, "below", false, id, 1);
        changes.push({ id, rank: rankAfter(others[0]?.rank ?? null) });
      } else {
        // A window of siblings around the spot, grown until the new key fits (placeAt).
        for (let w = 16; ; w *= 4) {
          let below: Ranked[];
          let above: Ranked[];
          if (anchor === null) {
            below = [];
            above = siblingsNear(tx, scope, null, "above", true, id, w + 1);
          } else {
            const key: [string, string] = [anchor.rank, anchor.id];
            // before_id: the anchor starts the upper side; after_id: it ends the lower side.
            below = siblingsNear(tx, scope, key, "below", false, id, w + 1);
            above = siblingsNear(tx, scope, key, "above", true, id, w + 1);
            if (m.after_id !== undefined) below.unshift(above.shift()!);
          }
          const lower = below.length > w ? below.pop()!.rank : null;
          const upper = above.length > w ? above.pop()!.rank : null;
          const window = [...below.reverse(), ...above];
          const placed = placeAt(window, below.length, lower, upper);
          if (placed) {
            changes.push({ id, rank: placed.rank }, ...placed.rekeyed);
            break;
          }
          if (lower === null && upper === null) throw new Error("no rank fits a whole scope");
        }
      }
      // Ranks are keyed by the list's owner (the tasks' user_id): the actor may be an editor.
      setRanks(tx, cur.user_id, changes, now);
      return this.present(tx, user.id, id);
    });
    this.announce([task]);
    return task;
  }

  /** Moves the task (and its live subtasks) to the trash. */
  softDelete(user: AuthUser, id: string): void {
    const gone = writeTx(this.db, (tx) => {
      const cur = this.editableTask(tx, user.id, id);
      const subs = cur.parent_id === null ? findSubtasks(tx, [id], false).map((s) => s.id) : [];
      setDeleted(tx, cur.user_id, [id, ...subs], this.now(), this.now());
      this.changeHooks.changed(tx, user.id, [id, ...subs]);
      return { id, list_id: cur.list_id, version: cur.version + 1 };
    });
    this.announce([gone], "task.deleted");
  }

  /** Brings the task and its deleted direct subtasks back. */
  restore(user: AuthUser, id: string): Task {
    const task = this.restoreTx(user, id);
    this.announce([task]);
    return task;
  }

  private restoreTx(user: AuthUser, id: string): Task {
    return writeTx(this.db, (tx) => {
      const cur = findTaskWithList(tx, user.id, id);
      if (!cur || cur.list_deleted_at !== null) throw notFound("task");
      requireEditor(cur.role);
      if (cur.deleted_at === null) throw stateConflict("the task is not in the trash");
      if (cur.parent_id !== null) {
        const parent = findTaskWithList(tx, user.id, cur.parent_id);
        if (!parent || parent.deleted_at !== null) throw stateConflict("the parent task is still deleted; restore the parent first");
      }
      const subs = cur.parent_id === null ? findSubtasks(tx, [id], true).filter((s) => s.deleted_at !== null).map((s) => s.id) : [];
      const now = this.now();
      setDeleted(tx, cur.user_id, [id, ...subs], null, now);
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
  /** `withUndo`: also answer an undo token (POST /tasks/batch?undo=true), else the contract's `{ updated }` alone. */
  batch(user: AuthUser, b: TaskBatch, withUndo = false): { updated: number; undo_token?: string | null } {
    const ids = [...new Set(b.task_ids)];
    const before: { id: string; list_id: string; version: number }[] = [];
    const out = writeTx(this.db, (tx) => {
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
      let listOwner: string | undefined;
      let listRole: ReturnType<typeof roleOnList> = null;
      if (b.list_id !== undefined) {
        const l = listHead(tx, b.list_id);
        listRole = l && roleOnList(tx, user.id, l);
        if (!l || !listRole || l.deletedAt !== null) errors.push({ path: "list_id", message: `no active list ${b.list_id}` });
        else {
          listId = l.id;
          listOwner = l.ownerId;
        }
      }
      // The user's own tags only, as for a task's tag_ids: replaced (tag_ids), or added and removed.
      const ownTags = (field: "tag_ids" | "add_tag_ids" | "remove_tag_ids"): string[] | undefined => {
        const named = b[field];
        if (named === undefined) return undefined;
        const owned = ownedTagIds(tx, user.id, named);
        named.forEach((id, i) => {
          if (!owned.has(id)) errors.push({ path: `${field}.${i}`, message: `no tag ${id}` });
        });
        return [...new Set(named)];
      };
      const tagIds = ownTags("tag_ids");
      const addTagIds = ownTags("add_tag_ids");
      const removeTagIds = ownTags("remove_tag_ids");
      if (errors.length) {
        throw invalidReference(errors, `unknown or foreign ids: ${[...new Set(errors.map((e) => e.message.replace(/^no (active )?\w+ /, "")))].join(", ")}`);
      }
      if (addTagIds) {
        // The same bound as a task's tag_ids (and a backup's record): at most TAG_IDS_MAX of the user's tags on a task.
        const over = tasksOverOwnTagLimit(tx, user.id, ids, addTagIds, removeTagIds ?? [], TAG_IDS_MAX);
        if (over.length) {
          throw validationFailed(
            over.map((o) => ({ path: "add_tag_ids", message: `task ${o.id} would have ${o.n} tags, at most ${TAG_IDS_MAX}` })),
            `${over.length} of the tasks would have more than ${TAG_IDS_MAX} tags; nothing was changed`,
          );
        }
      }
      const tagsChange = tagIds !== undefined || addTagIds !== undefined || removeTagIds !== undefined;
      // Tags are personal (a viewer may label what they see); every other change needs edit rights.
      const onlyTags = b.list_id === undefined && b.due_at === undefined && b.completed === undefined && b.priority === undefined && !b.soft_delete;
      if (!onlyTags) for (const id of ids) requireEditor(rows.get(id)!.role);
      if (listRole) requireEditor(listRole);
      const named = new Set(ids);
      for (const id of ids) before.push({ id, list_id: rows.get(id)!.list_id, version: rows.get(id)!.version + 1 });
      const topLevel = ids.filter((id) => rows.get(id)!.parent_id === null);
      // Writes key by each task's owner (the owner of its list): one statement per owner.
      const byOwner = (list: string[], ownerOf: (id: string) => string = (id) => rows.get(id)!.user_id) => {
        const m = new Map<string, string[]>();
        for (const id of list) {
          const o = ownerOf(id);
          const arr = m.get(o);
          if (arr) arr.push(id);
          else m.set(o, [id]);
        }
        return m;
      };

      if (b.soft_delete) {
        const subs = findSubtasks(tx, topLevel, false).filter((s) => !named.has(s.id));
        const owners = new Map<string, string>(subs.map((s) => [s.id, s.user_id]));
        for (const [owner, group] of byOwner([...ids, ...subs.map((s) => s.id)], (id) => owners.get(id) ?? rows.get(id)!.user_id)) setDeleted(tx, owner, group, now, now);
        this.changeHooks.changed(tx, user.id, [...ids, ...subs.map((s) => s.id)]);
        // Its undo is POST /tasks/{id}/restore for each named task.
        return withUndo ? { updated: ids.length, undo_token: null } : { updated: ids.length };
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
        followers = findSubtasks(tx, topLevel, true).filter((s) => !named.has(s.id)).map((s) => s.id);
      }
      const followerOwners = new Map<string, string>(followers.length ? findSubtasks(tx, topLevel, true).map((s) => [s.id, s.user_id]) : []);
      const notDone = ids.filter((id) => rows.get(id)!.completed === 0);
      const occurrences = new Set<string>();
      if (b.completed === true) for (const [owner, group] of byOwner(notDone)) for (const id of this.repeatHooks.repeating(tx, owner, group)) occurrences.add(id);
      const plain = occurrences.size ? ids.filter((id) => !occurrences.has(id)) : ids;
      // The state before, for the undo (a completed occurrence is undone through its own completion's undo).
      const snapBefore = occurrences.size || !withUndo ? null : [...snapshotTasks(tx, user.id, ids, tagsChange), ...snapshotTasks(tx, user.id, followers, false)];
      const move = listOwner !== undefined ? { listId, ownerId: listOwner } : { listId };
      for (const [owner, group] of byOwner(plain)) batchUpdate(tx, owner, group, { ...move, dueAt: b.due_at, completed: b.completed, completedBy: user.id, priority: b.priority }, now);
      if (listId !== undefined) {
        // Top-level tasks joining the list go to its end, in the order named (their versions already grew).
        const joining = topLevel.filter((id) => rows.get(id)!.list_id !== listId);
        for (const r of ranksAtEnd(tx, { listId, parentId: null }, joining)) updateRankOnly(tx, r.id, r.rank);
      }
      for (const [owner, group] of byOwner([...occurrences])) batchUpdate(tx, owner, group, { ...move, dueAt: b.due_at, priority: b.priority }, now);
      if (followers.length && listId !== undefined) {
        for (const [owner, group] of byOwner(followers, (id) => followerOwners.get(id)!)) updateTasks(tx, owner, group, { listId, ownerId: listOwner }, now);
      }
      if (listOwner !== undefined) {
        const moved = [...ids, ...followers].filter((id) => (rows.get(id)?.user_id ?? followerOwners.get(id)) !== listOwner);
        if (moved.length) this.repeatHooks.reassign(tx, moved, listOwner);
      }
      if (tagIds !== undefined) replaceTags(tx, ids, tagIds, user.id);
      if (addTagIds) addTags(tx, ids, addTagIds);
      if (removeTagIds) removeTags(tx, ids, removeTagIds);
      for (const id of ids) if (occurrences.has(id)) this.repeatHooks.completeOccurrence(tx, user, id, at);
      if (b.due_at !== undefined || b.completed !== undefined || listId !== undefined) this.changeHooks.changed(tx, user.id, listId !== undefined ? [...ids, ...followers] : ids);
      if (!withUndo) return { updated: ids.length };
      return { updated: ids.length, undo_token: snapBefore ? this.undoTokens.encode(BATCH_UNDO, user.id, at, snapBefore) : null };
    });
    if (b.soft_delete) this.announce(before, "task.deleted");
    else {
      const now = new Map(findTasksWithList(this.db, user.id, ids).map((t) => [t.id, t]));
      this.announce(before.filter((t) => now.get(t.id)?.list_id !== t.list_id), "task.deleted");
      this.announce([...now.values()]);
    }
    return out;
  }

  /** POST /tasks/batch/undo: every task of the batch back as it was, in one transaction. */
  undoBatch(user: AuthUser, token: string): { restored: number } {
    const before: { id: string; list_id: string; version: number }[] = [];
    const out = writeTx(this.db, (tx) => {
      const now = this.core.clock.now();
      const snaps = this.undoTokens.decode(BATCH_UNDO, user.id, token, now);
      if (!isSnapshots(snaps)) throw validationFailed([{ path: "undo_token", message: "not an undo token for this" }], "the undo token is not valid");
      for (const t of findTasksWithList(tx, user.id, snaps.map((s) => s[0]))) before.push({ id: t.id, list_id: t.list_id, version: t.version + 1 });
      restoreSnapshots(tx, user.id, snaps, now.toISOString(), (ids, ownerId) => this.repeatHooks.reassign(tx, ids, ownerId));
      // Due dates and completion came back: their reminders re-arm (or cancel) with them.
      this.changeHooks.changed(tx, user.id, snaps.map((s) => s[0]));
      return { restored: snaps.length };
    });
    const now = new Map(findTasksWithList(this.db, user.id, before.map((t) => t.id)).map((t) => [t.id, t]));
    this.announce(before.filter((t) => now.get(t.id)?.list_id !== t.list_id), "task.deleted");
    this.announce([...now.values()]);
    return out;
  }

  /** DELETE /trash/{id}: removes a task in the trash for good, with its subtasks. */
  purge(user: AuthUser, id: string, meta: RequestMeta): void {
    let purged: { id: string; list_id: string; version: number } | null = null;
    const after = writeTx(this.db, (tx) => {
      const cur = findTaskWithList(tx, user.id, id);
      if (!cur || cur.list_deleted_at !== null) throw notFound("task");
      // The shared trash: editors see and restore a shared list's deleted tasks; only its owner purges them.
      requireOwner(cur.role);
      if (cur.deleted_at === null) throw notArchived("task");
      const all = [id, ...subtaskIds(tx, [id])];
      purged = { id, list_id: cur.list_id, version: cur.version };
      const callbacks = this.purgeHooks.beforePurge(tx, cur.user_id, all);
      deleteTasks(tx, cur.user_id, all);
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
    runAfterCommit(this.core.db, after, (e) => this.core.logger.error("after-purge hook failed", { error: String(e) }));
    if (purged) this.announce([purged], "task.deleted");
  }
}

/** Merges pages sorted newest first by a (time, id) key, keeping the first `n` rows. */
function mergeByKey(pages: TaskRow[][], keyOf: (r: TaskRow) => [string, string], n: number): TaskRow[] {
  const all = pages.flat();
  all.sort((a, b) => {
    const [ka, ia] = keyOf(a);
    const [kb, ib] = keyOf(b);
    return ka < kb ? 1 : ka > kb ? -1 : ia < ib ? 1 : ia > ib ? -1 : 0;
  });
  return all.length > n ? all.slice(0, n) : all;
}
