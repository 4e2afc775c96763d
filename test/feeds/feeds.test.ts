import { afterEach, describe, expect, test } from "bun:test";
import ICAL from "ical.js";
import { FixedClock, makeTestApp, rejected, setupAdmin, signedInUser, type TestApp, type TestClient } from "../helpers/app";
import { meOf, share } from "../sharing/helpers";
import { checkWithPython, parseWithIcalJs } from "./ics-validity";

// Today is 2026-11-26 (UTC noon; in New York 07:00, the same date).
const NOW = "2026-11-26T12:00:00.000Z";
let app: TestApp;
afterEach(() => app?.close());

async function start(config: Record<string, unknown> = {}): Promise<TestClient> {
  app = makeTestApp({ clock: new FixedClock(new Date(NOW)), config });
  return setupAdmin(app);
}

const pathOf = (url: string) => new URL(url).pathname;

/** Fetches a feed with no session (a calendar app), checks its validity with both parsers, and returns it parsed. */
async function fetchFeed(url: string, headers: Record<string, string> = {}, ip = "10.0.0.9") {
  const r = await app.client({ ip }).get(pathOf(url), { headers });
  if (r.status !== 200) return { r, cal: null, items: [] as ICAL.Component[] };
  expect(r.headers.get("content-type")).toBe("text/calendar; charset=utf-8");
  const cal = parseWithIcalJs(r.text);
  const n = checkWithPython(r.text);
  if (n !== null) expect(n).toBe(cal.getAllSubcomponents().length);
  return { r, cal, items: cal.getAllSubcomponents() };
}

const summaries = (items: ICAL.Component[]) => items.map((c) => String(c.getFirstPropertyValue("summary"))).sort();
const byTitle = (items: ICAL.Component[], title: string) => items.find((c) => c.getFirstPropertyValue("summary") === title)!;

async function newFeed(c: TestClient, body: Record<string, unknown>) {
  const r = await c.post("/api/v1/feeds", body);
  if (r.status !== 201) throw new Error(`feed not created: ${r.status} ${r.text}`);
  expect(r.headers.get("location")).toBe(`/api/v1/feeds/${r.body.id}`);
  return r.body;
}

async function task(c: TestClient, body: Record<string, unknown>) {
  const r = await c.post("/api/v1/tasks", body);
  expect(r.status).toBe(201);
  return r.body;
}

