// sharing.md "Changes arrive without reloading": GET /events through the app's real fetch
// handler; core/events.ts's bounds on a hub of its own.
import { afterAll, describe, expect, test } from "bun:test";
import { makeTestApp, setupAdmin, signedInUser } from "../helpers/app";
import { FixedClock } from "../../src/core/time";
import { EventHub, DEFAULT_EVENT_LIMITS } from "../../src/core/events";
import { mkList, mkTask, uname } from "../helpers/tasks";
import { meOf, share } from "./helpers";
import { openEvents, typed } from "./sse";

const clock = new FixedClock(new Date("2026-11-20T10:00:00.000Z"));
const app = makeTestApp({ clock });
const admin = await setupAdmin(app);
afterAll(() => app.close());

describe("GET /events", () => {
  test("a member's change reaches every member's stream at once, never a stranger's", async () => {
    const owner = await signedInUser(app, admin, uname());
    const editor = await signedInUser(app, admin, uname());
    const viewer = await signedInUser(app, admin, uname());
    const stranger = await signedInUser(app, admin, uname());
    const list = await mkList(owner, "Shared");
    await share(owner, editor, list, "editor");
    await share(owner, viewer, list, "viewer");
    const [so, sv, ss] = [await openEvents(app, owner), await openEvents(app, viewer), await openEvents(app, stranger)];
    expect(so.status).toBe(200);
    expect(so.headers.get("content-type")).toContain("text/event-stream");
    expect(so.headers.get("x-accel-buffering")).toBe("no");
    const t = await mkTask(editor, { title: "milk", list_id: list });
    const want = { type: "task.changed", id: t.id, list_id: list, version: 1 };
    expect(typed(await so.until((e) => e.length >= 1))).toEqual([want]);
    expect(typed(await sv.until((e) => e.length >= 1))).toEqual([want]);
    await editor.patch(`/api/v1/tasks/${t.id}`, { version: 1, completed: true });
    await editor.delete(`/api/v1/tasks/${t.id}`);
    expect(typed(await sv.until((e) => e.length >= 3)).slice(1)).toEqual([
      { type: "task.changed", id: t.id, list_id: list, version: 2 },
      { type: "task.deleted", id: t.id, list_id: list, version: 3 },
    ]);
    // The stranger hears only of their own things.
    const own = await mkTask(stranger, { title: "mine" });
    expect(typed(await ss.until((e) => e.length >= 1))).toEqual([{ type: "task.changed", id: own.id, list_id: own.list_id, version: 1 }]);
    expect(so.events.some((e) => e.data.includes(own.id))).toBe(false);
    for (const s of [so, sv, ss]) s.close();
  });

  test("Last-Event-ID within 5 minutes replays what was missed; older, unknown or foreign ids get resync", async () => {
    const owner = await signedInUser(app, admin, uname());
    const list = await mkList(owner, "L");
    const s1 = await openEvents(app, owner);
    const a = await mkTask(owner, { title: "a", list_id: list });
    const first = (await s1.until((e) => e.length >= 1))[0]!;
    s1.close();
    const b = await mkTask(owner, { title: "b", list_id: list });
    const c = await mkTask(owner, { title: "c", list_id: list });
    const s2 = await openEvents(app, owner, first.id!);
    expect(typed(await s2.until((e) => e.length >= 2)).map((x) => (x as { id: string }).id)).toEqual([b.id, c.id]);
    expect(a.id).toBe((JSON.parse(first.data) as { id: string }).id);
    s2.close();
    const bad = await openEvents(app, owner, "nonsense");
    expect((await bad.until((e) => e.length >= 1)).map((e) => e.event)).toEqual(["resync"]);
    bad.close();
    clock.advance(5 * 60 * 1000 + 1000);
    const late = await openEvents(app, owner, first.id!);
    expect((await late.until((e) => e.length >= 1)).map((e) => e.event)).toEqual(["resync"]);
    late.close();
  });

  test("removal closes the member's streams after membership.changed; a replay skips the list they left", async () => {
    const owner = await signedInUser(app, admin, uname());
    const bob = await signedInUser(app, admin, uname());
    const b = await meOf(bob);
    const list = await mkList(owner, "L");
    await share(owner, bob, list, "editor");
    const s = await openEvents(app, bob);
    await mkTask(owner, { title: "seen", list_id: list });
    const seen = (await s.until((e) => e.length >= 1))[0]!;
    await mkTask(owner, { title: "while away", list_id: list });
    await s.until((e) => e.length >= 2);
    s.close();
    await mkTask(owner, { title: "missed", list_id: list });
    const live = await openEvents(app, bob);
    expect((await owner.delete(`/api/v1/lists/${list}/members/${b.id}`)).status).toBe(204);
    const evs = await live.until(() => live.done);
    expect(live.done).toBe(true);
    expect(typed(evs)).toEqual([{ type: "membership.changed", id: list, list_id: list, version: null }]);
    // Resuming from before the removal: the list's events are no longer his to see.
    const again = await openEvents(app, bob, seen.id!);
    const replay = typed(await again.settle());
    expect(replay).toEqual([{ type: "membership.changed", id: list, list_id: list, version: null }]);
    again.close();
  });

  test("an invitation sent, withdrawn or declined reaches the owner's and the invitee's streams at once, not the list's members'", async () => {
    const owner = await signedInUser(app, admin, uname());
    const member = await signedInUser(app, admin, uname());
    const invitee = await signedInUser(app, admin, uname());
    const list = await mkList(owner, "Groceries");
    await share(owner, member, list, "editor");
    const [so, sm, si] = [await openEvents(app, owner), await openEvents(app, member), await openEvents(app, invitee)];
    const ev = { type: "membership.changed", id: list, list_id: list, version: null };
    const username = (await meOf(invitee)).username;
    const sent = await owner.post(`/api/v1/lists/${list}/invitations`, { username, role: "viewer" });
    expect(sent.status).toBe(201);
    expect(typed(await si.until((e) => e.length >= 1))).toEqual([ev]);
    expect(typed(await so.until((e) => e.length >= 1))).toEqual([ev]);
    expect((await owner.delete(`/api/v1/invitations/${sent.body.id}`)).status).toBe(204);
    expect(typed(await si.until((e) => e.length >= 2))).toEqual([ev, ev]);
    const again = await owner.post(`/api/v1/lists/${list}/invitations`, { username, role: "viewer" });
    expect((await invitee.post(`/api/v1/invitations/${again.body.id}/decline`)).status).toBe(204);
    expect(typed(await so.until((e) => e.length >= 4))).toEqual([ev, ev, ev, ev]);
    expect(typed(await si.until((e) => e.length >= 4))).toEqual([ev, ev, ev, ev]);
    // The member's stream heard nothing of it (a task change afterwards is the first thing it gets).
    const t = await mkTask(owner, { title: "after", list_id: list });
    expect(typed(await sm.until((e) => e.length >= 1))).toEqual([{ type: "task.changed", id: t.id, list_id: list, version: 1 }]);
    // A replay from before the invitation gives the invitee what they missed.
    const first = si.events[0]!;
    si.close();
    const resumed = await openEvents(app, invitee, first.id!);
    expect(typed(await resumed.settle())).toEqual([ev, ev, ev]);
    for (const s of [so, sm, resumed]) s.close();
  });

  test("needs a session; at most 20 streams per user (429)", async () => {
    const anon = await openEvents(app, app.client());
    expect(anon.status).toBe(401);
    const u = await signedInUser(app, admin, uname());
    const open = [];
    for (let i = 0; i < DEFAULT_EVENT_LIMITS.maxStreamsPerUser; i++) open.push(await openEvents(app, u));
    expect(open.every((s) => s.status === 200)).toBe(true);
    expect((await openEvents(app, u)).status).toBe(429);
    for (const s of open) s.close();
    await new Promise((r) => setTimeout(r, 50));
    const after = await openEvents(app, u);
    expect(after.status).toBe(200);
    after.close();
  });
});

