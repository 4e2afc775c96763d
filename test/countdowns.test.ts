import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Lunar, Solar } from "lunar-typescript";
import { dump, FixedClock, makeTestApp, setupAdmin, signedInUser, type TestClient, type TestResponse } from "./helpers/app";
import { rejected as rejectedIn } from "./helpers/app";

// Wednesday 2026-11-25, 10:00 UTC.
const clock = new FixedClock(new Date("2026-11-25T10:00:00.000Z"));
// Sessions outlive the clock jumps below (years forward and back).
const app = makeTestApp({ clock, config: { sessionIdleSeconds: 50 * 365 * 86400, sessionAbsoluteSeconds: 50 * 365 * 86400 } });
let alice: TestClient;
let bob: TestClient;
const MISSING = "01900000-0000-7000-8000-000000000000";

beforeAll(async () => {
  alice = await setupAdmin(app);
  bob = await signedInUser(app, alice, "bob");
});
afterAll(() => app.close());

const rejected = (run: () => Promise<TestResponse>, status: number, code: string) => rejectedIn(app, run, status, code);

async function make(c: TestClient, body: Record<string, unknown>) {
  const r = await c.post("/api/v1/countdowns", { name: "x", ...body });
  if (r.status !== 201) throw new Error(`${r.status} ${r.text}`);
  return r.body;
}

const solarOf = (y: number, m: number, d: number) => Lunar.fromYmd(y, m, d).getSolar().toYmd();

