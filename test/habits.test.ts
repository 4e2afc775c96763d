import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { dump, FixedClock, makeTestApp, setupAdmin, signedInUser, type TestClient, type TestResponse } from "./helpers/app";
import { rejected as rejectedIn } from "./helpers/app";

// Wednesday 2026-11-25, 10:00 UTC.
const clock = new FixedClock(new Date("2026-11-25T10:00:00.000Z"));
const app = makeTestApp({ clock });
let alice: TestClient;
let bob: TestClient;
const MISSING = "01900000-0000-7000-8000-000000000000";

beforeAll(async () => {
  alice = await setupAdmin(app);
  bob = await signedInUser(app, alice, "bob");
});
afterAll(() => app.close());

const rejected = (run: () => Promise<TestResponse>, status: number, code: string) => rejectedIn(app, run, status, code);

async function habit(c: TestClient, body: Record<string, unknown> = {}) {
  const r = await c.post("/api/v1/habits", { name: "Read", ...body });
  if (r.status !== 201) throw new Error(`${r.status} ${r.text}`);
  return r.body;
}

async function fresh(name: string, tz = "UTC"): Promise<TestClient> {
  const c = await signedInUser(app, alice, name);
  if (tz !== "UTC") expect((await c.patch("/api/v1/me", { timezone: tz })).status).toBe(200);
  return c;
}

