import { describe, expect, test } from "bun:test";
import { ADMIN, FixedClock, makeTestApp, setupAdmin, type TestApp } from "../helpers/app";
import { expectProblem } from "../helpers/problem";

// docs/spec/contract.md §2: login, cookies, throttling.

interface ParsedCookie {
  name: string;
  value: string;
  attrs: Map<string, string>;
}

function parseSetCookie(line: string): ParsedCookie {
  const [pair, ...rest] = line.split(";").map((s) => s.trim());
  const eq = pair!.indexOf("=");
  const attrs = new Map<string, string>();
  for (const a of rest) {
    const i = a.indexOf("=");
    attrs.set((i === -1 ? a : a.slice(0, i)).toLowerCase(), i === -1 ? "" : a.slice(i + 1));
  }
  return { name: pair!.slice(0, eq), value: pair!.slice(eq + 1), attrs };
}

function cookiesOf(h: Headers): Map<string, ParsedCookie> {
  return new Map(h.getSetCookie().map(parseSetCookie).map((c) => [c.name, c]));
}

async function withApp(fn: (app: TestApp) => Promise<void>, opts: Parameters<typeof makeTestApp>[0] = {}): Promise<void> {
  const app = makeTestApp(opts);
  try {
    await fn(app);
  } finally {
    app.close();
  }
}

