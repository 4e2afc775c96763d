import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { dump, FixedClock, makeTestApp, setupAdmin, signedInUser, type TestApp, type TestClient } from "../helpers/app";
import { reconcileAtStartup } from "../../src/transfer/backup/backup.reconcile";
import { BACKUP_TABLES, entriesOf, exportBytes, preflight, readJson, rebuild, seed, sha256, userData, withFreshIds } from "./helpers";

let app: TestApp;
afterEach(() => {
  delete process.env.APP_FAILPOINT;
  delete process.env.APP_FAILPOINT_ACTION;
  app?.close();
});

async function me(c: TestClient): Promise<string> {
  return (await c.get("/api/v1/me")).body.id;
}

async function tokenFor(c: TestClient, zip: Uint8Array, mode: "merge" | "replace") {
  const r = await preflight(c, zip, mode);
  if (r.status !== 200) throw new Error(`preflight ${r.status} ${r.text}`);
  return r.body.preflight_token as string;
}

function restore(c: TestClient, token: string, mode: "merge" | "replace") {
  return c.post("/api/v1/backup/restore", { preflight_token: token, mode });
}

function attachmentFiles(a: TestApp): Record<string, string> {
  const dir = join(a.dir, "attachments");
  return Object.fromEntries(readdirSync(dir).map((n) => [n, sha256(readFileSync(join(dir, n)))]));
}

describe("replace", () => {
  test("brings back exactly the exported state, attachment bytes included, and is audited", async () => {
    app = makeTestApp();
    const a = await setupAdmin(app);
    const ids = await seed(a);
    const uid = await me(a);
    const zip = await exportBytes(app, a);
    const before = userData(app.db, uid);
    const filesBefore = attachmentFiles(app);
    // Change everything after the export: edits, deletions, additions.
    await a.delete(`/api/v1/memos/${ids.memo}`);
    await a.post("/api/v1/memos", { content: "new after export" });
    await a.post("/api/v1/tasks", { title: "new task after export" });
    const fd = new FormData();
    fd.append("file", new Blob(["later\n"], { type: "text/plain" }), "later.txt");
    expect((await a.request("POST", `/api/v1/tasks/${ids.task}/attachments`, { body: fd })).status).toBe(201);
    expect(userData(app.db, uid)).not.toEqual(before);

    const token = await tokenFor(a, zip, "replace");
    const r = await restore(a, token, "replace");
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ mode: "replace", counts: { tasks: 3, memos: 1, attachments: 1, recurrence_exceptions: 1 } });
    expect(r.body.cleanup).toBeUndefined();
    expect(userData(app.db, uid)).toEqual(before);
    expect(attachmentFiles(app)).toEqual(filesBefore);
    const dl = await a.get(`/api/v1/attachments/${ids.attachment}`);
    expect(dl.status).toBe(200);
    expect(dl.text).toBe("hello a\n");
    // Nothing left behind.
    expect(readdirSync(join(app.dir, "backup", "restores"))).toEqual([]);
    expect(readdirSync(join(app.dir, "backup", "staging"))).toEqual([]);
    const audit = (await a.get("/api/v1/audit-logs?limit=100")).body.items.map((x: { action: string }) => x.action);
    expect(audit).toContain("backup_exported");
    expect(audit).toContain("backup_preflight");
    expect(audit).toContain("backup_restored");
  });

  test("the archive's inbox maps onto the user's own inbox (never a second inbox)", async () => {
    app = makeTestApp();
    const a = await setupAdmin(app);
    await seed(a);
    const b = await signedInUser(app, a, "bob");
    const bid = await me(b);
    const zip = rebuild(withFreshIds(entriesOf(await exportBytes(app, a))));
    const inboxBefore = (app.db.sqlite.query("SELECT id FROM lists WHERE user_id = ? AND is_inbox = 1").get(bid) as { id: string }).id;
    const r = await restore(b, await tokenFor(b, zip, "replace"), "replace");
    expect(r.status).toBe(200);
    const inboxes = app.db.sqlite.query("SELECT id FROM lists WHERE user_id = ? AND is_inbox = 1").all(bid) as { id: string }[];
    expect(inboxes).toEqual([{ id: inboxBefore }]);
    const inboxTasks = app.db.sqlite.query("SELECT title FROM tasks WHERE user_id = ? AND list_id = ?").all(bid, inboxBefore) as { title: string }[];
    expect(inboxTasks.map((t) => t.title)).toEqual(["Inbox a"]);
    // Bob's search works on restored tasks (search text and index kept in step).
    const s = await b.get("/api/v1/tasks?q=inbox");
    expect(s.body.items.map((t: { title: string }) => t.title)).toEqual(["Inbox a"]);
  });

  test("an archive holding another user's identifiers is refused (409 merge_conflict), nothing changes", async () => {
    app = makeTestApp();
    const a = await setupAdmin(app);
    const ids = await seed(a);
    const b = await signedInUser(app, a, "bob");
    await seed(b, "b");
    const zip = await exportBytes(app, a);
    const token = await tokenFor(b, zip, "replace"); // preflight does not look at other users' data
    const before = dump(app.db, BACKUP_TABLES);
    const filesBefore = attachmentFiles(app);
    const r = await restore(b, token, "replace");
    expect(r.status).toBe(409);
    expect(r.body.code).toBe("merge_conflict");
    const paths = r.body.errors.map((e: { path: string }) => e.path);
    expect(paths).toContain(`tasks/${ids.task}`);
    expect(paths).toContain(`attachments/${ids.attachment}`);
    expect(dump(app.db, BACKUP_TABLES)).toEqual(before);
    expect(attachmentFiles(app)).toEqual(filesBefore);
    expect(readdirSync(join(app.dir, "backup", "restores"))).toEqual([]);
    // The token was not consumed: the failed import did not commit.
    const pf = app.db.sqlite.query("SELECT consumed_at FROM backup_preflights").all() as { consumed_at: string | null }[];
    expect(pf.every((p) => p.consumed_at === null)).toBe(true);
  });
});