describe("habit CRUD", () => {
  test("create with defaults; 201 + Location; read back", async () => {
    const r = await alice.post("/api/v1/habits", { name: "Walk" });
    expect(r.status).toBe(201);
    expect(r.headers.get("location")).toBe(`/api/v1/habits/${r.body.id}`);
    expect(r.body).toMatchObject({
      name: "Walk",
      icon: null,
      color: null,
      frequency: { type: "daily" },
      goal: 1,
      unit: null,
      start_date: "2026-11-25",
      archived: false,
    });
    expect((await alice.get(`/api/v1/habits/${r.body.id}`)).body).toEqual(r.body);
    const full = await habit(alice, {
      name: "Water",
      icon: "💧",
      color: "#00aaff",
      frequency: { type: "weekdays", days: [5, 1, 3] },
      goal: 8,
      unit: "glasses",
      start_date: "2026-01-01",
    });
    expect(full).toMatchObject({ color: "#00AAFF", frequency: { type: "weekdays", days: [1, 3, 5] }, goal: 8, unit: "glasses", start_date: "2026-01-01" });
    expect(full.position).toBeGreaterThan(r.body.position);
    expect((await habit(alice, { frequency: { type: "times_per_week", count: 3 } })).frequency).toEqual({ type: "times_per_week", count: 3 });
  });

  test("create validation: frequency, goal, names, dates, unknown fields", async () => {
    const bad: Record<string, unknown>[] = [
      { frequency: { type: "weekdays", days: [0] } },
      { frequency: { type: "weekdays", days: [8] } },
      { frequency: { type: "weekdays", days: [] } },
      { frequency: { type: "weekdays", days: [1, 1] } },
      { frequency: { type: "weekdays", days: [1.5] } },
      { frequency: { type: "times_per_week", count: 0 } },
      { frequency: { type: "times_per_week", count: 8 } },
      { frequency: { type: "daily", days: [1] } },
      { frequency: { type: "monthly" } },
      { goal: 0 },
      { goal: -1 },
      { goal: "1" },
      { name: "" },
      { name: "x".repeat(201) },
      { name: 5 },
      { color: "red" },
      { start_date: "2026-02-30" },
      { start_date: "26-01-01" },
      { start_date: "1899-12-31" },
      { nope: true },
    ];
    for (const b of bad) await rejected(() => alice.post("/api/v1/habits", { name: "Read", ...b }), 422, "validation_failed");
  });

  test("patch; foreign and missing ids are the same 404", async () => {
    const h = await habit(alice);
    clock.advance(1000);
    const p = await alice.patch(`/api/v1/habits/${h.id}`, { name: "Read more", goal: 2.5, icon: null, unit: "pages" });
    expect(p.status).toBe(200);
    expect(p.body).toMatchObject({ name: "Read more", goal: 2.5, unit: "pages" });
    expect(p.body.updated_at).not.toBe(h.updated_at);
    await rejected(() => alice.patch(`/api/v1/habits/${h.id}`, { goal: 0 }), 422, "validation_failed");
    await rejected(() => alice.patch(`/api/v1/habits/${h.id}`, { colour: "#000000" }), 422, "validation_failed");
    for (const id of [h.id, MISSING]) {
      const g = await bob.get(`/api/v1/habits/${id}`);
      expect(g.status).toBe(404);
      expect(g.body.code).toBe("not_found");
      await rejected(() => bob.patch(`/api/v1/habits/${id}`, { name: "x" }), 404, "not_found");
      await rejected(() => bob.delete(`/api/v1/habits/${id}`), 404, "not_found");
      await rejected(() => bob.post(`/api/v1/habits/${id}/restore`), 404, "not_found");
      await rejected(() => bob.delete(`/api/v1/habits/${id}/purge`), 404, "not_found");
      await rejected(() => bob.put(`/api/v1/habits/${id}/logs/2026-11-20`, { value: 1 }), 404, "not_found");
      expect((await bob.get(`/api/v1/habits/${id}/logs`)).status).toBe(404);
      expect((await bob.get(`/api/v1/habits/${id}/stats`)).status).toBe(404);
      expect((await bob.get(`/api/v1/habits/${id}/pauses`)).status).toBe(404);
      await rejected(() => bob.post(`/api/v1/habits/${id}/pauses`, { start_date: "2026-11-01" }), 404, "not_found");
    }
  });

  test("archive, list archived, read-only while archived, restore goes last, purge only archived", async () => {
    const c = await fresh("archiver");
    const a = await habit(c, { name: "A" });
    const b = await habit(c, { name: "B" });
    await rejected(() => c.delete(`/api/v1/habits/${a.id}/purge`), 409, "not_archived");
    // Restore is for an archived habit only (docs/spec/contract.md §12).
    expect((await rejected(() => c.post(`/api/v1/habits/${a.id}/restore`), 409, "state_conflict")).body.detail).toContain("not archived");
    expect((await c.delete(`/api/v1/habits/${a.id}`)).status).toBe(204);
    const before = dump(app.db);
    expect((await c.delete(`/api/v1/habits/${a.id}`)).status).toBe(204); // idempotent
    expect(dump(app.db)).toEqual(before);
    expect((await c.get("/api/v1/habits")).body.items.map((h: { id: string }) => h.id)).toEqual([b.id]);
    const arch = await c.get("/api/v1/habits?archived=true");
    expect(arch.body.items.map((h: { id: string; archived: boolean }) => [h.id, h.archived])).toEqual([[a.id, true]]);
    expect((await c.get(`/api/v1/habits/${a.id}`)).body.archived).toBe(true);
    await rejected(() => c.patch(`/api/v1/habits/${a.id}`, { name: "x" }), 404, "not_found");
    await rejected(() => c.put(`/api/v1/habits/${a.id}/logs/2026-11-24`, { value: 1 }), 404, "not_found");
    await rejected(() => c.post(`/api/v1/habits/${a.id}/pauses`, { start_date: "2026-11-24" }), 404, "not_found");
    expect((await c.get(`/api/v1/habits/${a.id}/stats`)).status).toBe(200);
    const r = await c.post(`/api/v1/habits/${a.id}/restore`);
    expect(r.status).toBe(200);
    expect(r.body.archived).toBe(false);
    expect((await c.get("/api/v1/habits")).body.items.map((h: { id: string }) => h.id)).toEqual([b.id, a.id]);
    await rejected(() => c.post(`/api/v1/habits/${a.id}/restore`), 409, "state_conflict");
    await c.put(`/api/v1/habits/${b.id}/logs/2026-11-24`, { value: 1 });
    await c.post(`/api/v1/habits/${b.id}/pauses`, { start_date: "2026-12-01" });
    await c.delete(`/api/v1/habits/${b.id}`);
    expect((await c.delete(`/api/v1/habits/${b.id}/purge`)).status).toBe(204);
    expect((await c.get(`/api/v1/habits/${b.id}`)).status).toBe(404);
    expect(app.db.sqlite.query("SELECT count(*) AS n FROM habit_logs WHERE habit_id = ?").get(b.id)).toEqual({ n: 0 });
    expect(app.db.sqlite.query("SELECT count(*) AS n FROM habit_pauses WHERE habit_id = ?").get(b.id)).toEqual({ n: 0 });
  });

  test("CSRF on every kind of write; bad list query", async () => {
    const h = await habit(alice, { start_date: "2026-11-01" });
    await rejected(() => alice.post("/api/v1/habits", { name: "x" }, { csrf: false }), 403, "csrf_failed");
    await rejected(() => alice.patch(`/api/v1/habits/${h.id}`, { name: "x" }, { csrf: false }), 403, "csrf_failed");
    await rejected(() => alice.put(`/api/v1/habits/${h.id}/logs/2026-11-20`, { value: 1 }, { csrf: false }), 403, "csrf_failed");
    await rejected(() => alice.post(`/api/v1/habits/${h.id}/pauses`, { start_date: "2026-11-20" }, { csrf: false }), 403, "csrf_failed");
    await rejected(() => alice.delete(`/api/v1/habits/${h.id}`, { csrf: false }), 403, "csrf_failed");
    const r = await alice.get("/api/v1/habits?archived=yes");
    expect(r.status).toBe(422);
    expect(r.body.code).toBe("validation_failed");
  });

  test("reorder takes exactly the active habits", async () => {
    const c = await fresh("reorderer");
    const [a, b, d] = [await habit(c, { name: "a" }), await habit(c, { name: "b" }), await habit(c, { name: "d" })];
    const archived = await habit(c, { name: "archived" });
    await c.delete(`/api/v1/habits/${archived.id}`);
    const foreign = await habit(bob, { name: "bob's" });
    for (const ids of [
      [a.id, b.id],
      [a.id, b.id, d.id, archived.id],
      [a.id, b.id, d.id, d.id],
      [a.id, b.id, foreign.id],
      [a.id, b.id, MISSING],
    ]) {
      await rejected(() => c.post("/api/v1/habits/reorder", { ids }), 422, "validation_failed");
    }
    await rejected(() => c.post("/api/v1/habits/reorder", { ids: "x" }), 422, "validation_failed");
    await rejected(() => c.post("/api/v1/habits/reorder", { ids: [d.id, a.id, b.id], more: 1 }), 422, "validation_failed");
    const r = await c.post("/api/v1/habits/reorder", { ids: [d.id, a.id, b.id] });
    expect(r.status).toBe(200);
    expect(r.body.items.map((h: { id: string; position: number }) => [h.id, h.position])).toEqual([
      [d.id, 0],
      [a.id, 1],
      [b.id, 2],
    ]);
    expect((await c.get("/api/v1/habits")).body.items.map((h: { id: string }) => h.id)).toEqual([d.id, a.id, b.id]);
  });
});

