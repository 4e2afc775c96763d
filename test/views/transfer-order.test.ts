// Manual order and list sorts through backup and legacy (issue 14): exported and restored as they
// were; files written before them (no `rank`, no `sort`, a CSV without those columns) restore with
// each task last among its siblings in the file's order, and lists sorted `created`.
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { makeTestApp, setupAdmin, signedInUser, type TestClient } from "../helpers/app";
import { mkList, mkTask, uname } from "../helpers/tasks";
import { entriesOf, exportBytes, preflight, readJson, rebuild, writeJson } from "../backup/helpers";

// Exports and restores run in the job worker; on a loaded machine one test takes well over bun's 5 s default.
setDefaultTimeout(120_000);

const app = makeTestApp();
afterAll(() => app.close());
const admin = await setupAdmin(app);

/** A list "L" with tasks a, b, c, d moved into the order d, b, a, c, sorted by priority; p with subtasks s2, s1. */
async function arrange(c: TestClient): Promise<void> {
  const l = await mkList(c, "L");
  const t: Record<string, string> = {};
  for (const n of ["a", "b", "c", "d"]) t[n] = (await mkTask(c, { title: n, list_id: l })).id;
  await c.post(`/api/v1/tasks/${t.d}/move`, { to: "first" });
  await c.post(`/api/v1/tasks/${t.a}/move`, { after_id: t.b });
  expect((await c.patch(`/api/v1/lists/${l}`, { sort: "priority" })).status).toBe(200);
  const p = await mkTask(c, { title: "p", list_id: l });
  const s1 = await mkTask(c, { title: "s1", parent_id: p.id });
  await mkTask(c, { title: "s2", parent_id: p.id });
  await c.post(`/api/v1/tasks/${s1.id}/move`, { to: "last" });
}

async function state(c: TestClient) {
  const list = (await c.get("/api/v1/lists")).body.items.find((x: { name: string }) => x.name === "L");
  const tasks = (await c.get(`/api/v1/tasks?list_id=${list.id}&sort=manual`)).body.items;
  return {
    sort: list.sort,
    order: tasks.map((t: { title: string }) => t.title),
    subtasks: tasks.find((t: { title: string }) => t.title === "p").subtasks.map((s: { title: string }) => s.title),
  };
}

describe("backup", () => {
  test("ranks and sorts round-trip; an archive without them restores in file order", async () => {
    const c = await signedInUser(app, admin, uname());
    await arrange(c);
    const before = await state(c);
    expect(before).toEqual({ sort: "priority", order: ["d", "b", "a", "c", "p"], subtasks: ["s2", "s1"] });
    const zip = await exportBytes(app, c);
    const entries = entriesOf(zip);
    expect(readJson<{ rank: string }[]>(entries, "data/tasks.json").every((t) => typeof t.rank === "string")).toBe(true);
    const pf = await preflight(c, zip, "replace");
    expect(pf.status).toBe(200);
    expect((await c.post("/api/v1/backup/restore", { preflight_token: pf.body.preflight_token, mode: "replace" })).status).toBe(200);
    expect(await state(c)).toEqual(before);

    // An archive from before issue 14: no rank, no sort.
    const tasks = readJson<Record<string, unknown>[]>(entries, "data/tasks.json").map(({ rank: _, ...t }) => t);
    const lists = readJson<Record<string, unknown>[]>(entries, "data/lists.json").map(({ sort: _, ...l }) => l);
    writeJson(entries, "data/tasks.json", tasks);
    writeJson(entries, "data/lists.json", lists);
    const old = rebuild(entries);
    const pf2 = await preflight(c, old, "replace");
    expect(pf2.status).toBe(200);
    expect((await c.post("/api/v1/backup/restore", { preflight_token: pf2.body.preflight_token, mode: "replace" })).status).toBe(200);
    const after = await state(c);
    expect(after.sort).toBe("created");
    // The archive lists tasks by id (creation order): each goes last as it is restored.
    expect(after.order).toEqual(["a", "b", "c", "d", "p"]);
    expect(after.subtasks).toEqual(["s1", "s2"]);
  });

  test("a rank that is not a key is refused at preflight", async () => {
    const c = await signedInUser(app, admin, uname());
    await mkTask(c, { title: "x" });
    const entries = entriesOf(await exportBytes(app, c));
    for (const bad of ["", "a", "a0 ", "a00", "x".repeat(65), 7]) {
      writeJson(entries, "data/tasks.json", readJson<Record<string, unknown>[]>(entries, "data/tasks.json").map((t) => ({ ...t, rank: bad })));
      const r = await preflight(c, rebuild(entries), "replace");
      expect(r.status).toBe(422);
      expect(r.body.code).toBe("backup_invalid");
    }
  });
});

describe("legacy", () => {
  test("JSON and CSV carry rank and sort; files without them restore in file order", async () => {
    const c = await signedInUser(app, admin, uname());
    await arrange(c);
    const before = await state(c);
    const json = (await c.get("/api/v1/export")).body;
    expect(json.tasks.every((t: { rank: unknown }) => typeof t.rank === "string")).toBe(true);
    expect((await c.post("/api/v1/restore?mode=replace", json)).status).toBe(200);
    expect(await state(c)).toEqual(before);
    const csv = (await c.get("/api/v1/export.csv")).text;
    const csvRestore = (text: string) => c.request("POST", "/api/v1/restore.csv?mode=replace", { body: text, headers: { "content-type": "text/csv" } });
    expect((await csvRestore(csv)).status).toBe(200);
    expect(await state(c)).toEqual(before);

    const plain = { ...json, lists: json.lists.map(({ sort: _, ...l }: Record<string, unknown>) => l), tasks: json.tasks.map(({ rank: _, ...t }: Record<string, unknown>) => t) };
    expect((await c.post("/api/v1/restore?mode=replace", plain)).status).toBe(200);
    const fromJson = await state(c);
    expect(fromJson.sort).toBe("created");
    expect(fromJson.order).toEqual(["a", "b", "c", "d", "p"]);

    // A CSV from before: without the two columns.
    const rows = csv.split(/\r?\n/);
    const header = rows[0]!.split(",");
    const drop = new Set([header.indexOf("rank"), header.indexOf("sort")]);
    expect(drop.has(-1)).toBe(false);
    // Cells in these exports hold no commas or quotes in the two dropped columns' rows for this data.
    const cut = (line: string) => {
      const cells: string[] = [];
      let cur = "";
      let q = false;
      for (const ch of line) {
        if (ch === '"') q = !q;
        if (ch === "," && !q) {
          cells.push(cur);
          cur = "";
        } else cur += ch;
      }
      cells.push(cur);
      return cells.filter((_, i) => !drop.has(i)).join(",");
    };
    const oldCsv = rows.map((r) => (r === "" ? r : cut(r))).join("\r\n");
    const r = await csvRestore(oldCsv);
    expect(r.status).toBe(200);
    const fromCsv = await state(c);
    expect(fromCsv.sort).toBe("created");
    expect(fromCsv.order).toEqual(["a", "b", "c", "d", "p"]);
  });
});