describe("merge", () => {
  test("own export merged back adds nothing; repeated merges report the same counts", async () => {
    app = makeTestApp();
    const a = await setupAdmin(app);
    await seed(a);
    const uid = await me(a);
    const zip = await exportBytes(app, a);
    const before = userData(app.db, uid);
    const r1 = await restore(a, await tokenFor(a, zip, "merge"), "merge");
    expect(r1.status).toBe(200);
    expect(userData(app.db, uid)).toEqual(before);
    const r2 = await restore(a, await tokenFor(a, zip, "merge"), "merge");
    expect(r2.status).toBe(200);
    expect(r2.body.counts).toEqual(r1.body.counts);
    expect(userData(app.db, uid)).toEqual(before);
  });

  test("records deleted since the export come back; the rest is kept", async () => {
    app = makeTestApp();
    const a = await setupAdmin(app);
    const ids = await seed(a);
    const uid = await me(a);
    const zip = await exportBytes(app, a);
    const before = userData(app.db, uid);
    await a.delete(`/api/v1/memos/${ids.memo}`);
    await a.delete(`/api/v1/memos/${ids.memo}/purge`);
    await a.delete(`/api/v1/tasks/${ids.task}`);
    await a.delete(`/api/v1/trash/${ids.task}`);
    const added = (await a.post("/api/v1/memos", { content: "kept" })).body;
    expect(attachmentFiles(app)[ids.attachment]).toBeUndefined();
    const r = await restore(a, await tokenFor(a, zip, "merge"), "merge");
    expect(r.status).toBe(200);
    const after = userData(app.db, uid);
    expect(after.tasks).toEqual(before.tasks);
    expect(after.attachments).toEqual(before.attachments);
    expect(after.recurrence_exceptions).toEqual(before.recurrence_exceptions);
    expect(after.memos.length).toBe(2);
    expect((await a.get(`/api/v1/memos/${added.id}`)).status).toBe(200);
    expect((await a.get(`/api/v1/attachments/${ids.attachment}`)).text).toBe("hello a\n");
    // Again: nothing more.
    const again = userData(app.db, uid);
    expect((await restore(a, await tokenFor(a, zip, "merge"), "merge")).status).toBe(200);
    expect(userData(app.db, uid)).toEqual(again);
  });

  test("a record changed since the export is a same-id conflict; nothing changes", async () => {
    app = makeTestApp();
    const a = await setupAdmin(app);
    const ids = await seed(a);
    const zip = await exportBytes(app, a);
    await a.patch(`/api/v1/memos/${ids.memo}`, { content: "edited", version: 1 });
    await a.delete(`/api/v1/countdowns/${ids.countdown}`);
    const token = await tokenFor(a, zip, "merge");
    const before = dump(app.db, BACKUP_TABLES);
    const r = await restore(a, token, "merge");
    expect(r.status).toBe(409);
    expect(r.body.code).toBe("merge_conflict");
    expect(r.body.errors).toContainEqual({ path: `memos/${ids.memo}`, message: expect.stringContaining("different content") });
    expect(dump(app.db, BACKUP_TABLES)).toEqual(before);
    expect(app.db.sqlite.query("SELECT count(*) AS n FROM backup_ledger").get()).toEqual({ n: 0 });
  });

  test("someone else's export merged into another user: cross-user conflicts, nothing changes", async () => {
    app = makeTestApp();
    const a = await setupAdmin(app);
    const ids = await seed(a);
    const b = await signedInUser(app, a, "bob");
    const zip = await exportBytes(app, a);
    const token = await tokenFor(b, zip, "merge");
    const before = dump(app.db, BACKUP_TABLES);
    const r = await restore(b, token, "merge");
    if (r.status !== 409) console.log(app.logs.filter((l) => l.includes("error")).join("\n"));
    expect(r.status).toBe(409);
    expect(r.body.code).toBe("merge_conflict");
    expect(r.body.errors).toContainEqual({ path: `memos/${ids.memo}`, message: expect.stringContaining("another user") });
    expect(r.body.errors).toContainEqual({ path: `folders/${ids.folder}`, message: expect.stringContaining("another user") });
    expect(dump(app.db, BACKUP_TABLES)).toEqual(before);
  });

  test("merge with fresh identifiers adds everything once; tags merge by name; the ledger makes it idempotent", async () => {
    app = makeTestApp();
    const a = await setupAdmin(app);
    await seed(a);
    const uid = await me(a);
    const zip = rebuild(withFreshIds(entriesOf(await exportBytes(app, a))));
    const r = await restore(a, await tokenFor(a, zip, "merge"), "merge");
    expect(r.status).toBe(200);
    const after = userData(app.db, uid);
    expect(after.tasks.length).toBe(6);
    expect(after.tags.length).toBe(1); // same name: mapped onto the existing tag
    expect(after.memos.length).toBe(2);
    expect(after.lists.length).toBe(3); // inbox + 2 lists, not a second inbox
    expect((await restore(a, await tokenFor(a, zip, "merge"), "merge")).status).toBe(200);
    expect(userData(app.db, uid)).toEqual(after);
  });

  test("the ledger: a record imported by an earlier merge and deleted since is not added again", async () => {
    app = makeTestApp();
    const a = await setupAdmin(app);
    await seed(a);
    const uid = await me(a);
    const e = withFreshIds(entriesOf(await exportBytes(app, a)));
    const zip = rebuild(e);
    const first = await restore(a, await tokenFor(a, zip, "merge"), "merge");
    expect(first.status).toBe(200);
    const merged = readJson<{ id: string }[]>(e, "data/memos.json")[0]!.id;
    const mergedList = readJson<{ id: string; is_inbox: boolean }[]>(e, "data/lists.json").find((l) => !l.is_inbox)!.id;
    expect((await a.delete(`/api/v1/memos/${merged}`)).status).toBe(204);
    expect((await a.delete(`/api/v1/memos/${merged}/purge`)).status).toBe(204);
    expect((await a.delete(`/api/v1/lists/${mergedList}`)).status).toBe(204);
    expect((await a.delete(`/api/v1/lists/${mergedList}/purge`)).status).toBe(204);
    const before = userData(app.db, uid);
    const again = await restore(a, await tokenFor(a, zip, "merge"), "merge");
    expect(again.status).toBe(200);
    expect(again.body.counts).toEqual(first.body.counts);
    expect(userData(app.db, uid)).toEqual(before);
  });

  test("a merge archive may refer to the user's own data", async () => {
    app = makeTestApp();
    const a = await setupAdmin(app);
    const ids = await seed(a);
    const e = entriesOf(await exportBytes(app, a));
    // Only a memo and a task that points at an existing list of the user's.
    const tasks = readJson<Record<string, unknown>[]>(e, "data/tasks.json").filter((t) => t.id === ids.task);
    const t = { ...tasks[0]!, id: Bun.randomUUIDv7(), title: "Extra", tag_ids: [ids.tag] };
    const only = { ...e };
    for (const k of Object.keys(only)) if (k.startsWith("attachments/")) delete only[k];
    for (const k of ["folders", "lists", "tags", "recurrences", "recurrence_exceptions", "habits", "habit_logs", "habit_pauses", "countdowns", "memos", "attachments"])
      only[`data/${k}.json`] = new TextEncoder().encode("[]");
    only["data/tasks.json"] = new TextEncoder().encode(JSON.stringify([t]));
    const zip = rebuild(only);
    expect((await preflight(a, zip, "replace")).status).toBe(422);
    const r = await restore(a, await tokenFor(a, zip, "merge"), "merge");
    expect(r.status).toBe(200);
    expect((await a.get(`/api/v1/tasks/${t.id as string}`)).body.list_id).toBe(ids.list);
  });
});

