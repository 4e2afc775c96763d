import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ADMIN, FixedClock } from "../helpers/app";
import { mkTask } from "../helpers/tasks";
import { DELIVERIES_PER_USER, DELIVERY_RETENTION_DAYS, latestFire } from "../../src/features/reminders/deliveries.retention";
import { openApp, Receiver } from "./helpers";

/**
 * Retention of the delivery history (deliveries.retention.ts): ended deliveries older than 30 days
 * and those past the newest 1,000 of a user go; a row whose occurrence could still be sent stays
 * (it is the ledger's exactly-once key), as do rows under way and rows of the last 24 hours.
 */
const rx = new Receiver();
const dirs: string[] = [];
afterAll(() => {
  rx.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const DAY = 86_400_000;
const T0 = new Date("2026-12-01T08:00:00Z").getTime();
const iso = (ms: number) => new Date(ms).toISOString();

async function fresh(clock: FixedClock) {
  const dir = mkdtempSync(join(tmpdir(), "app-remret-"));
  dirs.push(dir);
  const app = openApp(dir, clock);
  const c = app.client();
  expect((await c.post("/api/v1/setup/initialize", { ...ADMIN, timezone: "UTC" })).status).toBe(201);
  const path = `/ret-${dir.slice(-6)}`;
  const ch = await c.post("/api/v1/notification-channels", { type: "webhook", name: "rx", config: { url: `${rx.url}${path}` } });
  expect(ch.status).toBe(201);
  const sent = () => rx.got.filter((g) => g.path === path).map((g) => JSON.parse(g.body) as { target: { title: string } });
  return { app, c, sent, channelId: ch.body.id as string };
}

describe("delivery retention", () => {
  test(`ended deliveries older than ${DELIVERY_RETENTION_DAYS} days are deleted by the scheduler's hourly pass; younger ones stay`, async () => {
    const clock = new FixedClock(new Date(T0 - 60_000));
    const { app, c, sent } = await fresh(clock);
    const old = await mkTask(c, { title: "Old" });
    await c.post(`/api/v1/tasks/${old.id}/reminders`, { kind: "at", at: iso(T0) });
    clock.set(iso(T0));
    await app.handle.scheduler.runDue();
    clock.set(iso(T0 + 20 * DAY));
    const recent = await mkTask(c, { title: "Recent" });
    await c.post(`/api/v1/tasks/${recent.id}/reminders`, { kind: "at", at: iso(T0 + 20 * DAY + 60_000) });
    clock.set(iso(T0 + 20 * DAY + 60_000));
    await app.handle.scheduler.runDue();
    expect(sent().map((m) => m.target.title)).toEqual(["Old", "Recent"]);
    const titles = async () => ((await c.get("/api/v1/deliveries")).body.items as { status: string }[]).map((d) => d.status);
    expect(await titles()).toEqual(["delivered", "delivered"]);

    // 30 days and a minute after the first: the next pass prunes it (not the 20-day-old one).
    clock.set(iso(T0 + DELIVERY_RETENTION_DAYS * DAY + 60_000));
    await app.handle.scheduler.runDue();
    const left = (await c.get("/api/v1/deliveries")).body.items as { fire_at: string }[];
    expect(left.map((d) => d.fire_at)).toEqual([iso(T0 + 20 * DAY + 60_000)]);
    app.close();
  });

  test("a delivery whose occurrence could still be sent is kept past 30 days: moving the due date back does not send it twice", async () => {
    const clock = new FixedClock(new Date(T0 - 60_000));
    const { app, c, sent } = await fresh(clock);
    // Due in 40 days, reminded 40 days ahead (now): occurrence D, fired at T0.
    const D = T0 + 40 * DAY;
    const t = await mkTask(c, { title: "Far", due_at: iso(D) });
    const rem = await c.post(`/api/v1/tasks/${t.id}/reminders`, { kind: "before_due", minutes_before: 40 * 24 * 60 });
    expect(rem.body.next_fire_at).toBe(iso(T0));
    clock.set(iso(T0));
    await app.handle.scheduler.runDue();
    expect(sent()).toHaveLength(1);

    // 31 days on: older than the retention, but its occurrence (D) is 9 days ahead: kept.
    clock.set(iso(T0 + 31 * DAY));
    expect(await app.handle.scheduler.prune()).toBe(0);
    expect((await c.get("/api/v1/deliveries")).body.items).toHaveLength(1);

    // Another occurrence fires (the due date moved), then the due date comes back to D with a
    // shorter lead: the reminder is armed at D again, and the kept ledger row stops a second send.
    const D2 = T0 + 72 * DAY;
    const cur = (await c.get(`/api/v1/tasks/${t.id}`)).body;
    expect((await c.patch(`/api/v1/tasks/${t.id}`, { version: cur.version, due_at: iso(D2) })).status).toBe(200);
    clock.set(iso(D2 - 40 * DAY));
    await app.handle.scheduler.runDue();
    expect(sent()).toHaveLength(2);
    const cur2 = (await c.get(`/api/v1/tasks/${t.id}`)).body;
    expect((await c.patch(`/api/v1/tasks/${t.id}`, { version: cur2.version, due_at: iso(D) })).status).toBe(200);
    expect((await c.patch(`/api/v1/reminders/${rem.body.id}`, { minutes_before: 24 * 60 })).body.next_fire_at).toBe(iso(D - DAY));
    clock.set(iso(D - DAY));
    await app.handle.scheduler.runDue();
    expect(sent()).toHaveLength(2);
    expect((await c.get("/api/v1/deliveries")).body.items).toHaveLength(2);

    // Once D is past the grace, its row can go (it is far older than 30 days).
    clock.set(iso(D + 2 * 3600_000));
    expect(await app.handle.scheduler.prune()).toBe(1);
    expect(((await c.get("/api/v1/deliveries")).body.items as { occurrence: string }[]).map((d) => d.occurrence)).toEqual([iso(D2)]);
    app.close();
  });

  test(`at most ${DELIVERIES_PER_USER} per user: older ended rows go; rows under way and rows of the last 24 hours stay`, async () => {
    const now = T0 + 10 * DAY;
    const clock = new FixedClock(new Date(now));
    const { app, c, channelId } = await fresh(clock);
    const userId = (await c.get("/api/v1/me")).body.id as string;
    const insert = app.db.sqlite.query(
      "INSERT INTO deliveries (id, user_id, reminder_id, channel_id, occurrence, fire_at, status, late, attempts, next_attempt_at, last_error, delivered_at, payload, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, 0, 1, ?, NULL, ?, '{}', ?)",
    );
    // Oldest first (UUIDv7 ids in creation order): 3 still retrying, 1,200 delivered two days ago,
    // then 1,100 delivered in the last hour.
    const seed = (n: number, status: string, at: (i: number) => number) => {
      const ids: string[] = [];
      app.db.sqlite.transaction(() => {
        for (let i = 0; i < n; i++) {
          const id = Bun.randomUUIDv7();
          ids.push(id);
          const t = iso(at(i));
          insert.run(id, userId, Bun.randomUUIDv7(), channelId, t, t, status, status === "retrying" ? iso(now + 60_000) : null, status === "delivered" ? t : null, t);
        }
      })();
      return ids;
    };
    const count = () => (app.db.sqlite.query("SELECT count(*) AS n FROM deliveries").get() as { n: number }).n;
    const retrying = seed(3, "retrying", (i) => now - 3 * DAY + i);
    const older = seed(1200, "delivered", (i) => now - 2 * DAY + i * 1000);
    const lastHour = seed(1100, "delivered", (i) => now - 3600_000 + i);
    expect(count()).toBe(2303);

    // The newest 1,000 are all from the last hour; the 1,200 older ended ones go, the rest stay.
    expect(await app.handle.scheduler.prune()).toBe(1200);
    expect(count()).toBe(1103);
    const has = (id: string) => app.db.sqlite.query("SELECT 1 FROM deliveries WHERE id = ?").get(id) !== null;
    expect(retrying.every(has)).toBe(true);
    expect(older.some(has)).toBe(false);
    expect(lastHour.every(has)).toBe(true);

    // A day later the last hour's rows are past 24 hours: the cap keeps the newest 1,000 of them.
    clock.set(iso(now + DAY));
    expect(await app.handle.scheduler.prune()).toBe(100);
    expect(lastHour.slice(0, 100).some(has)).toBe(false);
    expect(lastHour.slice(100).every(has)).toBe(true);
    expect(retrying.every(has)).toBe(true);
    app.close();
  });

  test("the latest instant an occurrence can fire: an instant, the end of a day in the farthest zone, a snooze's instant", () => {
    expect(latestFire("2026-12-01T09:00:00.000Z")).toBe(Date.parse("2026-12-01T09:00:00.000Z"));
    expect(latestFire("2026-12-01")).toBe(Date.parse("2026-12-03T00:00:00Z"));
    expect(latestFire("2026-12-01#snooze@2026-12-05T10:00:00.000Z")).toBe(Date.parse("2026-12-05T10:00:00.000Z"));
    expect(latestFire("#snooze@2026-12-05T10:00:00.000Z")).toBe(Date.parse("2026-12-05T10:00:00.000Z"));
    expect(latestFire("garbage")).toBeNull();
    expect(latestFire("")).toBeNull();
  });
});