describe("countdown CRUD", () => {
  test("create with defaults; 201 + Location; GET; PATCH", async () => {
    const r = await alice.post("/api/v1/countdowns", { name: "Trip", date: "2026-12-24" });
    expect(r.status).toBe(201);
    expect(r.headers.get("location")).toBe(`/api/v1/countdowns/${r.body.id}`);
    expect(r.body).toMatchObject({
      name: "Trip",
      date: "2026-12-24",
      type: "countdown",
      repeat: "none",
      icon: null,
      calendar: "gregorian",
      lunar: null,
      pinned: false,
      archived: false,
      next_date: "2026-12-24",
      days_until: 29,
      count: null,
    });
    expect((await alice.get(`/api/v1/countdowns/${r.body.id}`)).body).toEqual(r.body);
    const p = await alice.patch(`/api/v1/countdowns/${r.body.id}`, { name: "Xmas eve", icon: "🎄", type: "anniversary", repeat: "yearly", date: "2020-12-24" });
    expect(p.status).toBe(200);
    expect(p.body).toMatchObject({ name: "Xmas eve", icon: "🎄", next_date: "2026-12-24", days_until: 29, count: 6 });
    // Switching to the lunar calendar fills `lunar`; back to Gregorian clears it.
    const l = await alice.patch(`/api/v1/countdowns/${r.body.id}`, { calendar: "lunar" });
    const lib = Solar.fromYmd(2020, 12, 24).getLunar();
    expect(l.body.lunar).toEqual({ month: Math.abs(lib.getMonth()), day: lib.getDay(), leap: lib.getMonth() < 0 });
    expect((await alice.patch(`/api/v1/countdowns/${r.body.id}`, { calendar: "gregorian" })).body.lunar).toBeNull();
  });

  test("validation: dates, enums, names, unknown fields; lunar range", async () => {
    for (const b of [
      { date: "2026-02-29" },
      { date: "2026-13-01" },
      { date: "next friday" },
      { date: "0999-12-31" },
      { type: "holiday" },
      { repeat: "daily" },
      { calendar: "chinese" },
      { name: "" },
      { name: "n".repeat(201) },
      { icon: "i".repeat(65) },
      { pinned: true },
      { lunar: { month: 1, day: 1, leap: false } },
    ]) {
      await rejected(() => alice.post("/api/v1/countdowns", { name: "x", date: "2026-01-01", ...b }), 422, "validation_failed");
    }
    await rejected(() => alice.post("/api/v1/countdowns", { name: "x" }), 422, "validation_failed");
    // Outside the lunar years 1900..2100.
    const out = await rejected(() => alice.post("/api/v1/countdowns", { name: "x", date: "1899-06-01", calendar: "lunar" }), 422, "validation_failed");
    expect(out.body.errors[0].path).toBe("date");
    await rejected(() => alice.post("/api/v1/countdowns", { name: "x", date: "1900-01-15", calendar: "lunar" }), 422, "validation_failed");
    await rejected(() => alice.post("/api/v1/countdowns", { name: "x", date: "2101-06-01", calendar: "lunar" }), 422, "validation_failed");
    expect((await alice.post("/api/v1/countdowns", { name: "x", date: "1900-01-31", calendar: "lunar" })).status).toBe(201);
    expect((await alice.post("/api/v1/countdowns", { name: "x", date: "1899-06-01" })).status).toBe(201); // Gregorian is fine
    const c = await make(alice, { date: "2026-01-01" });
    await rejected(() => alice.patch(`/api/v1/countdowns/${c.id}`, { calendar: "lunar", date: "2150-01-01" }), 422, "validation_failed");
    await rejected(() => alice.patch(`/api/v1/countdowns/${c.id}`, { next_date: "2027-01-01" }), 422, "validation_failed");
  });

  test("another user's countdown is 404 exactly like a missing one", async () => {
    const c = await make(alice, { date: "2027-01-01" });
    for (const id of [c.id, MISSING]) {
      const g = await bob.get(`/api/v1/countdowns/${id}`);
      expect(g.status).toBe(404);
      expect(g.body.code).toBe("not_found");
      await rejected(() => bob.patch(`/api/v1/countdowns/${id}`, { name: "y" }), 404, "not_found");
      await rejected(() => bob.delete(`/api/v1/countdowns/${id}`), 404, "not_found");
      await rejected(() => bob.post(`/api/v1/countdowns/${id}/restore`), 404, "not_found");
      await rejected(() => bob.delete(`/api/v1/countdowns/${id}/purge`), 404, "not_found");
      await rejected(() => bob.post(`/api/v1/countdowns/${id}/pin`), 404, "not_found");
      await rejected(() => bob.delete(`/api/v1/countdowns/${id}/pin`), 404, "not_found");
    }
    expect((await bob.get("/api/v1/countdowns")).body.items.map((x: { id: string }) => x.id)).not.toContain(c.id);
  });

  test("single pin; unpin; archiving unpins; archived is read-only; restore; purge only archived", async () => {
    const c = await signedInUser(app, alice, "pinner");
    const a = await make(c, { name: "a", date: "2027-03-01" });
    const b = await make(c, { name: "b", date: "2027-01-01" });
    const pa = await c.post(`/api/v1/countdowns/${a.id}/pin`);
    expect(pa.status).toBe(200);
    expect(pa.body.pinned).toBe(true);
    const pb = await c.post(`/api/v1/countdowns/${b.id}/pin`);
    expect(pb.body.pinned).toBe(true);
    expect((await c.get(`/api/v1/countdowns/${a.id}`)).body.pinned).toBe(false);
    expect((await c.post(`/api/v1/countdowns/${b.id}/pin`)).body.pinned).toBe(true); // idempotent
    const u = await c.delete(`/api/v1/countdowns/${b.id}/pin`);
    expect(u.status).toBe(200);
    expect(u.body.pinned).toBe(false);
    expect((await c.delete(`/api/v1/countdowns/${b.id}/pin`)).body.pinned).toBe(false);
    await c.post(`/api/v1/countdowns/${a.id}/pin`);
    await rejected(() => c.delete(`/api/v1/countdowns/${a.id}/purge`), 409, "not_archived");
    // Restore is for an archived countdown only (docs/spec/contract.md §12).
    expect((await rejected(() => c.post(`/api/v1/countdowns/${a.id}/restore`), 409, "state_conflict")).body.detail).toContain("not archived");
    expect((await c.delete(`/api/v1/countdowns/${a.id}`)).status).toBe(204);
    const archived = await c.get(`/api/v1/countdowns/${a.id}`);
    expect(archived.body).toMatchObject({ archived: true, pinned: false });
    await rejected(() => c.post(`/api/v1/countdowns/${a.id}/pin`), 404, "not_found");
    await rejected(() => c.patch(`/api/v1/countdowns/${a.id}`, { name: "z" }), 404, "not_found");
    expect((await c.get("/api/v1/countdowns")).body.items.map((x: { id: string }) => x.id)).toEqual([b.id]);
    expect((await c.get("/api/v1/countdowns?archived=true")).body.items.map((x: { id: string }) => x.id)).toEqual([a.id]);
    expect((await c.get("/api/v1/countdowns?archived=maybe")).status).toBe(422);
    const before = dump(app.db);
    expect((await c.delete(`/api/v1/countdowns/${a.id}`)).status).toBe(204);
    expect(dump(app.db)).toEqual(before);
    const r = await c.post(`/api/v1/countdowns/${a.id}/restore`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ archived: false, pinned: false });
    await rejected(() => c.post(`/api/v1/countdowns/${a.id}/restore`), 409, "state_conflict");
    await c.delete(`/api/v1/countdowns/${a.id}`);
    expect((await c.delete(`/api/v1/countdowns/${a.id}/purge`)).status).toBe(204);
    expect((await c.get(`/api/v1/countdowns/${a.id}`)).status).toBe(404);
  });

  test("CSRF on writes", async () => {
    const c = await make(alice, { date: "2027-01-01" });
    await rejected(() => alice.post("/api/v1/countdowns", { name: "x", date: "2027-01-01" }, { csrf: false }), 403, "csrf_failed");
    await rejected(() => alice.post(`/api/v1/countdowns/${c.id}/pin`, undefined, { csrf: false }), 403, "csrf_failed");
    await rejected(() => alice.delete(`/api/v1/countdowns/${c.id}`, { csrf: false }), 403, "csrf_failed");
  });

  test("the database refuses a second pin even if the service were bypassed", async () => {
    const c = await signedInUser(app, alice, "dbpin");
    const a = await make(c, { date: "2027-03-01" });
    const b = await make(c, { date: "2027-03-02" });
    await c.post(`/api/v1/countdowns/${a.id}/pin`);
    expect(() => app.db.sqlite.run("UPDATE countdowns SET pinned = 1 WHERE id = ?", [b.id])).toThrow();
  });
});

