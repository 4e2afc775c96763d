import { afterEach, expect, test } from "bun:test";
import { mkdirSync, readdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeTestApp, setupAdmin, signedInUser, type TestApp } from "../helpers/app";
import { reconcileAtStartup } from "../../src/transfer/backup/backup.reconcile";
import { entriesOf, exportBytes, preflight, readJson, rebuild, seed } from "./helpers";

let app: TestApp;
afterEach(() => app?.close());

test("start-up reconciliation: unfinished uploads, orphan staged files, export links and an uncommitted restore are cleaned or rolled back", async () => {
  app = makeTestApp();
  const a = await setupAdmin(app);
  const ids = await seed(a);
  const zip = await exportBytes(app, a);
  const live = await preflight(a, zip, "merge");
  expect(live.status).toBe(200);
  const b = join(app.dir, "backup");
  const liveStaged = readdirSync(join(b, "staging"));
  writeFileSync(join(b, "staging", `${Bun.randomUUIDv7()}.zip.part`), "half an upload");
  writeFileSync(join(b, "staging", `${Bun.randomUUIDv7()}.zip`), "no row for this one");
  mkdirSync(join(b, "exports", Bun.randomUUIDv7()), { recursive: true });
  // A restore that crashed after moving the attachment into quarantine, before its commit.
  const restoreId = Bun.randomUUIDv7();
  mkdirSync(join(b, "restores", restoreId, "quarantine"), { recursive: true });
  mkdirSync(join(b, "restores", restoreId, "staging"), { recursive: true });
  renameSync(join(app.dir, "attachments", ids.attachment), join(b, "restores", restoreId, "quarantine", ids.attachment));
  writeFileSync(join(b, "restores", restoreId, "staging", Bun.randomUUIDv7()), "new file never placed");

  reconcileAtStartup(app.handle.core);

  expect(readdirSync(join(b, "staging"))).toEqual(liveStaged);
  expect(readdirSync(join(b, "exports"))).toEqual([]);
  expect(readdirSync(join(b, "restores"))).toEqual([]);
  expect((await a.get(`/api/v1/attachments/${ids.attachment}`)).text).toBe("hello a\n");
  // The live preflight still restores.
  expect((await a.post("/api/v1/backup/restore", { preflight_token: live.body.preflight_token, mode: "merge" })).status).toBe(200);
});

test("per-user isolation at preflight: a merge archive may not refer to another user's records", async () => {
  app = makeTestApp();
  const a = await setupAdmin(app);
  const alice = await seed(a);
  const bob = await signedInUser(app, a, "bob");
  await seed(bob, "b");
  const e = entriesOf(await exportBytes(app, bob));
  const tasks = readJson<Record<string, unknown>[]>(e, "data/tasks.json");
  // One new task pointing at Alice's list and tag: they exist, but not among Bob's data.
  const t = { ...tasks.find((x) => x.parent_id === null)!, id: Bun.randomUUIDv7(), list_id: alice.list, tag_ids: [alice.tag] };
  e["data/tasks.json"] = new TextEncoder().encode(JSON.stringify([...tasks, t]));
  const r = await preflight(bob, rebuild(e), "merge");
  expect(r.status).toBe(422);
  expect(r.body.code).toBe("backup_invalid");
  const msgs = r.body.errors.map((x: { path: string; message: string }) => `${x.path} ${x.message}`);
  expect(msgs.some((m: string) => m.includes(`list ${alice.list} does not exist`))).toBe(true);
  expect(msgs.some((m: string) => m.includes(`tag ${alice.tag} does not exist`))).toBe(true);
});
