// A notification's "Done" link on a shared task (issues 15 and 19): it completes the task as its
// member would in the app. An editor's link completes it (completed_by is the editor); a viewer's is
// refused with 403 before the link is spent, and changes nothing; the viewer's snooze still works
// (their reminder is their own).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { FixedClock, makeTestApp, rejected as rejectedIn, setupAdmin, signedInUser, type TestClient, type TestResponse } from "../helpers/app";
import { Receiver } from "../reminders/helpers";
import { mkList, mkTask, uname } from "../helpers/tasks";
import { meOf, share } from "./helpers";

const clock = new FixedClock(new Date("2026-11-26T10:00:00.000Z"));
const app = makeTestApp({ clock, config: { sessionIdleSeconds: 50 * 365 * 86400, sessionAbsoluteSeconds: 50 * 365 * 86400 } });
app.handle.channels.publicUrl = "http://localhost";
const rejected = (f: () => Promise<TestResponse>, status: number, code: string) => rejectedIn(app, f, status, code);
const rx = new Receiver();
let owner: TestClient;
let editor: TestClient;
let viewer: TestClient;
let list: string;

/** A webhook channel of the member's own, posting to a path of theirs on the receiver. */
async function hookFor(c: TestClient, path: string): Promise<void> {
  const r = await c.post("/api/v1/notification-channels", { type: "webhook", name: "Hook", config: { url: `${rx.url}${path}` } });
  expect(r.status).toBe(201);
}
const lastTo = (path: string) => {
  const g = rx.got.filter((x) => x.path === path).at(-1);
  if (!g) throw new Error(`nothing posted to ${path}`);
  return JSON.parse(g.body) as { target: { id: string }; actions: { done: string; snooze: string } };
};

beforeAll(async () => {
  owner = await setupAdmin(app, { timezone: "UTC" });
  editor = await signedInUser(app, owner, uname("ed"), { timezone: "UTC" });
  viewer = await signedInUser(app, owner, uname("vi"), { timezone: "UTC" });
  list = await mkList(owner, "Household");
  await share(owner, editor, list, "editor");
  await share(owner, viewer, list, "viewer");
  await hookFor(editor, "/editor");
  await hookFor(viewer, "/viewer");
});
afterAll(() => {
  rx.stop();
  app.close();
});

describe("Done and Snooze links on a shared task", () => {
  test("an editor's Done link completes the shared task, recorded as completed by the editor", async () => {
    const t = await mkTask(owner, { title: "Buy milk", list_id: list, due_at: "2026-11-26T12:00:00Z" });
    expect((await editor.post(`/api/v1/tasks/${t.id}/reminders`, { kind: "at", at: "2026-11-26T10:05:00Z" })).status).toBe(201);
    clock.set("2026-11-26T10:05:00.000Z");
    await app.handle.scheduler.runDue();
    const body = lastTo("/editor");
    expect(body.target.id).toBe(t.id);
    const ok = await app.client().post(new URL(body.actions.done).pathname);
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ status: "done", snoozed_until: null });
    const seen = await owner.get(`/api/v1/tasks/${t.id}`);
    expect(seen.body.completed).toBe(true);
    expect(seen.body.completed_by).toMatchObject({ id: (await meOf(editor)).id });
  });

  test("a viewer's Done link is 403 and leaves the task and the link as they were; the viewer's Snooze works", async () => {
    const t = await mkTask(owner, { title: "Water plants", list_id: list, due_at: "2026-11-26T13:00:00Z" });
    const r = await viewer.post(`/api/v1/tasks/${t.id}/reminders`, { kind: "at", at: "2026-11-26T10:10:00Z" });
    expect(r.status).toBe(201);
    clock.set("2026-11-26T10:10:00.000Z");
    await app.handle.scheduler.runDue();
    const body = lastTo("/viewer");
    expect(body.target.id).toBe(t.id);
    const done = new URL(body.actions.done).pathname;
    const anon = app.client();
    // rejected() also checks that nothing in the database changed.
    await rejected(() => anon.post(done), 403, "forbidden");
    // Not spent: the same answer again, not 409 token_consumed.
    await rejected(() => anon.post(done), 403, "forbidden");
    expect((await owner.get(`/api/v1/tasks/${t.id}`)).body.completed).toBe(false);
    const s = await anon.post(new URL(body.actions.snooze).pathname);
    expect(s.body).toEqual({ status: "snoozed", snoozed_until: "2026-11-26T10:20:00.000Z" });
    expect((await viewer.get(`/api/v1/tasks/${t.id}/reminders`)).body.items[0].next_fire_at).toBe("2026-11-26T10:20:00.000Z");
  });
});
