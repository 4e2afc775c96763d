import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FixedClock } from "../../src/core/time";
import { verifySnapshot } from "../../src/transfer/snapshot/snapshot.verify";
import { restoreSnapshot } from "../../src/transfer/snapshot/snapshot.restore";
import { dump, makeTestApp, rejected, setupAdmin, signedInUser, type TestApp } from "../helpers/app";
import { entriesOf, preflight, seed } from "../backup/helpers";

/**
 * Scheduled snapshots through the real app (HTTP API, job worker, real files) with a controlled
 * clock: the schedule fires at its time in its zone and not before, retention prunes only verified
 * snapshots and never the newest, settings are validated, status reaches the API and /health/ready.
 */

setDefaultTimeout(60_000);

let app: TestApp | null = null;
afterEach(() => {
  app?.close();
  app = null;
});

/** Lets the schedule see the time just before `at` (so it arms for `at`), then `at`: the run it makes. */
async function tickAt(app: TestApp, clock: FixedClock, at: string | Date) {
  const t = new Date(at).getTime();
  clock.set(new Date(t - 1000));
  expect(await app.handle.snapshots.tick()).toBeNull();
  clock.set(new Date(t));
  return app.handle.snapshots.tick();
}

async function started(at: string, config: Record<string, unknown> = {}) {
  const clock = new FixedClock(new Date(at));
  app = makeTestApp({ clock, config: { backupTimezone: "Europe/Berlin", ...config } });
  const admin = await setupAdmin(app);
  return { app, clock, admin };
}

