import { afterEach, describe, expect, test } from "bun:test";
import type { z } from "zod";
import { Attachment } from "../../src/features/attachments/attachments.schemas";
import { Countdown } from "../../src/features/countdowns/countdowns.schemas";
import { Folder } from "../../src/features/folders/folders.schemas";
import { Habit, HabitLog, HabitPause } from "../../src/features/habits/habits.schemas";
import { List } from "../../src/features/lists/lists.schemas";
import { Memo } from "../../src/features/memos/memos.schemas";
import { ExceptionBody, Recurrence } from "../../src/features/recurrence/recurrence.schemas";
import { Tag } from "../../src/features/tags/tags.schemas";
import { Task } from "../../src/features/tasks/tasks.schemas";
import { FixedClock, makeTestApp, setupAdmin, type TestApp, type TestClient } from "../helpers/app";
import { entriesOf, exportBytes, preflight, readJson, rebuild, seed, userData, writeJson, type Seeded } from "./helpers";

/**
 * docs/spec/contract.md §9: records in data/*.json use the API's field names (tasks: `tag_ids` for `tags`, no
 * `subtasks`), every field present, no user id. The API field sets come from the features' own
 * response schemas, so a field added to the API and forgotten by the backup fails here.
 */

type Rec = Record<string, unknown>;
const keys = (s: z.ZodObject) => Object.keys(s.shape);

const KINDS = ["folders", "lists", "tags", "tasks", "recurrences", "recurrence_exceptions", "habits", "habit_logs", "habit_pauses", "countdowns", "memos", "attachments"] as const;
type Kind = (typeof KINDS)[number];

/**
 * What the API adds for shared lists (sharing.md) and an archive leaves out: the reader's role,
 * the owner, the member count, who created and completed a task. They name users (the archive
 * names none) or describe the reader, not the list; restored lists are the restoring user's.
 */
const SHARING_VIEW: string[] = ["role", "owner", "member_count", "created_by", "completed_by"];

const API_FIELDS: Record<Kind, string[]> = {
  folders: keys(Folder),
  lists: keys(List).filter((k) => !SHARING_VIEW.includes(k)),
  tags: keys(Tag),
  tasks: keys(Task)
    .filter((k) => k !== "subtasks" && !SHARING_VIEW.includes(k))
    .map((k) => (k === "tags" ? "tag_ids" : k)),
  recurrences: keys(Recurrence),
  // Not resources of their own: the parent's id plus the API's fields of the sub-resource.
  recurrence_exceptions: ["recurrence_id", ...keys(ExceptionBody)],
  habits: keys(Habit),
  habit_logs: ["habit_id", ...keys(HabitLog)],
  habit_pauses: ["habit_id", ...keys(HabitPause)],
  countdowns: keys(Countdown),
  memos: keys(Memo),
  attachments: keys(Attachment),
};

/** The documented extras (OpenAPI description of the export, README): what a faithful restore needs beyond the API shape. */
const EXTRAS: Record<Kind, string[]> = {
  folders: ["deleted_at"],
  // sharing.md: a shared list's members by username (informational; [] for a list not shared).
  lists: ["members"],
  tags: ["created_at", "updated_at"],
  tasks: ["position"],
  recurrences: [],
  recurrence_exceptions: ["created_at"],
  habits: ["archived_at"],
  habit_logs: ["created_at", "updated_at"],
  habit_pauses: ["created_at", "updated_at"],
  countdowns: ["archived_at"],
  memos: [],
  attachments: [],
};

let app: TestApp;
afterEach(() => app?.close());

/** 12:00 UTC is already the next day in Kiritimati (UTC+14): derived fields must count from the user's today. */
const NOW = "2026-11-26T12:00:00.000Z";

interface Rich extends Seeded {
  archivedHabit: string;
  archivedCountdown: string;
  lunarCountdown: string;
  birthday: string;
  done: string;
}