describe("races", () => {
  test("two restores at once for one account: the second is 409 state_conflict, the first completes", async () => {
    app = makeTestApp();
    const a = await setupAdmin(app);
    await seed(a);
    const zip = await exportBytes(app, a);
    const t1 = await tokenFor(a, zip, "replace");
    const t2 = await tokenFor(a, zip, "replace");
    const [r1, r2] = await Promise.all([restore(a, t1, "replace"), restore(a, t2, "replace")]);
    expect([r1.status, r2.status].sort()).toEqual([200, 409]);
    expect([r1, r2].find((r) => r.status === 409)!.body.code).toBe("state_conflict");
  });

  test("a merge whose referenced own record was deleted after the preflight: 409 state_conflict, nothing changes", async () => {
    app = makeTestApp();
    const a = await setupAdmin(app);
    const ids = await seed(a);
    const e = entriesOf(await exportBytes(app, a));
    const only: Record<string, Uint8Array> = { "manifest.json": e["manifest.json"]! };
    for (const k of ["folders", "lists", "tags", "recurrences", "recurrence_exceptions", "habits", "habit_logs", "habit_pauses", "countdowns", "memos", "attachments"])
      only[`data/${k}.json`] = new TextEncoder().encode("[]");
    const task = { ...readJson<Record<string, unknown>[]>(e, "data/tasks.json").find((t) => t.id === ids.task)!, id: Bun.randomUUIDv7(), tag_ids: [] };
    only["data/tasks.json"] = new TextEncoder().encode(JSON.stringify([task]));
    const token = await tokenFor(a, rebuild(only), "merge");
    expect((await a.delete(`/api/v1/lists/${ids.list}`)).status).toBe(204);
    expect((await a.delete(`/api/v1/lists/${ids.list}/purge`)).status).toBe(204);
    const before = dump(app.db, BACKUP_TABLES);
    const r = await restore(a, token, "merge");
    expect(r.status).toBe(409);
    expect(r.body.code).toBe("state_conflict");
    expect(dump(app.db, BACKUP_TABLES)).toEqual(before);
  });
});

