import { afterAll, describe, expect, test } from "bun:test";
import { FixedClock, makeTestApp, setupAdmin, type TestApp } from "../helpers/app";
import { mkTask } from "../helpers/tasks";
import { Receiver } from "../reminders/helpers";

/**
 * What other features report on /metrics: the whole-instance snapshots (the README's alert rule
 * reads app_backup_last_success_timestamp_seconds) and the reminders' delivery attempts.
 */

const TOKEN = "metrics-test-token-0123456789abcdefABCDEF";
const apps: TestApp[] = [];
const rx = new Receiver();
afterAll(() => {
  for (const a of apps) a.close();
  rx.stop();
});

function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const i = line.lastIndexOf(" ");
    out.set(line.slice(0, i), Number(line.slice(i + 1)));
  }
  return out;
}
async function scrape(a: TestApp): Promise<Map<string, number>> {
  const r = await a.client().get("/metrics", { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(r.status).toBe(200);
  return samples(r.text);
}

describe("backups", () => {
  test("the last verified snapshot's time per destination: 0 before the first, its time after; the last attempt's result", async () => {
    const clock = new FixedClock(new Date("2026-10-20T00:00:00Z"));
    const a = makeTestApp({ clock, config: { metricsToken: TOKEN } });
    apps.push(a);
    const admin = await setupAdmin(a);
    let s = await scrape(a);
    expect(s.get('app_backup_last_success_timestamp_seconds{destination="local"}')).toBe(0);
    expect(s.has('app_backup_last_attempt_ok{destination="local"}')).toBe(false);
    expect((await admin.post("/api/v1/admin/backups/run", {})).status).toBe(202);
    for (let i = 0; i < 400; i++) {
      const o = await admin.get("/api/v1/admin/backups");
      if (!o.body.running && o.body.destinations[0].last_result) break;
      await Bun.sleep(50);
    }
    s = await scrape(a);
    expect(s.get('app_backup_last_success_timestamp_seconds{destination="local"}')).toBe(Date.parse("2026-10-20T00:00:00Z") / 1000);
    expect(s.get('app_backup_last_attempt_ok{destination="local"}')).toBe(1);
  });
});

describe("reminders", () => {
  test("delivery attempts by result: all three series from the start, a delivered one counted once", async () => {
    const clock = new FixedClock(new Date("2026-11-25T10:00:00.000Z"));
    const a = makeTestApp({ clock, config: { metricsToken: TOKEN } });
    apps.push(a);
    a.handle.channels.publicUrl = "http://localhost";
    const alice = await setupAdmin(a);
    let s = await scrape(a);
    for (const result of ["delivered", "retrying", "failed"]) expect(s.get(`app_reminder_delivery_attempts_total{result="${result}"}`)).toBe(0);
    expect((await alice.post("/api/v1/notification-channels", { type: "webhook", name: "hook", config: { url: `${rx.url}/hook` } })).status).toBe(201);
    const t = await mkTask(alice, { title: "Dentist", due_at: "2026-11-25T11:00:00Z" });
    expect((await alice.post(`/api/v1/tasks/${t.id}/reminders`, { kind: "before_due", minutes_before: 30 })).status).toBe(201);
    clock.set("2026-11-25T10:30:00.000Z");
    await a.handle.scheduler.runDue();
    await a.handle.scheduler.runDue();
    s = await scrape(a);
    expect(s.get('app_reminder_delivery_attempts_total{result="delivered"}')).toBe(1);
    expect(s.get('app_reminder_delivery_attempts_total{result="failed"}')).toBe(0);
  });
});