describe("habit logs", () => {
  test("upsert answers the log; replace; note optional; delete; range inclusive", async () => {
    const h = await habit(alice, { start_date: "2026-11-01" });
    const p = await alice.put(`/api/v1/habits/${h.id}/logs/2026-11-20`, { value: 2, note: "good" });
    expect(p.status).toBe(200);
    expect(p.body).toEqual({ date: "2026-11-20", value: 2, note: "good" });
    expect((await alice.get(`/api/v1/habits/${h.id}/logs/2026-11-20`)).body).toEqual(p.body);
    expect((await bob.get(`/api/v1/habits/${h.id}/logs/2026-11-20`)).status).toBe(404);
    expect((await alice.get(`/api/v1/habits/${h.id}/logs/2026-11-19`)).status).toBe(404);
    expect((await alice.get(`/api/v1/habits/${h.id}/logs/2026-11-31`)).status).toBe(422);
    const p2 = await alice.put(`/api/v1/habits/${h.id}/logs/2026-11-20`, { value: 0.5 });
    expect(p2.body).toEqual({ date: "2026-11-20", value: 0.5, note: null });
    await alice.put(`/api/v1/habits/${h.id}/logs/2026-11-21`, { value: 1 });
    await alice.put(`/api/v1/habits/${h.id}/logs/2026-11-25`, { value: 1 }); // today
    const all = await alice.get(`/api/v1/habits/${h.id}/logs`);
    expect(all.body.items.map((l: { date: string }) => l.date)).toEqual(["2026-11-20", "2026-11-21", "2026-11-25"]);
    const range = await alice.get(`/api/v1/habits/${h.id}/logs?from=2026-11-21&to=2026-11-25`);
    expect(range.body.items.map((l: { date: string }) => l.date)).toEqual(["2026-11-21", "2026-11-25"]);
    const one = await alice.get(`/api/v1/habits/${h.id}/logs?from=2026-11-20&to=2026-11-20`);
    expect(one.body.items).toEqual([{ date: "2026-11-20", value: 0.5, note: null }]);
    for (const q of ["from=2026-11-25&to=2026-11-20", "from=2026-13-01", "to=yesterday", "x=1"]) {
      const r = await alice.get(`/api/v1/habits/${h.id}/logs?${q}`);
      expect(r.status).toBe(422);
      expect(r.body.code).toBe("validation_failed");
    }
    expect((await alice.delete(`/api/v1/habits/${h.id}/logs/2026-11-21`)).status).toBe(204);
    await rejected(() => alice.delete(`/api/v1/habits/${h.id}/logs/2026-11-21`), 404, "not_found");
    await rejected(() => alice.delete(`/api/v1/habits/${h.id}/logs/2026-02-30`), 422, "validation_failed");
  });

  test("log validation: future, invalid date, value, note, unknown fields", async () => {
    const h = await habit(alice, { start_date: "2026-11-01" });
    const f = await rejected(() => alice.put(`/api/v1/habits/${h.id}/logs/2026-11-26`, { value: 1 }), 422, "validation_failed");
    expect(f.body.errors[0].path).toBe("date");
    for (const date of ["2026-02-30", "2026-11-5", "today", "2026-11-25T00:00:00Z"]) {
      await rejected(() => alice.put(`/api/v1/habits/${h.id}/logs/${date}`, { value: 1 }), 422, "validation_failed");
    }
    for (const body of [{ value: -1 }, { value: "1" }, {}, { value: 1, note: "n".repeat(2001) }, { value: 1, mood: "ok" }]) {
      await rejected(() => alice.put(`/api/v1/habits/${h.id}/logs/2026-11-24`, body), 422, "validation_failed");
    }
  });

  test("a log before start_date is 422 validation_failed on start_date (contract §12); the start date may move back to it", async () => {
    const h = await habit(alice, { name: "late start", start_date: "2026-11-20" });
    const r = await rejected(() => alice.put(`/api/v1/habits/${h.id}/logs/2026-11-19`, { value: 1 }), 422, "validation_failed");
    // Named on start_date, with a sentence a client can show and the dates it needs for an offer.
    expect(r.body.errors).toEqual([{ path: "start_date", message: "2026-11-19 is before the habit's start date (2026-11-20); move the start date back to 2026-11-19 to log it" }]);
    // The start date itself is fine; after moving it back, the earlier day is too.
    expect((await alice.put(`/api/v1/habits/${h.id}/logs/2026-11-20`, { value: 1 })).status).toBe(200);
    const moved = await alice.patch(`/api/v1/habits/${h.id}`, { start_date: "2026-11-19" });
    expect(moved.body.start_date).toBe("2026-11-19");
    expect((await alice.put(`/api/v1/habits/${h.id}/logs/2026-11-19`, { value: 1 })).status).toBe(200);
    // The day is then in the grid and the stats like any other.
    const grid = (await alice.get("/api/v1/habits/week?start=2026-11-19")).body.items.find((i: { habit: { id: string } }) => i.habit.id === h.id).days;
    expect(grid[0]).toEqual({ date: "2026-11-19", status: "done", value: 1 });
    expect((await alice.get(`/api/v1/habits/${h.id}/stats`)).body.total_done).toBe(2);
  });

  test("PATCH start_date past the earliest log is refused (no log lies before start_date); back, or up to it, is fine", async () => {
    const h = await habit(alice, { name: "moving start", start_date: "2026-11-10" });
    await alice.put(`/api/v1/habits/${h.id}/logs/2026-11-12`, { value: 1 });
    await alice.put(`/api/v1/habits/${h.id}/logs/2026-11-20`, { value: 1 });
    const r = await rejected(() => alice.patch(`/api/v1/habits/${h.id}`, { start_date: "2026-11-13" }), 422, "validation_failed");
    expect(r.body.errors).toEqual([{ path: "start_date", message: expect.stringContaining("2026-11-12") }]);
    // With other fields in the same PATCH: nothing of it applies.
    await rejected(() => alice.patch(`/api/v1/habits/${h.id}`, { name: "renamed", start_date: "2026-11-21" }), 422, "validation_failed");
    expect((await alice.patch(`/api/v1/habits/${h.id}`, { start_date: "2026-11-12" })).body.start_date).toBe("2026-11-12");
    expect((await alice.patch(`/api/v1/habits/${h.id}`, { start_date: "2026-11-01" })).body.start_date).toBe("2026-11-01");
    // Without the early log, the start may move up to the next one.
    expect((await alice.delete(`/api/v1/habits/${h.id}/logs/2026-11-12`)).status).toBe(204);
    expect((await alice.patch(`/api/v1/habits/${h.id}`, { start_date: "2026-11-20" })).body.start_date).toBe("2026-11-20");
    // A habit without logs may start anywhere.
    const empty = await habit(alice, { name: "no logs", start_date: "2026-11-10" });
    expect((await alice.patch(`/api/v1/habits/${empty.id}`, { start_date: "2026-12-24" })).body.start_date).toBe("2026-12-24");
  });

  test("'today' follows the user's time zone near midnight UTC (Auckland, Kiritimati)", async () => {
    // 2026-11-29T11:30Z is Sunday 11:30 in UTC but Monday 2026-11-30 00:30 in Auckland (NZDT, +13).
    clock.set("2026-11-29T11:30:00.000Z");
    try {
      const nz = await fresh("kiwi", "Pacific/Auckland");
      const utc = await fresh("utcuser");
      const hn = await habit(nz, { name: "nz" });
      expect(hn.start_date).toBe("2026-11-30");
      const hu = await habit(utc, { name: "utc", start_date: "2026-11-01" });
      expect((await nz.put(`/api/v1/habits/${hn.id}/logs/2026-11-30`, { value: 1 })).status).toBe(200);
      await rejected(() => utc.put(`/api/v1/habits/${hu.id}/logs/2026-11-30`, { value: 1 }), 422, "validation_failed");
      // Week grid defaults to the Monday of the user's own week.
      expect((await nz.get("/api/v1/habits/week")).body.start).toBe("2026-11-30");
      expect((await utc.get("/api/v1/habits/week")).body.start).toBe("2026-11-23");
      // Kiritimati (+14): at 10:30Z it is already 00:30 the next day.
      clock.set("2026-11-29T10:30:00.000Z");
      const ki = await fresh("kiribati", "Pacific/Kiritimati");
      const hk = await habit(ki, { name: "ki", start_date: "2026-11-01" });
      expect((await ki.put(`/api/v1/habits/${hk.id}/logs/2026-11-30`, { value: 1 })).status).toBe(200);
      await rejected(() => ki.put(`/api/v1/habits/${hk.id}/logs/2026-12-01`, { value: 1 }), 422, "validation_failed");
      const s = await ki.get(`/api/v1/habits/${hk.id}/stats`);
      expect(s.body.current_streak).toBe(1);
      // Before midnight local time the 30th is still the future for that user.
      clock.set("2026-11-29T09:59:00.000Z");
      await rejected(() => ki.put(`/api/v1/habits/${hk.id}/logs/2026-11-30`, { value: 2 }), 422, "validation_failed");
    } finally {
      clock.set("2026-11-25T10:00:00.000Z");
    }
  });
});