describe("tokens", () => {
  test("unknown, wrong mode, another user's, expired: 422 token_invalid; used: 409 token_consumed", async () => {
    const clock = new FixedClock(new Date("2026-11-26T10:00:00.000Z"));
    app = makeTestApp({ clock });
    const a = await setupAdmin(app);
    await seed(a);
    const b = await signedInUser(app, a, "bob");
    const zip = await exportBytes(app, a);
    const token = await tokenFor(a, zip, "merge");
    const before = dump(app.db, ["audit_logs", "sessions", "__drizzle_migrations"]);
    for (const [c, t, m] of [
      [a, "nope", "merge"],
      [a, token, "replace"],
      [b, token, "merge"],
    ] as const) {
      const r = await restore(c, t, m);
      expect(r.status).toBe(422);
      expect(r.body.code).toBe("token_invalid");
    }
    expect(dump(app.db, ["audit_logs", "sessions", "__drizzle_migrations"])).toEqual(before);
    expect((await restore(a, token, "merge")).status).toBe(200);
    const again = await restore(a, token, "merge");
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("token_consumed");

    const late = await tokenFor(a, zip, "merge");
    clock.set(new Date("2026-11-26T10:15:00.001Z"));
    const r = await restore(a, late, "merge");
    expect(r.status).toBe(422);
    expect(r.body.code).toBe("token_invalid");
    expect(r.body.detail).toContain("expired");
  });

  test("the token is bound to the file: a staged file changed after preflight is refused", async () => {
    app = makeTestApp();
    const a = await setupAdmin(app);
    await seed(a);
    const zip = await exportBytes(app, a);
    const token = await tokenFor(a, zip, "replace");
    const staged = readdirSync(join(app.dir, "backup", "staging"))[0]!;
    const bytes = readFileSync(join(app.dir, "backup", "staging", staged));
    bytes[100] = bytes[100]! ^ 0xff;
    await Bun.write(join(app.dir, "backup", "staging", staged), bytes);
    const r = await restore(a, token, "replace");
    expect(r.status).toBe(422);
    expect(r.body.code).toBe("token_invalid");
  });

  test("request validation: unknown fields, missing token, bad mode", async () => {
    app = makeTestApp();
    const a = await setupAdmin(app);
    for (const body of [{ preflight_token: "x", mode: "merge", extra: 1 }, { mode: "merge" }, { preflight_token: "x", mode: "both" }, { preflight_token: 5, mode: "merge" }]) {
      const r = await a.post("/api/v1/backup/restore", body);
      expect(r.status).toBe(422);
      expect(r.body.code).toBe("validation_failed");
    }
    const q = await preflight(a, new Uint8Array(10), "replace");
    expect(q.status).toBe(422);
    const bad = await a.request("POST", "/api/v1/backup/preflight?mode=all", { body: new FormData() });
    expect(bad.status).toBe(422);
    expect(bad.body.code).toBe("validation_failed");
    const noFile = new FormData();
    noFile.append("other", "x");
    const nf = await a.request("POST", "/api/v1/backup/preflight?mode=merge", { body: noFile });
    expect(nf.status).toBe(422);
    expect(nf.body.errors[0].path).toBe("file");
    const notMultipart = await a.post("/api/v1/backup/preflight?mode=merge", { file: "x" });
    expect(notMultipart.status).toBe(400);
    // CSRF is required like every write.
    expect((await a.post("/api/v1/backup/restore", { preflight_token: "x", mode: "merge" }, { csrf: false })).status).toBe(403);
    // Login is required.
    expect((await app.client().get("/api/v1/backup/export.zip")).status).toBe(401);
  });
});

