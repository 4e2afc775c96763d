// The page query has several plans (walk newest first; start from a rare term's matches; start
// from a rare tag's links; walk one list's index). The service picks one by counting; these
// tests prove every plan answers the same pages for the same filter, through every cursor.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { makeTestApp, setupAdmin, signedInUser } from "./helpers/app";
import { mkList, mkTag, mkTask, uname } from "./helpers/tasks";
import type { Db } from "../src/core/db";
import {
  batchUpdate,
  countSubtasks,
  deleteTasks,
  findSubtasks,
  findTagsOfTasks,
  findTaskWithList,
  findTasksWithList,
  insertTask,
  ownedTagIds,
  pageLiveTasks,
  pageTrash,
  replaceTags,
  setDeleted,
  subtaskIds,
  subtasksOfParents,
  tagsAt,
  updateTaskIfVersion,
  updateTasks,
  type TaskFilter,
  bumpTasksTagged,
} from "../src/features/tasks/tasks.repo";
import { deleteList, findList, updateList } from "../src/features/lists/lists.repo";
import { deleteTag, findTag, updateTag } from "../src/features/tags/tags.repo";
import { findActiveFolder, updateFolder } from "../src/features/folders/folders.repo";
import { recurringTaskIds } from "../src/features/recurrence/recurrence.repo";
import { ftsPhrase } from "../src/features/tasks/tasks.search";

const app = makeTestApp();
const admin = await setupAdmin(app);
afterAll(() => app.close());

const c = await signedInUser(app, admin, uname());
const other = await signedInUser(app, admin, uname());
const userId: string = (await c.get("/api/v1/me")).body.id;
const lists = [await mkList(c, "alpha"), await mkList(c, "beta")];
const tags = [await mkTag(c, "red"), await mkTag(c, "blue")];
const words = ["report", "invoice", "garden", "réunion", "任务管理"];
for (let i = 0; i < 60; i++) {
  const t = await mkTask(c, {
    title: `${words[i % 5]} ${i}`,
    description: i % 3 === 0 ? "quarterly numbers" : "",
    list_id: lists[i % 2],
    tag_ids: i % 4 === 0 ? [tags[0]] : i % 4 === 1 ? [tags[1]] : [],
    completed: i % 5 === 0,
    due_at: i % 2 ? "2026-12-01" : null,
  });
  if (i % 7 === 0) await mkTask(c, { title: `report sub ${i}`, parent_id: t.id });
  if (i % 11 === 0) await c.delete(`/api/v1/tasks/${t.id}`);
}
// Another user's matching tasks must never appear, whatever the plan.
const theirList = await mkList(other, "alpha");
for (let i = 0; i < 10; i++) await mkTask(other, { title: `report ${i}`, list_id: theirList });

/** Every page of a filter, walking the cursor with small pages. */
function walk(f: TaskFilter): string[] {
  const out: string[] = [];
  let after: [string, string] | null = null;
  for (;;) {
    const rows = pageLiveTasks(app.db, userId, f, after, 7);
    const page = rows.slice(0, 7);
    out.push(...page.map((r) => r.id));
    if (rows.length <= 7) return out;
    const last = page[page.length - 1]!;
    after = [last.created_at, last.id];
  }
}

const term = (t: string) => ({ term: t, fts: ftsPhrase(t), listIds: [], tagIds: [] });