/** seed() plus the shapes seed() lacks: archived habit and countdown, lunar and yearly countdowns, a completed task, a deleted folder. */
async function richSeed(c: TestClient): Promise<Rich> {
  const ids = await seed(c);
  const ok = async (p: Promise<{ status: number; text: string; body: Rec }>, status = 201) => {
    const r = await p;
    if (r.status !== status) throw new Error(`seed: ${r.status} ${r.text}`);
    return r.body;
  };
  const archivedHabit = (await ok(c.post("/api/v1/habits", { name: "Old habit", icon: "run", color: "#aa0000", unit: "km", goal: 5, frequency: { type: "weekdays", days: [1, 3] }, start_date: "2026-11-01" }))).id as string;
  await ok(c.put(`/api/v1/habits/${archivedHabit}/logs/2026-11-20`, { value: 2.5, note: "easy" }), 200);
  await ok(c.post(`/api/v1/habits/${archivedHabit}/pauses`, { start_date: "2026-10-01", end_date: "2026-10-05" }));
  await ok(c.delete(`/api/v1/habits/${archivedHabit}`), 204);
  const archivedCountdown = (await ok(c.post("/api/v1/countdowns", { name: "Gone", date: "2020-03-01", type: "anniversary", repeat: "yearly" }))).id as string;
  await ok(c.delete(`/api/v1/countdowns/${archivedCountdown}`), 204);
  const lunarCountdown = (await ok(c.post("/api/v1/countdowns", { name: "Lunar", date: "2001-01-24", type: "birthday", repeat: "yearly", calendar: "lunar", icon: "cake" }))).id as string;
  await ok(c.post(`/api/v1/countdowns/${lunarCountdown}/pin`, {}), 200);
  const birthday = (await ok(c.post("/api/v1/countdowns", { name: "Past one-off", date: "2026-01-01" }))).id as string;
  const done = (await ok(c.post("/api/v1/tasks", { title: "Done", list_id: ids.list, description: "text", priority: 2, due_at: "2026-11-20T09:30:00.000Z" }))).id as string;
  await ok(c.patch(`/api/v1/tasks/${done}`, { completed: true, version: 1 }), 200);
  const gone = (await ok(c.post("/api/v1/folders", { name: "Deleted folder" }))).id as string;
  await ok(c.delete(`/api/v1/folders/${gone}`), 204);
  return { ...ids, archivedHabit, archivedCountdown, lunarCountdown, birthday, done };
}

async function api(c: TestClient, path: string): Promise<Rec> {
  const r = await c.get(`/api/v1${path}`);
  if (r.status !== 200) throw new Error(`GET ${path}: ${r.status} ${r.text}`);
  return r.body as Rec;
}

/** The API's representation of every record of the archive that the API answers, keyed like the archive's records. */
async function apiViews(c: TestClient, data: Record<Kind, Rec[]>): Promise<Record<Kind, Map<string, Rec>>> {
  const out = Object.fromEntries(KINDS.map((k) => [k, new Map<string, Rec>()])) as Record<Kind, Map<string, Rec>>;
  for (const f of (await api(c, "/folders")).items as Rec[]) out.folders.set(f.id as string, f);
  for (const l of (await api(c, "/lists")).items as Rec[]) out.lists.set(l.id as string, l);
  for (const t of (await api(c, "/tags")).items as Rec[]) out.tags.set(t.id as string, t);
  for (const t of data.tasks) {
    const v = await api(c, `/tasks/${t.id as string}`);
    const { tags, subtasks: _s, ...rest } = v;
    out.tasks.set(t.id as string, { ...rest, tag_ids: (tags as Rec[]).map((x) => x.id).sort() });
    for (const a of (await api(c, `/tasks/${t.id as string}/attachments`)).items as Rec[]) out.attachments.set(a.id as string, a);
  }
  for (const r of data.recurrences) {
    const v = await api(c, `/recurrences/${r.id as string}`);
    out.recurrences.set(r.id as string, v);
    for (const date of v.exceptions as string[]) out.recurrence_exceptions.set(`${r.id as string}:${date}`, { recurrence_id: r.id, date });
  }
  for (const h of data.habits) {
    out.habits.set(h.id as string, await api(c, `/habits/${h.id as string}`));
    for (const l of (await api(c, `/habits/${h.id as string}/logs`)).items as Rec[]) out.habit_logs.set(`${h.id as string}:${l.date as string}`, { habit_id: h.id, ...l });
    for (const p of (await api(c, `/habits/${h.id as string}/pauses`)).items as Rec[]) out.habit_pauses.set(p.id as string, { habit_id: h.id, ...p });
  }
  for (const x of data.countdowns) out.countdowns.set(x.id as string, await api(c, `/countdowns/${x.id as string}`));
  for (const m of data.memos) out.memos.set(m.id as string, await api(c, `/memos/${m.id as string}`));
  return out;
}

