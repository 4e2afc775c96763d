import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { dump, makeTestApp, setupAdmin, signedInUser, type TestClient, type TestResponse } from "./helpers/app";
import { expectProblem } from "./helpers/problem";
import { mkTask, uname } from "./helpers/tasks";

/**
 * Issue 11 §5 for the legacy restore (JSON and CSV): every record passes the API's own checks (the
 * features' schemas and rule functions), values are normalised as the API normalises them, and a
 * full disk answers `507 storage_full` as the backup restore does.
 */

const app = makeTestApp();
let admin: TestClient;
let owner: TestClient;
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- export documents are edited field by field
let file: any;
afterAll(() => app.close());

beforeAll(async () => {
  admin = await setupAdmin(app);
  owner = await signedInUser(app, admin, uname("lea"));
  const t = await mkTask(owner, { title: "weekly", due_at: "2026-11-02" });
  expect((await owner.post("/api/v1/recurrences", { task_id: t.id, kind: "rrule", rrule: "FREQ=WEEKLY;BYDAY=MO" })).status).toBe(201);
  expect((await owner.post("/api/v1/countdowns", { name: "Trip", date: "2027-05-01" })).status).toBe(201);
  expect((await owner.post("/api/v1/memos", { content: "note" })).status).toBe(201);
  file = (await owner.get("/api/v1/export")).body;
});

const copy = () => structuredClone(file);

/** A rejected restore: the problem answer, and nothing changed. */
async function refused(run: () => Promise<TestResponse>, status: number, code: string): Promise<TestResponse> {
  const before = dump(app.db);
  const r = await run();
  expectProblem(r, status, code);
  expect(dump(app.db)).toEqual(before);
  return r;
}

describe("legacy restore: the API's rules", () => {
  test("a countdown pinned and archived is refused (it was restored with the pin silently dropped)", async () => {
    const c = await signedInUser(app, admin, uname("pia"));
    const f = copy();
    f.countdowns[0].pinned = true;
    f.countdowns[0].archived = true;
    const r = await refused(() => c.post("/api/v1/restore?mode=replace", f), 422, "validation_failed");
    expect(r.body.errors).toContainEqual({ path: "countdowns.0.pinned", message: "an archived countdown cannot be pinned (archiving unpins)" });
  });

  test("the same in CSV names the line and column", async () => {
    const c = await signedInUser(app, admin, uname("pim"));
    const csv = (await owner.get("/api/v1/export.csv")).text;
    const lines = csv.split("\r\n");
    const header = lines[0]!.replace(/^\ufeff/, "").split(",");
    const i = lines.findIndex((l) => l.startsWith("countdown,"));
    const cells = lines[i]!.split(",");
    cells[header.indexOf("pinned")] = "true";
    cells[header.indexOf("archived")] = "true";
    lines[i] = cells.join(",");
    const r = await refused(() => c.request("POST", "/api/v1/restore.csv?mode=replace", { body: lines.join("\r\n"), headers: { "content-type": "text/csv" } }), 422, "validation_failed");
    expect(r.body.errors).toContainEqual({ path: `line ${i + 1}, column ${header.indexOf("pinned") + 1} (pinned)`, message: "an archived countdown cannot be pinned (archiving unpins)" });
  });

  test("a recurrence on a subtask, by the API's rule (tasks.rules.ts)", async () => {
    const c = await signedInUser(app, admin, uname("ros"));
    const f = copy();
    const t = f.tasks.find((x: { id: string }) => x.id === f.recurrences[0].task_id);
    f.tasks.push({ ...t, id: "parent-of-the-recurring-one", title: "parent" });
    t.parent_id = "parent-of-the-recurring-one";
    const r = await refused(() => c.post("/api/v1/restore?mode=replace", f), 422, "validation_failed");
    expect(r.body.errors).toContainEqual({ path: "recurrences.0.task_id", message: "only top-level tasks recur; this task is a subtask of task parent-of-the-recurring-one" });
  });

  test("merge: a recurrence for a task you already have as a subtask, which the file has top-level (was restored: a recurring subtask)", async () => {
    const c = await signedInUser(app, admin, uname("rex"));
    const parent = await mkTask(c, { title: "parent" });
    const sub = await mkTask(c, { title: "sub", parent_id: parent.id, due_at: "2026-11-02" });
    const f = (await c.get("/api/v1/export")).body;
    f.tasks.find((x: { id: string }) => x.id === sub.id).parent_id = null;
    f.recurrences = [{ ...file.recurrences[0], id: "a-new-recurrence", task_id: sub.id }];
    const r = await refused(() => c.post("/api/v1/restore?mode=merge", f), 422, "validation_failed");
    expect(r.body.errors).toContainEqual({
      path: "recurrences.0.task_id",
      message: `task ${sub.id} already exists here as a subtask: only top-level tasks recur; this task is a subtask of task ${parent.id}`,
    });
    expect((await c.get(`/api/v1/tasks/${sub.id}/recurrence`)).body).toBeNull();
  });

  test("an RRULE is stored in the API's canonical text (it was stored as written)", async () => {
    const c = await signedInUser(app, admin, uname("rea"));
    const f = copy();
    f.recurrences[0].rrule = "rrule:freq=weekly;byday=mo";
    const r = await c.post("/api/v1/restore?mode=replace", f);
    expect(r.status).toBe(200);
    const again = (await c.get("/api/v1/export")).body;
    expect(again.recurrences[0].rrule).toBe("FREQ=WEEKLY;BYDAY=MO");
  });

  test("the API's field check of a recurrence's kind: an rrule recurrence with an interval", async () => {
    const c = await signedInUser(app, admin, uname("kai"));
    const f = copy();
    f.recurrences[0].interval = 2;
    const r = await refused(() => c.post("/api/v1/restore?mode=replace", f), 422, "validation_failed");
    expect(r.body.errors).toContainEqual({ path: "recurrences.0.interval", message: "only for kind after_completion" });
  });
});

