import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { dump, makeTestApp, setupAdmin, signedInUser, type TestClient, type TestResponse } from "./helpers/app";
import { expectProblem } from "./helpers/problem";
import { mkList, mkTag, mkTask, uname } from "./helpers/tasks";
import { PNG, multipart, rawRequest, upload } from "./helpers/multipart";

const app = makeTestApp();
let admin: TestClient;
let alice: TestClient;
afterAll(() => app.close());

const KINDS = ["folders", "lists", "tasks", "recurrences", "habits", "countdowns", "memos"];

/** Fills an account with one of everything the legacy format covers, in every state. */
async function populate(c: TestClient) {
  const folder = (await c.post("/api/v1/folders", { name: "Work" })).body;
  await c.post("/api/v1/folders", { name: "Empty folder" });
  const list = await mkList(c, "Projects", { folder_id: folder.id, color: "#aabbcc" });
  const archived = await mkList(c, "Old");
  const home = await mkTag(c, "home");
  const urgent = await mkTag(c, "Urgent");
  const parent = await mkTask(c, {
    title: "Ship, \"quoted\" release",
    description: "line one\nline two, with comma\r\nand CRLF",
    list_id: list,
    due_at: "2026-12-01T09:00:00+01:00",
    priority: 3,
    tag_ids: [urgent, home],
  });
  await mkTask(c, { title: "subtask 中文", parent_id: parent.id, completed: true });
  await mkTask(c, { title: "=HYPERLINK(\"http://evil\")", description: "+1 and -2 and @SUM(A1)" });
  await mkTask(c, { title: "@cmd", description: "\tstarts with tab" });
  await mkTask(c, { title: "-minus", description: "'already quoted" });
  const dated = await mkTask(c, { title: "weekly", due_at: "2026-11-02" });
  const again = await mkTask(c, { title: "again", due_at: "2026-11-03T08:30:00.000Z" });
  const rr = await c.post("/api/v1/recurrences", { task_id: dated.id, kind: "rrule", rrule: "FREQ=WEEKLY;BYDAY=MO,WE" });
  expect(rr.status).toBe(201);
  expect((await c.post("/api/v1/recurrences", { task_id: again.id, kind: "after_completion", interval: 2, unit: "week", timezone: "Europe/Paris" })).status).toBe(201);
  const trashed = await mkTask(c, { title: "in the trash" });
  await c.delete(`/api/v1/tasks/${trashed.id}`);
  await mkTask(c, { title: "in an archived list", list_id: archived });
  await c.delete(`/api/v1/lists/${archived}`);
  expect((await c.post("/api/v1/habits", { name: "Read", frequency: { type: "weekdays", days: [1, 3, 5] }, goal: 2, unit: "pages", color: "#00ff00", icon: "book", start_date: "2026-01-01" })).status).toBe(201);
  const h2 = await c.post("/api/v1/habits", { name: "Old habit", start_date: "2025-06-01" });
  await c.delete(`/api/v1/habits/${h2.body.id}`);
  const cd = await c.post("/api/v1/countdowns", { name: "New year", date: "2027-02-06", type: "countdown", repeat: "yearly", calendar: "lunar", icon: "🎉" });
  expect(cd.status).toBe(201);
  await c.post(`/api/v1/countdowns/${cd.body.id}/pin`);
  await c.post("/api/v1/countdowns", { name: "Birthday", date: "1990-05-17", type: "birthday", repeat: "yearly" });
  await c.post("/api/v1/memos", { content: "# memo\n\n=not a formula", pinned: true });
  const m2 = await c.post("/api/v1/memos", { content: "deleted memo" });
  await c.delete(`/api/v1/memos/${m2.body.id}`);
  return { parent, list, folder };
}

