// A member's GET /tasks, search and smart views (issue 19: "without a plan regression"). Pages are
// checked against an independent oracle (every visible row read whole, filtered and sorted in JS)
// through every cursor; the statements are planned by SQLite on the seeded database (after
// ANALYZE, as `PRAGMA optimize` leaves a long-running server) and must walk indexes in order:
// one compound statement whose arms are the scopes' index walks, merged without a sort, never a
// scan of the tasks or a sort of a list's tasks.
import { afterAll, describe, expect, test } from "bun:test";
import { makeTestApp, setupAdmin, signedInUser, type TestClient } from "../helpers/app";
import { mkList, mkTag, uname } from "../helpers/tasks";
import type { Db } from "../../src/core/db";
import { insertTask } from "../../src/features/tasks/tasks.repo";
import { completedTasks, countCompleted, countOpenDue, countOpenDueFrom, countOpenUndated, datedInRange, openDayOnly, openTimed, openUndated } from "../../src/features/tasks/tasks.views.repo";
import { SCOPES_PER_STATEMENT } from "../../src/features/tasks/tasks.repo";
import { meOf, share } from "./helpers";

const app = makeTestApp();
afterAll(() => app.close());
const admin = await setupAdmin(app);
const db = app.db;

const owner = await signedInUser(app, admin, uname("own"));
const member = await signedInUser(app, admin, uname("mem"));
const stranger = await signedInUser(app, admin, uname("str"));
const solo = await signedInUser(app, admin, uname("solo"));
const ownerId = (await meOf(owner)).id;
const memberId = (await meOf(member)).id;
const strangerId = (await meOf(stranger)).id;
const soloId = (await meOf(solo)).id;

// The owner's lists: two shared with the member, one private. The member's own list; the stranger's.
const shared1 = await mkList(owner, "Alpha");
const shared2 = await mkList(owner, "Beta");
const privateList = await mkList(owner, "Gamma");
await share(owner, member, shared1, "editor");
await share(owner, member, shared2, "viewer");
const memberList = await mkList(member, "Delta");
const strangerList = await mkList(stranger, "Epsilon");
const soloList = await mkList(solo, "Zeta");

// ~2,400 top-level tasks spread over time: `common` in about a third of every list, `rareone` in
// two old tasks of shared2 only (the shape that made a scope walk to its end), `onlyown` in the
// member's list, `secret` in the owner's private list and the stranger's; subtasks, trash, dates.
const where: [string, string][] = [
  [ownerId, shared1],
  [ownerId, shared2],
  [ownerId, privateList],
  [memberId, memberList],
  [strangerId, strangerList],
  [ownerId, privateList],
  [soloId, soloList],
];
db.sqlite.run("BEGIN");
const tops: string[] = [];
for (let i = 0; i < 2400; i++) {
  const [userId, listId] = where[i % where.length]!;
  const words = [i % 3 === 0 ? "common" : "plain"];
  if (listId === shared2 && (i === 15 || i === 29)) words.push("rareone");
  if (listId === memberList && i % 50 === 3) words.push("onlyown");
  if (listId === privateList || listId === strangerList) words.push("secret");
  const done = i % 4 === 0;
  const due = i % 5 === 0 ? null : `2026-${String(1 + (i % 12)).padStart(2, "0")}-${String(1 + (i % 28)).padStart(2, "0")}`;
  const now = new Date(Date.parse("2025-01-01T00:00:00.000Z") + i * 3_600_000 + (i % 7) * 1000).toISOString();
  const id = insertTask(db, { userId, listId, parentId: null, title: `${words.join(" ")} ${i}`, description: "", completed: done, completedAt: done ? now : null, dueAt: due, priority: i % 4, now });
  tops.push(id);
  if (i % 9 === 0) insertTask(db, { userId, listId, parentId: id, title: `common sub ${i}`, description: "", completed: false, completedAt: null, dueAt: null, priority: 0, now });
}
// Some in the trash (and their subtasks).
db.sqlite.run("UPDATE tasks SET deleted_at = '2026-01-01T00:00:00.000Z' WHERE id IN (SELECT value FROM json_each(?))", [JSON.stringify(tops.filter((_, i) => i % 13 === 0))]);
db.sqlite.run("COMMIT");
// The member's tags: one on many tasks (past the rare-tag plan's cap), one on a few; on shared tasks and own.
const many = await mkTag(member, "manytag");
const few = await mkTag(member, "fewtag");
const visibleTops = db.sqlite
  .query<{ id: string }, [string, string, string]>("SELECT id FROM tasks WHERE parent_id IS NULL AND (list_id IN (?, ?) OR list_id = ?) ORDER BY id")
  .all(shared1, shared2, memberList)
  .map((r) => r.id);
