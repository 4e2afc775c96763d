import { describe, expect, test } from "bun:test";
import { ADMIN, dump, makeTestApp } from "../helpers/app";
import { expectProblem } from "../helpers/problem";

// docs/spec/contract.md §2: first-run setup.

describe("setup", () => {
  test("status false → initialize 201 with user, cookies, Location → status true", async () => {
    const app = makeTestApp();
    try {
      const c = app.client();
      const s1 = await c.get("/api/v1/setup/status");
      expect(s1.status).toBe(200);
      expect(s1.body).toEqual({ initialized: false });

      const r = await c.post("/api/v1/setup/initialize", { ...ADMIN, display_name: "The Owner", timezone: "Europe/Paris" });
      expect(r.status).toBe(201);
      expect(r.headers.get("location")).toBe("/api/v1/me");
      expect(Object.keys(r.body)).toEqual(["user"]);
      const u = r.body.user;
      expect(Object.keys(u).sort()).toEqual(["created_at", "display_name", "id", "is_admin", "timezone", "username"]);
      expect(u).toMatchObject({ username: "owner", display_name: "The Owner", timezone: "Europe/Paris", is_admin: true });
      expect(u.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(u.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      const names = r.headers.getSetCookie().map((x) => x.split("=")[0]);
      expect(names.sort()).toEqual(["app_csrf", "app_session"]);

      // Signed in by setup.
      const me = await c.get("/api/v1/me");
      expect(me.status).toBe(200);
      expect(me.body).toMatchObject(u);

      expect((await app.client().get("/api/v1/setup/status")).body).toEqual({ initialized: true });

      // The first user got its inbox.
      const inboxes = app.db.sqlite.query("SELECT name, is_inbox FROM lists WHERE user_id = ?").all(u.id);
      expect(inboxes).toEqual([{ name: "Inbox", is_inbox: 1 }]);
    } finally {
      app.close();
    }
  });

  test("display_name defaults to the username and timezone to UTC", async () => {
    const app = makeTestApp();
    try {
      const r = await app.client().post("/api/v1/setup/initialize", ADMIN);
      expect(r.status).toBe(201);
      expect(r.body.user).toMatchObject({ display_name: "owner", timezone: "UTC", is_admin: true });
    } finally {
      app.close();
    }
  });

  test("a second initialize is 409 already_initialized and changes nothing", async () => {
    const app = makeTestApp();
    try {
      expect((await app.client().post("/api/v1/setup/initialize", ADMIN)).status).toBe(201);
      const before = dump(app.db);
      const again = await app.client().post("/api/v1/setup/initialize", { username: "intruder", password: "intruder-password" });
      expectProblem(again, 409, "already_initialized");
      expect(again.headers.getSetCookie()).toEqual([]);
      expect(dump(app.db)).toEqual(before);
    } finally {
      app.close();
    }
  });

  test("10 concurrent initialize calls: exactly one 201, the rest 409, one user and one inbox", async () => {
    const app = makeTestApp();
    try {
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) => app.client({ ip: `10.0.0.${i + 1}` }).post("/api/v1/setup/initialize", { username: `user${i}`, password: "password-123" })),
      );
      const statuses = answers.map((r) => r.status).sort();
      expect(statuses.filter((s) => s === 201)).toHaveLength(1);
      expect(statuses.filter((s) => s === 409)).toHaveLength(9);
      for (const r of answers) if (r.status === 409) expect(r.body.code).toBe("already_initialized");
      expect(app.db.sqlite.query("SELECT count(*) AS n FROM users").get()).toEqual({ n: 1 });
      expect(app.db.sqlite.query("SELECT count(*) AS n FROM lists WHERE is_inbox = 1").get()).toEqual({ n: 1 });
      expect(app.db.sqlite.query("SELECT count(*) AS n FROM sessions").get()).toEqual({ n: 1 });
    } finally {
      app.close();
    }
  });

  test("validation: password 8..1024, username rules, unknown zone, unknown field; nothing created", async () => {
    const app = makeTestApp();
    try {
      const c = app.client();
      const cases: [Record<string, unknown>, string][] = [
        [{ username: "owner", password: "1234567" }, "password"],
        [{ username: "owner", password: "x".repeat(1025) }, "password"],
        [{ username: "", password: "password-123" }, "username"],
        [{ username: "two words", password: "password-123" }, "username"],
        [{ username: "a".repeat(65), password: "password-123" }, "username"],
        [{ username: "owner", password: "password-123", timezone: "Mars/Olympus" }, "timezone"],
        [{ username: "owner", password: "password-123", timezone: "+01:00" }, "timezone"],
        [{ username: "owner", password: "password-123", is_admin: false }, "is_admin"],
        [{ username: 5, password: "password-123" }, "username"],
        [{ password: "password-123" }, "username"],
      ];
      for (const [body, field] of cases) {
        const r = await c.post("/api/v1/setup/initialize", body);
        expectProblem(r, 422, "validation_failed");
        expect(r.body.errors.map((e: { path: string }) => e.path)).toContain(field);
      }
      expect((await c.get("/api/v1/setup/status")).body).toEqual({ initialized: false });
      // The boundaries themselves are accepted.
      // (A strong 1024-character one: "x" × 1024 is refused by the strength rule, test/platform/password-strength.test.ts.)
      const ok = await c.post("/api/v1/setup/initialize", { username: "owner", password: "plum orbit canvas 42 ".padEnd(1024, "x"), timezone: "asia/tokyo" });
      expect(ok.status).toBe(201);
      expect(ok.body.user.timezone).toBe("Asia/Tokyo");
    } finally {
      app.close();
    }
  });

  test("an 8-character password is accepted", async () => {
    const app = makeTestApp();
    try {
      // Random-looking: "12345678" is refused as too common (test/platform/password-strength.test.ts).
      expect((await app.client().post("/api/v1/setup/initialize", { username: "owner", password: "Vq7#mZ2!" })).status).toBe(201);
      expect((await app.client().post("/api/v1/auth/login", { username: "owner", password: "Vq7#mZ2!" })).status).toBe(200);
    } finally {
      app.close();
    }
  });

  test("cross-site setup is 403 csrf_failed and creates nothing", async () => {
    const app = makeTestApp();
    try {
      const c = app.client();
      const before = dump(app.db);
      for (const headers of <Record<string, string>[]>[
        { origin: "https://evil.example" },
        { origin: "null" },
        { "sec-fetch-site": "cross-site" },
        { "sec-fetch-site": "cross-site", origin: "http://localhost" },
      ]) {
        const r = await c.post("/api/v1/setup/initialize", ADMIN, { headers });
        expectProblem(r, 403, "csrf_failed");
      }
      // Checked before validation: an invalid body from another site is 403 too.
      expectProblem(await c.post("/api/v1/setup/initialize", { nope: 1 }, { headers: { origin: "https://evil.example" } }), 403, "csrf_failed");
      expect(dump(app.db)).toEqual(before);
      // Same origin is fine.
      const ok = await c.post("/api/v1/setup/initialize", ADMIN, { headers: { origin: "http://localhost", "sec-fetch-site": "same-origin" } });
      expect(ok.status).toBe(201);
    } finally {
      app.close();
    }
  });
});
