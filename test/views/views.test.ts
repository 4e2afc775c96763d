// Smart views (issue 14) through HTTP, against an independent oracle: each task's local day is
// worked out here with Temporal's own zone conversion (the zones used have no midnight
// transitions, where the filters' rule and the wall clock could differ), then sorted and compared
// with every page of every view, walked through its cursors with small pages.
import { afterAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { FixedClock, makeTestApp, rejected, setupAdmin, signedInUser } from "../helpers/app";
import { mkList, mkTask, uname } from "../helpers/tasks";

// Many requests through the real stack: on a loaded machine well over bun's 5 s default.
setDefaultTimeout(120_000);

const clock = new FixedClock(new Date("2026-11-26T20:00:00.000Z"));
const app = makeTestApp({ clock });
afterAll(() => app.close());
const admin = await setupAdmin(app);

/** A deterministic pseudo-random sequence (mulberry32), so a failure can be replayed. */
function rng(seed: number) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const addDays = (d: string, n: number) => Temporal.PlainDate.from(d).add({ days: n }).toString();
const dayOf = (due: string, tz: string) => (due.length === 10 ? due : Temporal.Instant.from(due).toZonedDateTimeISO(tz).toPlainDate().toString());

interface Made {
  id: string;
  due_at: string | null;
  completed: boolean;
  completed_at: string | null;
  created_at: string;
  visible: boolean;
}

async function walk(c: Awaited<ReturnType<typeof signedInUser>>, view: string, limit: number) {
  const out: { day: string | null; id: string }[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 500; pages++) {
    const r = await c.get(`/api/v1/views/${view}?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
    expect(r.status).toBe(200);
    expect(r.body.view).toBe(view);
    const days = r.body.groups.map((g: { day: string | null }) => g.day);
    // Groups on one page are distinct days.
    expect(new Set(days).size).toBe(days.length);
    for (const g of r.body.groups) for (const t of g.tasks) out.push({ day: g.day, id: t.id });
    cursor = r.body.next_cursor;
    if (cursor === null) return out;
  }
  throw new Error("too many pages");
}

for (const tz of ["America/New_York", "Asia/Kolkata", "Pacific/Kiritimati", "Pacific/Pago_Pago"]) {
  describe(`views in ${tz}`, async () => {
    const c = await signedInUser(app, admin, uname(), { timezone: tz });
    const other = await signedInUser(app, admin, uname(), { timezone: tz });
    const today = Temporal.Instant.from(clock.now().toISOString()).toZonedDateTimeISO(tz).toPlainDate().toString();
    const rand = rng(tz.length * 7919);
    const lists = [await mkList(c, "a"), await mkList(c, "b")];
    const archived = await mkList(c, "archived");
    const made: Made[] = [];
    for (let i = 0; i < 70; i++) {
      const offset = Math.floor(rand() * 24) - 10;
      const kind = rand();
      let due: string | null = null;
      if (kind < 0.4) due = addDays(today, offset);
      else if (kind < 0.85) {
        // A local time of that day, including the edges of the day.
        const minutes = [0, 1, 23 * 60 + 59, Math.floor(rand() * 1440)][Math.floor(rand() * 4)]!;
        const local = Temporal.PlainDate.from(addDays(today, offset)).toZonedDateTime({ timeZone: tz, plainTime: Temporal.PlainTime.from({ hour: Math.floor(minutes / 60), minute: minutes % 60 }) });
        due = new Date(local.epochMilliseconds).toISOString();
      }
      const completed = rand() < 0.2;
      const t = await mkTask(c, { title: `t${i}`, list_id: lists[i % 2], due_at: due, completed });
      made.push({ id: t.id, due_at: t.due_at, completed, completed_at: t.completed_at, created_at: t.created_at, visible: true });
      // Subtasks never appear on their own (they are inside their parent), whatever their date.
      if (i % 9 === 0) await mkTask(c, { title: `s${i}`, parent_id: t.id, due_at: today });
      if (i % 13 === 5) {
        expect((await c.delete(`/api/v1/tasks/${t.id}`)).status).toBe(204);
        made[made.length - 1]!.visible = false;
      }
      clock.advance(60_000);
    }
    // A task of an archived list, and another user's, never appear.
    await mkTask(c, { title: "archived", list_id: archived, due_at: today });
    expect((await c.delete(`/api/v1/lists/${archived}`)).status).toBe(204);
    await mkTask(other, { title: "theirs", due_at: today });
    clock.set("2026-11-26T20:00:00.000Z");

    const open = made.filter((m) => m.visible && !m.completed);
    const dated = (from: string | null, through: string | null) =>
      open
        .filter((m) => m.due_at !== null)
        .map((m) => ({ m, day: dayOf(m.due_at!, tz), k: m.due_at!.length === 10 ? 0 : 1 }))
        .filter((x) => (from === null || x.day >= from) && (through === null || x.day <= through))
        .sort((a, b) => (a.day < b.day ? -1 : a.day > b.day ? 1 : a.k - b.k || (a.m.due_at! < b.m.due_at! ? -1 : a.m.due_at! > b.m.due_at! ? 1 : a.m.id < b.m.id ? -1 : 1)))
        .map((x) => ({ day: x.day, id: x.m.id }));
    const expected: Record<string, { day: string | null; id: string }[]> = {
      today: dated(today, today),
      tomorrow: dated(addDays(today, 1), addDays(today, 1)),
      next_7_days: dated(today, addDays(today, 6)),
      upcoming: dated(today, null),
      overdue: dated(null, addDays(today, -1)),
      no_date: open
        .filter((m) => m.due_at === null)
        .sort((a, b) => (a.created_at > b.created_at ? -1 : a.created_at < b.created_at ? 1 : a.id > b.id ? -1 : 1))
        .map((m) => ({ day: null, id: m.id })),
      completed: made
        .filter((m) => m.visible && m.completed)
        .sort((a, b) => (a.completed_at! > b.completed_at! ? -1 : a.completed_at! < b.completed_at! ? 1 : a.id > b.id ? -1 : 1))
        .map((m) => ({ day: dayOf(m.completed_at!, tz), id: m.id })),
    };

    for (const view of Object.keys(expected)) {
      test(`${view}: every page, through its cursors, is the oracle's`, async () => {
        expect(expected.today!.length + expected.overdue!.length).toBeGreaterThan(0);
        expect(await walk(c, view, 3)).toEqual(expected[view]!);
        expect(await walk(c, view, 100)).toEqual(expected[view]!);
      });
    }

    test("counts are the views' sizes, and follow a change", async () => {
      const r = await c.get("/api/v1/views/counts");
      expect(r.status).toBe(200);
      expect(r.body.today).toBe(today);
      expect(r.body.cap).toBe(100);
      const counts = Object.fromEntries(Object.entries(expected).map(([k, v]) => [k, v.length]));
      expect(r.body.counts).toEqual(counts);
      // Completing a task of today moves it from today (and next 7 days, upcoming) to completed.
      const first = expected.today![0];
      if (first) {
        const t = (await c.get(`/api/v1/tasks/${first.id}`)).body;
        expect((await c.patch(`/api/v1/tasks/${first.id}`, { version: t.version, completed: true })).status).toBe(200);
        const after = (await c.get("/api/v1/views/counts")).body.counts;
        expect(after.today).toBe(counts.today! - 1);
        expect(after.upcoming).toBe(counts.upcoming! - 1);
        expect(after.completed).toBe(counts.completed! + 1);
        const t2 = (await c.get(`/api/v1/tasks/${first.id}`)).body;
        expect((await c.patch(`/api/v1/tasks/${first.id}`, { version: t2.version, completed: false })).status).toBe(200);
      }
    });
  });
}