/** Replaces every id by its order of first appearance, so two exports can be compared. */
function normaliseIds(text: string): string {
  const ids = new Map<string, string>();
  return text.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, (id) => {
    if (!ids.has(id)) ids.set(id, `ID${ids.size}`);
    return ids.get(id)!;
  });
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- export documents are checked field by field
function comparable(doc: any): any {
  const d = structuredClone(doc);
  delete d.exported_at;
  // The inbox is the restoring user's own: its creation time is generated, not restored.
  for (const l of d.lists) if (l.is_inbox) delete l.created_at;
  return JSON.parse(normaliseIds(JSON.stringify(d)));
}

function csvComparable(text: string): string {
  const lines = normaliseIds(text).split("\r\n");
  // The inbox row's created_at (third column from the end) is generated.
  return lines.map((l) => (l.startsWith("list,") && l.includes(",true,") ? l.replace(/,[^,]*,([^,]*),([^,]*)$/, ",X,$1,$2") : l)).join("\r\n");
}

async function csvRestore(c: TestClient, text: string | Uint8Array<ArrayBuffer>, mode = "replace"): Promise<TestResponse> {
  return c.request("POST", `/api/v1/restore.csv?mode=${mode}`, { body: text, headers: { "content-type": "text/csv" } });
}

/** A rejected restore: the problem answer, and nothing changed. */
async function refused(run: () => Promise<TestResponse>, status: number, code: string): Promise<TestResponse> {
  const before = dump(app.db);
  const r = await run();
  expectProblem(r, status, code);
  expect(dump(app.db)).toEqual(before);
  return r;
}

let exported: { json: TestResponse; csv: TestResponse };

beforeAll(async () => {
  admin = await setupAdmin(app);
  alice = await signedInUser(app, admin, uname("alice"));
  await populate(alice);
  exported = { json: await alice.get("/api/v1/export"), csv: await alice.get("/api/v1/export.csv") };
});

