// Issue 11, item 4: search must not reveal other users' tasks, and no query parameter may give a 5xx.
import { afterAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { makeTestApp, setupAdmin, signedInUser, type TestClient } from "./helpers/app";
import { expectProblem } from "./helpers/problem";
import { mkList, mkTag, mkTask, uname } from "./helpers/tasks";

// Requests over a real stack on a shared, loaded machine: generous per-test time.
setDefaultTimeout(60_000);

const app = makeTestApp();
afterAll(() => app.close());
const admin = await setupAdmin(app);

/** The SQL statements on tasks the app runs while `run` goes on (the real handle, observed, not replaced). */
async function statementsOf(run: () => Promise<unknown>): Promise<string[]> {
  const sqlite = app.db.sqlite;
  const original = sqlite.query;
  const seen: string[] = [];
  sqlite.query = function (this: typeof sqlite, sql: string) {
    // Statements about tasks only: a session's last-seen refresh may come and go between calls.
    if (/tasks|task_tags/.test(sql)) seen.push(sql.replace(/\s+/g, " "));
    return original.call(this, sql);
  } as typeof sqlite.query;
  try {
    await run();
  } finally {
    sqlite.query = original;
  }
  return seen;
}

const ids = (r: { body: { items: { id: string }[] } }) => r.body.items.map((t) => t.id);

describe("search decides its plan from the user's own tasks", () => {
  test("a small account's search never reads the shared trigram index, whatever others wrote", async () => {
    const me = await signedInUser(app, admin, uname());
    const other = await signedInUser(app, admin, uname());
    const mine = await mkTask(me, { title: "pack the zephyr kite" });
    const search = () => me.get("/api/v1/tasks?q=zephyr");
    const before = await statementsOf(search);
    expect(before.some((s) => s.includes("tasks_fts"))).toBe(false);
    expect(ids(await search())).toEqual([mine.id]);
    // The other user writes the word 600 times: the plan (every statement) stays the same.
    const list = await mkList(other, "kites");
    for (let i = 0; i < 600; i++) await mkTask(other, { title: `zephyr ${i}`, list_id: list });
    expect(await statementsOf(search)).toEqual(before);
    expect(ids(await search())).toEqual([mine.id]);
  });

  test("a rare word's plan is the same whether another user wrote it 0 or 700 times", async () => {
    const me = await signedInUser(app, admin, uname());
    const other = await signedInUser(app, admin, uname());
    const rare = [await mkTask(me, { title: "quokka one" }), await mkTask(me, { title: "a quokka two" })];
    for (let i = 0; i < 300; i++) await mkTask(me, { title: `chore ${i}` });
    const search = () => me.get("/api/v1/tasks?q=quokka");
    const before = await statementsOf(search);
    expect(before.some((s) => s.includes("tasks_fts"))).toBe(false);
    expect(ids(await search())).toEqual([rare[1]!.id, rare[0]!.id]);
    const list = await mkList(other, "zoo");
    for (let i = 0; i < 700; i++) await mkTask(other, { title: `quokka ${i}`, list_id: list });
    expect(await statementsOf(search)).toEqual(before);
    expect(ids(await search())).toEqual([rare[1]!.id, rare[0]!.id]);
  });

  test("the sole user of a server still gets the trigram index (it holds only their tasks), until a second account exists", async () => {
    const solo = makeTestApp();
    try {
      const owner = await setupAdmin(solo);
      const rare = await mkTask(owner, { title: "quokka alone" });
      for (let i = 0; i < 20; i++) await mkTask(owner, { title: `chore ${i}` });
      const observe = async (run: () => Promise<unknown>) => {
        const original = solo.db.sqlite.query;
        const seen: string[] = [];
        solo.db.sqlite.query = function (this: typeof solo.db.sqlite, sql: string) {
          if (sql.includes("tasks_fts")) seen.push(sql);
          return original.call(this, sql);
        } as typeof solo.db.sqlite.query;
        try {
          await run();
        } finally {
          solo.db.sqlite.query = original;
        }
        return seen;
      };
      let r: Awaited<ReturnType<TestClient["get"]>> | undefined;
      expect((await observe(async () => (r = await owner.get("/api/v1/tasks?q=quokka")))).length).toBeGreaterThan(0);
      expect(ids(r!)).toEqual([rare.id]);
      // A NUL cannot be put to the index (FTS5 reads its query as a C string): a substring test.
      const nul = await mkTask(owner, { title: "quokka\u0000nul" });
      expect(ids(await owner.get("/api/v1/tasks?q=a%00n"))).toEqual([nul.id]);
      expect((await owner.post("/api/v1/users", { username: uname(), password: "second-Passphrase-4410" })).status).toBe(201);
      expect(await observe(async () => (r = await owner.get("/api/v1/tasks?q=quokka")))).toEqual([]);
      expect(ids(r!)).toEqual([nul.id, rare.id]);
    } finally {
      solo.close();
    }
  });

  test("filters naming another user's list or tag answer an empty page without reading their tasks", async () => {
    const me = await signedInUser(app, admin, uname());
    const other = await signedInUser(app, admin, uname());
    const theirList = await mkList(other, "theirs");
    const theirTag = await mkTag(other, "secret");
    await mkTask(other, { title: "x", list_id: theirList, tag_ids: [theirTag] });
    for (const qs of [`list_id=${theirList}`, `tag_id=${theirTag}`, `list_id=${theirList}&q=x`]) {
      let r: Awaited<ReturnType<TestClient["get"]>> | undefined;
      const statements = await statementsOf(async () => (r = await me.get(`/api/v1/tasks?${qs}`)));
      expect(r!.status).toBe(200);
      expect(r!.body).toEqual({ items: [], next_cursor: null });
      expect(statements).toEqual([]);
    }
  });
});

describe("query parameters never give a 5xx", () => {
  test("q with a NUL finds the task that contains it", async () => {
    const me = await signedInUser(app, admin, uname());
    const t = await mkTask(me, { title: "abc\u0000def here" });
    await mkTask(me, { title: "abcdef" });
    for (const q of ["abc%00def", "%00", "c%00d", "abc%00def%20here"]) {
      const r = await me.get(`/api/v1/tasks?q=${q}`);
      expect(r.status).toBe(200);
      expect(ids(r)).toEqual([t.id]);
    }
  });

  test("q with lone surrogates, quotes and FTS syntax is a plain search", async () => {
    const me = await signedInUser(app, admin, uname());
    for (const q of ["%ED%A0%80abc", '"abc', "abc*", "NEAR(a b)", "a:b", "^abc", "'); DROP TABLE tasks; --", "%F0%9F%98%80%F0%9F%98%80"]) {
      const r = await me.get(`/api/v1/tasks?q=${q}`);
      expect(r.status).toBe(200);
    }
  });

  for (const timezone of ["UTC", "Pacific/Kiritimati", "Pacific/Pago_Pago"]) {
    test(`due_before / due_after at the ends of the calendar (${timezone})`, async () => {
      const me = await signedInUser(app, admin, uname());
      expect((await me.patch("/api/v1/me", { timezone })).status).toBe(200);
      const last = await mkTask(me, { title: "last day", due_at: "9999-12-31" });
      const lastInstant = await mkTask(me, { title: "last instant", due_at: "9999-12-31T00:00:00Z" });
      const first = await mkTask(me, { title: "first day", due_at: "1000-01-01" });
      const all = [lastInstant.id, last.id, first.id].sort();
      const get = async (qs: string) => {
        const r = await me.get(`/api/v1/tasks?${qs}`);
        expect(r.status).toBe(200);
        return ids(r).sort();
      };
      expect(await get("due_before=9999-12-31")).toEqual(all);
      expect(await get("due_after=0000-01-01")).toEqual(all);
      expect(await get("due_after=1000-01-01&due_before=9999-12-31")).toEqual(all);
      expect(await get("due_before=0000-01-01")).toEqual([]);
      expect(await get("due_after=9999-12-31")).toContain(last.id);
      expect(await get("due_before=1000-01-01")).toEqual([first.id]);
      expect(await get("due_before=0999-12-31")).toEqual([]);
    });
  }

  test("impossible values are 422 problems, never 500", async () => {
    const me = await signedInUser(app, admin, uname());
    for (const qs of ["due_before=10000-01-01", "due_before=2026-02-30", "due_after=-0001-01-01", "due_before=%00", "limit=1e309", "limit=-1", "limit=NaN", "cursor=%00", "completed=maybe", "list_id=" + "x".repeat(100)]) {
      const r = await me.get(`/api/v1/tasks?${qs}`);
      expectProblem(r, 422, r.body?.code);
      expect(r.status).toBe(422);
    }
  });
});