describe("quotas and limits", () => {
  test("3 pending preflights per user, then 429 quota_exceeded; others are not affected", async () => {
    app = makeTestApp();
    const a = await setupAdmin(app);
    await seed(a);
    const zip = await exportBytes(app, a);
    for (let i = 0; i < 3; i++) expect((await preflight(a, zip, "merge")).status).toBe(200);
    const r = await preflight(a, zip, "merge");
    expect(r.status).toBe(429);
    expect(r.body.code).toBe("quota_exceeded");
    expect(readdirSync(join(app.dir, "backup", "staging")).length).toBe(3);
    const b = await signedInUser(app, a, "bob");
    expect((await preflight(b, zip, "merge")).status).toBe(200);
  });

  test("staged capacity per user: 429 while streaming, nothing left staged", async () => {
    app = makeTestApp({ config: { backupStagedMaxBytes: 6000 } });
    const a = await setupAdmin(app);
    await seed(a);
    const zip = await exportBytes(app, a);
    expect(zip.byteLength).toBeLessThan(6000);
    expect((await preflight(a, zip, "merge")).status).toBe(200);
    const r = await preflight(a, zip, "merge");
    expect(r.status).toBe(429);
    expect(r.body.code).toBe("quota_exceeded");
    expect(readdirSync(join(app.dir, "backup", "staging")).length).toBe(1);
  });

  test("an archive over the size limit is 413 while reading", async () => {
    app = makeTestApp({ config: { backupArchiveMaxBytes: 1000 } });
    const a = await setupAdmin(app);
    await seed(a);
    const zip = await exportBytes(app, a);
    const r = await preflight(a, zip, "merge");
    expect(r.status).toBe(413);
    expect(r.body.code).toBe("payload_too_large");
    expect(readdirSync(join(app.dir, "backup", "staging"))).toEqual([]);
  });

  test("expired preflights are swept with their staged files", async () => {
    const clock = new FixedClock(new Date("2026-11-26T10:00:00.000Z"));
    app = makeTestApp({ clock });
    const a = await setupAdmin(app);
    await seed(a);
    const zip = await exportBytes(app, a);
    for (let i = 0; i < 3; i++) await tokenFor(a, zip, "merge");
    clock.set(new Date("2026-11-26T10:16:00.000Z"));
    expect((await preflight(a, zip, "merge")).status).toBe(200);
    expect(readdirSync(join(app.dir, "backup", "staging")).length).toBe(1);
    expect(app.db.sqlite.query("SELECT count(*) AS n FROM backup_preflights").get()).toEqual({ n: 1 });
  });
});

