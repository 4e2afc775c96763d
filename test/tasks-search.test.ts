import { afterAll, describe, expect, test } from "bun:test";
import { makeTestApp, setupAdmin, signedInUser } from "./helpers/app";
import { mkList, mkTag, mkTask, uname } from "./helpers/tasks";

const app = makeTestApp();
const admin = await setupAdmin(app);
afterAll(() => app.close());

const c = await signedInUser(app, admin, uname());
const other = await signedInUser(app, admin, uname());
const groceries = await mkList(c, "Groceries Ünïcode");
const urgent = await mkTag(c, "Urgent");
const milk = await mkTask(c, { title: "Buy MILK", description: "semi-skimmed, from the Café", list_id: groceries });
const report = await mkTask(c, { title: "Quarterly report", description: "numbers for Q3", tag_ids: [urgent] });
const cjk = await mkTask(c, { title: "完成项目任务管理", description: "周报" });
const accent = await mkTask(c, { title: "Crème brûlée recipe" });
const quote = await mkTask(c, { title: 'say "hello" AND goodbye*' });
const sub = await mkTask(c, { title: "nested needle", parent_id: report.id });
await mkTask(other, { title: "Buy milk too (another user's)" });

async function search(q: string, client = c): Promise<string[]> {
  const r = await client.get(`/api/v1/tasks?q=${encodeURIComponent(q)}`);
  expect(r.status).toBe(200);
  return r.body.items.map((t: { id: string }) => t.id);
}

describe("q", () => {
  test("case-insensitive substrings of title and description; only the user's tasks", async () => {
    expect(await search("milk")).toEqual([milk.id]);
    expect(await search("MiLk")).toEqual([milk.id]);
    expect(await search("skim")).toEqual([milk.id]);
    expect(await search("arterl")).toEqual([report.id]);
    expect(await search("milk", other)).toHaveLength(1);
    expect(await search("nothing-like-this")).toEqual([]);
  });

  test("tag names and list names match", async () => {
    expect(await search("urgent")).toEqual([report.id]);
    expect(await search("grocer")).toEqual([milk.id]);
  });

  test("every term must occur, each in any of the fields", async () => {
    expect(await search("milk grocer")).toEqual([milk.id]);
    expect(await search("report urgent")).toEqual([report.id]);
    expect(await search("report grocer")).toEqual([]);
    expect(await search("  milk   cafe  ")).toEqual([milk.id]);
  });

  test("Chinese, including terms shorter than three characters", async () => {
    expect(await search("项目任务")).toEqual([cjk.id]);
    expect(await search("任务")).toEqual([cjk.id]);
    expect(await search("周")).toEqual([cjk.id]);
    expect(await search("任务 周报")).toEqual([cjk.id]);
    expect(await search("任务 milk")).toEqual([]);
  });

  test("accents are ignored both ways; short Latin terms work", async () => {
    expect(await search("creme brulee")).toEqual([accent.id]);
    expect(await search("CRÈME")).toEqual([accent.id]);
    expect(await search("cafe")).toEqual([milk.id]);
    expect(await search("café")).toEqual([milk.id]);
    expect(await search("unicode")).toEqual([milk.id]);
    expect(await search("q3")).toEqual([report.id]);
    expect(await search("ée")).toEqual([accent.id]);
  });

  test("query syntax is literal text", async () => {
    expect(await search('"hello"')).toEqual([quote.id]);
    expect(await search("AND")).toEqual([quote.id]);
    expect(await search("goodbye*")).toEqual([quote.id]);
    expect(await search("NOT")).toEqual([]);
    expect(await search('"')).toEqual([quote.id]);
    expect(await search("*")).toEqual([quote.id]);
  });

  test("subtasks are not items; an empty q means no filter", async () => {
    expect(await search("needle")).toEqual([]);
    expect((await search("   ")).length).toBe(5); // the five top-level tasks
  });

  test("the index follows edits, deletes and purges", async () => {
    const t = await mkTask(c, { title: "zebra crossing" });
    expect(await search("zebra")).toEqual([t.id]);
    await c.patch(`/api/v1/tasks/${t.id}`, { version: 1, title: "giraffe" });
    expect(await search("zebra")).toEqual([]);
    expect(await search("giraffe")).toEqual([t.id]);
    await c.delete(`/api/v1/tasks/${t.id}`);
    expect(await search("giraffe")).toEqual([]);
    await c.delete(`/api/v1/trash/${t.id}`);
    const n = app.db.sqlite.query("SELECT count(*) AS n FROM tasks_fts WHERE tasks_fts MATCH ?").get('"giraffe"') as { n: number };
    expect(n.n).toBe(0);
    // The external-content index agrees with the table.
    expect(() => app.db.sqlite.run("INSERT INTO tasks_fts(tasks_fts, rank) VALUES ('integrity-check', 1)")).not.toThrow();
  });

  test("q combines with filters and paginates", async () => {
    const l = await mkList(c, "Paging");
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push((await mkTask(c, { title: `pager item ${i}`, list_id: l })).id);
    const seen: string[] = [];
    let r = await c.get(`/api/v1/tasks?q=pager&limit=2&list_id=${l}`);
    seen.push(...r.body.items.map((t: { id: string }) => t.id));
    while (r.body.next_cursor) {
      r = await c.get(`/api/v1/tasks?q=pager&limit=2&list_id=${l}&cursor=${encodeURIComponent(r.body.next_cursor)}`);
      seen.push(...r.body.items.map((t: { id: string }) => t.id));
    }
    expect(seen).toEqual(made.reverse());
    const long = await c.get(`/api/v1/tasks?q=${"x".repeat(501)}`);
    expect(long.status).toBe(422);
    // Every term counts: 32 distinct terms are searched, 33 are refused rather than cut.
    const terms = (n: number) => Array.from({ length: n }, (_, i) => `pager${i}`).join(" ");
    expect((await c.get(`/api/v1/tasks?q=${encodeURIComponent(terms(32))}`)).body.items).toEqual([]);
    const tooMany = await c.get(`/api/v1/tasks?q=${encodeURIComponent(terms(33))}`);
    expect([tooMany.status, tooMany.body.code]).toEqual([422, "validation_failed"]);
    expect((await c.get(`/api/v1/tasks?q=${encodeURIComponent("pager ".repeat(40))}`)).body.items).toHaveLength(5);
  });
});
