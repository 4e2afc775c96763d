import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { FixedClock, makeTestApp } from "../helpers/app";
import { expectProblem } from "../helpers/problem";

// docs/spec/contract.md §2 Health: live 200 while the process runs; ready 200 once the database is open,
// migrated and the data directory writable, else 503 not_ready (and it is logged).

describe("health", () => {
  test("live and ready answer 200 without a session, with the pinned bodies", async () => {
    const app = makeTestApp();
    try {
      const live = await app.client().get("/api/v1/health/live");
      expect(live.status).toBe(200);
      expect(live.body).toEqual({ status: "ok" });
      const ready = await app.client().get("/api/v1/health/ready");
      expect(ready.status).toBe(200);
      // Issue 18 adds `details` (informational: the backups' last results), never a change of status.
      expect(ready.body).toEqual({ status: "ready", details: { backups: [{ destination: "local", last_success_at: null, age_seconds: null, last_result: null }] } });
      // The write probe leaves nothing behind.
      expect(readdirSync(app.dir).filter((f) => f.includes("probe"))).toEqual([]);
    } finally {
      app.close();
    }
  });

  test("ready is 503 not_ready while the data directory is gone or replaced by a file, logged clearly; ready again after", async () => {
    const clock = new FixedClock(new Date("2026-11-20T10:00:00Z"));
    const app = makeTestApp({ clock });
    const away = `${app.dir}.away`;
    try {
      expect((await app.client().get("/api/v1/health/ready")).status).toBe(200);

      // Root ignores permission bits, so take the directory away instead of chmod-ing it.
      renameSync(app.dir, away);
      clock.advance(1500);
      const gone = await app.client().get("/api/v1/health/ready");
      expectProblem(gone, 503, "not_ready");
      expect(gone.body.detail).toContain("data directory");
      expect((await app.client().get("/api/v1/health/live")).status).toBe(200);

      const logged = app.logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === "not ready");
      expect(logged).toHaveLength(1);
      expect(logged[0]!.level).toBe("error");
      expect(String(logged[0]!.reason)).toContain("data directory is not writable");
      expect(logged[0]!.data_dir).toBe(app.dir);

      // A regular file where the directory was.
      writeFileSync(app.dir, "not a directory");
      clock.advance(1500);
      expectProblem(await app.client().get("/api/v1/health/ready"), 503, "not_ready");
      // The same problem is logged once, not on every probe.
      expect(app.logs.filter((l) => l.includes('"not ready"'))).toHaveLength(1);

      rmSync(app.dir);
      renameSync(away, app.dir);
      clock.advance(1500);
      const back = await app.client().get("/api/v1/health/ready");
      expect(back.status).toBe(200);
      expect(app.logs.some((l) => l.includes('"ready again"'))).toBe(true);
    } finally {
      if (existsSync(away)) {
        rmSync(app.dir, { force: true, recursive: true });
        renameSync(away, app.dir);
      }
      app.close();
    }
  });

  test("ready is 503 when the database is not migrated to this version", async () => {
    const app = makeTestApp();
    try {
      app.db.sqlite.run("PRAGMA user_version = 0");
      const r = await app.client().get("/api/v1/health/ready");
      expectProblem(r, 503, "not_ready");
      expect(r.body.detail).toContain("migrated");
    } finally {
      app.close();
    }
  });

  test("ready is 503 when the database is closed", async () => {
    const app = makeTestApp();
    try {
      app.db.sqlite.close();
      expectProblem(await app.client().get("/api/v1/health/ready"), 503, "not_ready");
      expect((await app.client().get("/api/v1/health/live")).status).toBe(200);
    } finally {
      rmSync(app.dir, { recursive: true, force: true });
    }
  });
});