describe("every plan answers the same pages", () => {
  const filters: [string, TaskFilter][] = [
    ["no filter", {}],
    ["list", { listId: lists[0] }],
    ["tag", { tagId: tags[0] }],
    ["tag + list", { tagId: tags[1], listId: lists[1] }],
    ["completed", { completed: true }],
    ["term", { terms: [term("report")] }],
    ["two terms", { terms: [term("report"), term("quarterly")] }],
    ["accented term", { terms: [term("reunion")] }],
    ["CJK term", { terms: [term("任务管")] }],
    ["term + list + tag", { terms: [term("garden")], listId: lists[0], tagId: tags[0] }],
    ["term + due", { terms: [term("invoice")], dueBefore: { date: "2026-12-01", instantBefore: "2026-12-02T00:00:00.000Z" } }],
    ["missing term", { terms: [term("nothing-here")] }],
  ];
  for (const [name, f] of filters) {
    test(name, () => {
      const walked = walk(f);
      const plans: TaskFilter[] = [];
      const firstFts = f.terms?.[0]?.fts;
      if (firstFts) plans.push({ ...f, driveBy: firstFts });
      // Terms looked up in the trigram index (the sole user's server) instead of tested on each row.
      if (f.terms) plans.push({ ...f, ownIndex: true }, ...(firstFts ? [{ ...f, ownIndex: true, driveBy: firstFts }] : []));
      if (f.tagId) plans.push({ ...f, driveByTag: true });
      if (f.listId) plans.push({ ...f, listId: f.listId });
      for (const p of plans) expect(walk(p)).toEqual(walked);
      // And the walk agrees with a plain reading of the rules.
      const live = app.db.sqlite
        .query<{ id: string }, [string]>(
          `SELECT t.id FROM tasks t JOIN lists l ON l.id = t.list_id WHERE t.user_id = ? AND t.parent_id IS NULL AND t.deleted_at IS NULL AND l.deleted_at IS NULL ORDER BY t.created_at DESC, t.id DESC`,
        )
        .all(userId)
        .map((r) => r.id);
      expect(walked.every((id) => live.includes(id))).toBe(true);
      if (name !== "missing term") expect(walked.length).toBeGreaterThan(0);
      if (!f.terms) {
        // Plain SQL for the structured filters, independent of the page query's plans.
        const expected = app.db.sqlite
          .query<{ id: string }, (string | number | null)[]>(
            `SELECT t.id FROM tasks t JOIN lists l ON l.id = t.list_id WHERE t.user_id = ? AND t.parent_id IS NULL AND t.deleted_at IS NULL AND l.deleted_at IS NULL
               AND (?2 IS NULL OR t.list_id = ?2) AND (?3 IS NULL OR t.completed = ?3)
               AND (?4 IS NULL OR t.id IN (SELECT task_id FROM task_tags WHERE tag_id = ?4))
             ORDER BY t.created_at DESC, t.id DESC`,
          )
          .all(userId, f.listId ?? null, f.completed === undefined ? null : f.completed ? 1 : 0, f.tagId ?? null)
          .map((r) => r.id);
        expect(walked).toEqual(expected);
      }
    });
  }
});

describe("query plans", () => {
  test("page walks use their partial index and never sort", () => {
    const plan = (sql: string, ...args: string[]) =>
      app.db.sqlite
        .query(`EXPLAIN QUERY PLAN ${sql}`)
        .all(...args)
        .map((r) => (r as { detail: string }).detail)
        .join(" | ");
    const all = plan(
      "SELECT t.id FROM tasks t INDEXED BY tasks_live_top_idx JOIN lists l ON l.id = t.list_id WHERE t.user_id = ? AND t.parent_id IS NULL AND t.deleted_at IS NULL AND l.deleted_at IS NULL AND (t.created_at, t.id) < (?, ?) ORDER BY t.created_at DESC, t.id DESC LIMIT 51",
      userId, "z", "z",
    );
    expect(all).toContain("tasks_live_top_idx");
    expect(all).not.toContain("TEMP B-TREE");
    const list = plan(
      "SELECT t.id FROM tasks t INDEXED BY tasks_live_list_idx JOIN lists l ON l.id = t.list_id WHERE t.user_id = ? AND t.parent_id IS NULL AND t.deleted_at IS NULL AND l.deleted_at IS NULL AND t.list_id = ? ORDER BY t.created_at DESC, t.id DESC LIMIT 51",
      userId, lists[0]!,
    );
    expect(list).toContain("tasks_live_list_idx (list_id=?)");
    expect(list).not.toContain("TEMP B-TREE");
    const trash = plan(
      "SELECT t.id FROM tasks t INDEXED BY tasks_trash_idx JOIN lists l ON l.id = t.list_id WHERE t.user_id = ? AND t.parent_id IS NULL AND t.deleted_at IS NOT NULL AND l.deleted_at IS NULL ORDER BY t.deleted_at DESC, t.id DESC LIMIT 51",
      userId,
    );
    expect(trash).toContain("tasks_trash_idx");
    expect(trash).not.toContain("TEMP B-TREE");
  });
});