describe("errors", () => {
  test("an unknown view, a bad limit, a cursor of another view or user", async () => {
    const c = await signedInUser(app, admin, uname());
    const o = await signedInUser(app, admin, uname());
    const d = new Date(clock.now().getTime()).toISOString().slice(0, 10);
    for (let i = 0; i < 3; i++) await mkTask(c, { title: `x${i}`, due_at: d });
    await rejected(app, () => c.get("/api/v1/views/someday"), 422, "validation_failed");
    await rejected(app, () => c.get("/api/v1/views/today?limit=0"), 422, "validation_failed");
    await rejected(app, () => c.get("/api/v1/views/today?extra=1"), 422, "validation_failed");
    const page = (await c.get("/api/v1/views/upcoming?limit=1")).body;
    expect(page.next_cursor).not.toBeNull();
    await rejected(app, () => c.get(`/api/v1/views/today?cursor=${encodeURIComponent(page.next_cursor)}`), 422, "invalid_cursor");
    await rejected(app, () => o.get(`/api/v1/views/upcoming?cursor=${encodeURIComponent(page.next_cursor)}`), 422, "invalid_cursor");
    await rejected(app, () => c.get(`/api/v1/views/upcoming?cursor=x${encodeURIComponent(page.next_cursor)}`), 422, "invalid_cursor");
    expect((await app.client().get("/api/v1/views/counts")).status).toBe(401);
  });

  test("completed: a task completed without a recorded time (an old archive can hold one) comes last, through the cursors", async () => {
    const c = await signedInUser(app, admin, uname());
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      ids.push((await mkTask(c, { title: `c${i}`, completed: true })).id);
      clock.advance(1000);
    }
    clock.set("2026-11-26T20:00:00.000Z");
    // As a restored archive may leave it (backup allows completed without completed_at).
    app.db.sqlite.query("UPDATE tasks SET completed_at = NULL WHERE id IN (?, ?)").run(ids[1]!, ids[3]!);
    const all = await walk(c, "completed", 1);
    expect(all.map((x) => x.id)).toEqual([ids[2]!, ids[0]!, ...[ids[3]!, ids[1]!].sort().reverse()]);
    expect(all.slice(2).every((x) => x.day === null)).toBe(true);
  });

  test("counts stop at the cap", async () => {
    const c = await signedInUser(app, admin, uname());
    const d = new Date(clock.now().getTime()).toISOString().slice(0, 10);
    for (let i = 0; i < 60; i++) await mkTask(c, { title: `d${i}`, due_at: d });
    for (let i = 0; i < 50; i++) await mkTask(c, { title: `t${i}`, due_at: `${d}T23:00:00Z` });
    // Tomorrow is read from the walk that counts today only while that walk is under the cap; past
    // it (110 today), tomorrow's own count, exact.
    const next = addDays(d, 1);
    for (let i = 0; i < 3; i++) await mkTask(c, { title: `n${i}`, due_at: next });
    for (let i = 0; i < 2; i++) await mkTask(c, { title: `m${i}`, due_at: `${next}T08:00:00Z` });
    const r = (await c.get("/api/v1/views/counts")).body;
    expect(r.counts).toMatchObject({ today: 100, next_7_days: 100, upcoming: 100, tomorrow: 5, overdue: 0 });
  });

  test("tomorrow's count is exact when today and tomorrow together reach the cap", async () => {
    const c = await signedInUser(app, admin, uname());
    const d = new Date(clock.now().getTime()).toISOString().slice(0, 10);
    const next = addDays(d, 1);
    for (let i = 0; i < 90; i++) await mkTask(c, { title: `d${i}`, due_at: d });
    for (let i = 0; i < 5; i++) await mkTask(c, { title: `n${i}`, due_at: next });
    expect((await c.get("/api/v1/views/counts")).body.counts).toMatchObject({ today: 90, tomorrow: 5, next_7_days: 95 });
    // 90 + 20 = 110: the walk from today stops at 100, ten short of tomorrow's last.
    for (let i = 5; i < 20; i++) await mkTask(c, { title: `n${i}`, due_at: i % 2 ? next : `${next}T12:00:00Z` });
    expect((await c.get("/api/v1/views/counts")).body.counts).toMatchObject({ today: 90, tomorrow: 20, next_7_days: 100 });
  });

  test("a timed task late in the local evening is on that local day, not the UTC one", async () => {
    const c = await signedInUser(app, admin, uname(), { timezone: "America/Los_Angeles" });
    // 2026-11-26 23:30 in Los Angeles is 2026-11-27T07:30Z; the clock says it is 12:00 there.
    const t = await mkTask(c, { title: "late", due_at: "2026-11-27T07:30:00Z" });
    const r = (await c.get("/api/v1/views/today")).body;
    expect(r.today).toBe("2026-11-26");
    expect(r.groups).toEqual([{ day: "2026-11-26", tasks: [expect.objectContaining({ id: t.id })] }]);
    expect((await c.get("/api/v1/views/tomorrow")).body.groups).toEqual([]);
  });
});