describe("ordering and occurrences", () => {
  test("pinned first, then next_date ascending, past one-offs last (most recent first)", async () => {
    const c = await signedInUser(app, alice, "orderer");
    const past1 = await make(c, { name: "past1", date: "2026-01-10" });
    const past2 = await make(c, { name: "past2", date: "2026-06-10" });
    const far = await make(c, { name: "far", date: "2027-05-01" });
    const soon = await make(c, { name: "soon", date: "2026-11-30" });
    const today = await make(c, { name: "today", date: "2026-11-25" });
    const yearly = await make(c, { name: "yearly", date: "1990-01-15", type: "birthday", repeat: "yearly" });
    const weekly = await make(c, { name: "weekly", date: "2026-11-02", repeat: "weekly" });
    await c.post(`/api/v1/countdowns/${far.id}/pin`);
    const l = await c.get("/api/v1/countdowns");
    expect(l.status).toBe(200);
    expect(l.body.items.map((x: { name: string }) => x.name)).toEqual(["far", "today", "soon", "weekly", "yearly", "past2", "past1"]);
    const byName = Object.fromEntries(l.body.items.map((x: { name: string }) => [x.name, x]));
    expect(byName.today).toMatchObject({ next_date: "2026-11-25", days_until: 0 });
    expect(byName.weekly).toMatchObject({ next_date: "2026-11-30", days_until: 5 });
    expect(byName.yearly).toMatchObject({ next_date: "2027-01-15", days_until: 51, count: 37 });
    expect(byName.past2).toMatchObject({ next_date: null, days_until: -168, count: null });
    expect(byName.past1.days_until).toBe(-319);
    void [past1, past2, soon, today, yearly, weekly];
  });

  test("31st monthly falls on the month's last day; 29 February yearly falls on 28 February", async () => {
    const c = await signedInUser(app, alice, "edge");
    const m = await make(c, { date: "2026-01-31", repeat: "monthly" });
    expect(m.next_date).toBe("2026-11-30");
    clock.set("2027-02-01T12:00:00.000Z");
    try {
      expect((await c.get(`/api/v1/countdowns/${m.id}`)).body.next_date).toBe("2027-02-28");
      clock.set("2028-02-01T12:00:00.000Z");
      expect((await c.get(`/api/v1/countdowns/${m.id}`)).body.next_date).toBe("2028-02-29");
      clock.set("2026-12-01T12:00:00.000Z");
      expect((await c.get(`/api/v1/countdowns/${m.id}`)).body.next_date).toBe("2026-12-31");
      clock.set("2026-11-25T10:00:00.000Z");
      const leapling = await make(c, { date: "2000-02-29", type: "birthday", repeat: "yearly" });
      expect(leapling).toMatchObject({ next_date: "2027-02-28", count: 27 });
      clock.set("2027-03-01T00:00:00.000Z");
      expect((await c.get(`/api/v1/countdowns/${leapling.id}`)).body).toMatchObject({ next_date: "2028-02-29", count: 28 });
      // The origin itself counts: a yearly countdown created for a future date starts there.
      clock.set("2026-11-25T10:00:00.000Z");
      const future = await make(c, { date: "2030-06-01", type: "anniversary", repeat: "yearly" });
      expect(future).toMatchObject({ next_date: "2030-06-01", count: 0 });
    } finally {
      clock.set("2026-11-25T10:00:00.000Z");
    }
  });

  test("lunar: new year 2027 is 6 February (PMO), not ICU's 7 February", async () => {
    const c = await signedInUser(app, alice, "lunar1");
    const ny = await make(c, { name: "Spring festival", date: "2026-02-17", repeat: "yearly", calendar: "lunar" });
    expect(ny.lunar).toEqual({ month: 1, day: 1, leap: false });
    expect(ny.next_date).toBe("2027-02-06");
  });

  test("lunar birthday in a leap month: ordinary month in years without that leap month", async () => {
    const c = await signedInUser(app, alice, "lunar2");
    // 2023-04-10 is day 20 of the leap second month of 2023.
    const b = await make(c, { name: "leap baby", date: "2023-04-10", type: "birthday", repeat: "yearly", calendar: "lunar" });
    expect(b.lunar).toEqual({ month: 2, day: 20, leap: true });
    expect(b.next_date).toBe(solarOf(2027, 2, 20));
    expect(b.count).toBe(4);
    // 2025 has a leap sixth month; 2026 and 2027 do not (2026/6/8 is already past on 2026-11-25).
    const six = await make(c, { name: "six", date: "2025-08-01", type: "birthday", repeat: "yearly", calendar: "lunar" });
    expect(six.lunar).toEqual({ month: 6, day: 8, leap: true });
    expect(six.next_date).toBe(solarOf(2027, 6, 8));
    expect(six.count).toBe(2);
    // A year that has the leap month uses it: an ordinary-6 origin in 2006 seen from 2025.
    clock.set("2025-07-01T00:00:00.000Z");
    try {
      const again = await c.get(`/api/v1/countdowns/${six.id}`);
      expect(again.body.next_date).toBe("2025-08-01"); // the origin itself
      const born = await make(c, { name: "leap-6 from 1987", date: solarOf(1987, -6, 3), type: "birthday", repeat: "yearly", calendar: "lunar" });
      expect(born.lunar).toEqual({ month: 6, day: 3, leap: true });
      expect(born.next_date).toBe(solarOf(2025, -6, 3));
      expect(born.count).toBe(38);
    } finally {
      clock.set("2026-11-25T10:00:00.000Z");
    }
  });

  test("PATCH of only the date of a lunar countdown recomputes its lunar month and day", async () => {
    const c = await make(alice, { date: "2024-02-10", repeat: "yearly", calendar: "lunar" });
    expect(c.lunar).toEqual({ month: 1, day: 1, leap: false });
    const p = await alice.patch(`/api/v1/countdowns/${c.id}`, { date: "2024-03-10" });
    expect(p.status).toBe(200);
    expect(p.body.calendar).toBe("lunar");
    expect(p.body.lunar).toEqual({ month: 2, day: 1, leap: false });
    expect((await alice.get(`/api/v1/countdowns/${c.id}`)).body.lunar).toEqual({ month: 2, day: 1, leap: false });
  });

  test("lunar day 30 in a 29-day month falls on day 29; lunar monthly", async () => {
    const c = await signedInUser(app, alice, "lunar3");
    // Lunar 2025/7 has 30 days; 2026/7 has 29.
    const origin = solarOf(2025, 7, 30);
    const y = await make(c, { date: origin, type: "anniversary", repeat: "yearly", calendar: "lunar" });
    expect(y.lunar).toEqual({ month: 7, day: 30, leap: false });
    clock.set("2026-01-01T00:00:00.000Z");
    try {
      expect((await c.get(`/api/v1/countdowns/${y.id}`)).body.next_date).toBe(solarOf(2026, 7, 29));
    } finally {
      clock.set("2026-11-25T10:00:00.000Z");
    }
    // Monthly on lunar day 30: months with 29 days give day 29.
    const m = await make(c, { date: origin, repeat: "monthly", calendar: "lunar" });
    // Today 2026-11-25 is in lunar 2026/10 (30 days): its day 30 is still ahead.
    const t = Solar.fromYmd(2026, 11, 25).getLunar();
    expect([t.getYear(), t.getMonth()]).toEqual([2026, 10]);
    expect(m.next_date).toBe(solarOf(2026, 10, 30));
    // From the first day of lunar 2026/12, which has 29 days, the next is its day 29.
    clock.set(`${solarOf(2026, 12, 1)}T12:00:00.000Z`);
    try {
      expect((await c.get(`/api/v1/countdowns/${m.id}`)).body.next_date).toBe(solarOf(2026, 12, 29));
    } finally {
      clock.set("2026-11-25T10:00:00.000Z");
    }
  });

  test("'today' follows the user's time zone (Auckland, Kiritimati near midnight UTC)", async () => {
    clock.set("2026-11-29T11:30:00.000Z"); // Sunday 11:30 UTC = Monday 00:30 in Auckland
    try {
      const nz = await signedInUser(app, alice, "nzc");
      await nz.patch("/api/v1/me", { timezone: "Pacific/Auckland" });
      const utc = await signedInUser(app, alice, "utcc");
      const a = await make(nz, { date: "2026-11-30" });
      const b = await make(utc, { date: "2026-11-30" });
      expect(a.days_until).toBe(0);
      expect(b.days_until).toBe(1);
      const x = await make(nz, { date: "2026-11-29" });
      expect(x).toMatchObject({ next_date: null, days_until: -1 });
      clock.set("2026-11-29T10:30:00.000Z");
      const ki = await signedInUser(app, alice, "kic");
      await ki.patch("/api/v1/me", { timezone: "Pacific/Kiritimati" });
      const k = await make(ki, { date: "2026-11-30", repeat: "weekly" });
      expect(k).toMatchObject({ next_date: "2026-11-30", days_until: 0 });
      const kPast = await make(ki, { date: "2026-11-23", repeat: "weekly" });
      expect(kPast).toMatchObject({ next_date: "2026-11-30", days_until: 0 });
    } finally {
      clock.set("2026-11-25T10:00:00.000Z");
    }
  });

  test("openapi documents every countdown operation", async () => {
    const d = (await alice.get("/api/openapi.json")).body;
    expect(Object.keys(d.paths["/api/v1/countdowns/{countdown_id}/pin"]).sort()).toEqual(["delete", "post"]);
    expect(d.paths["/api/v1/countdowns/{countdown_id}/purge"].delete.responses["409"]).toBeDefined();
    expect(d.paths["/api/v1/countdowns"].get.description).toContain("29 February");
  });
});
