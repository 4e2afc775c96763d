import { afterAll, afterEach, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { S3Client } from "bun";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { FixedClock } from "../../src/core/time";
import { makeTestApp, setupAdmin, type TestApp } from "../helpers/app";
import { sha256 } from "../backup/helpers";

/**
 * The off-site copy against a real S3 protocol peer (s3rver, an S3 stand-in, in a process of its own on a free port):
 * upload, read-back check, retention on the bucket, failures reported without credentials, and the
 * keys never answered by the API nor written to the log.
 */

setDefaultTimeout(60_000);

// The one key pair s3rver accepts (it checks signatures).
const ACCESS = "S3RVER";
const SECRET = "S3RVER";
let s3dir: string;
let server: Subprocess<"ignore", "pipe", "inherit">;
let endpoint: string;

beforeAll(async () => {
  s3dir = mkdtempSync(join(tmpdir(), "app-s3rver-"));
  server = Bun.spawn([process.execPath, join(import.meta.dir, "../helpers/s3-server.ts"), s3dir, "backups"], { stdin: "ignore", stdout: "pipe", stderr: "inherit" });
  const reader = server.stdout.getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error("the S3 stand-in did not start");
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  endpoint = `http://127.0.0.1:${(JSON.parse(text.split("\n")[0]!) as { port: number }).port}`;
});

afterAll(async () => {
  server.kill();
  await server.exited;
  rmSync(s3dir, { recursive: true, force: true });
});

let app: TestApp | null = null;
afterEach(() => {
  app?.close();
  app = null;
});

const bucket = () => new S3Client({ endpoint, region: "us-east-1", bucket: "backups", accessKeyId: ACCESS, secretAccessKey: SECRET });

async function tickAt(a: TestApp, clock: FixedClock, at: string) {
  clock.set(new Date(Date.parse(at) - 1000));
  await a.handle.snapshots.tick();
  clock.set(at);
  return a.handle.snapshots.tick();
}

describe("S3 destination", () => {
  test("a verified copy is uploaded under the prefix, read back, pruned by retention; keys are write-only and never logged", async () => {
    const clock = new FixedClock(new Date("2026-11-01T00:00:00Z"));
    app = makeTestApp({ clock, config: { backupTimezone: "UTC" } });
    const admin = await setupAdmin(app);
    const p = await admin.patch("/api/v1/admin/backups/settings", {
      keep_daily: 2,
      keep_weekly: 0,
      keep_monthly: 0,
      s3: { endpoint, region: "us-east-1", bucket: "backups", prefix: "home/app", access_key_id: ACCESS, secret_access_key: SECRET },
    });
    expect(p.status).toBe(200);
    expect(p.body.settings.s3).toEqual({ enabled: true, endpoint, region: "us-east-1", bucket: "backups", prefix: "home/app", access_key_id_set: true, secret_access_key_set: true });
    expect(p.text).not.toContain(SECRET);
    expect(p.text).not.toContain(ACCESS);
    for (const day of ["2026-11-01", "2026-11-02", "2026-11-03"]) {
      const out = await tickAt(app, clock, `${day}T03:30:00Z`);
      expect(out?.local.ok).toBe(true);
      expect(out?.s3).toEqual(expect.objectContaining({ ok: true }));
    }
    const listed = await bucket().list({ prefix: "home/app/" });
    expect((listed.contents ?? []).map((o) => o.key).sort()).toEqual(["home/app/app-snapshot-20261102T033000Z.zip", "home/app/app-snapshot-20261103T033000Z.zip"]);
    const local = readFileSync(join(app.dir, "backups", "app-snapshot-20261103T033000Z.zip"));
    const remote = new Uint8Array(await bucket().file("home/app/app-snapshot-20261103T033000Z.zip").arrayBuffer());
    expect(sha256(remote)).toBe(sha256(local));
    const o = await admin.get("/api/v1/admin/backups");
    expect(o.body.destinations.map((d: { destination: string; last_result: string }) => [d.destination, d.last_result])).toEqual([
      ["local", "success"],
      ["s3", "success"],
    ]);
    expect(o.body.destinations[1].last_name).toBe("home/app/app-snapshot-20261103T033000Z.zip");
    expect(o.text).not.toContain(SECRET);
    expect(o.text).not.toContain(ACCESS);
    const ready = await app.client().get("/api/v1/health/ready");
    expect(ready.body.details.backups.map((d: { destination: string }) => d.destination)).toEqual(["local", "s3"]);
    expect(ready.text).not.toContain(SECRET);
    const logs = app.logs.join("\n");
    expect(logs).toContain("snapshot stored");
    expect(logs).not.toContain(SECRET);
    expect(logs).not.toContain(ACCESS);
  });

  test("an unreachable endpoint or a missing bucket: retried, reported per destination, the local snapshot still good, no credentials in the error", async () => {
    const clock = new FixedClock(new Date("2026-11-01T00:00:00Z"));
    app = makeTestApp({ clock, config: { backupTimezone: "UTC" } });
    const admin = await setupAdmin(app);
    expect(
      (await admin.patch("/api/v1/admin/backups/settings", { s3: { endpoint, region: "us-east-1", bucket: "no-such-bucket", access_key_id: ACCESS, secret_access_key: SECRET } })).status,
    ).toBe(200);
    const started = Date.now();
    const out = await tickAt(app, clock, "2026-11-01T03:30:00Z");
    expect(out?.local.ok).toBe(true);
    expect(out?.s3?.ok).toBe(false);
    // Three attempts with pauses of 1 s and 4 s between them.
    expect(Date.now() - started).toBeGreaterThanOrEqual(4500);
    const o = await admin.get("/api/v1/admin/backups");
    const s3 = o.body.destinations[1];
    expect(s3.destination).toBe("s3");
    expect(s3.last_result).toBe("failure");
    expect(s3.last_error).toMatch(/failed after 3 attempts/);
    expect(o.body.destinations[0].last_result).toBe("success");
    expect(o.text).not.toContain(SECRET);
    expect(app.logs.join("\n")).not.toContain(SECRET);
    expect((await app.client().get("/api/v1/health/ready")).status).toBe(200);
  });
});