db.sqlite.run("BEGIN");
visibleTops.forEach((id, i) => {
  if (i % 2 === 0) db.sqlite.run("INSERT INTO task_tags (task_id, tag_id) VALUES (?, ?)", [id, many]);
  if (i % 97 === 0) db.sqlite.run("INSERT INTO task_tags (task_id, tag_id) VALUES (?, ?)", [id, few]);
});
db.sqlite.run("COMMIT");
db.sqlite.run("ANALYZE");

interface Row {
  id: string;
  created_at: string;
  completed: number;
  due_at: string | null;
  search_text: string;
}
/** The oracle: every live top-level task of an active list the user owns or is a member of, newest first. */
function visibleRows(userId: string): Row[] {
  return db.sqlite
    .query<Row, [string, string]>(
      `SELECT t.id, t.created_at, t.completed, t.due_at, t.search_text FROM tasks t JOIN lists l ON l.id = t.list_id
       WHERE t.parent_id IS NULL AND t.deleted_at IS NULL AND l.deleted_at IS NULL
         AND (l.user_id = ? OR l.id IN (SELECT list_id FROM list_members WHERE user_id = ?))`,
    )
    .all(userId, userId)
    .sort((a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : a.id < b.id ? 1 : -1));
}
const tagged = (tagId: string) => new Set(db.sqlite.query<{ task_id: string }, [string]>("SELECT task_id FROM task_tags WHERE tag_id = ?").all(tagId).map((r) => r.task_id));

