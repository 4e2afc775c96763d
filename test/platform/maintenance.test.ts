import { describe, expect, test } from "bun:test";
import { hourlyMaintenance } from "../../src/core/maintenance";
import { makeTestApp, setupAdmin } from "../helpers/app";

describe("hourly maintenance", () => {
  test("refreshes the planner's statistics of a database that has none (a new server that never stopped)", async () => {
    const app = makeTestApp();
    try {
      const admin = await setupAdmin(app);
      for (let i = 0; i < 60; i++) expect((await admin.post("/api/v1/tasks", { title: `task ${i}` })).status).toBe(201);
      const stats = () => app.db.sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM sqlite_master WHERE name = 'sqlite_stat1'").get()!.n;
      expect(stats()).toBe(0);
      hourlyMaintenance(app.handle.core);
      expect(stats()).toBe(1);
      const tasksRows = app.db.sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM sqlite_stat1 WHERE tbl = 'tasks'").get()!.n;
      expect(tasksRows).toBeGreaterThan(0);
    } finally {
      app.close();
    }
  });

  test("a failing step is logged and does not stop the other", async () => {
    const app = makeTestApp();
    try {
      await setupAdmin(app);
      // The sessions table gone: the sweep fails, the statistics are still refreshed.
      app.db.sqlite.run("PRAGMA foreign_keys = OFF");
      app.db.sqlite.run("DROP TABLE sessions");
      hourlyMaintenance(app.handle.core);
      expect(app.logs.some((l) => l.includes("session sweep failed"))).toBe(true);
      expect(app.db.sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM sqlite_master WHERE name = 'sqlite_stat1'").get()!.n).toBe(1);
    } finally {
      app.close();
    }
  });
});
