import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ADMIN, FixedClock } from "../helpers/app";
import { mkTask } from "../helpers/tasks";
import { openApp, Receiver } from "./helpers";

/**
 * A burst through the batched scheduler (firing slices, claims of 64 into the queue, group-committed
 * outcomes): 300 deliveries due at one instant (15 tasks × 10 reminders, on 2 channels, one of them
 * refusing) take several claimed batches and group commits; each is sent once, under its own id,
 * and recorded: delivered on one channel, retrying on the other.
 */
const ok = new Receiver();
const refusing = new Receiver();
refusing.answer = () => new Response("no", { status: 503 });
const dirs: string[] = [];
afterAll(() => {
  ok.stop();
  refusing.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

test("300 deliveries due at one instant: each sent once and recorded, across several claimed batches", async () => {
  const dir = mkdtempSync(join(tmpdir(), "app-remburst-"));
  dirs.push(dir);
  const clock = new FixedClock(new Date("2026-12-01T08:00:00Z"));
  const app = openApp(dir, clock);
  const c = app.client();
  expect((await c.post("/api/v1/setup/initialize", { ...ADMIN, timezone: "UTC" })).status).toBe(201);
  expect((await c.post("/api/v1/notification-channels", { type: "webhook", name: "ok", config: { url: `${ok.url}/ok` } })).status).toBe(201);
  expect((await c.post("/api/v1/notification-channels", { type: "webhook", name: "down", config: { url: `${refusing.url}/down` } })).status).toBe(201);
  for (let t = 0; t < 15; t++) {
    const task = await mkTask(c, { title: `burst ${t}`, due_at: "2026-12-01T09:00:00Z" });
    for (let k = 0; k < 10; k++) expect((await c.post(`/api/v1/tasks/${task.id}/reminders`, { kind: "before_due", minutes_before: 0 })).status).toBe(201);
  }
  clock.set("2026-12-01T09:00:00Z");
  await app.handle.scheduler.runDue();

  const rows = app.db.sqlite.query("SELECT id, channel_id, status, attempts FROM deliveries").all() as { id: string; channel_id: string; status: string; attempts: number }[];
  expect(rows).toHaveLength(300);
  const okIds = ok.got.map((g) => g.headers["x-delivery-id"]!);
  const downIds = refusing.got.map((g) => g.headers["x-delivery-id"]!);
  expect(okIds).toHaveLength(150);
  expect(new Set(okIds).size).toBe(150);
  expect(downIds).toHaveLength(150);
  expect(new Set(downIds).size).toBe(150);
  const byId = new Map(rows.map((r) => [r.id, r]));
  for (const id of okIds) expect(byId.get(id)).toMatchObject({ status: "delivered", attempts: 1 });
  for (const id of downIds) expect(byId.get(id)).toMatchObject({ status: "retrying", attempts: 1 });
  // Nothing is left mid-attempt, and another pass at the same instant sends nothing again.
  await app.handle.scheduler.runDue();
  expect(ok.got).toHaveLength(150);
  expect(refusing.got).toHaveLength(150);
  app.close();
}, 60_000);
