import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { strToU8, zipSync } from "fflate";
import { dump, makeTestApp, setupAdmin, type TestApp, type TestClient } from "../helpers/app";
import { entriesOf, exportBytes, preflight, readJson, rebuild, seed, sha256, writeJson, type Seeded } from "./helpers";
import { buildZip, rawEntries } from "./zip-writer";

/**
 * Issue 11 §5: a restore enforces what the API enforces, by the API's own code. Each archive
 * below was accepted and restored before; each is now `422 backup_invalid` at preflight, naming
 * the record, and nothing changes. A value the API normalises (a `due_at` with an offset) is
 * normalised the same way.
 */

type Rec = Record<string, unknown>;
let app: TestApp;
let c: TestClient;
let ids: Seeded;
let base: Record<string, Uint8Array>;

// A small attachment limit, so "over the limit" needs no big file (the seeded file has 8 bytes).
const LIMIT = 64;

beforeAll(async () => {
  // Many accepted preflights here stay pending: room for them.
  app = makeTestApp({ config: { attachmentMaxBytes: LIMIT, backupPendingMax: 100 } });
  c = await setupAdmin(app);
  ids = await seed(c);
  base = entriesOf(await exportBytes(app, c));
});
afterAll(() => app.close());

const clone = () => Object.fromEntries(Object.entries(base).map(([k, v]) => [k, v.slice()]));

/** Preflights `zip`: 422 backup_invalid with a problem matching `message` at `path`; nothing stored or staged. */
async function refused(zip: Uint8Array, path: string | RegExp, message: RegExp, mode: "merge" | "replace" = "replace") {
  const before = dump(app.db);
  const staged = readdirSync(join(app.dir, "backup", "staging")).sort();
  const r = await preflight(c, zip, mode);
  expect(r.status).toBe(422);
  expect(r.body.code).toBe("backup_invalid");
  const errors = r.body.errors as { path: string; message: string }[];
  const hit = errors.find((e) => (typeof path === "string" ? e.path === path : path.test(e.path)) && message.test(e.message));
  if (!hit) throw new Error(`no problem ${message} at ${String(path)} in ${JSON.stringify(errors)}`);
  expect(dump(app.db)).toEqual(before);
  expect(readdirSync(join(app.dir, "backup", "staging")).sort()).toEqual(staged);
  return errors;
}

/** The archive with one data entry changed by `f`. */
function changed(name: string, f: (rows: Rec[]) => Rec[]): Record<string, Uint8Array> {
  const e = clone();
  writeJson(e, name, f(readJson<Rec[]>(e, name)));
  return e;
}

const attachmentEntry = () => `attachments/${ids.attachment}`;

