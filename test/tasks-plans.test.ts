// The page query has several plans (walk newest first; start from a rare term's matches; start
// from a rare tag's links; walk one list's index). The service picks one by counting; these
// tests prove every plan answers the same pages for the same filter, through every cursor.
import { afterAll, describe, expect, test } from "bun:test";
import { makeTestApp, setupAdmin, signedInUser } from "./helpers/app";
import { mkList, mkTag, mkTask, uname } from "./helpers/tasks";
import { pageLiveTasks, type TaskFilter } from "../src/features/tasks/tasks.repo";
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
