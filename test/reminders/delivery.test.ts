import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { FixedClock, makeTestApp, rejected as rejectedIn, setupAdmin, signedInUser, type TestClient, type TestResponse } from "../helpers/app";
import { mkTask } from "../helpers/tasks";
import { hmacHex, Receiver } from "./helpers";

// Wednesday 2026-11-25, 10:00 UTC (11:00 in Berlin).
const clock = new FixedClock(new Date("2026-11-25T10:00:00.000Z"));
const app = makeTestApp({ clock, config: { sessionIdleSeconds: 50 * 365 * 86400, sessionAbsoluteSeconds: 50 * 365 * 86400 } });
app.handle.channels.publicUrl = "http://localhost";
const run = () => app.handle.scheduler.runDue();
const rejected = (f: () => Promise<TestResponse>, status: number, code: string) => rejectedIn(app, f, status, code);
const rx = new Receiver();
let alice: TestClient;
let bob: TestClient;
let secret: string;
let hookId: string;

beforeAll(async () => {
  alice = await setupAdmin(app, { timezone: "Europe/Berlin" });
  bob = await signedInUser(app, alice, "bob", { timezone: "Europe/Berlin" });
  const r = await alice.post("/api/v1/notification-channels", { type: "webhook", name: "Home Assistant", config: { url: `${rx.url}/hook` } });
  expect(r.status).toBe(201);
  expect(r.body.secret).toMatch(/^[0-9a-f]{64}$/);
  secret = r.body.secret;
  hookId = r.body.id;
});
afterAll(() => {
  rx.stop();
  app.close();
});

const at = (iso: string) => clock.set(iso);
const hooks = () => rx.got.filter((g) => g.path === "/hook");

