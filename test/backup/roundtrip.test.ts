import { describe, expect, test } from "bun:test";
import { makeTestApp, setupAdmin, signedInUser, dump } from "../helpers/app";
import { exportBytes, entriesOf, preflight, seed, readJson } from "./helpers";

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
      const before = dump(app.db, ["audit_logs", "sessions", "__drizzle_migrations", "backup_preflights", "backup_restores", "backup_ledger"]);
      const pf = await preflight(admin, zip, "replace");
      expect(pf.status).toBe(200);
      const r = await admin.post("/api/v1/backup/restore", { preflight_token: pf.body.preflight_token, mode: "replace" });
      expect(r.status).toBe(200);
      expect(r.body.counts.tasks).toBe(3);
      const after = dump(app.db, ["audit_logs", "sessions", "__drizzle_migrations", "backup_preflights", "backup_restores", "backup_ledger"]);
      expect(after).toEqual(before);
    } finally {
      app.close();
    }
  });
});