// ---- write paths ---------------------------------------------------------------------------
// Statements naming tasks by id must look each id up by primary key, never walk the user's rows:
// `id IN (json_each) AND user_id = ?` once went through tasks_user_list_idx (user_id, list_id)
// and every write paid for all the user's tasks. The plans are checked on an account of
// thousands of tasks, as migrated, then with such a user index put back (a trap), then with
// statistics gathered. Each statement is the one the repository really runs: recorded while the
// function runs inside a transaction that is rolled back.

const big = makeTestApp();
afterAll(() => big.close());
const bigAdmin = await setupAdmin(big);
const owner = await signedInUser(big, bigAdmin, uname());
const stranger = await signedInUser(big, bigAdmin, uname());
const ownerId: string = (await owner.get("/api/v1/me")).body.id;
const strangerId: string = (await stranger.get("/api/v1/me")).body.id;
const ownerList = await mkList(owner, "work");
const ownerTags = [await mkTag(owner, "red"), await mkTag(owner, "blue")];
const strangerTag = await mkTag(stranger, "green");
const strangerList = await mkList(stranger, "theirs");
const ownerFolder: string = (await owner.post("/api/v1/folders", { name: "f" })).body.id;

/** Runs SQL in its own committed transaction (a bare statement may wait on an open reader). */
function commit(db: Db, run: () => void): void {
  db.sqlite.run("BEGIN");
  run();
  db.sqlite.run("COMMIT");
}

/** Inserts `n` top-level tasks (every tenth with a subtask) for a user; returns the top-level ids. */
function seed(db: Db, userId: string, listId: string, n: number): string[] {
  const ids: string[] = [];
  commit(db, () => {
    for (let i = 0; i < n; i++) {
      const base = { userId, listId, title: `t ${i}`, description: "", completed: false, completedAt: null, dueAt: null, priority: 0, now: "2026-11-01T00:00:00.000Z" };
      const id = insertTask(db, { ...base, parentId: null });
      if (i % 10 === 0) insertTask(db, { ...base, parentId: id });
      ids.push(id);
    }
  });
  return ids;
}
const mine = seed(big.db, ownerId, ownerList, 3000);
const theirs = seed(big.db, strangerId, strangerList, 1000);

/** The SQL each call sends to SQLite (raw statements and drizzle's), in a rolled-back transaction. */
function statementsOf(db: Db, run: () => unknown): string[] {
  const s = db.sqlite;
  const query = s.query.bind(s);
  const prepare = s.prepare.bind(s);
  const seen: string[] = [];
  s.query = ((sql: string) => (seen.push(sql), query(sql))) as typeof s.query;
  s.prepare = ((sql: string, ...rest: unknown[]) => (seen.push(sql), prepare(sql, ...(rest as [])))) as typeof s.prepare;
  s.run("BEGIN");
  try {
    run();
  } finally {
    s.run("ROLLBACK");
    Reflect.deleteProperty(s, "query");
    Reflect.deleteProperty(s, "prepare");
  }
  return seen;
}

/** The plan's lines. Finalized at once: an EXPLAIN of a write, kept, holds the connection busy. */
function planOf(db: Db, sql: string): string[] {
  const stmt = db.sqlite.prepare(`EXPLAIN QUERY PLAN ${sql}`);
  try {
    return stmt.all().map((r) => (r as { detail: string }).detail);
  } finally {
    stmt.finalize();
  }
}