describe("webhook delivery", () => {
  test("a reminder due now is POSTed once, signed; the ledger keeps it at one however often the scheduler runs", async () => {
    const t = await mkTask(alice, { title: "Dentist", due_at: "2026-11-25T11:00:00Z" });
    const r = await alice.post(`/api/v1/tasks/${t.id}/reminders`, { kind: "before_due", minutes_before: 30 });
    expect(r.body.next_fire_at).toBe("2026-11-25T10:30:00.000Z");
    await run();
    expect(hooks()).toHaveLength(0);
    at("2026-11-25T10:30:00.000Z");
    await run();
    await run();
    expect(hooks()).toHaveLength(1);
    const got = hooks()[0]!;
    expect(got.headers["content-type"]).toBe("application/json");
    expect(got.headers["x-signature"]).toBe(`sha256=${hmacHex(secret, got.body)}`);
    const body = JSON.parse(got.body);
    expect(got.headers["x-delivery-id"]).toBe(body.id);
    expect(body).toMatchObject({ event: "reminder", reminder_id: r.body.id, fire_at: "2026-11-25T10:30:00.000Z", late: false, target: { type: "task", id: t.id, title: "Dentist", due_at: "2026-11-25T11:00:00.000Z", list: { name: "Inbox" } } });
    expect(body.actions.done).toStartWith("http://localhost/api/v1/reminder-actions/");
    expect(body.actions.snooze).toStartWith("http://localhost/api/v1/reminder-actions/");
    const d = await alice.get("/api/v1/deliveries");
    expect(d.body.items[0]).toMatchObject({ id: body.id, reminder_id: r.body.id, channel_id: hookId, status: "delivered", late: false, attempts: 1, last_error: null });
    // Bob sees none of it.
    expect((await bob.get("/api/v1/deliveries")).body.items).toEqual([]);
    // The channel says when it last delivered; no secret anywhere.
    const list = await alice.get("/api/v1/notification-channels");
    expect(list.body.items[0].last_delivery.status).toBe("delivered");
    expect(list.text).not.toContain(secret);
    expect(list.body.items[0].secret).toBeUndefined();
  });

  test("done link: completes the task once (409 after), without a session; a forged or expired link is 404", async () => {
    const t = await mkTask(alice, { title: "Pay rent", due_at: "2026-11-25T11:00:00Z" });
    await alice.post(`/api/v1/tasks/${t.id}/reminders`, { kind: "at", at: "2026-11-25T10:40:00Z" });
    at("2026-11-25T10:40:00.000Z");
    await run();
    const body = JSON.parse(hooks().at(-1)!.body);
    expect(body.target.id).toBe(t.id);
    const anon = app.client();
    const path = new URL(body.actions.done).pathname;
    await rejected(() => anon.post(path.slice(0, -3) + "AAA"), 404, "not_found");
    // A session (with a forged CSRF header or none) changes nothing: the link's token is the only credential.
    await rejected(() => alice.post(path.slice(0, -3) + "AAA", undefined, { csrf: false }), 404, "not_found");
    await rejected(() => alice.post(path.slice(0, -3) + "AAA", undefined, { headers: { "x-csrf-token": "forged" } }), 404, "not_found");
    const ok = await anon.post(path);
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ status: "done", snoozed_until: null });
    expect((await alice.get(`/api/v1/tasks/${t.id}`)).body.completed).toBe(true);
    await rejected(() => anon.post(path), 409, "token_consumed");
    // Expired: the snooze link, a day later.
    at("2026-11-26T10:41:00.000Z");
    await rejected(() => anon.post(new URL(body.actions.snooze).pathname), 404, "not_found");
    at("2026-11-25T10:40:00.000Z");
  });

  test("snooze link: the reminder fires again 10 minutes later (a new occurrence in the ledger)", async () => {
    const t = await mkTask(alice, { title: "Stretch", due_at: "2026-11-25T12:00:00Z" });
    const r = await alice.post(`/api/v1/tasks/${t.id}/reminders`, { kind: "at", at: "2026-11-25T10:45:00Z" });
    at("2026-11-25T10:45:00.000Z");
    await run();
    const first = JSON.parse(hooks().at(-1)!.body);
    const s = await app.client().post(new URL(first.actions.snooze).pathname);
    expect(s.body).toEqual({ status: "snoozed", snoozed_until: "2026-11-25T10:55:00.000Z" });
    expect((await alice.get(`/api/v1/tasks/${t.id}/reminders`)).body.items[0].next_fire_at).toBe("2026-11-25T10:55:00.000Z");
    const n = hooks().length;
    at("2026-11-25T10:55:00.000Z");
    await run();
    expect(hooks()).toHaveLength(n + 1);
    const second = JSON.parse(hooks().at(-1)!.body);
    expect(second.reminder_id).toBe(r.body.id);
    expect(second.id).not.toBe(first.id);
    expect((await alice.get(`/api/v1/tasks/${t.id}/reminders`)).body.items[0].next_fire_at).toBeNull();
  });

  test("a failing receiver is retried with backoff and delivered when it recovers; past the grace it fails", async () => {
    let down = true;
    rx.answer = (r) => (r.path === "/hook" && down ? new Response("<html>secret page</html>", { status: 503 }) : new Response("ok"));
    const t = await mkTask(alice, { title: "Flaky", due_at: "2026-11-25T13:00:00Z" });
    await alice.post(`/api/v1/tasks/${t.id}/reminders`, { kind: "before_due", minutes_before: 0 });
    at("2026-11-25T13:00:00.000Z");
    await run();
    let d = (await alice.get("/api/v1/deliveries")).body.items[0];
    expect(d).toMatchObject({ status: "retrying", attempts: 1, last_error: "the receiver answered 503" });
    at("2026-11-25T13:00:20.000Z");
    await run();
    expect((await alice.get("/api/v1/deliveries")).body.items[0].attempts).toBe(1);
    at("2026-11-25T13:00:30.000Z");
    await run();
    expect((await alice.get("/api/v1/deliveries")).body.items[0].attempts).toBe(2);
    down = false;
    at("2026-11-25T13:01:30.000Z");
    await run();
    d = (await alice.get("/api/v1/deliveries")).body.items[0];
    expect(d).toMatchObject({ status: "delivered", attempts: 3, last_error: null });
    expect(JSON.stringify(d)).not.toContain("secret page");

    down = true;
    const t2 = await mkTask(alice, { title: "Never", due_at: "2026-11-25T14:00:00Z" });
    await alice.post(`/api/v1/tasks/${t2.id}/reminders`, { kind: "before_due", minutes_before: 0 });
    for (let m = 0; m <= 62; m += 1) {
      at(new Date(Date.parse("2026-11-25T14:00:00Z") + m * 60_000).toISOString());
      await run();
    }
    d = (await alice.get("/api/v1/deliveries")).body.items[0];
    expect(d.status).toBe("failed");
    expect(d.attempts).toBeGreaterThan(5);
    rx.answer = () => new Response("ok");
  });

  test("quiet hours hold a delivery until they end (not late)", async () => {
    await alice.patch("/api/v1/me", { quiet_hours: { start: "22:00", end: "07:00" } });
    const t = await mkTask(alice, { title: "Late night", due_at: "2026-11-25T22:30:00Z" });
    await alice.post(`/api/v1/tasks/${t.id}/reminders`, { kind: "before_due", minutes_before: 0 });
    const n = hooks().length;
    at("2026-11-25T22:30:00.000Z");
    await run();
    expect(hooks()).toHaveLength(n);
    expect((await alice.get("/api/v1/deliveries")).body.items[0]).toMatchObject({ status: "retrying", attempts: 0 });
    // 07:00 Berlin = 06:00 UTC.
    at("2026-11-26T05:59:00.000Z");
    await run();
    expect(hooks()).toHaveLength(n);
    at("2026-11-26T06:00:00.000Z");
    await run();
    expect(hooks()).toHaveLength(n + 1);
    expect(JSON.parse(hooks().at(-1)!.body).late).toBe(false);
    await alice.patch("/api/v1/me", { quiet_hours: null });
  });

  test("a redirect is not followed; a huge answer is not read past the cap", async () => {
    let redirectedHit = 0;
    rx.answer = (r) => {
      if (r.path === "/elsewhere") redirectedHit++;
      if (r.path === "/hook") return new Response(null, { status: 302, headers: { location: `${rx.url}/elsewhere` } });
      return new Response("ok");
    };
    const test1 = await alice.post(`/api/v1/notification-channels/${hookId}/test`);
    expect(test1.status).toBe(502);
    expect(test1.body.code).toBe("delivery_failed");
    expect(JSON.stringify(test1.body.errors)).toContain("302");
    expect(redirectedHit).toBe(0);
    rx.answer = () => new Response(new ReadableStream({ pull: (c) => c.enqueue(new Uint8Array(64 * 1024)) }), { status: 200 });
    const test2 = await alice.post(`/api/v1/notification-channels/${hookId}/test`);
    expect(test2.status).toBe(200);
    expect(test2.body).toEqual({ status: "delivered" });
    rx.answer = () => new Response("ok");
    const last = hooks().at(-1)!;
    expect(JSON.parse(last.body)).toMatchObject({ event: "test", actions: null });
    expect(last.headers["x-signature"]).toBe(`sha256=${hmacHex(secret, last.body)}`);
  });
});