describe("login", () => {
  test("200 with the user and both cookies, attributes as pinned (plain http)", () =>
    withApp(async (app) => {
      await setupAdmin(app);
      const c = app.client();
      const r = await c.post("/api/v1/auth/login", ADMIN);
      expect(r.status).toBe(200);
      expect(r.body.user).toMatchObject({ username: "owner", is_admin: true });
      expect(Object.keys(r.body)).toEqual(["user"]);
      const ck = cookiesOf(r.headers);
      const s = ck.get("app_session")!;
      const x = ck.get("app_csrf")!;
      expect(s.attrs.has("httponly")).toBe(true);
      expect(s.attrs.get("samesite")?.toLowerCase()).toBe("lax");
      expect(s.attrs.get("path")).toBe("/");
      expect(s.attrs.has("secure")).toBe(false);
      expect(x.attrs.has("httponly")).toBe(false);
      expect(x.attrs.get("samesite")?.toLowerCase()).toBe("lax");
      expect(x.attrs.get("path")).toBe("/");
      expect(x.attrs.has("secure")).toBe(false);
      expect(x.value.length).toBeGreaterThanOrEqual(32);
      expect((await c.get("/api/v1/me")).status).toBe(200);
    }));

  test("Secure cookies over https directly", () =>
    withApp(async (app) => {
      await setupAdmin(app);
      const r = await app.client({ base: "https://tasks.example" }).post("/api/v1/auth/login", ADMIN);
      expect(r.status).toBe(200);
      for (const c of cookiesOf(r.headers).values()) expect(c.attrs.has("secure")).toBe(true);
    }));

  test("Secure cookies behind a trusted proxy (X-Forwarded-Proto: https), not behind an untrusted one", async () => {
    await withApp(
      async (app) => {
        await setupAdmin(app);
        const r = await app.client().post("/api/v1/auth/login", ADMIN, { headers: { "x-forwarded-proto": "https" } });
        expect(r.status).toBe(200);
        for (const c of cookiesOf(r.headers).values()) expect(c.attrs.has("secure")).toBe(true);
        const plain = await app.client().post("/api/v1/auth/login", ADMIN);
        for (const c of cookiesOf(plain.headers).values()) expect(c.attrs.has("secure")).toBe(false);
      },
      { config: { trustProxy: true } },
    );
    await withApp(async (app) => {
      await setupAdmin(app);
      const r = await app.client().post("/api/v1/auth/login", ADMIN, { headers: { "x-forwarded-proto": "https" } });
      expect(r.status).toBe(200);
      for (const c of cookiesOf(r.headers).values()) expect(c.attrs.has("secure")).toBe(false);
    });
  });

  test("the username is case-insensitive at login", () =>
    withApp(async (app) => {
      await setupAdmin(app);
      expect((await app.client().post("/api/v1/auth/login", { username: "OWNER", password: ADMIN.password })).status).toBe(200);
    }));

  test("wrong password and unknown user: identical 401 invalid_credentials, no cookies", () =>
    withApp(async (app) => {
      await setupAdmin(app);
      const wrong = await app.client({ ip: "10.1.0.1" }).post("/api/v1/auth/login", { username: "owner", password: "not the password" });
      const unknown = await app.client({ ip: "10.1.0.2" }).post("/api/v1/auth/login", { username: "nobody", password: "not the password" });
      expectProblem(wrong, 401, "invalid_credentials");
      expect(unknown.status).toBe(wrong.status);
      expect(unknown.text).toBe(wrong.text);
      expect(unknown.headers.get("content-type")).toBe(wrong.headers.get("content-type"));
      expect(wrong.headers.getSetCookie()).toEqual([]);
      expect(unknown.headers.getSetCookie()).toEqual([]);
    }));

  test("validation and malformed bodies on login", () =>
    withApp(async (app) => {
      await setupAdmin(app);
      const c = app.client();
      expectProblem(await c.post("/api/v1/auth/login", { username: "owner" }), 422, "validation_failed");
      expectProblem(await c.post("/api/v1/auth/login", { ...ADMIN, remember: true }), 422, "validation_failed");
      expectProblem(await c.post("/api/v1/auth/login", { username: "owner", password: 12345678 }), 422, "validation_failed");
      expectProblem(await c.request("POST", "/api/v1/auth/login", { body: "{", headers: { "content-type": "application/json" } }), 400, "malformed_request");
    }));

  test("a trailing slash does not slip past the guard: login/ is still checked for cross-site, health/ is still public", () =>
    withApp(async (app) => {
      await setupAdmin(app);
      expectProblem(await app.client().post("/api/v1/auth/login/", ADMIN, { headers: { origin: "https://evil.example" } }), 403, "csrf_failed");
      expectProblem(await app.client().post("/api/v1/setup/initialize/", ADMIN, { headers: { "sec-fetch-site": "cross-site" } }), 403, "csrf_failed");
      expect((await app.client().post("/api/v1/auth/login/", ADMIN)).status).toBe(200);
      expect((await app.client().get("/api/v1/health/live/")).status).toBe(200);
      expectProblem(await app.client().get("/api/v1/me/"), 401, "unauthenticated");
    }));

  test("cross-site login is 403 csrf_failed (Origin or Sec-Fetch-Site)", () =>
    withApp(async (app) => {
      await setupAdmin(app);
      const c = app.client();
      expectProblem(await c.post("/api/v1/auth/login", ADMIN, { headers: { origin: "https://evil.example" } }), 403, "csrf_failed");
      expectProblem(await c.post("/api/v1/auth/login", ADMIN, { headers: { origin: "http://localhost.evil.example" } }), 403, "csrf_failed");
      expectProblem(await c.post("/api/v1/auth/login", ADMIN, { headers: { "sec-fetch-site": "cross-site" } }), 403, "csrf_failed");
      expectProblem(await c.post("/api/v1/auth/login", { bad: 1 }, { headers: { "sec-fetch-site": "cross-site" } }), 403, "csrf_failed");
      expect(c.jar.size).toBe(0);
      expect((await c.post("/api/v1/auth/login", ADMIN, { headers: { origin: "http://localhost", "sec-fetch-site": "same-origin" } })).status).toBe(200);
    }));

  test("a successful login rotates the token: the session the browser came with ends", () =>
    withApp(async (app) => {
      await setupAdmin(app);
      const c = app.client();
      await c.post("/api/v1/auth/login", ADMIN);
      const first = c.jar.get("app_session")!;
      await c.post("/api/v1/auth/login", ADMIN);
      const second = c.jar.get("app_session")!;
      expect(second).not.toBe(first);
      const old = await app.client().get("/api/v1/me", { headers: { cookie: `app_session=${first}` } });
      expectProblem(old, 401, "unauthenticated");
      expect((await c.get("/api/v1/me")).status).toBe(200);
    }));
});

