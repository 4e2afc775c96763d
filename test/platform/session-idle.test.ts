import { afterEach, describe, expect, test } from "bun:test";
import { ADMIN, FixedClock, makeTestApp, setupAdmin, type TestApp } from "../helpers/app";
import { serve, SocketClient, type ServedApp } from "../helpers/server";
import { touchIntervalMs } from "../../src/core/auth/session-store";

// Issue 11 §2: an idle lifetime under a minute must work. last_seen_at was written at most once a
// minute, so with APP_SESSION_IDLE_SECONDS=20 a session in constant use ended after 20 s. The
// refresh interval is now min(60 s, idle / 4). A held clock drives it; requests go over a socket.

let app: TestApp | null = null;
let server: ServedApp | null = null;
afterEach(() => {
  server?.stop();
  app?.close();
  server = null;
  app = null;
});

async function signedIn(idleSeconds: number, clock: FixedClock): Promise<{ app: TestApp; c: SocketClient }> {
  app = makeTestApp({ clock, config: { sessionIdleSeconds: idleSeconds } });
  server = serve(app);
  await setupAdmin(app);
  const c = new SocketClient(server.base);
  expect((await c.post("/api/v1/auth/login", ADMIN)).status).toBe(200);
  return { app, c };
}

describe("idle lifetimes under a minute", () => {
  test("idle 20 s: a session used every 15 s stays alive for minutes; unused for 21 s it ends", async () => {
    const clock = new FixedClock(new Date("2026-11-26T08:00:00Z"));
    const { c } = await signedIn(20, clock);
    for (let i = 0; i < 12; i++) {
      clock.advance(15_000);
      // Before: 401 at the second step (30 s after login, last seen still the login).
      expect({ step: i, status: (await c.get("/api/v1/me")).status }).toEqual({ step: i, status: 200 });
    }
    clock.advance(21_000);
    const r = await c.get("/api/v1/me");
    expect({ status: r.status, code: r.json.code }).toEqual({ status: 401, code: "unauthenticated" });
  });

  test("idle 1 s: used every 0.9 s it stays alive; a 1.1 s pause ends it", async () => {
    const clock = new FixedClock(new Date("2026-11-26T08:00:00Z"));
    const { c } = await signedIn(1, clock);
    for (let i = 0; i < 10; i++) {
      clock.advance(900);
      expect({ step: i, status: (await c.get("/api/v1/me")).status }).toEqual({ step: i, status: 200 });
    }
    clock.advance(1100);
    expect((await c.get("/api/v1/me")).status).toBe(401);
  });

  test("the default idle time (14 days) still writes last_seen_at at most once a minute", async () => {
    const clock = new FixedClock(new Date("2026-11-26T08:00:00Z"));
    const { app, c } = await signedIn(14 * 24 * 3600, clock);
    const lastSeen = () => (app.db.sqlite.query("SELECT max(last_seen_at) AS t FROM sessions WHERE revoked_at IS NULL").get() as { t: string }).t;
    const t0 = lastSeen();
    clock.advance(59_000);
    await c.get("/api/v1/me");
    expect(lastSeen()).toBe(t0);
    clock.advance(2_000);
    await c.get("/api/v1/me");
    expect(lastSeen()).toBe("2026-11-26T08:01:01.000Z");
  });

  test("the interval is min(60 s, idle / 4)", () => {
    expect(touchIntervalMs(14 * 24 * 3600)).toBe(60_000);
    expect(touchIntervalMs(240)).toBe(60_000);
    expect(touchIntervalMs(120)).toBe(30_000);
    expect(touchIntervalMs(20)).toBe(5_000);
    expect(touchIntervalMs(1)).toBe(250);
  });
});