describe("core/events bounds", () => {
  test("a client that does not read gets resync and is let go; the log keeps only 5 minutes and logMax events", async () => {
    const c = new FixedClock(new Date("2026-11-20T10:00:00.000Z"));
    const hub = new EventHub(c, { ...DEFAULT_EVENT_LIMITS, streamQueueMax: 5, logMax: 50 });
    hub.configure({ audience: () => ["u"], canSee: () => true });
    const stream = hub.open("u", null);
    expect(hub.openStreams).toBe(1);
    for (let i = 0; i < 20; i++) hub.publish({ type: "task.changed", id: `t${i}`, list_id: "l", version: 1 });
    expect(hub.openStreams).toBe(0);
    const text = await new Response(stream).text();
    expect(text).toContain("event: resync");
    expect((text.match(/event: task.changed/g) ?? []).length).toBeLessThanOrEqual(7);
    // The replay log: at most logMax events, none older than 5 minutes.
    for (let i = 0; i < 100; i++) hub.publish({ type: "task.changed", id: `x${i}`, list_id: "l", version: 1 });
    const fresh = hub.open("u", `${hub.boot}-70`);
    const reader = fresh.getReader();
    const first = new TextDecoder().decode((await reader.read()).value) + new TextDecoder().decode((await reader.read()).value);
    expect(first).toContain(`id: ${hub.boot}-71`);
    await reader.cancel();
    const tooOld = hub.open("u", `${hub.boot}-10`);
    const r2 = tooOld.getReader();
    const t2 = new TextDecoder().decode((await r2.read()).value) + new TextDecoder().decode((await r2.read()).value);
    expect(t2).toContain("event: resync");
    await r2.cancel();
    c.advance(5 * 60 * 1000 + 1);
    hub.publish({ type: "task.changed", id: "y", list_id: "l", version: 1 });
    const r3 = hub.open("u", `${hub.boot}-115`).getReader();
    const t3 = new TextDecoder().decode((await r3.read()).value) + new TextDecoder().decode((await r3.read()).value);
    expect(t3).toContain("event: resync");
    await r3.cancel();
    hub.closeAll();
  });
});

