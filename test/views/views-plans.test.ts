// The smart views', the calendar's and manual order's statements, planned by SQLite on a seeded
// database (after ANALYZE, as `PRAGMA optimize` leaves a long-running server): each walks its own
// partial index in order (no sort of a user's tasks) and looks lists up by key.
import { afterAll, describe, expect, test } from "bun:test";
import { makeTestApp, setupAdmin } from "../helpers/app";
import type { Db } from "../../src/core/db";
import { insertTask, lastRank, pageListSorted, siblingsNear } from "../../src/features/tasks/tasks.repo";
import { completedTasks, countCompleted, countOpenDue, countOpenDueFrom, countOpenUndated, datedInRange, openDayOnly, openTimed, openUndated } from "../../src/features/tasks/tasks.views.repo";
import { inboxIdOf } from "../../src/features/lists/lists.repo";

const app = makeTestApp();
afterAll(() => app.close());
await setupAdmin(app);
const db = app.db;
const userId = db.sqlite.query<{ id: string }, []>("SELECT id FROM users LIMIT 1").get()!.id;
const list = inboxIdOf(db, userId);
db.sqlite.run("BEGIN");
for (let i = 0; i < 2000; i++) {
  const day = `2026-${String(1 + (i % 12)).padStart(2, "0")}-${String(1 + (i % 28)).padStart(2, "0")}`;
  const due = i % 5 === 0 ? null : i % 2 ? day : `${day}T10:00:00.000Z`;
  const done = i % 3 === 0;
  insertTask(db, { userId, listId: list, parentId: null, title: `t${i}`, description: "", completed: done, completedAt: done ? "2026-11-01T00:00:00.000Z" : null, dueAt: due, priority: i % 4, now: `2026-10-01T00:00:${String(i % 60).padStart(2, "0")}.000Z` });
}
db.sqlite.run("COMMIT");
db.sqlite.run("ANALYZE");

function statementsOf(d: Db, run: () => unknown): string[] {
  const s = d.sqlite;
  const query = s.query.bind(s);
  const seen: string[] = [];
  s.query = ((sql: string) => (seen.push(sql), query(sql))) as typeof s.query;
  try {
    run();
  } finally {
    Reflect.deleteProperty(s, "query");
  }
  return seen;
}
const planOf = (sql: string) => db.sqlite.prepare(`EXPLAIN QUERY PLAN ${sql}`).all().map((r) => (r as { detail: string }).detail);

const range = { from: "2026-11-26", through: "2026-12-02", fromInstant: "2026-11-26T05:00:00.000Z", beforeInstant: "2026-12-03T05:00:00.000Z" };
const cases: [string, () => unknown, string][] = [
  ["openDayOnly", () => openDayOnly(db, userId, ["2026-11-26", ""], "2026-11-26", 51), "tasks_open_day_idx (user_id=? AND "],
  ["openTimed", () => openTimed(db, userId, ["2026-11-26T05:00:00.000Z", ""], "2026-11-27T05:00:00.000Z", 51), "tasks_open_timed_idx (user_id=? AND "],
  ["openUndated", () => openUndated(db, userId, ["2026-10-01T00:00:30.000Z", "z"], 51), "tasks_open_undated_idx (user_id=? AND "],
  ["completedTasks", () => completedTasks(db, userId, ["2026-11-01T00:00:00.000Z", "z"], 51), "tasks_done_idx (user_id=? AND "],
  ["countOpenDue", () => countOpenDue(db, userId, { from: "2026-11-26", through: "2026-11-26", fromInstant: "2026-11-26T05:00:00.000Z", beforeInstant: "2026-11-27T05:00:00.000Z" }, 1000), "tasks_open_day_idx (user_id=? AND "],
  ["countOpenDueFrom", () => countOpenDueFrom(db, userId, { date: "2026-11-26", instant: "2026-11-26T05:00:00.000Z" }, [{ through: "2026-11-26", beforeInstant: "2026-11-27T05:00:00.000Z" }], 100), "tasks_open_timed_idx (user_id=? AND "],
  ["countOpenUndated", () => countOpenUndated(db, userId, 1000), "tasks_open_undated_idx (user_id=?)"],
  ["countCompleted", () => countCompleted(db, userId, 1000), "tasks_done_idx (user_id=?)"],
  ["datedInRange", () => datedInRange(db, userId, range, 2000), "tasks_live_due_idx (user_id=? AND "],
  ["pageListSorted manual", () => pageListSorted(db, list, "manual", undefined, ["a0", "x"], 51), "tasks_top_rank_idx (list_id=? AND "],
  ["lastRank", () => lastRank(db, list, null), "tasks_top_rank_idx (list_id=? AND rank>?)"],
  ["siblingsNear", () => siblingsNear(db, { listId: list, parentId: null }, ["g0000100", "x"], "below", false, "x", 17), "tasks_top_rank_idx (list_id=? AND "],
];

describe("view, calendar and manual-order plans", () => {
  for (const [name, run, index] of cases) {
    test(name, () => {
      const sqls = statementsOf(db, run);
      expect(sqls.length).toBeGreaterThan(0);
      const plan = sqls.flatMap(planOf);
      expect(plan.some((l) => l.includes(index))).toBe(true);
      // The user's tasks are never sorted (a list's page in manual order neither), and lists are looked up by key.
      for (const line of plan) {
        expect(line).not.toContain("TEMP B-TREE");
        expect(line).not.toMatch(/^SCAN (t|tasks|l|lists)\b/);
      }
    });
  }
  test("the other list orders sort one list's tasks, not the user's", () => {
    for (const sort of ["due_date", "priority", "title"] as const) {
      const plan = statementsOf(db, () => pageListSorted(db, list, sort, false, null, 51)).flatMap(planOf);
      expect(plan.some((l) => l.includes("tasks_top_rank_idx (list_id=?)"))).toBe(true);
    }
  });
});