describe("feeds API", () => {
  test("create, list and revoke; the URL is absolute, webcal form too, and stops answering once revoked", async () => {
    const alice = await start();
    const f = await newFeed(alice, { scope: "all", include: ["tasks", "countdowns", "habits", "tasks"] });
    expect(f.scope).toBe("all");
    expect(f.list_id).toBeNull();
    expect(f.include).toEqual(["tasks", "countdowns", "habits"]);
    expect(f.task_format).toBe("events");
    expect(f.url).toMatch(/^http:\/\/localhost\/feeds\/[0-9a-f-]{36}\.[A-Za-z0-9_-]{43}\.ics$/);
    expect(f.webcal_url).toBe(f.url.replace(/^http:/, "webcal:"));
    const list = await alice.get("/api/v1/feeds");
    expect(list.status).toBe(200);
    expect(list.body.items).toEqual([f]);
    expect((await alice.get(`/api/v1/feeds/${f.id}`)).body).toEqual(f);
    expect((await fetchFeed(f.url)).r.status).toBe(200);
    // The request log names the feed, never its secret.
    const signature = pathOf(f.url).split(".")[1]!;
    const logged = app.logs.filter((l) => l.includes(`/feeds/${f.id}`));
    expect(logged.length).toBeGreaterThan(0);
    expect(app.logs.filter((l) => l.includes(signature))).toEqual([]);

    expect((await alice.delete(`/api/v1/feeds/${f.id}`)).status).toBe(204);
    expect((await alice.get("/api/v1/feeds")).body.items).toEqual([]);
    const gone = await app.client().get(pathOf(f.url));
    expect(gone.status).toBe(404);
    expect(gone.headers.get("content-type")).toContain("application/problem+json");
    // Revoking again, or someone else's feed: 404.
    await rejected(app, () => alice.delete(`/api/v1/feeds/${f.id}`), 404, "not_found");
    const g = await newFeed(alice, { scope: "all", include: ["tasks"] });
    const bob = await signedInUser(app, alice, "bob");
    await rejected(app, () => bob.delete(`/api/v1/feeds/${g.id}`), 404, "not_found");
    expect((await bob.get(`/api/v1/feeds/${g.id}`)).status).toBe(404);
    expect((await alice.get(`/api/v1/feeds/${f.id}`)).status).toBe(404);
    expect((await bob.get("/api/v1/feeds")).body.items).toEqual([]);
    // Audited.
    const audit = (await alice.get("/api/v1/audit-logs")).body.items.map((e: { action: string }) => e.action);
    expect(audit).toContain("feed_created");
    expect(audit).toContain("feed_revoked");
  });

  test("bad bodies are 422 and change nothing", async () => {
    const alice = await start();
    const inbox = (await alice.get("/api/v1/lists")).body.items[0].id;
    for (const body of [
      { scope: "list", include: ["tasks"] },
      { scope: "list", list_id: null, include: ["tasks"] },
      { scope: "all", list_id: inbox, include: ["tasks"] },
      { scope: "all", include: [] },
      { scope: "all", include: ["memos"] },
      { scope: "all", include: ["tasks"], task_format: "journal" },
      { scope: "everything", include: ["tasks"] },
      { scope: "all", include: ["tasks"], extra: 1 },
    ]) {
      await rejected(app, () => alice.post("/api/v1/feeds", body), 422, "validation_failed");
    }
  });

  test("a list the user cannot see (another user's, unknown, in the trash) is 422 invalid_reference", async () => {
    const alice = await start();
    const bob = await signedInUser(app, alice, "bob");
    const bobs = (await bob.post("/api/v1/lists", { name: "Bob's" })).body.id;
    await rejected(app, () => alice.post("/api/v1/feeds", { scope: "list", list_id: bobs, include: ["tasks"] }), 422, "invalid_reference");
    await rejected(app, () => alice.post("/api/v1/feeds", { scope: "list", list_id: "nope", include: ["tasks"] }), 422, "invalid_reference");
    const mine = (await alice.post("/api/v1/lists", { name: "Mine" })).body.id;
    expect((await alice.delete(`/api/v1/lists/${mine}`)).status).toBe(204);
    await rejected(app, () => alice.post("/api/v1/feeds", { scope: "list", list_id: mine, include: ["tasks"] }), 422, "invalid_reference");
  });

  test("session and CSRF as for the rest of the API", async () => {
    const alice = await start();
    expect((await app.client().get("/api/v1/feeds")).status).toBe(401);
    await rejected(app, () => alice.post("/api/v1/feeds", { scope: "all", include: ["tasks"] }, { csrf: false }), 403, "csrf_failed");
  });

  test("the URL's origin: Host as sent; X-Forwarded-Proto/Host only behind a trusted proxy", async () => {
    let alice = await start();
    let f = await newFeed(alice, { scope: "all", include: ["tasks"] });
    const h = { "x-forwarded-proto": "https", "x-forwarded-host": "tasks.example.org" };
    expect((await alice.get("/api/v1/feeds", { headers: h })).body.items[0].url).toStartWith("http://localhost/feeds/");
    expect((await alice.get("/api/v1/feeds", { headers: { host: "nas.local:8080" } })).body.items[0].url).toStartWith("http://nas.local:8080/feeds/");
    expect((await alice.get("/api/v1/feeds", { headers: { host: "evil.example/x?" } })).status).toBe(400);
    app.close();
    await start({ trustProxy: true });
    // Signed in over https (the proxy's X-Forwarded-Proto), as a browser behind it is.
    alice = app.client();
    expect((await alice.post("/api/v1/auth/login", { username: "owner", password: "correct horse battery" }, { headers: h })).status).toBe(200);
    f = (await alice.post("/api/v1/feeds", { scope: "all", include: ["tasks"] }, { headers: h })).body;
    expect(f.url).toStartWith("https://tasks.example.org/feeds/");
    const got = (await alice.get("/api/v1/feeds", { headers: h })).body.items[0];
    expect(got.url).toStartWith("https://tasks.example.org/feeds/");
    expect(got.webcal_url).toStartWith("webcal://tasks.example.org/feeds/");
    expect(pathOf(got.url)).toBe(pathOf(f.url));
  });
});