describe("habit pauses", () => {
  test("create, list, overlap is 409, end before start is 422, end an open pause, delete", async () => {
    const h = await habit(alice, { start_date: "2026-10-01" });
    const p1 = await alice.post(`/api/v1/habits/${h.id}/pauses`, { start_date: "2026-11-01", end_date: "2026-11-05" });
    expect(p1.status).toBe(201);
    expect(p1.headers.get("location")).toBe(`/api/v1/habits/${h.id}/pauses/${p1.body.id}`);
    expect(p1.body).toEqual({ id: p1.body.id, start_date: "2026-11-01", end_date: "2026-11-05" });
    expect((await alice.get(p1.headers.get("location")!)).body).toEqual(p1.body);
    expect((await bob.get(p1.headers.get("location")!)).status).toBe(404);
    const open = await alice.post(`/api/v1/habits/${h.id}/pauses`, { start_date: "2026-11-20" });
    expect(open.body.end_date).toBeNull();
    for (const body of [
      { start_date: "2026-11-05", end_date: "2026-11-06" },
      { start_date: "2026-10-20", end_date: "2026-11-01" },
      { start_date: "2026-10-20", end_date: null },
      { start_date: "2026-12-31" },
    ]) {
      await rejected(() => alice.post(`/api/v1/habits/${h.id}/pauses`, body), 409, "state_conflict");
    }
    for (const body of [{ start_date: "2026-10-10", end_date: "2026-10-09" }, { start_date: "2026-02-30" }, { end_date: "2026-10-09" }, { start_date: "2026-10-10", x: 1 }]) {
      await rejected(() => alice.post(`/api/v1/habits/${h.id}/pauses`, body), 422, "validation_failed");
    }
    const list = await alice.get(`/api/v1/habits/${h.id}/pauses`);
    expect(list.body.items.map((p: { id: string }) => p.id)).toEqual([p1.body.id, open.body.id]);
    // End the open pause; moving its start onto the first pause overlaps.
    const ended = await alice.patch(`/api/v1/habits/${h.id}/pauses/${open.body.id}`, { end_date: "2026-11-22" });
    expect(ended.status).toBe(200);
    expect(ended.body.end_date).toBe("2026-11-22");
    await rejected(() => alice.patch(`/api/v1/habits/${h.id}/pauses/${open.body.id}`, { start_date: "2026-11-04" }), 409, "state_conflict");
    await rejected(() => alice.patch(`/api/v1/habits/${h.id}/pauses/${open.body.id}`, { end_date: "2026-11-19" }), 422, "validation_failed");
    // A pause may be edited in place without conflicting with itself.
    expect((await alice.patch(`/api/v1/habits/${h.id}/pauses/${open.body.id}`, { start_date: "2026-11-21" })).status).toBe(200);
    await rejected(() => alice.patch(`/api/v1/habits/${h.id}/pauses/${MISSING}`, { end_date: null }), 404, "not_found");
    // another user's pause id through the owner's habit URL, and the owner's pause through another habit
    const other = await habit(alice);
    await rejected(() => alice.patch(`/api/v1/habits/${other.id}/pauses/${p1.body.id}`, { end_date: null }), 404, "not_found");
    await rejected(() => bob.delete(`/api/v1/habits/${h.id}/pauses/${p1.body.id}`), 404, "not_found");
    expect((await alice.delete(`/api/v1/habits/${h.id}/pauses/${p1.body.id}`)).status).toBe(204);
    await rejected(() => alice.delete(`/api/v1/habits/${h.id}/pauses/${p1.body.id}`), 404, "not_found");
  });
});

