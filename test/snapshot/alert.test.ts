import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { FixedClock } from "../../src/core/time";
import { makeTestApp, setupAdmin, signedInUser } from "../helpers/app";
import { hmacHex, Receiver } from "../reminders/helpers";

/**
 * A failed backup reaches the administrators through their own notification channels (issue 18:
 * "a failure reaches the admin through the reminders issue's channels"): each enabled channel of
 * each active admin gets one signed `alert`; other users' channels, and disabled ones, get nothing;
 * a successful run alerts nobody.
 */

setDefaultTimeout(60_000);
const rx = new Receiver();
const clock = new FixedClock(new Date("2026-10-20T03:29:59Z"));
const app = makeTestApp({ clock, config: { backupTimezone: "UTC" } });
afterAll(() => {
  app.close();
  rx.stop();
});

async function tickAt(at: string) {
  const t = new Date(at).getTime();
  clock.set(new Date(t - 1000));
  expect(await app.handle.snapshots.tick()).toBeNull();
  clock.set(new Date(t));
  return app.handle.snapshots.tick();
}

async function until(f: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !f(); i++) await Bun.sleep(25);
}

test("a failed backup alerts every admin's enabled channels, once per failed destination; a good one alerts nobody", async () => {
  const admin = await setupAdmin(app);
  const bob = await signedInUser(app, admin, "bob");
  const hook = await admin.post("/api/v1/notification-channels", { type: "webhook", name: "admin hook", config: { url: `${rx.url}/admin` } });
  expect(hook.status).toBe(201);
  const off = await admin.post("/api/v1/notification-channels", { type: "webhook", name: "admin off", config: { url: `${rx.url}/admin-off` } });
  expect((await admin.patch(`/api/v1/notification-channels/${off.body.id}`, { enabled: false })).status).toBe(200);
  expect((await bob.post("/api/v1/notification-channels", { type: "webhook", name: "bob hook", config: { url: `${rx.url}/bob` } })).status).toBe(201);

  expect((await tickAt("2026-10-20T03:30:00Z"))?.local.ok).toBe(true);
  await Bun.sleep(100);
  expect(rx.got).toEqual([]);

  // A file where the directory should be: the next run fails.
  expect((await admin.patch("/api/v1/admin/backups/settings", { local_dir: join(app.dir, "secret.key", "sub") })).status).toBe(200);
  expect((await tickAt("2026-10-21T03:30:00Z"))?.local.ok).toBe(false);
  await until(() => rx.got.length > 0);
  await Bun.sleep(100);
  expect(rx.got.map((g) => g.path)).toEqual(["/admin"]);
  const got = rx.got[0]!;
  expect(got.headers["x-signature"]).toBe(`sha256=${hmacHex(hook.body.secret, got.body)}`);
  const body = JSON.parse(got.body);
  expect(body).toMatchObject({ event: "alert", reminder_id: null, late: false, actions: null, target: { type: "instance", id: "" } });
  expect(body.target.title).toStartWith("Backup failed (local directory): ");
  expect(body.target.title).toMatch(/ENOTDIR|not a directory/i);
});