const PK = {
  tasks: /^SEARCH (t|tasks) USING (COVERING )?INDEX sqlite_autoindex_tasks_1 \(id=\?\)$/,
  subtasks: /^SEARCH (t|tasks) USING (COVERING )?INDEX tasks_parent_idx \(parent_id=\?\)$/,
  taskTags: /^SEARCH (x|task_tags) USING (COVERING )?INDEX sqlite_autoindex_task_tags_1 \(task_id=\?\)$/,
  tags: /^SEARCH (g|tags) USING (COVERING )?INDEX sqlite_autoindex_tags_1 \(id=\?\)$/,
  lists: /^SEARCH (l|lists) USING (COVERING )?INDEX sqlite_autoindex_lists_1 \(id=\?\)$/,
  folders: /^SEARCH (f|folders) USING (COVERING )?INDEX sqlite_autoindex_folders_1 \(id=\?\)$/,
};

const db = big.db;
const some = mine.slice(100, 105);
const now = "2026-11-02T00:00:00.000Z";
/** Each write path (and the reads beside it), with the searches its plan must contain. */
const cases: [string, () => unknown, RegExp[]][] = [
  ["findTaskWithList", () => findTaskWithList(db, ownerId, some[0]!), [PK.tasks, PK.lists]],
  ["findTasksWithList", () => findTasksWithList(db, ownerId, some), [PK.tasks, PK.lists]],
  ["updateTaskIfVersion", () => updateTaskIfVersion(db, ownerId, some[0]!, 1, { title: "x", searchText: "x" }, now), [PK.tasks]],
  ["updateTasks", () => updateTasks(db, ownerId, some, { listId: ownerList, completed: true }, now), [PK.tasks]],
  ["setDeleted", () => setDeleted(db, ownerId, some, now, now), [PK.tasks]],
  ["deleteTasks", () => deleteTasks(db, ownerId, some), [PK.tasks]],
  ["batchUpdate", () => batchUpdate(db, ownerId, some, { listId: ownerList, dueAt: "2026-12-01", completed: true }, now), [PK.tasks]],
  ["ownedTagIds", () => ownedTagIds(db, ownerId, ownerTags), [PK.tags]],
  ["findSubtasks", () => findSubtasks(db, some, true), [PK.subtasks]],
  ["subtaskIds", () => subtaskIds(db, some), [PK.subtasks]],
  ["countSubtasks", () => countSubtasks(db, some[0]!), [PK.subtasks]],
  ["findTagsOfTasks", () => findTagsOfTasks(db, some), [PK.taskTags, PK.tags]],
  ["subtasksOfParents", () => subtasksOfParents(db, some, false), [PK.subtasks]],
  ["tagsAt", () => tagsAt(db, some, ownerId), [PK.taskTags, PK.tags]],
  ["replaceTags", () => replaceTags(db, some, ownerTags, ownerId), [PK.taskTags]],
  ["findList", () => findList(db, ownerId, ownerList), [PK.lists]],
  ["updateList", () => updateList(db, ownerId, ownerList, { name: "w", updatedAt: now }), [PK.lists]],
  ["deleteList", () => deleteList(db, ownerId, ownerList), [PK.lists]],
  ["findTag", () => findTag(db, ownerId, ownerTags[0]!), [PK.tags]],
  ["updateTag", () => updateTag(db, ownerId, ownerTags[0]!, { name: "r", updatedAt: now }), [PK.tags]],
  ["deleteTag", () => deleteTag(db, ownerId, ownerTags[0]!), [PK.tags]],
  ["bumpTasksTagged", () => bumpTasksTagged(db, ownerTags[0]!, now), [PK.tasks, /^SEARCH task_tags USING (COVERING )?INDEX task_tags_tag_idx \(tag_id=\?\)$/]],
  // PATCH and batch ask which of their tasks recur (the repeat hook): by the unique task index.
  ["recurringTaskIds", () => recurringTaskIds(db, ownerId, some), [/^SEARCH recurrences USING INDEX recurrences_task_uq \(task_id=\?\)$/]],
  ["findActiveFolder", () => findActiveFolder(db, ownerId, ownerFolder), [PK.folders]],
  ["updateFolder", () => updateFolder(db, ownerId, ownerFolder, { name: "g", updatedAt: now }), [PK.folders]],
];

