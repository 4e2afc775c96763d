import { afterEach, describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { dump, makeTestApp, setupAdmin, type TestApp, type TestClient } from "../helpers/app";
import { expectProblem } from "../helpers/problem";
import { entriesOf, exportBytes, preflight, rebuild, withFreshIds } from "./helpers";

/**
 * The per-user attachment quota (APP_ATTACHMENT_QUOTA_BYTES) holds for the backup restore as for an
 * upload, by the same rule (attachments.quota.ts): the preflight refuses an archive whose restore
 * would take the account past it (422 backup_invalid, naming the total), and the restore checks it
 * again in its transaction (413 storage_quota_exceeded, the upload's answer: files uploaded since
 * the preflight count). Nothing changes on a refusal.
 */

const QUOTA = 2000;
let apps: TestApp[] = [];
afterEach(() => {
  for (const a of apps) a.close();
  apps = [];
});

function app(quota = QUOTA): TestApp {
  const a = makeTestApp({ config: { attachmentQuotaBytes: quota } });
  apps.push(a);
  return a;
}

async function task(c: TestClient): Promise<string> {
  const r = await c.post("/api/v1/tasks", { title: "with files" });
  expect(r.status).toBe(201);
  return r.body.id;
}

async function upload(c: TestClient, taskId: string, bytes: number, ch = "a") {
  const fd = new FormData();
  fd.append("file", new Blob([ch.repeat(bytes)], { type: "text/plain" }), `${ch}.txt`);
  return c.request("POST", `/api/v1/tasks/${taskId}/attachments`, { body: fd });
}

/** An archive holding attachments of these sizes (made on a server without a quota). */
async function archiveWith(sizes: number[]): Promise<Uint8Array> {
  const src = app(0);
  const c = await setupAdmin(src);
  const t = await task(c);
  for (const [i, n] of sizes.entries()) expect((await upload(c, t, n, String.fromCharCode(97 + i))).status).toBe(201);
  return exportBytes(src, c);
}

async function refusedAtPreflight(a: TestApp, c: TestClient, zip: Uint8Array, mode: "merge" | "replace", message: RegExp) {
  const before = dump(a.db);
  const staged = readdirSync(join(a.dir, "backup", "staging")).sort();
  const r = await preflight(c, zip, mode);
  expectProblem(r, 422, "backup_invalid");
  const hit = (r.body.errors as { path: string; message: string }[]).find((e) => e.path === "data/attachments.json" && message.test(e.message));
  if (!hit) throw new Error(`no quota problem ${message} in ${JSON.stringify(r.body.errors)}`);
  expect(dump(a.db)).toEqual(before);
  expect(readdirSync(join(a.dir, "backup", "staging")).sort()).toEqual(staged);
}

describe("preflight: 422 backup_invalid naming the total", () => {
  test("replace: the archive's attachments alone pass the quota", async () => {
    const zip = await archiveWith([1500, 1000]);
    const a = app();
    const c = await setupAdmin(a);
    await refusedAtPreflight(a, c, zip, "replace", /^the attachments would take 2500 bytes \(2500 in place of yours\); your attachment quota is 2000 bytes/);
  });

  test("merge: what the archive adds beside what you have passes it; what you already have does not count", async () => {
    const a = app();
    const c = await setupAdmin(a);
    const t = await task(c);
    expect((await upload(c, t, 1500)).status).toBe(201);
    const own = await exportBytes(a, c);
    // Your own export merges: its attachment is yours already (nothing added).
    expect((await preflight(c, own, "merge")).status).toBe(200);
    // The same archive with fresh identifiers adds 1500 bytes beside your 1500.
    await refusedAtPreflight(a, c, rebuild(withFreshIds(entriesOf(own))), "merge", /^the attachments would take 3000 bytes \(1500 beside the 1500 bytes yours take\); your attachment quota is 2000/);
    // Replace: yours go, the archive's 1500 fit.
    expect((await preflight(c, rebuild(withFreshIds(entriesOf(own))), "replace")).status).toBe(200);
  });

  test("without a quota (the default) nothing is counted", async () => {
    const zip = await archiveWith([1500, 1000]);
    const a = app(0);
    const c = await setupAdmin(a);
    expect((await preflight(c, zip, "replace")).status).toBe(200);
  });
});

describe("restore: 413 storage_quota_exceeded, as an upload", () => {
  test("files uploaded between the preflight and the restore count; nothing changes, the token stays usable", async () => {
    const zip = await archiveWith([1200]);
    const a = app();
    const c = await setupAdmin(a);
    const t = await task(c);
    const pf = await preflight(c, zip, "merge");
    expect(pf.status).toBe(200);
    const late = await upload(c, t, 1000);
    expect(late.status).toBe(201);
    const before = dump(a.db, ["audit_logs", "sessions"]);
    const files = readdirSync(join(a.dir, "attachments")).sort();
    const r = await c.post("/api/v1/backup/restore", { preflight_token: pf.body.preflight_token, mode: "merge" });
    expectProblem(r, 413, "storage_quota_exceeded");
    expect(r.body.errors).toEqual([{ path: "preflight_token", message: "the restore would add 1200 bytes of attachments; 1000 are left of your attachment quota" }]);
    expect(dump(a.db, ["audit_logs", "sessions"])).toEqual(before);
    expect(readdirSync(join(a.dir, "attachments")).sort()).toEqual(files);
    expect(readdirSync(join(a.dir, "backup", "restores"))).toEqual([]);
    // Room made: the same token restores.
    expect((await c.delete(`/api/v1/attachments/${late.body.id}`)).status).toBe(204);
    const ok = await c.post("/api/v1/backup/restore", { preflight_token: pf.body.preflight_token, mode: "merge" });
    expect(ok.status).toBe(200);
    expect((await c.get("/api/v1/me")).body.attachment_bytes).toBe(1200);
  });

  test("a replace brings the account to the archive's total, whatever it took before", async () => {
    const zip = await archiveWith([1900]);
    const a = app();
    const c = await setupAdmin(a);
    const t = await task(c);
    expect((await upload(c, t, 1800)).status).toBe(201);
    const pf = await preflight(c, zip, "replace");
    expect(pf.status).toBe(200);
    expect((await c.post("/api/v1/backup/restore", { preflight_token: pf.body.preflight_token, mode: "replace" })).status).toBe(200);
    expect((await c.get("/api/v1/me")).body).toMatchObject({ attachment_bytes: 1900, attachment_quota_bytes: QUOTA });
  });
});