describe("attachments: the upload's limit and allow-list", () => {
  test("an attachment over the size limit (APP_ATTACHMENT_MAX_BYTES)", async () => {
    const e = clone();
    const bytes = strToU8("x".repeat(LIMIT + 1));
    e[attachmentEntry()] = bytes;
    writeJson(e, "data/attachments.json", readJson<Rec[]>(e, "data/attachments.json").map((a) => ({ ...a, size: bytes.byteLength, sha256: sha256(bytes) })));
    await refused(rebuild(e), "data/attachments.json[0].size", /larger than an attachment may be \(64 bytes/);
  });

  test("a content_type outside the allow-list: the bytes decide, as at upload", async () => {
    // Plain text declared text/html: stored and served as text/html before.
    const e = changed("data/attachments.json", (r) => r.map((a) => ({ ...a, content_type: "text/html" })));
    await refused(rebuild(e), `data/attachments.json#${ids.attachment}.content_type`, /"text\/html" is not the type of these bytes \(text\/plain; charset=utf-8\)/);
    // HTML bytes: refused by the allow-list itself, whatever they are declared as.
    const html = clone();
    const bytes = strToU8("<html><script>alert(1)</script></html>");
    html[attachmentEntry()] = bytes;
    writeJson(html, "data/attachments.json", readJson<Rec[]>(html, "data/attachments.json").map((a) => ({ ...a, size: bytes.byteLength, sha256: sha256(bytes), content_type: "text/plain; charset=utf-8" })));
    await refused(rebuild(html), attachmentEntry(), /HTML, SVG and XML files are not allowed/);
  });

  test("a content_type with CR/LF (every later download answered 500)", async () => {
    const e = changed("data/attachments.json", (r) => r.map((a) => ({ ...a, content_type: "text/plain; charset=utf-8\r\nX-Evil: 1" })));
    await refused(rebuild(e), `data/attachments.json#${ids.attachment}.content_type`, /is not the type of these bytes/);
  });

  test("an empty attachment (an upload is never empty)", async () => {
    const e = clone();
    e[attachmentEntry()] = new Uint8Array(0);
    writeJson(e, "data/attachments.json", readJson<Rec[]>(e, "data/attachments.json").map((a) => ({ ...a, size: 0, sha256: sha256(new Uint8Array(0)) })));
    await refused(rebuild(e), "data/attachments.json[0].size", /./);
  });
});

describe("habits, countdowns, dates", () => {
  test("overlapping habit pauses", async () => {
    const e = changed("data/habit_pauses.json", (r) => [...r, { ...r[0]!, id: "01900000-0000-7000-8000-0000000000a1", start_date: "2025-03-01", end_date: "2025-03-10" }]);
    await refused(rebuild(e), "data/habit_pauses.json[1].start_date", new RegExp(`the pause overlaps pause ${ids.pause} \\(2025-02-01 to open-ended\\)`));
  });

  test("pause overlaps are found in any order, also with a pause that is not the previous one", async () => {
    const p = (n: number, start_date: string, end_date: string | null) => ({ id: `01900000-0000-7000-8000-0000000000b${n}`, start_date, end_date });
    const pauses = (list: ReturnType<typeof p>[]) => changed("data/habit_pauses.json", (r) => list.map((x) => ({ ...r[0]!, ...x })));
    // Apart from each other, given out of order: accepted.
    expect((await preflight(c, rebuild(pauses([p(1, "2025-06-01", "2025-06-02"), p(2, "2025-01-01", "2025-01-31"), p(3, "2025-07-01", null)])))).status).toBe(200);
    // A long pause, then two inside it: each overlaps the long one (the second not the one before it).
    const errors = await refused(
      rebuild(pauses([p(4, "2025-06-01", "2025-06-02"), p(5, "2025-01-01", "2025-12-31"), p(6, "2025-02-01", "2025-02-05")])),
      "data/habit_pauses.json[0].start_date",
      /overlaps pause 01900000-0000-7000-8000-0000000000b5/,
    );
    expect(errors.some((e) => e.path === "data/habit_pauses.json[2].start_date")).toBe(true);
  });

  const lunar = (patch: Rec) => changed("data/countdowns.json", (r) => r.map((x) => ({ ...x, calendar: "lunar", date: "2001-01-24", ...patch })));
  test("lunar fields that disagree with the date, or a leap month that does not exist", async () => {
    // 2001-01-24 is the first day of the first lunar month: as the API computes it, accepted.
    expect((await preflight(c, rebuild(lunar({ lunar: { month: 1, day: 1, leap: false } })))).status).toBe(200);
    await refused(rebuild(lunar({ lunar: { month: 2, day: 30, leap: true } })), "data/countdowns.json[0].lunar", /lunar month and day of 2001-01-24 are month 1, day 1/);
    await refused(rebuild(lunar({ lunar: { month: 1, day: 1, leap: true } })), "data/countdowns.json[0].lunar", /month 1, day 1/);
    // A Gregorian countdown has none.
    await refused(rebuild(changed("data/countdowns.json", (r) => r.map((x) => ({ ...x, lunar: { month: 1, day: 1, leap: false } })))), "data/countdowns.json[0].lunar", /./);
  });

  test("a countdown pinned and archived", async () => {
    const e = changed("data/countdowns.json", (r) => r.map((x) => ({ ...x, pinned: true, archived: true, archived_at: "2026-01-01T00:00:00.000Z" })));
    await refused(rebuild(e), "data/countdowns.json[0].pinned", /an archived countdown cannot be pinned/);
  });

  test("dates before what the API takes: a countdown before 1000-01-01, a habit before 1900", async () => {
    await refused(rebuild(changed("data/countdowns.json", (r) => r.map((x) => ({ ...x, date: "0999-12-31" })))), "data/countdowns.json[0].date", /1000-01-01 or later/);
    await refused(rebuild(changed("data/habits.json", (r) => r.map((x) => ({ ...x, start_date: "1899-12-31" })))), "data/habits.json[0].start_date", /between 1900-01-01 and 2999-12-31/);
  });

  test("fields normalised by the API's own schemas: a habit colour in lower case comes back upper case, as from the API", async () => {
    const e = changed("data/habits.json", (r) => r.map((x) => ({ ...x, color: "#aabbcc", frequency: { type: "weekdays", days: [5, 1, 3] } })));
    const other = makeTestApp();
    try {
      const b = await setupAdmin(other);
      const pf = await preflight(b, rebuild(e), "replace");
      expect(pf.status).toBe(200);
      expect((await b.post("/api/v1/backup/restore", { preflight_token: pf.body.preflight_token, mode: "replace" })).status).toBe(200);
      expect((await b.get(`/api/v1/habits/${ids.habit}`)).body).toMatchObject({ color: "#AABBCC", frequency: { type: "weekdays", days: [1, 3, 5] } });
    } finally {
      other.close();
    }
  });
});

describe("tasks and recurrences", () => {
  test("a `due_at` not in normal form is stored in the API's normal form (UTC, milliseconds), as the API stores it", async () => {
    const e = changed("data/tasks.json", (r) => r.map((t) => (t.id === ids.inboxTask ? { ...t, due_at: "2026-12-01T09:00:00+05:00" } : t)));
    const other = makeTestApp();
    try {
      const b = await setupAdmin(other);
      const pf = await preflight(b, rebuild(e), "replace");
      expect(pf.status).toBe(200);
      expect((await b.post("/api/v1/backup/restore", { preflight_token: pf.body.preflight_token, mode: "replace" })).status).toBe(200);
      // Before: answered "2026-12-01T09:00:00+05:00".
      expect((await b.get(`/api/v1/tasks/${ids.inboxTask}`)).body.due_at).toBe("2026-12-01T04:00:00.000Z");
    } finally {
      other.close();
    }
    // An instant whose UTC form leaves the years 0000..9999 is refused, as by the API.
    await refused(rebuild(changed("data/tasks.json", (r) => r.map((t, i) => (i === 0 ? { ...t, due_at: "9999-12-31T23:00:00-05:00" } : t)))), "data/tasks.json[0].due_at", /RFC 3339/);
  });

  test("`version` = 2^53 − 1 (the task could never be PATCHed again); memos likewise", async () => {
    await refused(rebuild(changed("data/tasks.json", (r) => r.map((t) => ({ ...t, version: 2 ** 53 - 1 })))), "data/tasks.json[0].version", /at most 2147483647/);
    await refused(rebuild(changed("data/memos.json", (r) => r.map((m) => ({ ...m, version: 2 ** 53 - 1 })))), "data/memos.json[0].version", /at most 2147483647/);
    // The API holds the same bound.
    const t = (await c.get(`/api/v1/tasks/${ids.inboxTask}`)).body;
    expect((await c.patch(`/api/v1/tasks/${ids.inboxTask}`, { version: 2 ** 53 - 1, title: t.title })).status).toBe(422);
  });

  test("an rrule recurrence without its first occurrence (dtstart); an after_completion one with one", async () => {
    // The API: a recurrence needs a task with due_at; its first occurrence is stored as dtstart.
    const noStart = changed("data/recurrences.json", (r) => r.map((x) => ({ ...x, dtstart: null })));
    const tasks = readJson<Rec[]>(noStart, "data/tasks.json").map((t) => (t.id === ids.task ? { ...t, due_at: null } : t));
    writeJson(noStart, "data/tasks.json", tasks);
    await refused(rebuild(noStart), "data/recurrences.json[0].dtstart", /needs its first occurrence/);
    await refused(
      rebuild(changed("data/recurrences.json", (r) => r.map((x) => ({ ...x, kind: "after_completion", rrule: null, interval: 2, unit: "week", exceptions: [] })))),
      "data/recurrences.json[0].dtstart",
      /only for kind rrule/,
    );
    // The API's own field check: an rrule recurrence with an interval.
    await refused(rebuild(changed("data/recurrences.json", (r) => r.map((x) => ({ ...x, interval: 3 })))), "data/recurrences.json[0].interval", /only for kind after_completion/);
  });

  test("a recurring task whose due_at was cleared through the API (a state the API makes) still round-trips", async () => {
    const other = makeTestApp();
    try {
      const b = await setupAdmin(other);
      const s = await seed(b, "b");
      const t = (await b.get(`/api/v1/tasks/${s.task}`)).body;
      expect((await b.patch(`/api/v1/tasks/${s.task}`, { due_at: null, version: t.version })).status).toBe(200);
      const pf = await preflight(b, await exportBytes(other, b), "replace");
      expect(pf.status).toBe(200);
      expect((await b.post("/api/v1/backup/restore", { preflight_token: pf.body.preflight_token, mode: "replace" })).status).toBe(200);
    } finally {
      other.close();
    }
  });

  test("an RRULE is stored in the API's canonical text", async () => {
    const e = changed("data/recurrences.json", (r) => r.map((x) => ({ ...x, rrule: "rrule:freq=weekly" })));
    const other = makeTestApp();
    try {
      const b = await setupAdmin(other);
      const pf = await preflight(b, rebuild(e), "replace");
      expect(pf.status).toBe(200);
      expect((await b.post("/api/v1/backup/restore", { preflight_token: pf.body.preflight_token, mode: "replace" })).status).toBe(200);
      expect((await b.get(`/api/v1/recurrences/${ids.recurrence}`)).body.rrule).toBe("FREQ=WEEKLY");
    } finally {
      other.close();
    }
  });
});

describe("rules the API gained (contract §12): refused at preflight by the API's own rule functions", () => {
  test("a habit log before its habit's start_date (the API: 422 on start_date)", async () => {
    const e = changed("data/habit_logs.json", (r) => r.map((l) => ({ ...l, date: "2024-12-31" })));
    await refused(rebuild(e), "data/habit_logs.json[0].date", /^2024-12-31 is before the habit's start date \(2025-01-01\); move the start date back/);
  });

  test("merge: a log for one of your habits (not in the archive) before its start_date", async () => {
    const e = clone();
    writeJson(e, "data/habits.json", []);
    writeJson(e, "data/habit_pauses.json", []);
    writeJson(e, "data/habit_logs.json", readJson<Rec[]>(e, "data/habit_logs.json").map((l) => ({ ...l, date: "2024-06-30" })));
    await refused(rebuild(e), "data/habit_logs.json[0].date", /^2024-06-30 is before the habit's start date \(2025-01-01\)/, "merge");
  });

  test("a recurrence on a subtask (the API: a subtask cannot recur, a recurring task cannot become a subtask)", async () => {
    const e = changed("data/recurrences.json", (r) => r.map((x) => ({ ...x, task_id: ids.sub })));
    await refused(rebuild(e), "data/recurrences.json[0].task_id", new RegExp(`only top-level tasks recur; this task is a subtask of task ${ids.task}`));
    // Merge: one of your subtasks, not in the archive.
    const own = changed("data/recurrences.json", (r) => r.map((x) => ({ ...x, task_id: ids.sub })));
    writeJson(own, "data/tasks.json", readJson<Rec[]>(own, "data/tasks.json").filter((t) => t.id !== ids.sub));
    await refused(rebuild(own), "data/recurrences.json[0].task_id", /only top-level tasks recur/, "merge");
  });
});

describe("merge: records an earlier merge mapped, changed since through the API (409 merge_conflict, nothing changes)", () => {
  const X = "01900000-0000-7000-8000-0000000000a1";
  const R = "01900000-0000-7000-8000-0000000000a2";
  const H = "01900000-0000-7000-8000-0000000000a3";

  /** A fresh account with the seed, and its export. */
  async function account() {
    const other = makeTestApp();
    const b = await setupAdmin(other);
    const s = await seed(b, "b");
    return { other, b, s, e: entriesOf(await exportBytes(other, b)) };
  }
  async function merged(b: TestClient, zip: Uint8Array) {
    const pf = await preflight(b, zip, "merge");
    expect(pf.status).toBe(200);
    return b.post("/api/v1/backup/restore", { preflight_token: pf.body.preflight_token, mode: "merge" });
  }
  async function conflict(other: typeof app, b: TestClient, zip: Uint8Array, path: string, message: RegExp) {
    const pf = await preflight(b, zip, "merge");
    expect(pf.status).toBe(200);
    const before = dump(other.db);
    const r = await b.post("/api/v1/backup/restore", { preflight_token: pf.body.preflight_token, mode: "merge" });
    expect(r.status).toBe(409);
    expect(r.body.code).toBe("merge_conflict");
    const errors = r.body.errors as { path: string; message: string }[];
    if (!errors.some((x) => x.path === path && message.test(x.message))) throw new Error(`no conflict ${message} at ${path} in ${JSON.stringify(errors)}`);
    const after = dump(other.db);
    for (const t of Object.keys(before)) if (t !== "backup_preflights") expect({ t, rows: after[t] }).toEqual({ t, rows: before[t] });
  }

  test("a new recurrence for a task that has become a subtask since (was restored: a recurring subtask)", async () => {
    const { other, b, s, e } = await account();
    try {
      const tasks = readJson<Rec[]>(e, "data/tasks.json");
      const inboxTask = tasks.find((t) => t.id === s.inboxTask)!;
      writeJson(e, "data/tasks.json", [...tasks, { ...inboxTask, id: X, title: "to become a subtask" }]);
      expect((await merged(b, rebuild(e))).status).toBe(200);
      const x = (await b.get(`/api/v1/tasks/${X}`)).body;
      expect((await b.patch(`/api/v1/tasks/${X}`, { parent_id: s.inboxTask, version: x.version })).status).toBe(200);
      // The same archive again, with a recurrence for X: in the archive X is top-level (preflight passes).
      const recs = readJson<Rec[]>(e, "data/recurrences.json");
      writeJson(e, "data/recurrences.json", [...recs, { ...recs[0]!, id: R, task_id: X, exceptions: [] }]);
      await conflict(other, b, rebuild(e), `recurrences/${R}`, new RegExp(`task ${X}: only top-level tasks recur; this task is a subtask of task ${s.inboxTask}`));
    } finally {
      other.close();
    }
  });

  test("a new log before the start_date its habit has been given since (was restored: a log the grid never shows)", async () => {
    const { other, b, s, e } = await account();
    try {
      const habits = readJson<Rec[]>(e, "data/habits.json");
      writeJson(e, "data/habits.json", [...habits, { ...habits.find((h) => h.id === s.habit)!, id: H, name: "moved later" }]);
      expect((await merged(b, rebuild(e))).status).toBe(200);
      expect((await b.patch(`/api/v1/habits/${H}`, { start_date: "2025-06-01" })).status).toBe(200);
      const logs = readJson<Rec[]>(e, "data/habit_logs.json");
      writeJson(e, "data/habit_logs.json", [...logs, { ...logs[0]!, habit_id: H, date: "2025-03-01" }]);
      await conflict(other, b, rebuild(e), `habit_logs/${H}:2025-03-01`, /^2025-03-01 is before the habit's start date \(2025-06-01\)/);
    } finally {
      other.close();
    }
  });
});

describe("archive structure", () => {
  test("a manifest `entries` key `__proto__` naming a missing entry", async () => {
    const z = rebuild(clone());
    const e = entriesOf(z);
    const m = readJson<Rec>(e, "manifest.json");
    // Written as JSON text: an object literal's __proto__ would set the prototype instead.
    const text = JSON.stringify(m).replace('"entries":{', `"entries":{"__proto__":{"size":1,"sha256":"${"0".repeat(64)}"},`);
    e["manifest.json"] = strToU8(text);
    await refused(zipSync(e), "__proto__", /listed in the manifest but missing from the archive/);
  });

  test("a symbolic link from a macOS-made archive (made_by 19), not written as a regular file", async () => {
    const entries = rawEntries(entriesOf(rebuild(clone())));
    const i = entries.findIndex((x) => x.name === attachmentEntry());
    // macOS Archive Utility / Info-ZIP on macOS: host 19, the Unix mode in the upper 16 bits.
    entries[i] = { ...entries[i]!, madeBy: (19 << 8) | 20, externalAttr: (0o120755 << 16) >>> 0 };
    await refused(buildZip(entries), attachmentEntry(), /symbolic links are not allowed/);
  });
});

describe("merge: what the user already has (409 merge_conflict naming the record, nothing changes)", () => {
  const NEW_ID = "01900000-0000-7000-8000-0000000000f1";
  async function mergeRefused(e: Record<string, Uint8Array>, path: string, message: RegExp) {
    const pf = await preflight(c, rebuild(e), "merge");
    expect(pf.status).toBe(200);
    const before = dump(app.db);
    const r = await c.post("/api/v1/backup/restore", { preflight_token: pf.body.preflight_token, mode: "merge" });
    expect(r.status).toBe(409);
    expect(r.body.code).toBe("merge_conflict");
    const errors = r.body.errors as { path: string; message: string }[];
    if (!errors.some((x) => x.path === path && message.test(x.message))) throw new Error(`no conflict ${message} at ${path} in ${JSON.stringify(errors)}`);
    // Only the consumed token's row may differ: the import rolled back.
    const after = dump(app.db);
    for (const t of Object.keys(before)) if (t !== "backup_preflights") expect({ t, rows: after[t] }).toEqual({ t, rows: before[t] });
  }

  test("a recurrence with a new id for a task that already recurs (was 500: UNIQUE constraint failed: recurrences.task_id)", async () => {
    const e = clone();
    writeJson(e, "data/recurrences.json", readJson<Rec[]>(e, "data/recurrences.json").map((x) => ({ ...x, id: NEW_ID })));
    writeJson(e, "data/recurrence_exceptions.json", readJson<Rec[]>(e, "data/recurrence_exceptions.json").map((x) => ({ ...x, recurrence_id: NEW_ID })));
    await mergeRefused(e, `recurrences/${NEW_ID}`, new RegExp(`task ${ids.task} already has a recurrence \\(${ids.recurrence}\\)`));
  });

  test("a pause with a new id overlapping one the habit has (was merged: two overlapping pauses)", async () => {
    const e = changed("data/habit_pauses.json", (r) => r.map((p) => ({ ...p, id: NEW_ID, start_date: "2025-06-01", end_date: "2025-06-30" })));
    await mergeRefused(e, `habit_pauses/${NEW_ID}`, new RegExp(`the pause overlaps pause ${ids.pause}`));
  });

  test("records without an id of their own are named <entity>/<parent id>:<date>", async () => {
    const e = changed("data/habit_logs.json", (r) => r.map((l) => ({ ...l, value: 7 })));
    await mergeRefused(e, `habit_logs/${ids.habit}:2025-01-01`, /different content/);
  });
});

describe("instants", () => {
  test("every instant is stored as the API writes them (UTC, milliseconds, upper-case T and Z)", async () => {
    const e = changed("data/memos.json", (r) => r.map((m) => ({ ...m, created_at: "2026-01-01t10:00:00.000Z", updated_at: "2026-01-01T12:00:00+02:00" })));
    const other = makeTestApp();
    try {
      const b = await setupAdmin(other);
      const pf = await preflight(b, rebuild(e), "replace");
      expect(pf.status).toBe(200);
      expect((await b.post("/api/v1/backup/restore", { preflight_token: pf.body.preflight_token, mode: "replace" })).status).toBe(200);
      expect((await b.get(`/api/v1/memos/${ids.memo}`)).body).toMatchObject({ created_at: "2026-01-01T10:00:00.000Z", updated_at: "2026-01-01T10:00:00.000Z" });
    } finally {
      other.close();
    }
  });
});
