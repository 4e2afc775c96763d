import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { FixedClock, makeTestApp, setupAdmin, signedInUser, type TestClient } from "../helpers/app";
import { mkTask } from "../helpers/tasks";
import { entriesOf, exportBytes, preflight, readJson, rebuild, withFreshIds, writeJson } from "../backup/helpers";

/**
 * Reminders and channels in the complete backup: exported as records, restored (replace into
 * another account; merge of the same archive adds nothing), re-armed after the restore; a
 * reminder whose target is not in the archive is refused at preflight; an archive made before
 * reminders existed (no such files) restores as having none.
 */
const clock = new FixedClock(new Date("2026-11-25T10:00:00.000Z"));
const app = makeTestApp({ clock, config: { sessionIdleSeconds: 50 * 365 * 86400, sessionAbsoluteSeconds: 50 * 365 * 86400 } });
let alice: TestClient;
let carol: TestClient;
let zip: Uint8Array;
let taskId: string;

beforeAll(async () => {
  alice = await setupAdmin(app);
  carol = await signedInUser(app, alice, "carol");
  const ch = await alice.post("/api/v1/notification-channels", { type: "ntfy", name: "Phone", config: { server: "https://ntfy.example.org", topic: "alice", token: "tok_abc" } });
  expect(ch.status).toBe(201);
  const t = await mkTask(alice, { title: "Backup me", due_at: "2026-11-26T10:00:00Z" });
  taskId = t.id;
  expect((await alice.post(`/api/v1/tasks/${t.id}/reminders`, { kind: "before_due", minutes_before: 30 })).status).toBe(201);
  const h = await alice.post("/api/v1/habits", { name: "Read", frequency: { type: "daily" }, start_date: "2026-11-01" });
  expect((await alice.post(`/api/v1/habits/${h.body.id}/reminders`, { kind: "daily", time: "21:00" })).status).toBe(201);
  zip = await exportBytes(app, alice);
});
afterAll(() => app.close());

async function restore(c: TestClient, bytes: Uint8Array, mode: "merge" | "replace") {
  const pf = await preflight(c, bytes, mode);
  if (pf.status !== 200) return pf;
  return await c.post("/api/v1/backup/restore", { preflight_token: pf.body.preflight_token, mode });
}

describe("reminders in the backup", () => {
  test("the archive holds the channels (with their secrets) and the reminders (without next_fire_at)", () => {
    const e = entriesOf(zip);
    const channels = readJson<Record<string, unknown>[]>(e, "data/notification_channels.json");
    expect(channels).toHaveLength(1);
    expect(channels[0]).toMatchObject({ type: "ntfy", name: "Phone", enabled: true, config: { server: "https://ntfy.example.org", topic: "alice" }, secrets: { token: "tok_abc" } });
    const reminders = readJson<Record<string, unknown>[]>(e, "data/reminders.json");
    expect(reminders).toHaveLength(2);
    expect(reminders.find((r) => (r.target as { type: string }).type === "task")).toEqual({
      id: expect.any(String),
      target: { type: "task", id: taskId },
      kind: "before_due",
      minutes_before: 30,
      at: null,
      time: null,
      days_before: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
  });

  test("replace restore into another account: channels and reminders come back, re-armed by the scheduler", async () => {
    // Identifiers are per server: another account gets the archive with fresh ones (as test/backup does).
    const fresh = entriesOf(rebuild(withFreshIds(entriesOf(zip))));
    const newTask = readJson<{ id: string; title: string }[]>(fresh, "data/tasks.json").find((t) => t.title === "Backup me")!.id;
    const r = await restore(carol, rebuild(fresh), "replace");
    expect(r.status).toBe(200);
    taskId = newTask;
    const channels = (await carol.get("/api/v1/notification-channels")).body.items;
    expect(channels.map((c: { name: string }) => c.name)).toEqual(["Phone"]);
    expect(JSON.stringify(channels)).not.toContain("tok_abc");
    const before = (await carol.get(`/api/v1/tasks/${taskId}/reminders`)).body.items;
    expect(before).toHaveLength(1);
    expect(before[0].next_fire_at).toBeNull();
    await app.handle.scheduler.runDue();
    expect((await carol.get(`/api/v1/tasks/${taskId}/reminders`)).body.items[0].next_fire_at).toBe("2026-11-26T09:30:00.000Z");
    expect((await carol.get("/api/v1/deliveries")).body.items).toEqual([]);
  });

  test("a merge of the same archive into its own account adds nothing", async () => {
    const r = await restore(alice, zip, "merge");
    expect(r.status).toBe(200);
    expect((await alice.get("/api/v1/notification-channels")).body.items).toHaveLength(1);
    const own = readJson<{ id: string; title: string }[]>(entriesOf(zip), "data/tasks.json").find((t) => t.title === "Backup me")!.id;
    expect((await alice.get(`/api/v1/tasks/${own}/reminders`)).body.items).toHaveLength(1);
  });

  test("preflight refuses a reminder whose target is not in the archive, and a reminder of the wrong kind", async () => {
    const e = entriesOf(zip);
    const reminders = readJson<Record<string, unknown>[]>(e, "data/reminders.json");
    writeJson(e, "data/reminders.json", [{ ...reminders[0], target: { type: "countdown", id: "01900000-0000-7000-8000-000000000000" }, kind: "days_before", minutes_before: null, days_before: 1, time: "09:00" }, { ...reminders[1], kind: "at" }]);
    const pf = await preflight(carol, rebuild(e), "replace");
    expect(pf.status).toBe(422);
    expect(pf.body.code).toBe("backup_invalid");
    const text = JSON.stringify(pf.body.errors);
    expect(text).toContain("countdown 01900000-0000-7000-8000-000000000000 does not exist");
    expect(text).toMatch(/takes (before_due or at|daily) reminders/);
  });

  test("an archive made before reminders existed restores as having none", async () => {
    const e = entriesOf(zip);
    delete e["data/reminders.json"];
    delete e["data/notification_channels.json"];
    const old = rebuild(e, (m) => {
      const counts = m.counts as Record<string, number>;
      delete counts.reminders;
      delete counts.notification_channels;
    });
    const r = await restore(carol, rebuild(withFreshIds(entriesOf(old))), "replace");
    if (r.status !== 200) console.log(r.text);
    expect(r.status).toBe(200);
    expect((await carol.get("/api/v1/notification-channels")).body.items).toEqual([]);
    const tasks = (await carol.get("/api/v1/tasks")).body.items as { id: string; title: string }[];
    const restored = tasks.find((t) => t.title === "Backup me")!;
    expect((await carol.get(`/api/v1/tasks/${restored.id}/reminders`)).body.items).toEqual([]);
  });
});