describe("faults in process", () => {
  test("cleanup failure after commit: 500, then the same token finishes the cleanup only (cleanup: completed)", async () => {
    app = makeTestApp();
    const a = await setupAdmin(app);
    const ids = await seed(a);
    const uid = await me(a);
    const zip = await exportBytes(app, a);
    const before = userData(app.db, uid);
    await a.post("/api/v1/memos", { content: "to be replaced" });
    const token = await tokenFor(a, zip, "replace");
    process.env.APP_FAILPOINT = "restore.during_cleanup";
    process.env.APP_FAILPOINT_ACTION = "throw";
    const r1 = await restore(a, token, "replace");
    expect(r1.status).toBe(500);
    expect(r1.body.detail).toContain("same token");
    expect(userData(app.db, uid)).toEqual(before); // committed
    expect(readdirSync(join(app.dir, "backup", "restores")).length).toBe(1);
    delete process.env.APP_FAILPOINT;
    const r2 = await restore(a, token, "replace");
    expect(r2.status).toBe(200);
    expect(r2.body.cleanup).toBe("completed");
    expect(r2.body.counts.tasks).toBe(3);
    expect(userData(app.db, uid)).toEqual(before); // nothing imported again
    expect(readdirSync(join(app.dir, "backup", "restores"))).toEqual([]);
    expect((await a.get(`/api/v1/attachments/${ids.attachment}`)).text).toBe("hello a\n");
    const r3 = await restore(a, token, "replace");
    expect(r3.status).toBe(409);
    expect(r3.body.code).toBe("token_consumed");
  });

  test("a restart that already finished the cleanup: the same token answers 200 cleanup: completed once (was 409 token_consumed), then 409", async () => {
    app = makeTestApp();
    const a = await setupAdmin(app);
    const ids = await seed(a);
    const uid = await me(a);
    const zip = await exportBytes(app, a);
    const restored = userData(app.db, uid);
    await a.post("/api/v1/memos", { content: "to be replaced" });
    const token = await tokenFor(a, zip, "replace");
    // The import commits, then the process "dies" before its cleanup (no answer but a 500).
    process.env.APP_FAILPOINT = "restore.after_commit";
    process.env.APP_FAILPOINT_ACTION = "throw";
    expect((await restore(a, token, "replace")).status).toBe(500);
    delete process.env.APP_FAILPOINT;
    expect(readdirSync(join(app.dir, "backup", "restores")).length).toBe(1);
    // What the next start does: the committed restore's files are rolled forward, its cleanup finished.
    reconcileAtStartup(app.handle.core);
    expect(readdirSync(join(app.dir, "backup", "restores"))).toEqual([]);
    const audits = app.db.sqlite.query("SELECT count(*) AS n FROM audit_logs WHERE action = 'backup_restored'").get();
    const r = await restore(a, token, "replace");
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ mode: "replace", cleanup: "completed" });
    expect(r.body.counts.tasks).toBe(3);
    // Nothing imported again, nothing audited again.
    expect(userData(app.db, uid)).toEqual(restored);
    expect(app.db.sqlite.query("SELECT count(*) AS n FROM audit_logs WHERE action = 'backup_restored'").get()).toEqual(audits);
    expect((await a.get(`/api/v1/attachments/${ids.attachment}`)).text).toBe("hello a\n");
    const again = await restore(a, token, "replace");
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("token_consumed");
  });

  test("a restore that answered 200: the same token is consumed (409), the restore row says it was answered", async () => {
    app = makeTestApp();
    const a = await setupAdmin(app);
    await seed(a);
    const token = await tokenFor(a, await exportBytes(app, a), "merge");
    expect((await restore(a, token, "merge")).status).toBe(200);
    expect(app.db.sqlite.query("SELECT answered_at IS NOT NULL AND cleanup_done_at IS NOT NULL AS done FROM backup_restores").get()).toEqual({ done: 1 });
    const before = dump(app.db, ["audit_logs", "sessions"]);
    const r = await restore(a, token, "merge");
    expect(r.status).toBe(409);
    expect(r.body.code).toBe("token_consumed");
    expect(dump(app.db, ["audit_logs", "sessions"])).toEqual(before);
  });

  test("a failure before commit puts every file back", async () => {
    app = makeTestApp();
    const a = await setupAdmin(app);
    const ids = await seed(a);
    const uid = await me(a);
    const zip = rebuild(withFreshIds(entriesOf(await exportBytes(app, a))));
    const before = userData(app.db, uid);
    const files = attachmentFiles(app);
    const token = await tokenFor(a, zip, "replace");
    process.env.APP_FAILPOINT = "restore.after_quarantine";
    process.env.APP_FAILPOINT_ACTION = "throw";
    const r = await restore(a, token, "replace");
    expect(r.status).toBe(500);
    expect(userData(app.db, uid)).toEqual(before);
    expect(attachmentFiles(app)).toEqual(files);
    expect(existsSync(join(app.dir, "attachments", ids.attachment))).toBe(true);
    expect(readdirSync(join(app.dir, "backup", "restores"))).toEqual([]);
    delete process.env.APP_FAILPOINT;
    // The token was not consumed: the same token works now.
    expect((await restore(a, token, "replace")).status).toBe(200);
  });

  test("disk full during the import (PRAGMA max_page_count): 507, old state intact, the server keeps serving", async () => {
    app = makeTestApp();
    const a = await setupAdmin(app);
    await seed(a);
    const uid = await me(a);
    // A big archive: many memos with fresh ids.
    const e = entriesOf(await exportBytes(app, a));
    const memos = readJson<Record<string, unknown>[]>(e, "data/memos.json");
    const many = Array.from({ length: 400 }, (_, i) => ({ ...memos[0]!, id: Bun.randomUUIDv7(), content: `m${i} ` + "x".repeat(4000) }));
    e["data/memos.json"] = new TextEncoder().encode(JSON.stringify(many));
    const zip = rebuild(e);
    const token = await tokenFor(a, zip, "replace");
    const before = userData(app.db, uid);
    const files = attachmentFiles(app);
    const pages = (app.db.sqlite.query("PRAGMA page_count").get() as { page_count: number }).page_count;
    app.db.sqlite.run(`PRAGMA max_page_count = ${pages + 20}`);
    try {
      const r = await restore(a, token, "replace");
      if (r.status !== 507) console.log(app.logs.filter((l) => l.includes("error")).join("\n"));
      expect(r.status).toBe(507);
      expect(r.body.code).toBe("storage_full");
      expect(userData(app.db, uid)).toEqual(before);
      expect(attachmentFiles(app)).toEqual(files);
      expect((await a.get("/api/v1/memos")).status).toBe(200);
    } finally {
      app.db.sqlite.run("PRAGMA max_page_count = 1073741823");
    }
    expect((app.db.sqlite.query("PRAGMA integrity_check").get() as { integrity_check: string }).integrity_check).toBe("ok");
    expect((await restore(a, token, "replace")).status).toBe(200);
  });

  test("a client that goes away during the export: snapshot ended, links removed", async () => {
    app = makeTestApp();
    const a = await setupAdmin(app);
    const ids = await seed(a);
    // Enough data that the archive spans many chunks.
    for (let i = 0; i < 30; i++) await a.post("/api/v1/memos", { content: `memo ${i} ` + crypto.randomUUID().repeat(300) });
    const headers = { cookie: [...a.jar].map(([k, v]) => `${k}=${v}`).join("; ") };
    const res = await app.handle.fetch(new Request("http://localhost/api/v1/backup/export.zip", { headers }), { requestIP: () => ({ address: "127.0.0.1" }) });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    await reader.read();
    expect(readdirSync(join(app.dir, "backup", "exports")).length).toBe(1);
    await reader.cancel();
    expect(readdirSync(join(app.dir, "backup", "exports"))).toEqual([]);
    // The purge of the task and its file proceeds; a later export works.
    await a.delete(`/api/v1/tasks/${ids.task}`);
    expect((await a.delete(`/api/v1/trash/${ids.task}`)).status).toBe(204);
    const zip = await exportBytes(app, a);
    expect(entriesOf(zip)[`attachments/${ids.attachment}`]).toBeUndefined();
  });

  test("an export is one snapshot: a purge during the download does not change it", async () => {
    app = makeTestApp();
    const a = await setupAdmin(app);
    const ids = await seed(a);
    const headers = { cookie: [...a.jar].map(([k, v]) => `${k}=${v}`).join("; ") };
    const res = await app.handle.fetch(new Request("http://localhost/api/v1/backup/export.zip", { headers }), { requestIP: () => ({ address: "127.0.0.1" }) });
    const reader = res.body!.getReader();
    const chunks: Uint8Array[] = [];
    const first = await reader.read();
    chunks.push(first.value!);
    await a.delete(`/api/v1/tasks/${ids.task}`);
    expect((await a.delete(`/api/v1/trash/${ids.task}`)).status).toBe(204);
    await a.post("/api/v1/memos", { content: "after the snapshot" });
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      chunks.push(value);
    }
    const e = entriesOf(new Uint8Array(Buffer.concat(chunks)));
    expect(new TextDecoder().decode(e[`attachments/${ids.attachment}`]!)).toBe("hello a\n");
    expect(readJson<unknown[]>(e, "data/memos.json").length).toBe(1);
    expect(readJson<{ id: string }[]>(e, "data/tasks.json").map((t) => t.id)).toContain(ids.task);
  });

  test("a client that goes away during a preflight upload: no staged file, no row, quota free", async () => {
    app = makeTestApp();
    const a = await setupAdmin(app);
    await seed(a);
    const zip = await exportBytes(app, a);
    const boundary = "----backuptest";
    const head = new TextEncoder().encode(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="b.zip"\r\nContent-Type: application/zip\r\n\r\n`);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(ctrl) {
        if (sent === 0) ctrl.enqueue(head);
        else if (sent === 1) ctrl.enqueue(zip.slice(0, 1000));
        else ctrl.error(new Error("connection reset"));
        sent++;
      },
    });
    const headers = {
      cookie: [...a.jar].map(([k, v]) => `${k}=${v}`).join("; "),
      "x-csrf-token": a.jar.get("app_csrf")!,
      "content-type": `multipart/form-data; boundary=${boundary}`,
    };
    const res = await app.handle.fetch(new Request("http://localhost/api/v1/backup/preflight?mode=merge", { method: "POST", headers, body, duplex: "half" } as RequestInit), {
      requestIP: () => ({ address: "127.0.0.1" }),
    });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(readdirSync(join(app.dir, "backup", "staging"))).toEqual([]);
    expect(app.db.sqlite.query("SELECT count(*) AS n FROM backup_preflights").get()).toEqual({ n: 0 });
    for (let i = 0; i < 3; i++) expect((await preflight(a, zip, "merge")).status).toBe(200);
  });
});