describe("schedule", () => {
  test("runs at 03:30 in the configured zone, not before; the snapshot is verified and reported", async () => {
    // 2026-03-29 is Berlin's spring-forward day (02:00 → 03:00 CEST): 03:30 CEST = 01:30 UTC.
    const { app, clock, admin } = await started("2026-03-29T01:00:00Z");
    await seed(admin, "a");
    const svc = app.handle.snapshots;
    expect(await svc.tick()).toBeNull();
    expect(svc.nextScheduled?.toISOString()).toBe("2026-03-29T01:30:00.000Z");
    clock.set("2026-03-29T01:29:59Z");
    expect(await svc.tick()).toBeNull();
    clock.set("2026-03-29T01:30:00Z");
    const out = await svc.tick();
    expect(out?.local.ok).toBe(true);
    const dir = join(app.dir, "backups");
    expect(readdirSync(dir)).toEqual(["app-snapshot-20260329T013000Z.zip"]);
    const v = verifySnapshot(join(dir, "app-snapshot-20260329T013000Z.zip"), join(app.dir, "v"));
    expect(v.manifest.attachments).toBe(1);
    // The next run is the next day's 03:30 CEST.
    expect(svc.nextScheduled?.toISOString()).toBe("2026-03-30T01:30:00.000Z");
    const r = await admin.get("/api/v1/admin/backups");
    expect(r.status).toBe(200);
    expect(r.body.destinations).toEqual([
      expect.objectContaining({ destination: "local", last_result: "success", last_success_at: "2026-03-29T01:30:00.000Z", last_name: "app-snapshot-20260329T013000Z.zip", last_sha256: v.sha256, last_bytes: v.bytes, last_error: null }),
    ]);
    expect(r.body.next_run_at).toBe("2026-03-30T01:30:00.000Z");
    const ready = await app.client().get("/api/v1/health/ready");
    expect(ready.status).toBe(200);
    expect(ready.body.details.backups).toEqual([{ destination: "local", last_success_at: "2026-03-29T01:30:00.000Z", age_seconds: 0, last_result: "success" }]);
  });

  test("retention over ten scheduled days keeps the configured days and never a temporary file", async () => {
    const { app, clock, admin } = await started("2026-10-20T00:00:00Z");
    expect((await admin.patch("/api/v1/admin/backups/settings", { keep_daily: 3, keep_weekly: 0, keep_monthly: 0, timezone: "UTC" })).status).toBe(200);
    const dir = join(app.dir, "backups");
    for (let day = 0; day < 10; day++) {
      const out = await tickAt(app, clock, new Date(Date.parse("2026-10-20T03:30:00Z") + day * 86400_000));
      expect(out?.local.ok).toBe(true);
      if (day === 4) writeFileSync(join(dir, ".app-snapshot-20261001T033000Z.zip.part"), "half");
    }
    const names = readdirSync(dir).filter((n) => !n.startsWith("."));
    expect(names.sort()).toEqual(["app-snapshot-20261027T033000Z.zip", "app-snapshot-20261028T033000Z.zip", "app-snapshot-20261029T033000Z.zip"]);
    // A leftover temporary file is never counted (removed once it is stale).
    expect(existsSync(join(dir, ".app-snapshot-20261001T033000Z.zip.part"))).toBe(true);
  });

  test("a failed run prunes nothing and is reported (local directory not writable)", async () => {
    const { app, clock, admin } = await started("2026-10-20T03:30:00Z", { backupTimezone: "UTC" });
    expect((await tickAt(app, clock, "2026-10-20T03:30:00Z"))?.local.ok).toBe(true);
    const dir = join(app.dir, "backups");
    const first = readdirSync(dir);
    // A file where the directory should be: every write fails.
    expect((await admin.patch("/api/v1/admin/backups/settings", { local_dir: join(app.dir, "secret.key", "sub") })).status).toBe(200);
    const out = await tickAt(app, clock, "2026-10-21T03:30:00Z");
    expect(out?.local.ok).toBe(false);
    const r = await admin.get("/api/v1/admin/backups");
    const local = r.body.destinations[0];
    expect(local.last_result).toBe("failure");
    expect(local.last_error).toMatch(/ENOTDIR|not a directory/i);
    expect(local.last_success_at).toBe("2026-10-20T03:30:00.000Z");
    expect(readdirSync(dir)).toEqual(first);
    const ready = await app.client().get("/api/v1/health/ready");
    // Reported in the details, never in the status code.
    expect(ready.status).toBe(200);
    expect(ready.body.details.backups[0].last_result).toBe("failure");
    expect(app.logs.some((l) => l.includes("snapshot failed"))).toBe(true);
  });

  test("schedule off: nothing is due", async () => {
    const { app, clock, admin } = await started("2026-10-20T00:00:00Z");
    expect((await admin.patch("/api/v1/admin/backups/settings", { schedule_enabled: false })).body.next_run_at).toBeNull();
    clock.set("2026-10-21T05:00:00Z");
    expect(await app.handle.snapshots.tick()).toBeNull();
  });
});

describe("each user's own archive in the snapshot", () => {
  test("with user_archives on, users/<id>.zip of every user is in the manifest, and each passes that user's own preflight", async () => {
    const { app, clock, admin } = await started("2026-10-20T00:00:00Z", { backupTimezone: "UTC" });
    const bob = await signedInUser(app, admin, "bob");
    await seed(admin, "a");
    await seed(bob, "b");
    expect((await admin.patch("/api/v1/admin/backups/settings", { user_archives: true })).body.settings.user_archives).toBe(true);
    const out = await tickAt(app, clock, "2026-10-20T03:30:00Z");
    expect(out?.local.ok).toBe(true);
    const path = join(app.dir, "backups", "app-snapshot-20261020T033000Z.zip");
    const v = verifySnapshot(path, join(app.dir, "v"));
    const users = v.manifest.files.filter((f) => f.path.startsWith("users/"));
    expect(users.length).toBe(2);
    const entries = entriesOf(new Uint8Array(readFileSync(path)));
    for (const [client, label] of [[admin, "a"], [bob, "b"]] as const) {
      const me = (await client.get("/api/v1/me")).body;
      const zip = entries[`users/${me.id}.zip`]!;
      const pf = await preflight(client, zip, "replace");
      expect(pf.status).toBe(200);
      const inner = entriesOf(zip);
      expect(new TextDecoder().decode(inner["data/tasks.json"])).toContain(`Task ${label}`);
    }
    // A whole-instance restore checks them and extracts only the instance.
    const target = join(app.dir, "restored");
    const r = restoreSnapshot(path, target, new Date());
    expect(r.manifest.files.length).toBe(v.manifest.files.length);
    expect(readdirSync(target).sort()).toEqual(["app.db", "attachments", "secret.key"]);
  });
});