const TRAP = "plans_trap_tasks_user";
const trap = () => db.sqlite.run(`CREATE INDEX IF NOT EXISTS ${TRAP} ON tasks (user_id, list_id)`);
const hasTrap = () => db.sqlite.query("SELECT 1 FROM sqlite_master WHERE name = ?").all(TRAP).length === 1;

describe("write paths look tasks up by primary key", () => {
  const states: [string, () => void, boolean][] = [
    ["as migrated", () => {}, false],
    ["with an index on tasks (user_id, list_id)", () => commit(db, trap), true],
    ["with that index and statistics", () => commit(db, () => (trap(), db.sqlite.run("ANALYZE"))), true],
  ];
  for (const [state, setup, trapped] of states) {
    describe(state, () => {
      beforeAll(setup);
      for (const [name, run, expected] of cases) {
        test(name, () => {
          const sqls = statementsOf(db, run).filter((q) => !q.startsWith("EXPLAIN"));
          expect(hasTrap()).toBe(trapped);
          expect(sqls.length).toBeGreaterThan(0);
          const plan = sqls.flatMap((q) => planOf(db, q));
          for (const re of expected) expect(plan.some((l) => re.test(l))).toBe(true);
          // Never a walk of a user's rows or of a whole table.
          for (const line of plan) {
            expect(line).not.toContain("user_id=?");
            expect(line).not.toMatch(/^SCAN (t|tasks|x|task_tags|g|tags|l|lists|f|folders)\b/);
          }
        });
      }
    });
  }
});

describe("the ownership check is kept", () => {
  test("another user's ids are never read or changed", () => {
    const mixed = [mine[0]!, theirs[0]!, mine[1]!, theirs[1]!];
    const before = db.sqlite.query("SELECT * FROM tasks WHERE user_id = ? ORDER BY id").all(strangerId);
    expect(findTaskWithList(db, ownerId, theirs[0]!)).toBeNull();
    expect(findTasksWithList(db, ownerId, mixed).map((r) => r.id).sort()).toEqual([mine[0]!, mine[1]!].sort());
    expect([...ownedTagIds(db, ownerId, [...ownerTags, strangerTag])].sort()).toEqual([...ownerTags].sort());
    commit(db, () => {
      expect(updateTaskIfVersion(db, ownerId, theirs[0]!, 1, { title: "x" }, now)).toBe(false);
      expect(updateTasks(db, ownerId, mixed, { priority: 3 }, now)).toBe(2);
      expect(batchUpdate(db, ownerId, mixed, { completed: true }, now)).toBe(2);
      expect(setDeleted(db, ownerId, mixed, now, now)).toBe(2);
      expect(setDeleted(db, ownerId, mixed, null, now)).toBe(2);
      expect(deleteTasks(db, ownerId, mixed)).toBe(2);
    });
    expect(db.sqlite.query("SELECT * FROM tasks WHERE user_id = ? ORDER BY id").all(strangerId)).toEqual(before);
    expect(findTaskWithList(db, ownerId, mine[0]!)).toBeNull();
    const kept = findTaskWithList(db, ownerId, mine[2]!)!;
    expect([kept.user_id, kept.version]).toEqual([ownerId, 1]);
  });
});

// ---- page statements -------------------------------------------------------------------------
// Once statistics exist (PRAGMA optimize gathers them when the server stops), SQLite answered
// `JOIN lists l ON l.id = t.list_id ... AND l.deleted_at IS NULL` with a Bloom filter built by
// reading every active list of every user before the walk: 2.3 ms per page with 50,000 lists on
// the server. The real page statements are checked here with other users' lists and statistics.