describe("login throttling", () => {
  test("per username: after the free failures, 429 with Retry-After even with the right password, from any address", () =>
    withApp(
      async (app) => {
        await setupAdmin(app);
        for (let i = 0; i < 5; i++) {
          const r = await app.client({ ip: `10.2.0.${i}` }).post("/api/v1/auth/login", { username: "owner", password: "wrong password" });
          expectProblem(r, 401, "invalid_credentials");
        }
        const r = await app.client({ ip: "10.2.1.1" }).post("/api/v1/auth/login", ADMIN);
        expectProblem(r, 429, "rate_limited");
        const ra = Number(r.headers.get("retry-after"));
        expect(Number.isInteger(ra) && ra >= 1).toBe(true);
        // Another username from another address is not affected.
      },
      { clock: new FixedClock(new Date("2026-11-20T10:00:00Z")) },
    ));

  test("a storm on the owner's name locks the owner out for at most a minute or so", async () => {
    const clock = new FixedClock(new Date("2026-11-20T10:00:00Z"));
    await withApp(
      async (app) => {
        await setupAdmin(app);
        let maxWait = 0;
        // 300 attempts over ~15 minutes from many addresses.
        for (let i = 0; i < 300; i++) {
          const r = await app.client({ ip: `10.3.${i % 250}.${i % 7}` }).post("/api/v1/auth/login", { username: "owner", password: "guess" + i });
          expect([401, 429]).toContain(r.status);
          if (r.status === 429) maxWait = Math.max(maxWait, Number(r.headers.get("retry-after")));
          clock.advance(3_000);
        }
        expect(maxWait).toBeGreaterThan(0);
        expect(maxWait).toBeLessThanOrEqual(60);
        clock.advance(61_000);
        const owner = await app.client({ ip: "192.168.1.10" }).post("/api/v1/auth/login", ADMIN);
        expect(owner.status).toBe(200);
      },
      { clock },
    );
  });

  test("per address: many failures from one address (any usernames) → 429 for that address only", async () => {
    const clock = new FixedClock(new Date("2026-11-20T10:00:00Z"));
    await withApp(
      async (app) => {
        await setupAdmin(app);
        let limited: number | null = null;
        for (let i = 0; i < 40; i++) {
          const r = await app.client({ ip: "203.0.113.9" }).post("/api/v1/auth/login", { username: `spray${i}`, password: "password1" });
          if (r.status === 429) {
            limited = i;
            expectProblem(r, 429, "rate_limited");
            expect(Number(r.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
            break;
          }
          expectProblem(r, 401, "invalid_credentials");
        }
        expect(limited).not.toBeNull();
        // The owner's name was never tried: the owner from that address is still refused…
        expect((await app.client({ ip: "203.0.113.9" }).post("/api/v1/auth/login", ADMIN)).status).toBe(429);
        // …but not from another address.
        expect((await app.client({ ip: "198.51.100.7" }).post("/api/v1/auth/login", ADMIN)).status).toBe(200);
      },
      { clock },
    );
  });

  test("logging into one's own account does not reset the address's failure count", async () => {
    const clock = new FixedClock(new Date("2026-11-20T10:00:00Z"));
    await withApp(
      async (app) => {
        const admin = await setupAdmin(app);
        await admin.post("/api/v1/users", { username: "mallory", password: "mallory-password" });
        const statuses: number[] = [];
        // Guess at many names, logging into mallory's own account after every few guesses.
        for (let i = 0; i < 40 && !statuses.includes(429); i++) {
          const r = await app.client({ ip: "203.0.113.66" }).post("/api/v1/auth/login", { username: `victim${i}`, password: "guess-guess" });
          statuses.push(r.status);
          if (i % 3 === 2) await app.client({ ip: "203.0.113.66" }).post("/api/v1/auth/login", { username: "mallory", password: "mallory-password" });
        }
        expect(statuses).toContain(429);
        expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(20);
      },
      { clock },
    );
  });

  test("the wait ends: advancing the clock past Retry-After lets the right password in", async () => {
    const clock = new FixedClock(new Date("2026-11-20T10:00:00Z"));
    await withApp(
      async (app) => {
        await setupAdmin(app);
        for (let i = 0; i < 5; i++) await app.client().post("/api/v1/auth/login", { username: "owner", password: "wrong password" });
        const r = await app.client().post("/api/v1/auth/login", ADMIN);
        expect(r.status).toBe(429);
        clock.advance(Number(r.headers.get("retry-after")) * 1000);
        expect((await app.client().post("/api/v1/auth/login", ADMIN)).status).toBe(200);
      },
      { clock },
    );
  });

  test("throttled change-password attempts are 429 too", async () => {
    const clock = new FixedClock(new Date("2026-11-20T10:00:00Z"));
    await withApp(
      async (app) => {
        const c = await setupAdmin(app);
        for (let i = 0; i < 5; i++) {
          expectProblem(await c.post("/api/v1/auth/change-password", { current_password: "wrong-one", new_password: "new password 1" }), 401, "invalid_credentials");
        }
        const r = await c.post("/api/v1/auth/change-password", { current_password: ADMIN.password, new_password: "new password 1" });
        expectProblem(r, 429, "rate_limited");
        expect(r.headers.get("retry-after")).toMatch(/^\d+$/);
      },
      { clock },
    );
  });
});