describe("weekly grid and stats", () => {
  test("statuses for daily, weekdays and times_per_week habits with a pause", async () => {
    const c = await fresh("gridder");
    // Week of Monday 2026-11-16 .. Sunday 11-22 is over; today is Wednesday 11-25.
    const daily = await habit(c, { name: "daily", goal: 2, start_date: "2026-11-17" });
    const wk = await habit(c, { name: "weekdays", frequency: { type: "weekdays", days: [1, 3, 5] }, start_date: "2026-11-01" });
    const tpw = await habit(c, { name: "tpw", frequency: { type: "times_per_week", count: 2 }, start_date: "2026-11-01" });
    expect((await c.put(`/api/v1/habits/${daily.id}/logs/2026-11-16`, { value: 5 })).status).toBe(422); // before start: refused
    await c.put(`/api/v1/habits/${daily.id}/logs/2026-11-17`, { value: 2 });
    await c.put(`/api/v1/habits/${daily.id}/logs/2026-11-18`, { value: 1 });
    await c.post(`/api/v1/habits/${daily.id}/pauses`, { start_date: "2026-11-20", end_date: "2026-11-21" });
    await c.put(`/api/v1/habits/${wk.id}/logs/2026-11-16`, { value: 1 });
    await c.put(`/api/v1/habits/${wk.id}/logs/2026-11-17`, { value: 1 }); // an unscheduled Tuesday
    await c.put(`/api/v1/habits/${tpw.id}/logs/2026-11-17`, { value: 1 }); // 1 of 2: the week is missed
    const g = await c.get("/api/v1/habits/week?start=2026-11-16");
    expect(g.status).toBe(200);
    expect(g.body.start).toBe("2026-11-16");
    const rows = Object.fromEntries(
      g.body.items.map((i: { habit: { name: string }; days: { date: string; status: string; value: number }[] }) => [i.habit.name, i.days]),
    );
    expect(rows.daily.map((d: { status: string }) => d.status)).toEqual(["not_scheduled", "done", "partial", "missed", "paused", "paused", "missed"]);
    expect(rows.daily.map((d: { value: number }) => d.value)).toEqual([0, 2, 1, 0, 0, 0, 0]);
    expect(rows.daily[0].date).toBe("2026-11-16");
    expect(rows.weekdays.map((d: { status: string }) => d.status)).toEqual(["done", "not_scheduled", "missed", "not_scheduled", "missed", "not_scheduled", "not_scheduled"]);
    expect(rows.tpw.map((d: { status: string }) => d.status)).toEqual(["missed", "done", "missed", "missed", "missed", "missed", "missed"]);
    // A grid starting on a Saturday reaches into the current week: open days, today, future.
    const g2 = await c.get("/api/v1/habits/week?start=2026-11-21");
    const r2 = Object.fromEntries(g2.body.items.map((i: { habit: { name: string }; days: { status: string }[] }) => [i.habit.name, i.days.map((d) => d.status)]));
    expect(r2.daily).toEqual(["paused", "missed", "missed", "missed", "missed", "future", "future"]);
    expect(r2.tpw).toEqual(["missed", "missed", "not_scheduled", "not_scheduled", "not_scheduled", "future", "future"]);
    // Default start: Monday of the current week; archived habits are not in the grid.
    await c.delete(`/api/v1/habits/${wk.id}`);
    const g3 = await c.get("/api/v1/habits/week");
    expect(g3.body.start).toBe("2026-11-23");
    expect(g3.body.items.map((i: { habit: { name: string } }) => i.habit.name)).toEqual(["daily", "tpw"]);
    expect(g3.body.items[0].days).toHaveLength(7);
    for (const q of ["start=2026-11-31", "start=monday", "begin=2026-11-23"]) {
      const r = await c.get(`/api/v1/habits/week?${q}`);
      expect(r.status).toBe(422);
    }
  });

  test("one precedence (contract §12): a day the habit does not schedule is not_scheduled even inside a pause or before start_date", async () => {
    const c = await fresh("precedence");
    // Mon/Wed/Fri from Tuesday 2026-11-10; a pause from Sunday 11-08 to Thursday 11-19 covers
    // days before the start, unscheduled and scheduled days. Today is Wednesday 11-25.
    const h = await habit(c, { name: "mwf", frequency: { type: "weekdays", days: [1, 3, 5] }, start_date: "2026-11-10" });
    expect((await c.post(`/api/v1/habits/${h.id}/pauses`, { start_date: "2026-11-08", end_date: "2026-11-19" })).status).toBe(201);
    const week = async (start: string) => (await c.get(`/api/v1/habits/week?start=${start}`)).body.items.find((i: { habit: { id: string } }) => i.habit.id === h.id).days;
    const statuses = async (start: string) => (await week(start)).map((d: { date: string; status: string }) => `${d.date.slice(8)} ${d.status}`);
    expect(await statuses("2026-11-09")).toEqual([
      "09 not_scheduled", // Monday before start_date, paused
      "10 not_scheduled", // Tuesday: not a scheduled weekday, paused
      "11 paused", // Wednesday, scheduled, paused
      "12 not_scheduled",
      "13 paused",
      "14 not_scheduled",
      "15 not_scheduled",
    ]);
    expect(await statuses("2026-11-19")).toEqual(["19 not_scheduled", "20 missed", "21 not_scheduled", "22 not_scheduled", "23 missed", "24 not_scheduled", "25 missed"]);
    // Future days stay future, scheduled or not; an open-ended pause does not change that.
    expect((await c.post(`/api/v1/habits/${h.id}/pauses`, { start_date: "2026-11-26" })).status).toBe(201);
    expect(await statuses("2026-11-25")).toEqual(["25 missed", "26 future", "27 future", "28 future", "29 future", "30 future", "01 future"]);
    // A daily habit has no unscheduled weekday: inside a pause every day is paused.
    const d = await habit(c, { name: "daily", start_date: "2026-11-10" });
    await c.post(`/api/v1/habits/${d.id}/pauses`, { start_date: "2026-11-08", end_date: "2026-11-12" });
    const daily = (await c.get("/api/v1/habits/week?start=2026-11-09")).body.items.find((i: { habit: { id: string } }) => i.habit.id === d.id).days;
    expect(daily.map((x: { status: string }) => x.status)).toEqual(["not_scheduled", "paused", "paused", "paused", "missed", "missed", "missed"]);
  });

  test("times_per_week: the current week's days after today count as eligible, so the week stays open until met", async () => {
    const c = await fresh("tpw-future");
    // Today is Wednesday 2026-11-25. A 7-times-a-week habit done Monday to Wednesday has not met
    // its week: Thursday to Sunday still count. Last week was met (every day done).
    const h = await habit(c, { frequency: { type: "times_per_week", count: 7 }, start_date: "2026-11-16" });
    for (let day = 16; day <= 25; day++) await c.put(`/api/v1/habits/${h.id}/logs/2026-11-${day}`, { value: 1 });
    const open = (await c.get(`/api/v1/habits/${h.id}/stats`)).body;
    expect(open).toMatchObject({ current_streak: 1, longest_streak: 1, total_done: 10 });
    const grid = (await c.get("/api/v1/habits/week")).body.items.find((i: { habit: { id: string } }) => i.habit.id === h.id).days;
    expect(grid.map((x: { status: string }) => x.status)).toEqual(["done", "done", "done", "future", "future", "future", "future"]);
    // Paused from tomorrow on, the week's eligible days are Monday to Wednesday only: met now.
    expect((await c.post(`/api/v1/habits/${h.id}/pauses`, { start_date: "2026-11-26" })).status).toBe(201);
    expect((await c.get(`/api/v1/habits/${h.id}/stats`)).body).toMatchObject({ current_streak: 2, longest_streak: 2 });
  });

  test("stats: today not done does not break the streak; paused and unscheduled days are skipped", async () => {
    const c = await fresh("stats");
    const h = await habit(c, { start_date: "2026-11-15" });
    for (const d of ["2026-11-19", "2026-11-20", "2026-11-23", "2026-11-24"]) await c.put(`/api/v1/habits/${h.id}/logs/${d}`, { value: 1 });
    await c.post(`/api/v1/habits/${h.id}/pauses`, { start_date: "2026-11-21", end_date: "2026-11-22" });
    let s = (await c.get(`/api/v1/habits/${h.id}/stats`)).body;
    // scheduled days 15..24 minus 21,22 = 8, done 4 (19,20,23,24); today open and left out.
    // 7d window 19..25: 19, 20, 23, 24 scheduled and done.
    expect(s).toEqual({ current_streak: 4, longest_streak: 4, total_done: 4, completion_rate_7d: 1, completion_rate_30d: 4 / 8, completion_rate_all: 4 / 8 });
    await c.put(`/api/v1/habits/${h.id}/logs/2026-11-25`, { value: 1 });
    s = (await c.get(`/api/v1/habits/${h.id}/stats`)).body;
    expect(s.current_streak).toBe(5);
    expect(s.completion_rate_7d).toBe(1);
    expect(s.completion_rate_30d).toBe(5 / 9);
    // A partial value is not done.
    await c.put(`/api/v1/habits/${h.id}/logs/2026-11-25`, { value: 0.5 });
    expect((await c.get(`/api/v1/habits/${h.id}/stats`)).body.current_streak).toBe(4);
    // Yesterday missed: the streak is broken.
    await c.delete(`/api/v1/habits/${h.id}/logs/2026-11-24`);
    expect((await c.get(`/api/v1/habits/${h.id}/stats`)).body.current_streak).toBe(0);
    // Weekdays habit: Mon/Wed/Fri; unscheduled days in between never break it.
    const w = await habit(c, { frequency: { type: "weekdays", days: [1, 3, 5] }, start_date: "2026-11-09" });
    for (const d of ["2026-11-13", "2026-11-16", "2026-11-18", "2026-11-20", "2026-11-23"]) await c.put(`/api/v1/habits/${w.id}/logs/${d}`, { value: 1 });
    await c.put(`/api/v1/habits/${w.id}/logs/2026-11-17`, { value: 1 }); // Tuesday: ignored
    s = (await c.get(`/api/v1/habits/${w.id}/stats`)).body;
    expect(s).toMatchObject({ current_streak: 5, longest_streak: 5, total_done: 5 });
    expect(s.completion_rate_all).toBe(5 / 7); // 9, 11 missed; 25 (today) open
    // times_per_week: weeks are the unit.
    const t = await habit(c, { frequency: { type: "times_per_week", count: 2 }, start_date: "2026-11-02" });
    for (const d of ["2026-11-03", "2026-11-05", "2026-11-10", "2026-11-17", "2026-11-18", "2026-11-24"]) await c.put(`/api/v1/habits/${t.id}/logs/${d}`, { value: 1 });
    s = (await c.get(`/api/v1/habits/${t.id}/stats`)).body;
    // weeks: 11-02 met, 11-09 unmet, 11-16 met, 11-23 open (1 of 2) → current 1, longest 1
    expect(s).toEqual({ current_streak: 1, longest_streak: 1, total_done: 6, completion_rate_7d: 1, completion_rate_30d: 2 / 3, completion_rate_all: 2 / 3 });
    // A habit starting in the future has nothing to judge.
    const future = await habit(c, { start_date: "2026-12-01" });
    expect((await c.get(`/api/v1/habits/${future.id}/stats`)).body).toEqual({
      current_streak: 0,
      longest_streak: 0,
      total_done: 0,
      completion_rate_7d: null,
      completion_rate_30d: null,
      completion_rate_all: null,
    });
  });

  test("grid and stats queries walk indexes (no table scan, no sort)", () => {
    const plan = (sql: string) =>
      (app.db.sqlite.query(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[]).map((r) => r.detail).join(" | ");
    const week = plan(
      "SELECT l.habit_id, l.date, l.value FROM habits h JOIN habit_logs l ON l.habit_id = h.id AND l.date BETWEEN '2026-11-16' AND '2026-11-29' WHERE h.user_id = 'u' AND h.archived_at IS NULL",
    );
    expect(week).toContain("habits_user_idx");
    expect(week).toContain("habit_id=? AND date>? AND date<?");
    const stats = plan("SELECT date, value FROM habit_logs WHERE habit_id = 'h' AND date <= '2026-11-25'");
    expect(stats).toContain("habit_id=? AND date<?");
    for (const p of [week, stats]) {
      expect(p).not.toContain("SCAN");
      expect(p).not.toContain("TEMP B-TREE");
    }
  });

  test("openapi documents every habit operation with its errors", async () => {
    const d = (await alice.get("/api/openapi.json")).body;
    const p = d.paths;
    expect(Object.keys(p["/api/v1/habits"]).sort()).toEqual(["get", "post"]);
    expect(Object.keys(p["/api/v1/habits/{habit_id}"]).sort()).toEqual(["delete", "get", "patch"]);
    expect(Object.keys(p["/api/v1/habits/{habit_id}/logs/{date}"]).sort()).toEqual(["delete", "get", "put"]);
    expect(Object.keys(p["/api/v1/habits/{habit_id}/pauses/{pause_id}"]).sort()).toEqual(["delete", "get", "patch"]);
    expect(p["/api/v1/habits/{habit_id}/logs/{date}"].put.parameters.find((x: { name: string }) => x.name === "date").schema.format).toBe("date");
    expect(p["/api/v1/habits/{habit_id}/pauses"].post.responses["409"]).toBeDefined();
    expect(p["/api/v1/habits/{habit_id}/purge"].delete.responses["409"]).toBeDefined();
    expect(p["/api/v1/habits/{habit_id}/stats"].get.description).toContain("times_per_week");
    expect(p["/api/v1/habits/week"].get.responses["200"]).toBeDefined();
    // The grid's whole precedence, and what the current week's future days do (docs/spec/contract.md §12).
    const grid = p["/api/v1/habits/week"].get.description;
    expect(grid).toContain("first of these that applies");
    expect(grid).toContain("inside a pause too");
    expect(grid).toContain("days after today count as eligible");
    expect(p["/api/v1/habits/reorder"].post.responses["422"]).toBeDefined();
  });
});