describe("page statements never read other users' lists", () => {
  beforeAll(() => {
    commit(db, () => {
      const ins = db.sqlite.prepare("INSERT INTO lists (id, user_id, name, is_inbox, position, created_at, updated_at) VALUES (?, ?, 'l', 0, ?, ?, ?)");
      for (let i = 0; i < 500; i++) ins.run(`many-lists-${i}`, strangerId, i + 1, now, now);
      ins.finalize();
      db.sqlite.run("ANALYZE");
    });
  });

  test("the old join would have used a Bloom filter here (the trap is armed)", () => {
    const plan = planOf(
      db,
      "SELECT t.id FROM tasks t INDEXED BY tasks_live_top_idx JOIN lists l ON l.id = t.list_id WHERE t.user_id = ? AND t.parent_id IS NULL AND t.deleted_at IS NULL AND l.deleted_at IS NULL ORDER BY t.created_at DESC, t.id DESC LIMIT 51",
    );
    expect(plan.join(" | ")).toContain("BLOOM FILTER ON l");
  });

  const rare = ftsPhrase("t 1234");
  const pages: [string, () => unknown, RegExp, boolean][] = [
    ["newest first", () => pageLiveTasks(db, ownerId, {}, null, 50), /^SEARCH t USING INDEX tasks_live_top_idx \(user_id=\?\)$/, true],
    ["newest first, after a cursor", () => pageLiveTasks(db, ownerId, {}, [now, mine[10]!], 50), /^SEARCH t USING INDEX tasks_live_top_idx \(user_id=\? AND \(created_at,id\)<\(\?,\?\)\)$/, true],
    ["one list", () => pageLiveTasks(db, ownerId, { listId: ownerList }, null, 50), /^SEARCH t USING INDEX tasks_live_list_idx \(list_id=\?\)$/, true],
    ["a rare tag's links", () => pageLiveTasks(db, ownerId, { tagId: ownerTags[0], driveByTag: true }, null, 50), /^SEARCH d USING INDEX task_tags_tag_idx \(tag_id=\?\)$/, false],
    [
      "a rare term's matches",
      () => pageLiveTasks(db, ownerId, { terms: [{ term: "t 1234", fts: rare, listIds: [], tagIds: [] }], driveBy: rare }, null, 50),
      /^SEARCH t USING INTEGER PRIMARY KEY \(rowid=\?\)$/,
      false,
    ],
    ["the trash", () => pageTrash(db, ownerId, null, 50), /^SEARCH t USING INDEX tasks_trash_idx \(user_id=\? AND deleted_at>\?\)$/, true],
    ["the trash, after a cursor", () => pageTrash(db, ownerId, [now, mine[10]!], 50), /^SEARCH t USING INDEX tasks_trash_idx \(user_id=\? AND deleted_at>\? AND \(deleted_at,id\)<\(\?,\?\)\)$/, true],
  ];
  for (const [name, run, walk, sorted] of pages) {
    test(name, () => {
      const sqls = statementsOf(db, run).filter((q) => !q.startsWith("EXPLAIN"));
      expect(sqls.length).toBe(1);
      const plan = planOf(db, sqls[0]!);
      expect(plan.some((l) => walk.test(l))).toBe(true);
      // Lists are read one by key (the task's own, or the filtered list once), never scanned.
      expect(plan.some((l) => /^SEARCH l USING INDEX sqlite_autoindex_lists_1 \(id=\?\)$/.test(l))).toBe(true);
      for (const line of plan) {
        expect(line).not.toContain("BLOOM FILTER ON l");
        expect(line).not.toMatch(/^SCAN (l|lists)\b/);
      }
      // A walk in index order stops after the page; only the small driven plans sort.
      if (sorted) expect(plan.join(" | ")).not.toContain("TEMP B-TREE");
    });
  }
});