describe("ntfy", () => {
  test("POST {server}/{topic}: the title as body; Title, Priority, Tags, Actions, Authorization; the token never answered", async () => {
    const c = await bob.post("/api/v1/notification-channels", { type: "ntfy", name: "Phone", config: { server: rx.url, topic: "bob_tasks", token: "tk_secret123" } });
    expect(c.status).toBe(201);
    expect(c.body.secret).toBeUndefined();
    expect(c.body.config).toEqual({ server: rx.url, topic: "bob_tasks" });
    expect(c.text).not.toContain("tk_secret123");
    const t = await mkTask(bob, { title: "Müll rausbringen", due_at: "2026-11-27T18:00:00Z", priority: 3 });
    await bob.post(`/api/v1/tasks/${t.id}/reminders`, { kind: "before_due", minutes_before: 60 });
    at("2026-11-27T17:00:00.000Z");
    await run();
    const got = rx.got.filter((g) => g.path === "/bob_tasks");
    expect(got).toHaveLength(1);
    const g = got[0]!;
    expect(g.method).toBe("POST");
    expect(g.body).toBe("Müll rausbringen");
    expect(g.headers["title"]).toBe(`=?UTF-8?B?${Buffer.from("Müll rausbringen").toString("base64")}?=`);
    expect(g.headers["priority"]).toBe("5");
    expect(g.headers["tags"]).toBe("alarm_clock,task");
    expect(g.headers["authorization"]).toBe("Bearer tk_secret123");
    expect(g.headers["actions"]).toMatch(/^http, Done, http:\/\/localhost\/api\/v1\/reminder-actions\/[^,]+, method=POST, clear=true; http, Snooze 10 min, http:\/\/localhost\/api\/v1\/reminder-actions\/[^,]+, method=POST, clear=true$/);
    expect((await bob.get("/api/v1/notification-channels")).text).not.toContain("tk_secret123");
  });
});