const keyOf = (kind: Kind, r: Rec) =>
  kind === "habit_logs" ? `${r.habit_id as string}:${r.date as string}` : kind === "recurrence_exceptions" ? `${r.recurrence_id as string}:${r.date as string}` : (r.id as string);

describe("archive records (contract §9)", () => {
  test("every record of every kind has exactly the API's fields (plus the documented extras), with the API's values; no user id", async () => {
    app = makeTestApp({ clock: new FixedClock(new Date(NOW)) });
    const c = await setupAdmin(app, { timezone: "Pacific/Kiritimati" });
    const ids = await richSeed(c);
    const e = entriesOf(await exportBytes(app, c));
    const data = Object.fromEntries(KINDS.map((k) => [k, readJson<Rec[]>(e, `data/${k}.json`)])) as Record<Kind, Rec[]>;
    const views = await apiViews(c, data);

    for (const kind of KINDS) {
      const api = API_FIELDS[kind];
      expect(api.length).toBeGreaterThan(1);
      // An extra never shadows an API field, and nothing names a user.
      expect(EXTRAS[kind].filter((x) => api.includes(x))).toEqual([]);
      const expected = [...api, ...EXTRAS[kind]].sort();
      expect(data[kind].length).toBeGreaterThan(0);
      let compared = 0;
      for (const r of data[kind]) {
        expect({ kind, keys: Object.keys(r).sort() }).toEqual({ kind, keys: expected });
        expect(Object.keys(r).filter((k) => /user/i.test(k))).toEqual([]);
        const view = views[kind].get(keyOf(kind, r));
        if (!view) continue; // the API does not answer it (a deleted folder)
        compared++;
        // Same names, same values, same shapes as the API answers.
        expect({ kind, record: Object.fromEntries(api.map((k) => [k, r[k]])) }).toEqual({ kind, record: Object.fromEntries(api.map((k) => [k, view[k]])) });
      }
      expect({ kind, compared: compared > 0 }).toEqual({ kind, compared: true });
    }
    // Every record the API answers is in the archive (no kind is partly exported).
    for (const kind of KINDS) for (const k of views[kind].keys()) expect(data[kind].some((r) => keyOf(kind, r) === k)).toBe(true);

    // The shapes the brief named, spelled out.
    const cd = (id: string) => data.countdowns.find((x) => x.id === id)!;
    expect(cd(ids.archivedCountdown)).toMatchObject({ archived: true, archived_at: expect.any(String), pinned: false });
    expect(cd(ids.countdown)).toMatchObject({ archived: false, archived_at: null, next_date: "2027-01-01", days_until: 35, count: null, lunar: null });
    // The user's today is 2026-11-27 (UTC+14), not the UTC date 2026-11-26.
    expect(cd(ids.birthday)).toMatchObject({ next_date: null, days_until: -330, count: null });
    expect(cd(ids.lunarCountdown)).toMatchObject({ calendar: "lunar", lunar: { month: 1, day: 1, leap: false }, pinned: true, count: expect.any(Number) });
    expect(data.habits.find((h) => h.id === ids.archivedHabit)).toMatchObject({ archived: true, archived_at: expect.any(String) });
    expect(data.habits.find((h) => h.id === ids.habit)).toMatchObject({ archived: false, archived_at: null });
    expect(data.recurrences[0]).toMatchObject({ exceptions: ["2026-12-15"], dtstart: expect.anything() });
    expect(data.tasks.find((t) => t.id === ids.done)).toMatchObject({ completed: true, completed_at: expect.any(String), tag_ids: [] });
  });

  test("derived and mirrored API fields are ignored on import: changed values restore the same data", async () => {
    app = makeTestApp({ clock: new FixedClock(new Date(NOW)) });
    const c = await setupAdmin(app);
    await richSeed(c);
    const uid = (await c.get("/api/v1/me")).body.id as string;
    const e = entriesOf(await exportBytes(app, c));
    const before = userData(app.db, uid);
    // As if exported another day in another zone: other next_date, days_until, count.
    writeJson(e, "data/countdowns.json", readJson<Rec[]>(e, "data/countdowns.json").map((x) => ({ ...x, next_date: "2100-01-01", days_until: 9999, count: x.count === null ? null : 77 })));
    await c.post("/api/v1/memos", { content: "after the export" });
    const pf = await preflight(c, rebuild(e), "replace");
    expect(pf.status).toBe(200);
    const r = await c.post("/api/v1/backup/restore", { preflight_token: pf.body.preflight_token, mode: "replace" });
    expect(r.status).toBe(200);
    expect(userData(app.db, uid)).toEqual(before);
    // The next export computes them afresh.
    const again = readJson<Rec[]>(entriesOf(await exportBytes(app, c)), "data/countdowns.json");
    expect(again.some((x) => x.next_date === "2100-01-01" || x.days_until === 9999)).toBe(false);
  });

  test("a merge of the unchanged export skips every record as equal, whatever its derived fields say", async () => {
    app = makeTestApp({ clock: new FixedClock(new Date(NOW)) });
    const c = await setupAdmin(app);
    await richSeed(c);
    const uid = (await c.get("/api/v1/me")).body.id as string;
    const e = entriesOf(await exportBytes(app, c));
    const before = userData(app.db, uid);
    // A day later the derived fields differ from what the export wrote: still equal content.
    (app.clock as FixedClock).advance(86_400_000);
    const pf = await preflight(c, rebuild(e), "merge");
    expect(pf.status).toBe(200);
    const r = await c.post("/api/v1/backup/restore", { preflight_token: pf.body.preflight_token, mode: "merge" });
    expect(r.status).toBe(200);
    expect(userData(app.db, uid)).toEqual(before);
  });
});

