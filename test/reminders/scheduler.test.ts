import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ADMIN, FixedClock, type TestClient } from "../helpers/app";
import { mkTask } from "../helpers/tasks";
import { openApp, Receiver } from "./helpers";

/**
 * The scheduler against a pinned clock: DST days, a zone change, and a restart after downtime
 * (late within the grace, missed past it). Each app here is a real app on a real data directory;
 * a "restart" opens a second app on the same directory.
 */
const rx = new Receiver();
const dirs: string[] = [];
afterAll(() => {
  rx.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function fresh(clock: FixedClock, tz: string) {
  const dir = mkdtempSync(join(tmpdir(), "app-rem-"));
  dirs.push(dir);
  const app = openApp(dir, clock);
  const c = app.client();
  const r = await c.post("/api/v1/setup/initialize", { ...ADMIN, timezone: tz });
  expect(r.status).toBe(201);
  const ch = await c.post("/api/v1/notification-channels", { type: "webhook", name: "rx", config: { url: `${rx.url}/${dir.slice(-6)}` } });
  expect(ch.status).toBe(201);
  return { dir, app, c, path: `/${dir.slice(-6)}` };
}

const nextFire = async (c: TestClient, path: string) => (await c.get(`/api/v1/${path}/reminders`)).body.items[0].next_fire_at as string | null;

describe("DST", () => {
  test("a daily habit reminder keeps its local time across spring-forward and fall-back (Europe/Berlin 2027)", async () => {
    const clock = new FixedClock(new Date("2027-03-26T12:00:00Z"));
    const { app, c, path } = await fresh(clock, "Europe/Berlin");
    const h = await c.post("/api/v1/habits", { name: "Meds", frequency: { type: "daily" }, start_date: "2027-03-01" });
    await c.post(`/api/v1/habits/${h.body.id}/reminders`, { kind: "daily", time: "02:30" });
    const fires: string[] = [];
    for (let i = 0; i < 3; i++) {
      const next = (await nextFire(c, `habits/${h.body.id}`))!;
      fires.push(next);
      clock.set(next);
      await app.handle.scheduler.runDue();
    }
    // 02:30 CET = 01:30Z; on 2027-03-28 02:30 does not exist: 03:30 CEST = 01:30Z; then 02:30 CEST = 00:30Z.
    expect(fires).toEqual(["2027-03-27T01:30:00.000Z", "2027-03-28T01:30:00.000Z", "2027-03-29T00:30:00.000Z"]);
    expect(rx.got.filter((g) => g.path === path)).toHaveLength(3);
    // Fall back: 2027-10-31 has 02:30 twice; the first (CEST, 00:30Z) is the one.
    clock.set("2027-10-30T12:00:00Z");
    await c.patch(`/api/v1/reminders/${(await c.get(`/api/v1/habits/${h.body.id}/reminders`)).body.items[0].id}`, { time: "02:30" });
    expect(await nextFire(c, `habits/${h.body.id}`)).toBe("2027-10-31T00:30:00.000Z");
    clock.set("2027-10-31T00:30:00Z");
    await app.handle.scheduler.runDue();
    expect(await nextFire(c, `habits/${h.body.id}`)).toBe("2027-11-01T01:30:00.000Z");
    app.close();
  });

  test("a date-only task's reminder time is local on the DST day; a zone change re-computes", async () => {
    const clock = new FixedClock(new Date("2027-03-26T12:00:00Z"));
    const { app, c } = await fresh(clock, "Europe/Berlin");
    const before = await mkTask(c, { title: "Sat", due_at: "2027-03-27" });
    const on = await mkTask(c, { title: "Sun", due_at: "2027-03-28" });
    await c.post(`/api/v1/tasks/${before.id}/reminders`, { kind: "before_due", minutes_before: 0 });
    await c.post(`/api/v1/tasks/${on.id}/reminders`, { kind: "before_due", minutes_before: 0 });
    expect(await nextFire(c, `tasks/${before.id}`)).toBe("2027-03-27T08:00:00.000Z");
    expect(await nextFire(c, `tasks/${on.id}`)).toBe("2027-03-28T07:00:00.000Z");
    await c.patch("/api/v1/me", { timezone: "Asia/Tokyo" });
    expect(await nextFire(c, `tasks/${on.id}`)).toBe("2027-03-28T00:00:00.000Z");
    app.close();
  });
});

describe("restart catch-up", () => {
  test("missed by less than the grace while down: delivered late; older: recorded missed, never sent", async () => {
    const clock = new FixedClock(new Date("2026-12-01T08:00:00Z"));
    const first = await fresh(clock, "UTC");
    const a = await mkTask(first.c, { title: "Within grace", due_at: "2026-12-01T09:00:00Z" });
    const b = await mkTask(first.c, { title: "Past grace", due_at: "2026-12-01T08:10:00Z" });
    await first.c.post(`/api/v1/tasks/${a.id}/reminders`, { kind: "before_due", minutes_before: 0 });
    await first.c.post(`/api/v1/tasks/${b.id}/reminders`, { kind: "before_due", minutes_before: 0 });
    first.app.close();
    // Down until 09:30: the 09:00 one is 30 minutes late, the 08:10 one 80 minutes (grace 60).
    clock.set("2026-12-01T09:30:00Z");
    const second = openApp(first.dir, clock);
    second.handle.scheduler.start();
    await second.handle.scheduler.runDue();
    const c = second.client();
    c.jar.clear();
    await c.post("/api/v1/auth/login", { username: ADMIN.username, password: ADMIN.password });
    const items = (await c.get("/api/v1/deliveries")).body.items as { status: string; late: boolean; attempts: number; reminder_id: string }[];
    expect(items.map((d) => [d.status, d.late, d.attempts]).sort()).toEqual([
      ["delivered", true, 1],
      ["missed", false, 0],
    ]);
    const sent = rx.got.filter((g) => g.path === first.path).map((g) => JSON.parse(g.body));
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ late: true, target: { title: "Within grace" } });
    second.handle.scheduler.stop();
    second.close();
  });
});
