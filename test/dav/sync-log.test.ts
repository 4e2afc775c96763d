// The sync log behind getctag / sync-token / ETags (src/core/schema/dav.ts, migration 0016_dav):
// every change to what a member's iCalendar is built from, made through any path of the JSON API,
// moves the list's sequence; a task that leaves a list leaves a tombstone there.
import { afterEach, beforeEach, expect, test } from "bun:test";
import { makeTestApp, setupAdmin, signedInUser, type TestApp, type TestClient } from "../helpers/app";
import { changedSince, collectionSeq, floorOf, memberSeqs, pruneTombstones } from "../../src/features/dav/dav.repo";

const V = "/api/v1";
let app: TestApp;
let c: TestClient;
let listA: string;
let listB: string;

beforeEach(async () => {
  app = makeTestApp();
  c = await setupAdmin(app);
  listA = (await c.post(`${V}/lists`, { name: "A" })).body.id;
  listB = (await c.post(`${V}/lists`, { name: "B" })).body.id;
});
afterEach(() => app.close());

const seq = (list: string) => collectionSeq(app.db, list);

/** Runs a change and asserts it moved the list's tag (and returns the new value). */
async function moves(list: string, run: () => Promise<{ status: number; text: string }>, ok: number[] = [200, 201, 204]): Promise<number> {
  const before = seq(list);
  const r = await run();
  if (!ok.includes(r.status)) throw new Error(`${r.status} ${r.text}`);
  const after = seq(list);
  expect(after).toBeGreaterThan(before);
  return after;
}

test("every kind of task change through the API moves the list's tag and the task's etag seq", async () => {
  let t = (await c.post(`${V}/tasks`, { title: "one", list_id: listA })).body;
  expect(seq(listA)).toBeGreaterThan(0);
  const etag0 = memberSeqs(app.db, listA, [t.id]).get(t.id)!;
  await moves(listA, () => c.patch(`${V}/tasks/${t.id}`, { version: t.version, title: "renamed" }));
  expect(memberSeqs(app.db, listA, [t.id]).get(t.id)!).toBeGreaterThan(etag0);
  t = (await c.get(`${V}/tasks/${t.id}`)).body;
  const tag = (await c.post(`${V}/tags`, { name: "home", color: "#111111" })).body;
  await moves(listA, () => c.patch(`${V}/tasks/${t.id}`, { version: t.version, tag_ids: [tag.id] }));
  // Renaming a tag changes CATEGORIES of every task carrying it.
  await moves(listA, () => c.patch(`${V}/tags/${tag.id}`, { name: "house" }));
  await moves(listA, () => c.post(`${V}/tasks/batch`, { task_ids: [t.id], priority: 3 }));
  t = (await c.get(`${V}/tasks/${t.id}`)).body;
  await moves(listA, () => c.patch(`${V}/tasks/${t.id}`, { version: t.version, due_at: "2026-12-01T09:00:00Z" }));
  await moves(listA, () => c.post(`${V}/tasks/${t.id}/reminders`, { kind: "before_due", minutes_before: 30 }));
  await moves(listA, () => c.post(`${V}/recurrences`, { task_id: t.id, kind: "rrule", rrule: "FREQ=DAILY" }));
  // Completing an occurrence of a repeating task advances it (a server-side change).
  await moves(listA, () => c.post(`${V}/tasks/batch`, { task_ids: [t.id], completed: true }));
  await moves(listA, () => c.post(`${V}/tasks/batch`, { task_ids: [t.id], completed: false }));
});

test("trash, restore, purge and moves leave tombstones in the list the task left", async () => {
  const t = (await c.post(`${V}/tasks`, { title: "x", list_id: listA })).body;
  const s1 = seq(listA);
  await moves(listA, () => c.delete(`${V}/tasks/${t.id}`));
  expect(changedSince(app.db, listA, s1).map((r) => r.task_id)).toEqual([t.id]);
  await moves(listA, () => c.post(`${V}/tasks/${t.id}/restore`));
  const s2 = seq(listA);
  const b2 = seq(listB);
  const cur = (await c.get(`${V}/tasks/${t.id}`)).body;
  await moves(listA, () => c.patch(`${V}/tasks/${t.id}`, { version: cur.version, list_id: listB }));
  expect(seq(listB)).toBeGreaterThan(b2);
  expect(changedSince(app.db, listA, s2).map((r) => r.task_id)).toEqual([t.id]);
  await moves(listB, () => c.delete(`${V}/tasks/${t.id}`));
  await moves(listB, () => c.delete(`${V}/trash/${t.id}`));
});

test("sharing: a member joining, changing role or leaving moves the list's tag", async () => {
  const bob = await signedInUser(app, c, "bob");
  const i = (await c.post(`${V}/lists/${listA}/invitations`, { username: "bob", role: "viewer" })).body;
  await moves(listA, () => bob.post(`${V}/invitations/${i.id}/accept`));
  const bobId = (await bob.get(`${V}/me`)).body.id;
  await moves(listA, () => c.patch(`${V}/lists/${listA}/members/${bobId}`, { role: "editor" }));
  await moves(listA, () => c.delete(`${V}/lists/${listA}/members/${bobId}`));
  await moves(listA, () => c.patch(`${V}/lists/${listA}`, { name: "A2" }));
});

test("tombstones older than the retention are pruned and raise the list's floor; live members are kept", async () => {
  const gone = (await c.post(`${V}/tasks`, { title: "gone", list_id: listA })).body;
  const kept = (await c.post(`${V}/tasks`, { title: "kept", list_id: listA })).body;
  await c.delete(`${V}/tasks/${gone.id}`);
  const tagBefore = seq(listA);
  // Nothing is old enough yet.
  expect(pruneTombstones(app.db, Math.floor(Date.now() / 1000) - 60)).toBe(0);
  expect(floorOf(app.db, listA)).toBe(0);
  const n = pruneTombstones(app.db, Math.floor(Date.now() / 1000) + 60);
  expect(n).toBe(1);
  expect(floorOf(app.db, listA)).toBeGreaterThan(0);
  expect(memberSeqs(app.db, listA, [kept.id]).has(kept.id)).toBe(true);
  expect(seq(listA)).toBeGreaterThanOrEqual(tagBefore);
});