describe("legacy restore: problems name a user's value by a prefix", () => {
  test("an unknown key of 100,000 characters (JSON), an unknown kind of 100,000 characters (CSV)", async () => {
    const c = await signedInUser(app, admin, uname("uma"));
    const f = copy();
    const key = "k".repeat(100_000);
    f.memos[0][key] = 1;
    const r = await refused(() => c.post("/api/v1/restore?mode=replace", f), 422, "validation_failed");
    expect(r.body.errors).toContainEqual({ path: `memos.0.${"k".repeat(40)}\u2026`, message: "unknown field" });
    expect(r.text.length).toBeLessThan(4096);

    const csv = (await owner.get("/api/v1/export.csv")).text.split("\r\n");
    const i = csv.findIndex((l) => l.startsWith("memo,"));
    csv[i] = csv[i]!.replace(/^memo,/, `${"z".repeat(100_000)},`);
    const r2 = await refused(() => c.request("POST", "/api/v1/restore.csv?mode=replace", { body: csv.join("\r\n"), headers: { "content-type": "text/csv" } }), 422, "validation_failed");
    expect(r2.body.errors[0].message).toBe(`unknown kind "${"z".repeat(40)}\u2026" (folder, list, task, recurrence, habit, countdown, memo)`);
    expect(r2.text.length).toBeLessThan(4096);
  });
});

describe("legacy restore: disk full", () => {
  test("507 storage_full, nothing changed, the server keeps serving (was 500)", async () => {
    const c = await signedInUser(app, admin, uname("dora"));
    const f = copy();
    // Enough data that the import needs pages the database may no longer have.
    f.memos = Array.from({ length: 400 }, (_, i) => ({ ...file.memos[0], id: Bun.randomUUIDv7(), content: `m${i} ` + "x".repeat(4000) }));
    const pages = (app.db.sqlite.query("PRAGMA page_count").get() as { page_count: number }).page_count;
    app.db.sqlite.run(`PRAGMA max_page_count = ${pages + 20}`);
    try {
      const r = await refused(() => c.post("/api/v1/restore?mode=replace", f), 507, "storage_full");
      expect(r.body.detail).toContain("nothing was changed");
      expect((await c.get("/api/v1/memos")).status).toBe(200);
    } finally {
      app.db.sqlite.run("PRAGMA max_page_count = 1073741823");
    }
    expect((app.db.sqlite.query("PRAGMA integrity_check").get() as { integrity_check: string }).integrity_check).toBe("ok");
    expect((await c.post("/api/v1/restore?mode=replace", f)).status).toBe(200);
  });
});