describe("admin API", () => {
  test("settings: defaults from the config, overrides, null resets, and invalid values refused with nothing changed", async () => {
    const { app, admin } = await started("2026-10-20T00:00:00Z");
    const r = await admin.get("/api/v1/admin/backups");
    expect(r.body.settings).toEqual({
      schedule_enabled: true,
      user_archives: false,
      schedule: "30 3 * * *",
      timezone: "Europe/Berlin",
      local_dir: join(app.dir, "backups"),
      keep_daily: 7,
      keep_weekly: 4,
      keep_monthly: 6,
      s3: { enabled: false, endpoint: "", region: "", bucket: "", prefix: "", access_key_id_set: false, secret_access_key_set: false },
    });
    expect(r.body.next_run_at).toBe("2026-10-20T01:30:00.000Z");
    const p = await admin.patch("/api/v1/admin/backups/settings", { schedule: "0 4 * * 1", keep_daily: 2 });
    expect(p.status).toBe(200);
    expect(p.body.settings.schedule).toBe("0 4 * * 1");
    expect(p.body.next_run_at).toBe("2026-10-26T03:00:00.000Z");
    expect((await admin.patch("/api/v1/admin/backups/settings", { keep_daily: null })).body.settings.keep_daily).toBe(7);
    for (const [body, path] of [
      [{ schedule: "every day" }, "schedule"],
      [{ timezone: "Mars/Base" }, "timezone"],
      [{ local_dir: "relative/dir" }, "local_dir"],
      [{ s3: { endpoint: "ftp://x" } }, "s3.endpoint"],
    ] as const) {
      const res = await rejected(app, () => admin.patch("/api/v1/admin/backups/settings", body), 422, "validation_failed");
      expect(res.body.errors[0].path).toBe(path);
    }
    await rejected(app, () => admin.patch("/api/v1/admin/backups/settings", { keep_daily: -1 }), 422, "validation_failed");
    await rejected(app, () => admin.patch("/api/v1/admin/backups/settings", { unknown: 1 }), 422, "validation_failed");
    const before = dump(app.db);
    await rejected(app, () => admin.patch("/api/v1/admin/backups/settings", { schedule: "nope" }), 422, "validation_failed");
    expect(dump(app.db)).toEqual(before);
  });

  test("administrators only", async () => {
    const { app, admin } = await started("2026-10-20T00:00:00Z");
    const bob = await signedInUser(app, admin, "bob");
    await rejected(app, () => bob.get("/api/v1/admin/backups"), 403, "forbidden");
    await rejected(app, () => bob.patch("/api/v1/admin/backups/settings", { keep_daily: 1 }), 403, "forbidden");
    await rejected(app, () => bob.post("/api/v1/admin/backups/run", {}), 403, "forbidden");
    expect((await app.client().get("/api/v1/admin/backups")).status).toBe(401);
  });

  test("run now answers 202, a second run while one runs is 409, the result appears in the overview", async () => {
    const { app, admin } = await started("2026-10-20T00:00:00Z");
    const r = await admin.post("/api/v1/admin/backups/run", {});
    expect(r.status).toBe(202);
    await rejected(app, () => admin.post("/api/v1/admin/backups/run", {}), 409, "state_conflict");
    for (let i = 0; i < 200; i++) {
      const o = await admin.get("/api/v1/admin/backups");
      if (!o.body.running && o.body.destinations[0].last_result) break;
      await Bun.sleep(50);
    }
    const o = await admin.get("/api/v1/admin/backups");
    expect(o.body.destinations[0].last_result).toBe("success");
    expect(readdirSync(join(app.dir, "backups"))).toEqual(["app-snapshot-20261020T000000Z.zip"]);
  });
});