describe("core/events replay log over many events", () => {
  /** What a stream opened with this Last-Event-ID sends at once (its replay, or a resync), as frames. */
  async function replayOf(hub: EventHub, lastEventId: string, frames: number): Promise<string[]> {
    const reader = hub.open("u", lastEventId).getReader();
    let text = "";
    // The opening comment, then one chunk per frame.
    for (let i = 0; i < frames + 1; i++) text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    return text.split("\n\n").filter((f) => f.startsWith("id: ") || f.startsWith("event: resync"));
  }

  test("after thousands of events (the log compacted several times) a replay is exactly the missed ones still kept, in order; older is resync", async () => {
    const hub = new EventHub(new FixedClock(new Date("2026-11-20T10:00:00.000Z")), { ...DEFAULT_EVENT_LIMITS, logMax: 50 });
    hub.configure({ audience: () => ["u"], canSee: () => true });
    for (let i = 1; i <= 5000; i++) hub.publish({ type: "task.changed", id: `t${i}`, list_id: "l", version: i });
    const got = await replayOf(hub, `${hub.boot}-4960`, 40);
    expect(got.map((f) => f.split("\n")[0])).toEqual(Array.from({ length: 40 }, (_, k) => `id: ${hub.boot}-${4961 + k}`));
    expect(got[39]).toContain('"id":"t5000"');
    // The last 50 are kept (4951..5000): 4950 is the last one a client may have and still resume.
    expect((await replayOf(hub, `${hub.boot}-4950`, 50)).length).toBe(50);
    expect(await replayOf(hub, `${hub.boot}-4949`, 1)).toEqual(["event: resync\ndata: {}"]);
    hub.closeAll();
  });

  test("publishAll asks who sees a list once per list, and each event reaches the stream", async () => {
    const hub = new EventHub(new FixedClock(new Date("2026-11-20T10:00:00.000Z")));
    const asked: string[] = [];
    hub.configure({ audience: (l) => (asked.push(l), ["u"]), canSee: () => true });
    hub.publishAll(Array.from({ length: 200 }, (_, i) => ({ type: "task.changed" as const, id: `t${i}`, list_id: i % 2 ? "a" : "b", version: 1 })));
    expect(asked.sort()).toEqual(["a", "b"]);
    expect((await replayOf(hub, `${hub.boot}-0`, 200)).length).toBe(200);
    hub.closeAll();
  });
});

test("heartbeats keep an idle stream open; the timer stops with the last stream", async () => {
  const hub = new EventHub(new FixedClock(new Date("2026-11-20T10:00:00.000Z")), { ...DEFAULT_EVENT_LIMITS, heartbeatMs: 20 });
  const reader = hub.open("u", null).getReader();
  await reader.read(); // the opening comment
  const beat = new TextDecoder().decode((await reader.read()).value);
  expect(beat).toBe(": heartbeat\n\n");
  await reader.cancel();
  expect(hub.openStreams).toBe(0);
});