/** Every page of a query, by its cursor. */
async function walk(c: TestClient, qs: string, limit: number): Promise<string[]> {
  const out: string[] = [];
  let cursor: string | null = null;
  for (let n = 0; n < 1000; n++) {
    const r = await c.get(`/api/v1/tasks?limit=${limit}${qs ? `&${qs}` : ""}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
    expect(r.status).toBe(200);
    out.push(...r.body.items.map((x: { id: string }) => x.id));
    cursor = r.body.next_cursor;
    if (!cursor) return out;
  }
  throw new Error("endless cursor");
}

const cases: [string, string, (r: Row) => boolean][] = [
  ["no filter", "", () => true],
  ["a common term", "q=common", (r) => r.search_text.includes("common")],
  ["a term in two old tasks of one shared list", "q=rareone", (r) => r.search_text.includes("rareone")],
  ["a term only in the member's own list", "q=onlyown", (r) => r.search_text.includes("onlyown")],
  ["a term only in lists the member cannot see", "q=secret", (r) => r.search_text.includes("secret")],
  ["a term nowhere", "q=nowhere", () => false],
  ["two terms", "q=common%20plain", () => false],
  ["completed", "completed=true", (r) => r.completed === 1],
  ["open and a common term", "completed=false&q=common", (r) => r.completed === 0 && r.search_text.includes("common")],
  ["due before", "due_before=2026-03-10", (r) => r.due_at !== null && r.due_at <= "2026-03-10"],
  ["due after", "due_after=2026-11-10", (r) => r.due_at !== null && r.due_at >= "2026-11-10"],
];

describe("a member's pages are exactly their visible tasks, through every cursor", () => {
  for (const [name, qs, keep] of cases) {
    test(name, async () => {
      const expected = visibleRows(memberId).filter(keep).map((r) => r.id);
      expect(await walk(member, qs, 7)).toEqual(expected);
      expect(await walk(member, qs, 50)).toEqual(expected);
    });
  }
  test("a tag on many tasks and a tag on few (both plans)", async () => {
    for (const tag of [many, few]) {
      const links = tagged(tag);
      const expected = visibleRows(memberId).filter((r) => links.has(r.id)).map((r) => r.id);
      expect(expected.length).toBeGreaterThan(0);
      expect(await walk(member, `tag_id=${tag}`, 7)).toEqual(expected);
      expect(await walk(member, `tag_id=${tag}&q=common`, 50)).toEqual(expected.filter((id) => visibleRows(memberId).find((r) => r.id === id)!.search_text.includes("common")));
    }
  });
  test("the owner's and a non-member's pages are theirs; nothing of a shared list reaches the stranger", async () => {
    for (const [c, id] of [[owner, ownerId], [stranger, strangerId]] as const) {
      expect(await walk(c, "", 50)).toEqual(visibleRows(id).map((r) => r.id));
      expect(await walk(c, "q=common", 50)).toEqual(visibleRows(id).filter((r) => r.search_text.includes("common")).map((r) => r.id));
    }
    expect(await walk(stranger, "q=rareone", 50)).toEqual([]);
    // A member's cursor is theirs: the stranger cannot page with it.
    const first = await member.get("/api/v1/tasks?limit=5&q=common");
    const r = await stranger.get(`/api/v1/tasks?limit=5&q=common&cursor=${encodeURIComponent(first.body.next_cursor)}`);
    expect(r.body.code).toBe("invalid_cursor");
  });
  test(`more shared lists than one statement holds (${SCOPES_PER_STATEMENT})`, async () => {
    const many = await signedInUser(app, admin, uname("many"));
    const manyId = (await meOf(many)).id;
    const lists: string[] = [];
    for (let i = 0; i <= SCOPES_PER_STATEMENT; i++) lists.push(await mkList(owner, `Shared ${i}`));
    for (const l of lists) await share(owner, many, l, "viewer");
    db.sqlite.run("BEGIN");
    for (let i = 0; i < 300; i++) {
      const now = new Date(Date.parse("2025-06-01T00:00:00.000Z") + i * 60_000).toISOString();
      insertTask(db, { userId: ownerId, listId: lists[(i * 7) % lists.length]!, parentId: null, title: i % 4 ? `plain ${i}` : `common ${i}`, description: "", completed: false, completedAt: null, dueAt: null, priority: 0, now });
    }
    db.sqlite.run("COMMIT");
    const all = visibleRows(manyId);
    expect(all.length).toBe(300);
    expect(await walk(many, "", 9)).toEqual(all.map((r) => r.id));
    expect(await walk(many, "q=common", 9)).toEqual(all.filter((r) => r.search_text.includes("common")).map((r) => r.id));
    // The sidebar's counts over the 34 scopes: one statement per group of scopes, summed.
    db.sqlite.run("BEGIN");
    for (let i = 0; i < 8; i++) {
      const now = new Date(Date.parse("2025-07-01T00:00:00.000Z") + i * 60_000).toISOString();
      const done = i >= 5;
      insertTask(db, { userId: ownerId, listId: lists[lists.length - 1 - i]!, parentId: null, title: `dated ${i}`, description: "", completed: done, completedAt: done ? now : null, dueAt: i % 2 ? "2020-01-01" : "2020-01-01T10:00:00.000Z", priority: 0, now });
    }
    db.sqlite.run("COMMIT");
    expect((await many.get("/api/v1/views/counts")).body.counts).toEqual({ overdue: 5, today: 0, tomorrow: 0, next_7_days: 0, upcoming: 0, no_date: 100, completed: 3 });
  });
});

/** The SQL statements `run` prepares (every statement goes through sqlite.query). */
async function statementsOf(d: Db, run: () => unknown): Promise<string[]> {
  const s = d.sqlite;
  const query = s.query.bind(s);
  const seen: string[] = [];
  s.query = ((sql: string) => (seen.push(sql), query(sql))) as typeof s.query;
  try {
    await run();
  } finally {
    Reflect.deleteProperty(s, "query");
  }
  return seen;
}
const planOf = (sql: string) => db.sqlite.prepare(`EXPLAIN QUERY PLAN ${sql}`).all().map((r) => (r as { detail: string }).detail);
/** The statements that walk tasks for a page (the page's own; not the presenter's look-ups of the page's rows). */
const pageWalks = (sqls: string[]) => sqls.filter((s) => /INDEXED BY tasks_(live_top|live_list)_idx/.test(s));

describe("a member's page and search plans", () => {
  const deep = async () => (await member.get("/api/v1/tasks?limit=100")).body.next_cursor as string;
  const queries: [string, () => Promise<string>][] = [
    ["first page", async () => "limit=50"],
    ["deep page", async () => `limit=50&cursor=${encodeURIComponent(await deep())}`],
    ["a common term", async () => "limit=50&q=common"],
    ["a rare term", async () => "limit=50&q=rareone"],
    ["a term nowhere", async () => "limit=50&q=nowhere"],
    ["a term and a cursor", async () => `limit=50&q=common&cursor=${encodeURIComponent((await member.get("/api/v1/tasks?limit=20&q=common")).body.next_cursor)}`],
    ["completed", async () => "limit=50&completed=true"],
    ["a tag on many tasks", async () => `limit=50&tag_id=${many}`],
  ];
  for (const [name, qsOf] of queries) {
    test(name, async () => {
      const qs = await qsOf();
      const sqls = pageWalks(await statementsOf(db, () => member.get(`/api/v1/tasks?${qs}`)));
      expect(sqls.length).toBeGreaterThan(0);
      // Every walk over the member's tasks is one statement over all the scopes, merged by SQLite.
      for (const sql of sqls) {
        expect(sql).toContain("UNION ALL");
        const plan = planOf(sql);
        // The page merged by SQLite; a window's bound (each scope's n-th key, compared in JS) needs no merge.
        if (!sql.startsWith("SELECT * FROM (SELECT t.created_at, t.id FROM")) expect(plan.some((l) => l.startsWith("MERGE (UNION ALL)"))).toBe(true);
        // The member's own rows by their index, each shared list by its own, from the cursor on.
        expect(plan.some((l) => /^SEARCH t USING (COVERING )?INDEX tasks_live_top_idx \(user_id=\?/.test(l))).toBe(true);
        expect(plan.filter((l) => /^SEARCH t USING (COVERING )?INDEX tasks_live_list_idx \(list_id=\?/.test(l)).length).toBe(2);
        for (const line of plan) {
          expect(line).not.toContain("TEMP B-TREE");
          expect(line).not.toMatch(/^SCAN (t|tasks|l|lists)\b/);
        }
      }
      // At most two windows (each: its bound, its page) and the rest: never one statement per batch.
      expect(sqls.length).toBeLessThanOrEqual(5);
    });
  }
  test("a plain page is one statement", async () => {
    expect(pageWalks(await statementsOf(db, () => member.get("/api/v1/tasks?limit=50"))).length).toBe(1);
  });
  test("a user without shared lists keeps the single-owner statement", async () => {
    for (const qs of ["limit=50", "limit=50&q=common", "limit=50&q=nowhere"]) {
      const sqls = pageWalks(await statementsOf(db, () => stranger.get(`/api/v1/tasks?${qs}`)));
      expect(sqls.length).toBe(1);
      expect(sqls[0]).not.toContain("UNION");
      const plan = planOf(sqls[0]!);
      expect(plan.some((l) => l.includes("tasks_live_top_idx (user_id=?)"))).toBe(true);
      for (const line of plan) expect(line).not.toContain("TEMP B-TREE");
    }
  });
});

describe("a member's smart views: one statement walking each shared list's view index in order", () => {
  const range = { from: "2026-03-01", through: "2026-03-07", fromInstant: "2026-03-01T00:00:00.000Z", beforeInstant: "2026-03-08T00:00:00.000Z" };
  const views: [string, () => unknown, string][] = [
    ["openDayOnly", () => openDayOnly(db, memberId, ["2026-03-01", ""], "2026-03-01", 51), "tasks_list_open_day_idx (list_id=? AND "],
    ["openTimed", () => openTimed(db, memberId, ["2026-03-01T00:00:00.000Z", ""], "2026-03-02T00:00:00.000Z", 51), "tasks_list_open_timed_idx (list_id=? AND "],
    ["openUndated", () => openUndated(db, memberId, ["2026-01-01T00:00:00.000Z", "z"], 51), "tasks_list_open_undated_idx (list_id=? AND "],
    ["completedTasks", () => completedTasks(db, memberId, ["2026-01-01T00:00:00.000Z", "z"], 51), "tasks_list_done_idx (list_id=? AND "],
    ["countOpenDue", () => countOpenDue(db, memberId, { from: "2026-03-01", through: "2026-03-01", fromInstant: "2026-03-01T00:00:00.000Z", beforeInstant: "2026-03-02T00:00:00.000Z" }, 100), "tasks_list_open_day_idx (list_id=? AND "],
    ["countOpenDueFrom", () => countOpenDueFrom(db, memberId, { date: "2026-03-01", instant: "2026-03-01T00:00:00.000Z" }, [{ through: "2026-03-01", beforeInstant: "2026-03-02T00:00:00.000Z" }], 100), "tasks_list_open_timed_idx (list_id=? AND "],
    ["countOpenUndated", () => countOpenUndated(db, memberId, 100), "tasks_list_open_undated_idx (list_id=?)"],
    ["countCompleted", () => countCompleted(db, memberId, 100), "tasks_list_done_idx (list_id=?)"],
    ["datedInRange", () => datedInRange(db, memberId, range, 2000), "tasks_list_live_due_idx (list_id=? AND "],
  ];
  for (const [name, run, index] of views) {
    test(name, async () => {
      const sqls = (await statementsOf(db, run)).filter((s) => s.includes("FROM tasks t"));
      // One statement over the member's own rows and both shared lists (completedTasks: one per range walk).
      expect(sqls.length).toBeLessThanOrEqual(name === "completedTasks" ? 2 : name === "countOpenDue" || name === "countOpenDueFrom" ? 2 : 1);
      for (const sql of sqls) {
        expect(sql.split(" UNION ALL ").length).toBe(3);
        if (sql.includes("ORDER BY")) expect(planOf(sql).some((l) => l.startsWith("MERGE (UNION ALL)"))).toBe(true);
      }
      const plan = sqls.flatMap(planOf);
      expect(plan.some((l) => l.includes(index))).toBe(true);
      for (const line of plan) {
        expect(line).not.toContain("TEMP B-TREE");
        expect(line).not.toMatch(/^SCAN (t|tasks|l|lists)\b/);
        expect(line).not.toContain("tasks_list_idx");
      }
    });
  }
  test("the Completed and No date views answer exactly the member's tasks, shared ones included, through every cursor", async () => {
    const rows = db.sqlite
      .query<{ id: string; completed_at: string | null }, []>("SELECT id, completed_at FROM tasks")
      .all()
      .reduce((m, r) => m.set(r.id, r.completed_at), new Map<string, string | null>());
    const viewIds = async (view: string) => {
      const out: string[] = [];
      let cursor: string | null = null;
      do {
        const r = await member.get(`/api/v1/views/${view}?limit=30${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
        expect(r.status).toBe(200);
        for (const g of r.body.groups) out.push(...g.tasks.map((t: { id: string }) => t.id));
        cursor = r.body.next_cursor;
      } while (cursor);
      return out;
    };
    const done = visibleRows(memberId).filter((x) => x.completed === 1);
    const byCompletion = (a: Row, b: Row) => {
      const ka = rows.get(a.id) ?? "", kb = rows.get(b.id) ?? "";
      return ka < kb ? 1 : ka > kb ? -1 : a.id < b.id ? 1 : -1;
    };
    expect(done.length).toBeGreaterThan(100);
    expect(await viewIds("completed")).toEqual(done.sort(byCompletion).map((x) => x.id));
    expect(await viewIds("no_date")).toEqual(visibleRows(memberId).filter((x) => x.completed === 0 && x.due_at === null).map((x) => x.id));
  });
});