describe("GET /feeds/<secret>.ics", () => {
  test("ETag and 304; a change gives a new ETag", async () => {
    const alice = await start();
    const t = await task(alice, { title: "Pay rent", due_at: "2026-12-01" });
    const f = await newFeed(alice, { scope: "all", include: ["tasks"] });
    const a = await fetchFeed(f.url);
    const etag = a.r.headers.get("etag")!;
    expect(etag).toMatch(/^"[A-Za-z0-9+/]+"$/);
    const again = await app.client().get(pathOf(f.url));
    expect(again.headers.get("etag")).toBe(etag);
    expect(again.text).toBe(a.r.text);
    const nm = await app.client().get(pathOf(f.url), { headers: { "if-none-match": `"x", ${etag}` } });
    expect(nm.status).toBe(304);
    expect(nm.text).toBe("");
    expect(nm.headers.get("etag")).toBe(etag);
    expect((await app.client().get(pathOf(f.url), { headers: { "if-none-match": '"other"' } })).status).toBe(200);
    expect((await alice.patch(`/api/v1/tasks/${t.id}`, { version: t.version, title: "Pay the rent" })).status).toBe(200);
    const b = await app.client().get(pathOf(f.url), { headers: { "if-none-match": etag } });
    expect(b.status).toBe(200);
    expect(b.headers.get("etag")).not.toBe(etag);
  });

  test("unknown, forged and malformed secrets are 404; wrong ones are throttled per address, a revoked one is not counted", async () => {
    const alice = await start();
    const f = await newFeed(alice, { scope: "all", include: ["tasks"] });
    const r = await newFeed(alice, { scope: "all", include: ["tasks"] });
    expect((await alice.delete(`/api/v1/feeds/${r.id}`)).status).toBe(204);
    const [id, sig] = pathOf(f.url).slice("/feeds/".length, -".ics".length).split(".");
    const probe = app.client({ ip: "192.0.2.7" });
    for (const p of [`/feeds/${id}.${sig!.replace(/^./, (ch) => (ch === "A" ? "B" : "A"))}.ics`, `/feeds/0190c1d2-0000-7000-8000-000000000000.${sig}.ics`, "/feeds/nothing.ics", `/feeds/${id}.${sig}.txt`, `/feeds/${"a".repeat(300)}.ics`]) {
      const x = await probe.get(p);
      expect(x.status).toBe(404);
      expect(x.body.code).toBe("not_found");
    }
    // A revoked URL polled over and over (a calendar app that was never told) is never throttled.
    for (let i = 0; i < 30; i++) expect((await app.client({ ip: "192.0.2.8" }).get(pathOf(r.url))).status).toBe(404);
    expect((await app.client({ ip: "192.0.2.8" }).get(pathOf(f.url))).status).toBe(200);
    // 20 wrong ones (the 20th starts the wait); then the address waits, whatever it asks; other addresses do not.
    for (let i = 5; i < 20; i++) expect((await probe.get(`/feeds/${id}.x${i}.ics`)).status).toBe(404);
    const blocked = await probe.get(pathOf(f.url));
    expect(blocked.status).toBe(429);
    expect(blocked.body.code).toBe("rate_limited");
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(0);
    expect((await app.client({ ip: "192.0.2.9" }).get(pathOf(f.url))).status).toBe(200);
  });

  test("events: an all-day event for a date, a UTC point in time for an instant; completed and trashed tasks left out", async () => {
    const alice = await start();
    expect((await alice.patch("/api/v1/me", { timezone: "America/New_York" })).status).toBe(200);
    await task(alice, { title: "Date only", due_at: "2026-12-01", description: "line 1\nline 2; with, punctuation" });
    await task(alice, { title: "Timed", due_at: "2026-12-01T15:30:00-05:00" });
    const done = await task(alice, { title: "Done", due_at: "2026-11-27" });
    expect((await alice.patch(`/api/v1/tasks/${done.id}`, { version: done.version, completed: true })).status).toBe(200);
    const trashed = await task(alice, { title: "Trashed", due_at: "2026-11-28" });
    expect((await alice.delete(`/api/v1/tasks/${trashed.id}`)).status).toBe(204);
    await task(alice, { title: "Undated" });
    await task(alice, { title: "Too far", due_at: "2029-01-01" });
    await task(alice, { title: "Long past", due_at: "2026-01-01" });
    const f = await newFeed(alice, { scope: "all", include: ["tasks"] });
    const { items, cal } = await fetchFeed(f.url);
    expect(cal!.getFirstPropertyValue("x-wr-timezone")).toBe("America/New_York");
    expect(summaries(items)).toEqual(["Date only", "Timed"]);
    const d = byTitle(items, "Date only");
    expect(d.name).toBe("vevent");
    const ds = d.getFirstPropertyValue("dtstart") as ICAL.Time;
    expect([ds.isDate, ds.toString()]).toEqual([true, "2026-12-01"]);
    expect((d.getFirstPropertyValue("dtend") as ICAL.Time).toString()).toBe("2026-12-02");
    expect(d.getFirstPropertyValue("description")).toBe("line 1\nline 2; with, punctuation");
    expect(String(d.getFirstPropertyValue("uid"))).toMatch(/^task-/);
    const t = byTitle(items, "Timed");
    const ts = t.getFirstPropertyValue("dtstart") as ICAL.Time;
    expect([ts.isDate, ts.zone?.tzid, ts.toJSDate().toISOString()]).toEqual([false, "UTC", "2026-12-01T20:30:00.000Z"]);
    expect(t.getFirstProperty("dtend")).toBeNull();
  });

  test("a repeating task: every later occurrence for a year as its own event (exceptions skipped); as a to-do only the current one", async () => {
    const alice = await start();
    const weekly = await task(alice, { title: "Bins out", due_at: "2026-11-30" });
    const rec = await alice.post("/api/v1/recurrences", { task_id: weekly.id, kind: "rrule", rrule: "FREQ=WEEKLY" });
    expect(rec.status).toBe(201);
    expect((await alice.post(`/api/v1/recurrences/${rec.body.id}/exceptions`, { date: "2026-12-14" })).status).toBe(200);
    const timed = await task(alice, { title: "Standup", due_at: "2026-11-27T09:00:00Z" });
    expect((await alice.post("/api/v1/recurrences", { task_id: timed.id, kind: "rrule", rrule: "FREQ=DAILY;COUNT=3", timezone: "Europe/London" })).status).toBe(201);
    const f = await newFeed(alice, { scope: "all", include: ["tasks"] });
    const { items } = await fetchFeed(f.url);
    const bins = items.filter((e) => e.getFirstPropertyValue("summary") === "Bins out").map((e) => (e.getFirstPropertyValue("dtstart") as ICAL.Time).toString());
    expect(bins.slice(0, 4)).toEqual(["2026-11-30", "2026-12-07", "2026-12-21", "2026-12-28"]);
    // Through 366 days after today (2027-11-27): the last Monday is 2027-11-22; 52 weeks less the exception.
    expect(bins[bins.length - 1]).toBe("2027-11-22");
    expect(bins.length).toBe(51);
    const uids = items.filter((e) => e.getFirstPropertyValue("summary") === "Bins out").map((e) => String(e.getFirstPropertyValue("uid")));
    expect(uids.slice(0, 2)).toEqual([`task-${weekly.id}`, `task-${weekly.id}-2026-12-07`]);
    const standups = items.filter((e) => e.getFirstPropertyValue("summary") === "Standup").map((e) => (e.getFirstPropertyValue("dtstart") as ICAL.Time).toJSDate().toISOString());
    expect(standups).toEqual(["2026-11-27T09:00:00.000Z", "2026-11-28T09:00:00.000Z", "2026-11-29T09:00:00.000Z"]);
    const todos = await newFeed(alice, { scope: "all", include: ["tasks"], task_format: "todos" });
    expect(summaries((await fetchFeed(todos.url)).items)).toEqual(["Bins out", "Standup"]);
  });

  test("todos: VTODO with DUE, completed ones included as COMPLETED", async () => {
    const alice = await start();
    const dateOnly = await task(alice, { title: "Date only", due_at: "2026-12-01", priority: 3 });
    await task(alice, { title: "Timed", due_at: "2026-12-01T10:00:00Z" });
    const done = await task(alice, { title: "Done", due_at: "2026-11-27" });
    expect((await alice.patch(`/api/v1/tasks/${done.id}`, { version: done.version, completed: true })).status).toBe(200);
    const f = await newFeed(alice, { scope: "all", include: ["tasks"], task_format: "todos" });
    expect(f.task_format).toBe("todos");
    const { items } = await fetchFeed(f.url);
    expect(items.map((c) => c.name)).toEqual(["vtodo", "vtodo", "vtodo"]);
    expect(summaries(items)).toEqual(["Date only", "Done", "Timed"]);
    const d = byTitle(items, "Date only");
    expect((d.getFirstPropertyValue("due") as ICAL.Time).toString()).toBe("2026-12-01");
    expect(Number(d.getFirstPropertyValue("priority"))).toBe(1);
    expect(d.getFirstPropertyValue("status")).toBe("NEEDS-ACTION");
    // The VTODO mapping of the .ics import (and CalDAV): the task's id is the UID.
    expect(d.getFirstPropertyValue("uid")).toBe(dateOnly.id);
    expect((byTitle(items, "Timed").getFirstPropertyValue("due") as ICAL.Time).toJSDate().toISOString()).toBe("2026-12-01T10:00:00.000Z");
    const c = byTitle(items, "Done");
    expect(c.getFirstPropertyValue("status")).toBe("COMPLETED");
    expect(c.getFirstPropertyValue("completed")).toBeInstanceOf(ICAL.Time);
  });

  test("include variants: countdowns only, habits only", async () => {
    const alice = await start();
    await task(alice, { title: "A task", due_at: "2026-12-01" });
    expect((await alice.post("/api/v1/countdowns", { name: "Trip", date: "2026-12-24" })).status).toBe(201);
    const h = (await alice.post("/api/v1/habits", { name: "Stretch" })).body;
    expect((await alice.post(`/api/v1/habits/${h.id}/reminders`, { kind: "daily", time: "07:30" })).status).toBe(201);
    const only = await newFeed(alice, { scope: "all", include: ["countdowns"] });
    expect(summaries((await fetchFeed(only.url)).items)).toEqual(["Trip"]);
    const habits = await newFeed(alice, { scope: "all", include: ["habits"] });
    const hs = (await fetchFeed(habits.url)).items;
    expect(new Set(summaries(hs))).toEqual(new Set(["Stretch"]));
    // Every day from today for 30 days, at 07:30 in the user's zone (UTC here).
    expect(hs.length).toBe(30);
    expect((hs[0]!.getFirstPropertyValue("dtstart") as ICAL.Time).toJSDate().toISOString()).toBe("2026-11-26T07:30:00.000Z");
    const all = await newFeed(alice, { scope: "all", include: ["tasks", "countdowns", "habits"] });
    expect((await fetchFeed(all.url)).items.length).toBe(1 + 1 + 30);
  });

  test("habit reminders: the user's zone across a DST change, weekdays only, done and paused days left out", async () => {
    // Monday 22 March 2027; Berlin moves from UTC+1 to UTC+2 on Sunday 28 March.
    app = makeTestApp({ clock: new FixedClock(new Date("2027-03-22T12:00:00.000Z")) });
    const alice = await setupAdmin(app);
    expect((await alice.patch("/api/v1/me", { timezone: "Europe/Berlin" })).status).toBe(200);
    // Mondays and Thursdays (ISO weekdays 1 and 4).
    const h = (await alice.post("/api/v1/habits", { name: "Swim", frequency: { type: "weekdays", days: [1, 4] } })).body;
    expect((await alice.post(`/api/v1/habits/${h.id}/reminders`, { kind: "daily", time: "18:00" })).status).toBe(201);
    // Done today already: today's reminder does not fire.
    expect((await alice.put(`/api/v1/habits/${h.id}/logs/2027-03-22`, { value: 1 })).status).toBe(200);
    expect((await alice.post(`/api/v1/habits/${h.id}/pauses`, { start_date: "2027-04-05", end_date: "2027-04-08" })).status).toBe(201);
    const f = await newFeed(alice, { scope: "all", include: ["habits"] });
    const starts = (await fetchFeed(f.url)).items.map((c) => (c.getFirstPropertyValue("dtstart") as ICAL.Time).toJSDate().toISOString());
    // 30 days from today: Mondays and Thursdays through 19 April, less 22 March (done) and 5 and 8 April (paused).
    expect(starts).toEqual([
      "2027-03-25T17:00:00.000Z",
      "2027-03-29T16:00:00.000Z",
      "2027-04-01T16:00:00.000Z",
      "2027-04-12T16:00:00.000Z",
      "2027-04-15T16:00:00.000Z",
      "2027-04-19T16:00:00.000Z",
    ]);
  });

  test("a lunar yearly countdown falls on the Chinese New Year of each coming year", async () => {
    const alice = await start();
    // 2026-02-17 is lunar 1/1 (Chinese New Year 2026).
    const c = await alice.post("/api/v1/countdowns", { name: "New Year", date: "2026-02-17", type: "anniversary", repeat: "yearly", calendar: "lunar" });
    expect(c.status).toBe(201);
    expect((await alice.post("/api/v1/countdowns", { name: "Anniv", date: "2020-03-01", type: "anniversary", repeat: "yearly" })).status).toBe(201);
    const f = await newFeed(alice, { scope: "all", include: ["countdowns"] });
    const { items } = await fetchFeed(f.url);
    const lunar = items.filter((e) => String(e.getFirstPropertyValue("summary")).startsWith("New Year"));
    // Published dates of the Spring Festival (independent of lunar-typescript).
    expect(lunar.map((e) => (e.getFirstPropertyValue("dtstart") as ICAL.Time).toString())).toEqual(["2027-02-06", "2028-01-26", "2029-02-13", "2030-02-03", "2031-01-23"]);
    expect(lunar.map((e) => e.getFirstPropertyValue("summary"))).toEqual(["New Year (1)", "New Year (2)", "New Year (3)", "New Year (4)", "New Year (5)"]);
    const uids = lunar.map((e) => String(e.getFirstPropertyValue("uid")));
    expect(uids[0]).toBe(`countdown-${c.body.id}-2027-02-06`);
    const anniv = items.filter((e) => String(e.getFirstPropertyValue("summary")).startsWith("Anniv"));
    expect(anniv.map((e) => (e.getFirstPropertyValue("dtstart") as ICAL.Time).toString())).toEqual(["2027-03-01", "2028-03-01", "2029-03-01", "2030-03-01", "2031-03-01"]);
    expect(anniv[0]!.getFirstPropertyValue("summary")).toBe("Anniv (7)");
  });

  test("a list feed shows that list; a shared list's feed for a member, until they leave; a trashed list's feed is 404", async () => {
    const alice = await start();
    const bob = await signedInUser(app, alice, "bob");
    const shared = (await alice.post("/api/v1/lists", { name: "Family; shared" })).body.id;
    const other = (await alice.post("/api/v1/lists", { name: "Other" })).body.id;
    await task(alice, { title: "In shared", due_at: "2026-12-02", list_id: shared });
    await task(alice, { title: "In other", due_at: "2026-12-02", list_id: other });
    await task(bob, { title: "Bob's own", due_at: "2026-12-03" });
    await share(alice, bob, shared, "viewer");

    const mine = await newFeed(alice, { scope: "list", list_id: other, include: ["tasks"] });
    expect(summaries((await fetchFeed(mine.url)).items)).toEqual(["In other"]);

    const bobsList = await newFeed(bob, { scope: "list", list_id: shared, include: ["tasks"] });
    expect(bobsList.list_id).toBe(shared);
    const got = await fetchFeed(bobsList.url);
    expect(summaries(got.items)).toEqual(["In shared"]);
    expect(got.cal!.getFirstPropertyValue("x-wr-calname")).toBe("Family; shared");
    const bobsAll = await newFeed(bob, { scope: "all", include: ["tasks"] });
    expect(summaries((await fetchFeed(bobsAll.url)).items)).toEqual(["Bob's own", "In shared"]);

    // Bob is removed from the list: his list feed answers 404, his "all" feed no longer has its tasks.
    const bobId = (await meOf(bob)).id;
    expect((await alice.delete(`/api/v1/lists/${shared}/members/${bobId}`)).status).toBe(204);
    expect((await app.client().get(pathOf(bobsList.url))).status).toBe(404);
    expect(summaries((await fetchFeed(bobsAll.url)).items)).toEqual(["Bob's own"]);
    // It is still listed (Settings shows it, to be revoked).
    expect((await bob.get("/api/v1/feeds")).body.items.map((f: { id: string }) => f.id)).toContain(bobsList.id);

    // Alice's list goes to the trash: 404; restored: served again.
    expect((await alice.delete(`/api/v1/lists/${other}`)).status).toBe(204);
    expect((await app.client().get(pathOf(mine.url))).status).toBe(404);
    expect((await alice.post(`/api/v1/lists/${other}/restore`)).status).toBe(200);
    expect((await fetchFeed(mine.url)).r.status).toBe(200);
  });

  test("a disabled account's feeds answer 404 (the operator's `app users disable`), and again once enabled", async () => {
    const alice = await start();
    const bob = await signedInUser(app, alice, "bob");
    const f = await newFeed(bob, { scope: "all", include: ["tasks"] });
    expect((await fetchFeed(f.url)).r.status).toBe(200);
    // What `app users disable bob` writes (the CLI's own test covers the command).
    app.db.sqlite.run("UPDATE users SET disabled_at = ? WHERE username = 'bob'", [NOW]);
    expect((await app.client().get(pathOf(f.url))).status).toBe(404);
    app.db.sqlite.run("UPDATE users SET disabled_at = NULL WHERE username = 'bob'");
    expect((await fetchFeed(f.url)).r.status).toBe(200);
  });

  test("the window moves with the user's today: a task leaves the feed 60 days after its due date", async () => {
    const clock = new FixedClock(new Date(NOW));
    app = makeTestApp({ clock });
    const alice = await setupAdmin(app);
    await task(alice, { title: "Old", due_at: "2026-11-20" });
    const f = await newFeed(alice, { scope: "all", include: ["tasks"] });
    const first = await fetchFeed(f.url);
    expect(summaries(first.items)).toEqual(["Old"]);
    clock.set("2027-01-19T12:00:00.000Z");
    expect(summaries((await fetchFeed(f.url)).items)).toEqual(["Old"]);
    clock.set("2027-01-20T12:00:00.000Z");
    const later = await fetchFeed(f.url);
    expect(summaries(later.items)).toEqual([]);
    expect(later.r.headers.get("etag")).not.toBe(first.r.headers.get("etag"));
  });

  test("hostile text stays inside its property (escaped by ical.js), lines folded", async () => {
    const alice = await start();
    const evil = "x\r\nEND:VEVENT\r\nBEGIN:VEVENT\r\nUID:injected";
    const l = (await alice.post("/api/v1/lists", { name: "L;END:VCALENDAR, \\" })).body.id;
    await task(alice, { title: `${"é".repeat(60)} ${evil}`, due_at: "2026-12-01", description: evil, list_id: l });
    const f = await newFeed(alice, { scope: "list", list_id: l, include: ["tasks"] });
    const { items, cal } = await fetchFeed(f.url);
    expect(items.length).toBe(1);
    expect(cal!.getFirstPropertyValue("x-wr-calname")).toBe("L;END:VCALENDAR, \\");
    expect(String(items[0]!.getFirstPropertyValue("description"))).toContain("UID:injected");
  });
});