describe("export", () => {
  test("JSON: format, version, every kind, flat tasks with tag names, no computed fields", () => {
    const r = exported.json;
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toStartWith("application/json");
    expect(r.headers.get("content-disposition")).toMatch(/^attachment; filename="app-legacy-\d{4}-\d\d-\d\d\.json"$/);
    const d = r.body;
    expect(Object.keys(d)).toEqual(["format", "version", "exported_at", ...KINDS]);
    expect([d.format, d.version]).toEqual(["app-legacy", 1]);
    expect(d.folders.map((f: { name: string }) => f.name)).toEqual(["Work", "Empty folder"]);
    expect(d.lists.length).toBe(3);
    expect(d.lists[0]).toMatchObject({ name: "Inbox", is_inbox: true });
    expect(d.lists.find((l: { name: string }) => l.name === "Old").deleted_at).not.toBeNull();
    const ship = d.tasks.find((t: { title: string }) => t.title.startsWith("Ship"));
    expect(ship).toEqual({
      id: ship.id,
      list_id: expect.any(String),
      parent_id: null,
      title: 'Ship, "quoted" release',
      description: "line one\nline two, with comma\r\nand CRLF",
      completed: false,
      completed_at: null,
      due_at: "2026-12-01T08:00:00.000Z",
      priority: 3,
      rank: expect.any(String),
      tags: ["home", "Urgent"],
      reminders: [],
      created_at: ship.created_at,
      updated_at: ship.updated_at,
      deleted_at: null,
    });
    const sub = d.tasks.find((t: { title: string }) => t.title === "subtask 中文");
    expect(sub.parent_id).toBe(ship.id);
    expect(d.tasks.some((t: { deleted_at: string | null }) => t.deleted_at !== null)).toBe(true);
    expect(d.recurrences.map((x: { kind: string }) => x.kind).sort()).toEqual(["after_completion", "rrule"]);
    expect(d.recurrences.find((x: { kind: string }) => x.kind === "rrule")).toMatchObject({ rrule: "FREQ=WEEKLY;BYDAY=MO,WE", dtstart: "2026-11-02" });
    expect(d.habits[0]).toMatchObject({ name: "Read", frequency: { type: "weekdays", days: [1, 3, 5] }, goal: 2, unit: "pages", archived: false });
    expect(d.habits[1]).toMatchObject({ name: "Old habit", archived: true });
    const ny = d.countdowns.find((x: { name: string }) => x.name === "New year");
    expect(ny).toMatchObject({ calendar: "lunar", lunar: { month: 1, day: 1, leap: false }, pinned: true });
    expect(ny.next_date).toBeUndefined();
    expect(d.memos.length).toBe(2);
    expect(d.memos[0].version).toBeUndefined();
  });

  test("CSV: BOM, one header, a kind column, RFC 4180 quoting, formulas neutralised", async () => {
    const r = exported.csv;
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toStartWith("text/csv");
    // The bytes start with the UTF-8 BOM (a text() decoder removes it).
    const raw = await rawRequest(app, alice, "GET", "/api/v1/export.csv");
    expect([...raw.bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const text = new TextDecoder("utf-8", { ignoreBOM: true }).decode(raw.bytes);
    expect(text.charCodeAt(0)).toBe(0xfeff);
    const header = text.slice(1, text.indexOf("\r\n")).split(",");
    expect(header[0]).toBe("kind");
    expect(header).toContain("recurrence_kind");
    expect(text).toContain('"Ship, ""quoted"" release"');
    expect(text).toContain('"line one\nline two, with comma\r\nand CRLF"');
    expect(text).toContain(`"'=HYPERLINK(""http://evil"")"`);
    expect(text).toContain(",'+1 and -2 and @SUM(A1),");
    expect(text).toContain(",'@cmd,");
    expect(text).toContain(",'\tstarts with tab,");
    expect(text).toContain(",'-minus,");
    expect(text).toContain(",''already quoted,");
    // No cell of the file starts with a formula character.
    const cells = text.slice(1).match(/(?<=^|,|\r\n)("(?:[^"]|"")*"|[^,\r\n]*)/g) ?? [];
    for (const c of cells) expect(c.replace(/^"/, "")).not.toMatch(/^[=+\-@\t\r]/);
    const kinds = new Set(text.split("\r\n").slice(1, -1).map((l) => l.split(",")[0]));
    for (const k of ["folder", "list", "task", "recurrence", "habit", "countdown", "memo"]) expect(kinds.has(k)).toBe(true);
  });

  test("only the caller's data; both exports are audited", async () => {
    const other = await admin.get("/api/v1/export");
    expect(other.body.tasks).toEqual([]);
    expect(other.body.lists.length).toBe(1);
    const log = await alice.get("/api/v1/audit-logs?limit=10");
    const actions = log.body.items.map((i: { action: string }) => i.action);
    // Two in beforeAll, one more for the BOM check above.
    expect(actions.filter((a: string) => a === "legacy_exported").length).toBe(3);
  });

  test("without a session: 401", async () => {
    expect((await app.client().get("/api/v1/export")).status).toBe(401);
  });
});

describe("round trip", () => {
  test("JSON: export → replace into another account → export again is identical apart from ids and generated timestamps", async () => {
    const bob = await signedInUser(app, admin, uname("bob"));
    await mkTask(bob, { title: "bob's own task, replaced" });
    const r = await bob.post("/api/v1/restore?mode=replace", exported.json.body);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      mode: "replace",
      counts: { folders: 2, lists: 2, tasks: 9, recurrences: 2, habits: 2, countdowns: 2, memos: 2 },
      skipped: { folders: 0, lists: 0, tasks: 0, recurrences: 0, habits: 0, countdowns: 0, memos: 0 },
    });
    const again = await bob.get("/api/v1/export");
    expect(comparable(again.body)).toEqual(comparable(exported.json.body));
    // Ids owned by alice were not reused: every id is new.
    const aliceIds = new Set(exported.json.text.match(/[0-9a-f-]{36}/g));
    for (const id of again.text.match(/[0-9a-f-]{36}/g) ?? []) expect(aliceIds.has(id)).toBe(false);
    // What was restored works through the API: the subtask is under its parent, tags exist.
    const tasks = await bob.get("/api/v1/tasks?q=Ship");
    expect(tasks.body.items[0].subtasks.map((s: { title: string }) => s.title)).toEqual(["subtask 中文"]);
    expect(tasks.body.items[0].tags.map((t: { name: string }) => t.name)).toEqual(["home", "Urgent"]);
    expect((await bob.get("/api/v1/tasks?q=replaced")).body.items).toEqual([]);
    const log = await bob.get("/api/v1/audit-logs?limit=5");
    expect(log.body.items.find((i: { action: string }) => i.action === "legacy_restored").detail).toMatchObject({ mode: "replace", format: "json" });
  });

  test("CSV: export → replace into another account → export again is identical apart from ids and generated timestamps", async () => {
    const carol = await signedInUser(app, admin, uname("carol"));
    const r = await csvRestore(carol, exported.csv.text);
    expect(r.status).toBe(200);
    expect(r.body.counts.tasks).toBe(9);
    const again = await carol.get("/api/v1/export.csv");
    expect(csvComparable(again.text)).toBe(csvComparable(exported.csv.text));
    // The neutralising quote is gone again after restore.
    const json = (await carol.get("/api/v1/export")).body;
    const titles = json.tasks.map((t: { title: string }) => t.title);
    expect(titles).toContain('=HYPERLINK("http://evil")');
    expect(titles).toContain("@cmd");
    expect(json.tasks.find((t: { title: string }) => t.title === "-minus").description).toBe("'already quoted");
    expect(comparable(json)).toEqual(comparable(exported.json.body));
  });

  test("CSV as the field `file` of a multipart body", async () => {
    const dave = await signedInUser(app, admin, uname("dave"));
    const { body, contentType } = multipart([{ name: "file", filename: "export.csv", type: "text/csv", data: exported.csv.text }]);
    const r = await rawRequest(app, dave, "POST", "/api/v1/restore.csv?mode=merge", { body, headers: { "content-type": contentType } });
    expect(r.status).toBe(200);
    expect(r.json.counts.tasks).toBe(9);
  });

  test("merge into the same account adds nothing and changes nothing; re-running reports the same", async () => {
    const before = dump(app.db, ["audit_logs", "sessions", "__drizzle_migrations"]);
    const r = await alice.post("/api/v1/restore?mode=merge", exported.json.body);
    expect(r.status).toBe(200);
    expect(r.body.counts).toEqual({ folders: 0, lists: 0, tasks: 0, recurrences: 0, habits: 0, countdowns: 0, memos: 0 });
    expect(r.body.skipped).toEqual({ folders: 2, lists: 2, tasks: 9, recurrences: 2, habits: 2, countdowns: 2, memos: 2 });
    expect(dump(app.db)).toEqual(before);
  });

  test("merge keeps a free id, gives a taken one a new id, and keeps the user's pinned countdown", async () => {
    const erin = await signedInUser(app, admin, uname("erin"));
    const pin = await erin.post("/api/v1/countdowns", { name: "mine", date: "2030-01-01" });
    await erin.post(`/api/v1/countdowns/${pin.body.id}/pin`);
    const freeId = "01900000-0000-7000-8000-0000000000aa";
    const file = structuredClone(exported.json.body);
    file.memos[0].id = freeId;
    const r = await erin.post("/api/v1/restore?mode=merge", file);
    expect(r.status).toBe(200);
    expect(r.body.counts.memos).toBe(2);
    expect((await erin.get(`/api/v1/memos/${freeId}`)).status).toBe(200);
    // alice's ids are taken: erin's copies got new ones.
    const alicesMemo = exported.json.body.memos[1].id;
    expect((await erin.get(`/api/v1/memos/${alicesMemo}`)).status).toBe(404);
    const cds = (await erin.get("/api/v1/countdowns")).body.items;
    expect(cds.filter((x: { pinned: boolean }) => x.pinned).map((x: { name: string }) => x.name)).toEqual(["mine"]);
    // The file's inbox tasks went to erin's own inbox; she still has exactly one inbox.
    const lists = (await erin.get("/api/v1/lists")).body.items;
    expect(lists.filter((l: { is_inbox: boolean }) => l.is_inbox).length).toBe(1);
  });

  test("restore reuses the user's tags by name (case-insensitively) and creates the missing ones", async () => {
    const gina = await signedInUser(app, admin, uname("gina"));
    const mine = await mkTag(gina, "HOME", "#123456");
    const r = await gina.post("/api/v1/restore?mode=merge", exported.json.body);
    expect(r.status).toBe(200);
    const tags = (await gina.get("/api/v1/tags")).body.items;
    expect(tags.map((t: { name: string }) => t.name).sort()).toEqual(["HOME", "Urgent"]);
    expect(tags.find((t: { name: string }) => t.name === "HOME")).toEqual({ id: mine, name: "HOME", color: "#123456" });
  });

  test("merge: a new subtask under a task the user already has as a subtask is invalid_parent, nothing changes", async () => {
    const file = structuredClone(exported.json.body);
    const sub = file.tasks.find((t: { parent_id: string | null }) => t.parent_id !== null);
    // In alice's account `sub` exists (a subtask); the file now says it is top-level with a child.
    sub.parent_id = null;
    file.tasks.push({ ...sub, id: "01900000-0000-7000-8000-0000000000dd", parent_id: sub.id, title: "child of an existing subtask" });
    const r = await refused(() => alice.post("/api/v1/restore?mode=merge", file), 422, "invalid_parent");
    expect(r.body.errors[0].path).toBe(`tasks.${file.tasks.length - 1}.parent_id`);
  });

  test("CSV: a subtask of a subtask and a missing list are named by line and column", async () => {
    const json = structuredClone(exported.json.body);
    const sub = json.tasks.find((t: { parent_id: string | null }) => t.parent_id !== null);
    json.tasks.push({ ...sub, id: "01900000-0000-7000-8000-0000000000ee", parent_id: sub.id, title: "grandchild" });
    const hank = await signedInUser(app, admin, uname("hank"));
    // Build the CSV through the server: restore the JSON would fail, so write the row by hand.
    const header = exported.csv.text.slice(0, exported.csv.text.indexOf("\r\n")).replace(/^\ufeff/, "").split(",");
    const row = header.map((c) => {
      const v = c === "kind" ? "task" : (json.tasks.at(-1) as Record<string, unknown>)[c];
      return v === undefined || v === null ? "" : typeof v === "object" ? `"${JSON.stringify(v).replace(/"/g, '""')}"` : String(v);
    });
    const text = exported.csv.text + row.join(",") + "\r\n";
    const line = text.split("\n").length - 1;
    const r = await refused(() => csvRestore(hank, text), 422, "invalid_parent");
    expect(r.body.errors[0].path).toBe(`line ${line}, column ${header.indexOf("parent_id") + 1} (parent_id)`);
    const missing = row.map((c, i) => (header[i] === "list_id" ? "01900000-0000-7000-8000-0000000000ff" : header[i] === "parent_id" ? "" : c));
    const r2 = await refused(() => csvRestore(hank, exported.csv.text + missing.join(",") + "\r\n"), 422, "invalid_reference");
    expect(r2.body.errors[0].path).toBe(`line ${line}, column ${header.indexOf("list_id") + 1} (list_id)`);
  });

  test("replace removes the account's attachment files (after the commit)", async () => {
    const frank = await signedInUser(app, admin, uname("frank"));
    const t = await mkTask(frank, { title: "with a file" });
    const a = await upload(app, frank, t.id, { filename: "a.png", data: PNG });
    expect(a.status).toBe(201);
    const r = await frank.post("/api/v1/restore?mode=replace", exported.json.body);
    expect(r.status).toBe(200);
    expect(existsSync(join(app.dir, "attachments", a.json.id))).toBe(false);
    expect((await frank.get("/api/v1/me")).body.attachment_bytes).toBe(0);
  });
});

describe("rejected restores change nothing", () => {
  const base = () => structuredClone(exported.json.body);

  test("truncated JSON: 400 malformed_request", async () => {
    await refused(
      () => alice.request("POST", "/api/v1/restore?mode=replace", { body: exported.json.text.slice(0, 500), headers: { "content-type": "application/json" } }),
      400,
      "malformed_request",
    );
  });

  test("the JSON is read record by record, yet answered as a whole: a syntax error anywhere is 400 before any 422", async () => {
    const json = (body: string) => () => alice.request("POST", "/api/v1/restore?mode=replace", { body, headers: { "content-type": "application/json" } });
    // The last record broken (a comma before its closing brace).
    const breakLast = (t: string) => {
      const k = t.lastIndexOf("}]}");
      return `${t.slice(0, k)},${t.slice(k)}`;
    };
    await refused(json(breakLast(JSON.stringify({ ...base(), format: "app-backup" }))), 400, "malformed_request");
    await refused(json(breakLast(JSON.stringify({ ...base(), extra: 1 }))), 400, "malformed_request");
    const invalid = base();
    invalid.tasks[0].due_at = "2026-02-30";
    await refused(json(breakLast(JSON.stringify(invalid))), 400, "malformed_request");
    // An earlier occurrence of a key is overridden, but must still be JSON.
    await refused(json(`{"memos":[{"id":1,}],${JSON.stringify(base()).slice(1)}`), 400, "malformed_request");
    await refused(json(`${JSON.stringify(base())} x`), 400, "malformed_request");
    await refused(json(`${JSON.stringify(base())}}`), 400, "malformed_request");
    const notUtf8 = new Uint8Array([...new TextEncoder().encode(JSON.stringify(base()).slice(0, -2)), 0xe9, 0x5d, 0x7d]);
    await refused(() => alice.request("POST", "/api/v1/restore?mode=replace", { body: notUtf8, headers: { "content-type": "application/json" } }), 400, "malformed_request");
    // A "__proto__" member is an unknown field like any other (it cannot stand in for the envelope).
    const { format: _f, ...rest } = base();
    const p = await refused(json(`{"__proto__":{"format":"app-legacy"},${JSON.stringify(rest).slice(1)}`), 422, "validation_failed");
    expect(p.body.errors[0].path).toBe("format");
    const q = await refused(json(`{"__proto__":1,${JSON.stringify(base()).slice(1)}`), 422, "validation_failed");
    expect(q.body.errors).toEqual([{ path: "__proto__", message: "unknown field" }]);
    // A kind that is not an array, even when an earlier occurrence was one.
    const k = await refused(json(`{"tasks":[],${JSON.stringify({ ...base(), tasks: { a: 1 } }).slice(1)}`), 422, "validation_failed");
    expect(k.body.errors).toEqual([{ path: "tasks", message: "must be an array" }]);
  });

  test("problems are listed kind by kind in file order, at most 100 and a few", async () => {
    const file = base();
    // Records of a later kind first in the text: still listed after the earlier kinds.
    const memos = Array.from({ length: 150 }, (_, i) => ({ ...file.memos[0], id: `m${i}`, content: "" }));
    const text = `{"memos":${JSON.stringify(memos)},${JSON.stringify({ ...file, memos: undefined }).slice(1)}`;
    const withBadTask = text.replace(`"priority":${file.tasks[0].priority}`, '"priority":"high"');
    const r = await refused(
      () => alice.request("POST", "/api/v1/restore?mode=replace", { body: withBadTask, headers: { "content-type": "application/json" } }),
      422,
      "validation_failed",
    );
    expect(r.body.errors[0].path).toBe("tasks.0.priority");
    expect(r.body.errors[1].path).toBe("memos.0.content");
    expect(r.body.errors.length).toBe(100);
    expect(r.body.detail).toContain("first 100 of 101 listed");
  });

  test("wrong version, wrong format, not an object: 422 naming the field", async () => {
    const r = await refused(() => alice.post("/api/v1/restore?mode=replace", { ...base(), version: 2 }), 422, "validation_failed");
    expect(r.body.errors[0].path).toBe("version");
    const f = await refused(() => alice.post("/api/v1/restore?mode=replace", { ...base(), format: "app-backup" }), 422, "validation_failed");
    expect(f.body.errors[0].path).toBe("format");
    await refused(() => alice.post("/api/v1/restore?mode=replace", [1, 2]), 422, "validation_failed");
    const u = await refused(() => alice.post("/api/v1/restore?mode=replace", { ...base(), extra: 1 }), 422, "validation_failed");
    expect(u.body.errors).toEqual([{ path: "extra", message: "unknown field" }]);
  });

  test("a bad date names the record and field; every problem is listed", async () => {
    const file = base();
    file.tasks[2].due_at = "2026-02-30";
    file.habits[0].start_date = "yesterday";
    file.memos[0].surprise = true;
    const r = await refused(() => alice.post("/api/v1/restore?mode=replace", file), 422, "validation_failed");
    const paths = r.body.errors.map((e: { path: string }) => e.path);
    expect(paths).toContain("tasks.2.due_at");
    expect(paths).toContain("habits.0.start_date");
    expect(paths).toContain("memos.0.surprise");
  });

  test("a subtask of a subtask: 422 invalid_parent", async () => {
    const file = base();
    const sub = file.tasks.find((t: { parent_id: string | null }) => t.parent_id !== null);
    file.tasks.push({ ...sub, id: "01900000-0000-7000-8000-0000000000bb", parent_id: sub.id, title: "grandchild" });
    const r = await refused(() => alice.post("/api/v1/restore?mode=replace", file), 422, "invalid_parent");
    expect(r.body.errors[0].path).toBe(`tasks.${file.tasks.length - 1}.parent_id`);
  });

  test("a reference to a missing list: 422 invalid_reference", async () => {
    const file = base();
    const i = file.tasks.findIndex((t: { title: string }) => t.title === "@cmd");
    file.tasks[i].list_id = "01900000-0000-7000-8000-0000000000cc";
    const r = await refused(() => alice.post("/api/v1/restore?mode=replace", file), 422, "invalid_reference");
    expect(r.body.errors).toEqual([{ path: `tasks.${i}.list_id`, message: "no list 01900000-0000-7000-8000-0000000000cc in the file" }]);
  });

  test("duplicate ids, two inboxes, two pinned countdowns, a recurrence on a subtask, a bad rrule", async () => {
    const file = base();
    file.memos[1].id = file.memos[0].id;
    file.lists[1].is_inbox = true;
    file.countdowns[1].pinned = true;
    file.countdowns[0].pinned = true;
    const sub = file.tasks.find((t: { parent_id: string | null }) => t.parent_id !== null);
    file.recurrences[0].task_id = sub.id;
    file.recurrences[1].rrule = file.recurrences[1].kind === "rrule" ? "FREQ=SOMETIMES" : file.recurrences[1].rrule;
    const r = await refused(() => alice.post("/api/v1/restore?mode=replace", file), 422, "validation_failed");
    expect(r.body.errors.length).toBeGreaterThanOrEqual(4);
  });

  test("mode must be merge or replace; unknown query parameters are refused", async () => {
    await refused(() => alice.post("/api/v1/restore?mode=overwrite", base()), 422, "validation_failed");
    await refused(() => alice.post("/api/v1/restore?mode=merge&x=1", base()), 422, "validation_failed");
  });

  test("CSV with a missing column: 422 naming it", async () => {
    const lines = exported.csv.text.split("\r\n");
    const header = lines[0]!.split(",");
    const col = header.indexOf("due_at");
    const cut = lines.map((l, i) => (i === 0 ? header.filter((_, j) => j !== col).join(",") : l)).join("\r\n");
    const r = await refused(() => csvRestore(alice, cut), 422, "validation_failed");
    expect(r.body.errors).toContainEqual({ path: "line 1", message: "missing column due_at" });
  });

  test("CSV with an unknown kind and a bad date: line and column named", async () => {
    const text = exported.csv.text;
    const header = text.slice(1, text.indexOf("\r\n")).split(",");
    const dueCol = header.indexOf("due_at");
    // A task row without quoted cells, edited by position; its physical line counts the newlines
    // inside quoted cells before it.
    const start = text.search(/\r\ntask,(?:[^"\r\n])*\r\n/) + 2;
    const end = text.indexOf("\r\n", start);
    const line = text.slice(0, start).split("\n").length;
    const cells = text.slice(start, end).split(",");
    const withCell = (i: number, v: string) => text.slice(0, start) + cells.map((c, j) => (j === i ? v : c)).join(",") + text.slice(end);
    const r = await refused(() => csvRestore(alice, withCell(dueCol, "2026-13-01")), 422, "validation_failed");
    expect(r.body.errors).toEqual([{ path: `line ${line}, column ${dueCol + 1} (due_at)`, message: expect.any(String) }]);
    const u = await refused(() => csvRestore(alice, withCell(0, "gadget")), 422, "validation_failed");
    expect(u.body.errors[0].path).toBe(`line ${line}, column 1 (kind)`);
    expect(u.body.errors[0].message).toContain("unknown kind");
  });

  test("CSV that is not UTF-8: 400; an unclosed quote: 422 with its line", async () => {
    const latin1: Uint8Array<ArrayBuffer> = new Uint8Array([...new TextEncoder().encode(exported.csv.text.slice(0, 200)), 0xe9, 0x0d, 0x0a]);
    await refused(() => csvRestore(alice, latin1), 400, "malformed_request");
    const { body, contentType } = multipart([{ name: "file", filename: "x.csv", data: latin1 }]);
    const before = dump(app.db);
    const m = await rawRequest(app, alice, "POST", "/api/v1/restore.csv?mode=replace", { body, headers: { "content-type": contentType } });
    expect([m.status, m.json.code]).toEqual([400, "malformed_request"]);
    expect(dump(app.db)).toEqual(before);
    const r = await refused(() => csvRestore(alice, exported.csv.text + 'memo,"never closed'), 422, "validation_failed");
    expect(r.body.errors[0].path).toBe(`line ${exported.csv.text.split("\n").length}, column 2`);
  });

  test("a 70 MB body: 413 before it is read whole", async () => {
    const big = "x".repeat(70 * 1024 * 1024);
    await refused(() => alice.request("POST", "/api/v1/restore?mode=replace", { body: big, headers: { "content-type": "application/json" } }), 413, "payload_too_large");
    await refused(() => csvRestore(alice, big), 413, "payload_too_large");
  });

  test("JSON to restore.csv and CSV to restore are 400", async () => {
    await refused(() => alice.post("/api/v1/restore.csv?mode=merge", base()), 400, "malformed_request");
    await refused(() => alice.request("POST", "/api/v1/restore?mode=merge", { body: exported.csv.text, headers: { "content-type": "text/csv" } }), 400, "malformed_request");
  });

  test("without the CSRF token: 403", async () => {
    await refused(() => alice.post("/api/v1/restore?mode=replace", base(), { csrf: false }), 403, "csrf_failed");
  });
});