describe("channels API", () => {
  test("bad configs are 422 and change nothing; another user's channel is 404; admin settings are admin-only", async () => {
    await rejected(() => alice.post("/api/v1/notification-channels", { type: "webhook", name: "x", config: { url: "ftp://example.org/x" } }), 422, "validation_failed");
    await rejected(() => alice.post("/api/v1/notification-channels", { type: "webhook", name: "x", config: { url: "not a url" } }), 422, "validation_failed");
    await rejected(() => alice.post("/api/v1/notification-channels", { type: "webhook", name: "x", config: { url: "https://example.org", secret: "mine" } }), 422, "validation_failed");
    await rejected(() => alice.post("/api/v1/notification-channels", { type: "ntfy", name: "x", config: { server: "https://ntfy.sh", topic: "a/b" } }), 422, "validation_failed");
    await rejected(() => alice.post("/api/v1/notification-channels", { type: "email", name: "x", config: { address: "nope" } }), 422, "validation_failed");
    await rejected(() => alice.post("/api/v1/notification-channels", { type: "sms", name: "x", config: {} }), 422, "validation_failed");
    await rejected(() => bob.patch(`/api/v1/notification-channels/${hookId}`, { enabled: false }), 404, "not_found");
    await rejected(() => bob.post(`/api/v1/notification-channels/${hookId}/test`), 404, "not_found");
    await rejected(() => bob.delete(`/api/v1/notification-channels/${hookId}`), 404, "not_found");
    await rejected(() => bob.put("/api/v1/admin/smtp", { host: "smtp.example.org", port: 587, security: "starttls", from: "a@example.org" }), 403, "forbidden");
    await rejected(() => bob.put("/api/v1/admin/outbound", { mode: "public" }), 403, "forbidden");
    expect((await bob.get("/api/v1/admin/smtp")).status).toBe(403);
    await rejected(() => alice.get("/api/v1/deliveries?cursor=abc"), 422, "invalid_cursor");
    await rejected(() => alice.get("/api/v1/deliveries?limit=101"), 422, "validation_failed");
  });

  test("the outbound rule: public-only refuses loopback (on save and at delivery); an allow-list admits what it names", async () => {
    expect((await alice.put("/api/v1/admin/outbound", { mode: "public" })).status).toBe(200);
    const r = await rejected(() => alice.post("/api/v1/notification-channels", { type: "webhook", name: "x", config: { url: `${rx.url}/x` } }), 422, "validation_failed");
    expect(r.body.errors[0].path).toBe("config.url");
    await rejected(() => alice.post("/api/v1/notification-channels", { type: "webhook", name: "x", config: { url: "http://localhost:9/x" } }), 422, "validation_failed");
    await rejected(() => alice.post("/api/v1/notification-channels", { type: "webhook", name: "x", config: { url: "http://[::ffff:127.0.0.1]:9/x" } }), 422, "validation_failed");
    // The existing channel is refused at delivery time too.
    const n = hooks().length;
    const test1 = await alice.post(`/api/v1/notification-channels/${hookId}/test`);
    expect(test1.status).toBe(502);
    expect(JSON.stringify(test1.body)).toContain("not a public address");
    expect(hooks()).toHaveLength(n);
    expect((await alice.put("/api/v1/admin/outbound", { mode: "allowlist", allow: ["127.0.0.0/8"] })).body).toEqual({ mode: "allowlist", allow: ["127.0.0.0/8"] });
    expect((await alice.post(`/api/v1/notification-channels/${hookId}/test`)).status).toBe(200);
    await alice.put("/api/v1/admin/outbound", { mode: "allowlist", allow: ["hooks.example.org"] });
    expect((await alice.post(`/api/v1/notification-channels/${hookId}/test`)).status).toBe(502);
    await alice.put("/api/v1/admin/outbound", { mode: "any" });
  });

  test("disable, rename, delete", async () => {
    const c = await alice.post("/api/v1/notification-channels", { type: "webhook", name: "Temp", config: { url: `${rx.url}/temp` } });
    const p = await alice.patch(`/api/v1/notification-channels/${c.body.id}`, { name: "Temp 2", enabled: false });
    expect(p.body).toMatchObject({ name: "Temp 2", enabled: false, config: { url: `${rx.url}/temp` } });
    const t = await mkTask(alice, { title: "Only enabled", due_at: "2026-11-28T10:00:00Z" });
    await alice.post(`/api/v1/tasks/${t.id}/reminders`, { kind: "before_due", minutes_before: 0 });
    at("2026-11-28T10:00:00.000Z");
    await run();
    expect(rx.got.filter((g) => g.path === "/temp")).toHaveLength(0);
    expect(hooks().some((h) => JSON.parse(h.body).target?.id === t.id)).toBe(true);
    expect((await alice.delete(`/api/v1/notification-channels/${c.body.id}`)).status).toBe(204);
    await rejected(() => alice.delete(`/api/v1/notification-channels/${c.body.id}`), 404, "not_found");
  });

  test("GET /push/vapid-public-key: one key, kept in the data directory", async () => {
    const a = await alice.get("/api/v1/push/vapid-public-key");
    expect(a.body.key).toMatch(/^[A-Za-z0-9_-]{87}$/);
    expect((await bob.get("/api/v1/push/vapid-public-key")).body.key).toBe(a.body.key);
  });
});
