import { describe, expect, test } from "bun:test";
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { makeTestApp, setupAdmin, dump } from "../helpers/app";
import { exportBytes, entriesOf, preflight, seed, readJson, sha256 } from "./helpers";

describe("backup round trip", () => {
  test("export → preflight → replace restore gives back the same data", async () => {
    const app = makeTestApp();
    try {
      const admin = await setupAdmin(app);
      await seed(admin);
      const zip = await exportBytes(app, admin);
      const e = entriesOf(zip);
      expect(Object.keys(e).sort()).toContain("manifest.json");
      const m = readJson<{ counts: Record<string, number> }>(e, "manifest.json");
      expect(m.counts.tasks).toBe(3);
      // The CalDAV sync log moves on a restore (it is a change: every client must see it), so it is not data here.
      const before = dump(app.db, ["audit_logs", "sessions", "__drizzle_migrations", "backup_preflights", "backup_restores", "backup_ledger", "dav_changes", "dav_seq"]);
      const pf = await preflight(admin, zip, "replace");
      expect(pf.status).toBe(200);
      const r = await admin.post("/api/v1/backup/restore", { preflight_token: pf.body.preflight_token, mode: "replace" });
      expect(r.status).toBe(200);
      expect(r.body.counts.tasks).toBe(3);
      const after = dump(app.db, ["audit_logs", "sessions", "__drizzle_migrations", "backup_preflights", "backup_restores", "backup_ledger", "dav_changes", "dav_seq"]);
      expect(after).toEqual(before);
    } finally {
      app.close();
    }
  });
});

describe("export", () => {
  test("what the API accepts round-trips: 200 emoji in a name (400 UTF-16 units), a 100,000-character memo", async () => {
    const app = makeTestApp();
    try {
      const admin = await setupAdmin(app);
      await seed(admin);
      expect((await admin.post("/api/v1/folders", { name: "\u{1F600}".repeat(200) })).status).toBe(201);
      expect((await admin.post("/api/v1/memos", { content: "\u{1F600}".repeat(50_000) })).status).toBe(201);
      const zip = await exportBytes(app, admin);
      const pf = await preflight(admin, zip, "replace");
      expect(pf.status).toBe(200);
      expect((await admin.post("/api/v1/backup/restore", { preflight_token: pf.body.preflight_token, mode: "replace" })).status).toBe(200);
    } finally {
      app.close();
    }
  });

  test("answers a ZIP download with the manifest describing every entry (sizes, SHA-256, counts)", async () => {
    const app = makeTestApp();
    try {
      const admin = await setupAdmin(app);
      const ids = await seed(admin);
      const headers = { cookie: [...admin.jar].map(([k, v]) => `${k}=${v}`).join("; ") };
      const res = await app.handle.fetch(new Request("http://localhost/api/v1/backup/export.zip", { headers }), { requestIP: () => ({ address: "127.0.0.1" }) });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/zip");
      expect(res.headers.get("content-disposition")).toMatch(/^attachment; filename="app-backup-\d{4}-\d{2}-\d{2}\.zip"$/);
      const e = entriesOf(new Uint8Array(await res.arrayBuffer()));
      const m = readJson<{ format: string; version: number; source_user: { username: string }; counts: Record<string, number>; entries: Record<string, { size: number; sha256: string }> }>(e, "manifest.json");
      expect(m.format).toBe("app-backup");
      expect(m.version).toBe(2);
      expect(m.source_user.username).toBe("owner");
      expect(Object.keys(m.entries).sort()).toEqual(Object.keys(e).filter((n) => n !== "manifest.json").sort());
      for (const [name, d] of Object.entries(m.entries)) {
        expect(d.size).toBe(e[name]!.byteLength);
        expect(d.sha256).toBe(sha256(e[name]!));
      }
      expect(m.counts).toMatchObject({ folders: 1, lists: 2, tags: 1, tasks: 3, recurrences: 1, recurrence_exceptions: 1, habits: 1, habit_logs: 1, habit_pauses: 1, countdowns: 1, memos: 1, attachments: 1 });
      // Records: API names, tag_ids instead of tags, no subtasks, no user id.
      const task = readJson<Record<string, unknown>[]>(e, "data/tasks.json").find((t) => t.id === ids.task)!;
      expect(task.tag_ids).toEqual([ids.tag]);
      expect("tags" in task || "subtasks" in task || "user_id" in task).toBe(false);
      expect(new TextDecoder().decode(e[`attachments/${ids.attachment}`]!)).toBe("hello a\n");
    } finally {
      app.close();
    }
  });

  test("an account whose attachments pass what a ZIP without ZIP64 can hold is refused clearly (409)", async () => {
    const app = makeTestApp();
    try {
      const admin = await setupAdmin(app);
      const ids = await seed(admin);
      app.db.sqlite.query("UPDATE attachments SET size = ? WHERE id = ?").run(5 * 1024 ** 3, ids.attachment);
      const r = await admin.get("/api/v1/backup/export.zip");
      expect(r.status).toBe(409);
      expect(r.body.code).toBe("state_conflict");
      expect(r.body.detail).toContain("4 GiB");
      expect(readdirSync(join(app.dir, "backup", "exports"))).toEqual([]);
    } finally {
      app.close();
    }
  });

  test("a missing attachment file is a clear 500, nothing left behind", async () => {
    const app = makeTestApp();
    try {
      const admin = await setupAdmin(app);
      const ids = await seed(admin);
      rmSync(join(app.dir, "attachments", ids.attachment));
      const r = await admin.get("/api/v1/backup/export.zip");
      expect(r.status).toBe(500);
      expect(r.body.detail).toContain("attachment file is missing");
      expect(readdirSync(join(app.dir, "backup", "exports"))).toEqual([]);
    } finally {
      app.close();
    }
  });
});