describe("round trip into another account", () => {
  test("export → replace restore into another account → export again: equal apart from identifiers and generated timestamps", async () => {
    const clock = new FixedClock(new Date(NOW));
    app = makeTestApp({ clock });
    const a = await setupAdmin(app, { timezone: "Europe/Paris" });
    await richSeed(a);
    const first = entriesOf(await exportBytes(app, a));
    // Another account on another server (identifiers are kept by a replace, so not the same database).
    const other = makeTestApp({ clock });
    try {
      const b = await setupAdmin(other, { username: "bea", timezone: "Europe/Paris" });
      await b.post("/api/v1/memos", { content: "replaced away" });
      clock.advance(60_000);
      const pf = await preflight(b, rebuild(first), "replace");
      expect(pf.status).toBe(200);
      const r = await b.post("/api/v1/backup/restore", { preflight_token: pf.body.preflight_token, mode: "replace" });
      expect(r.status).toBe(200);
      const second = entriesOf(await exportBytes(other, b));
      // The only identifier that differs: the archive's inbox is the restoring user's inbox.
      const inboxOf = (x: Record<string, Uint8Array>) => readJson<Rec[]>(x, "data/lists.json").find((l) => l.is_inbox)!;
      const [inboxA, inboxB] = [inboxOf(first), inboxOf(second)];
      const normal = (x: Record<string, Uint8Array>, inbox: Rec) => {
        const out: Record<string, Rec[]> = {};
        for (const kind of KINDS) {
          out[kind] = readJson<Rec[]>(x, `data/${kind}.json`).map((rec) => {
            if (kind === "lists" && rec.is_inbox) return { ...rec, id: "INBOX", created_at: "T", updated_at: "T" };
            if (kind === "tasks" && rec.list_id === inbox.id) return { ...rec, list_id: "INBOX" };
            return rec;
          });
          out[kind]!.sort((p, q) => (keyOf(kind, p) < keyOf(kind, q) ? -1 : 1));
        }
        return out;
      };
      expect(normal(second, inboxB)).toEqual(normal(first, inboxA));
      for (const name of Object.keys(first)) if (name.startsWith("attachments/")) expect(second[name]).toEqual(first[name]!);
      const [m1, m2] = [readJson<Rec>(first, "manifest.json"), readJson<Rec>(second, "manifest.json")];
      expect(m2.counts).toEqual(m1.counts);
    } finally {
      other.close();
    }
  });
});

