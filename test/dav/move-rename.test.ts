// MOVE under another name (RFC 4918 §9.9), within a collection or into another one, through the
// whole stack: the task keeps its id and UID, its href becomes the destination's name, the old
// href 404s, and sync-collection tells each collection's clients (a tombstone under the old name,
// the new name as changed).
import { afterEach, beforeEach, expect, test } from "bun:test";
import { dump, makeTestApp, setupAdmin, signedInUser, type TestApp, type TestClient } from "../helpers/app";
import { DavClient, QUERY_VTODO, SYNC, davClientFor, responseHrefs, textOf, vtodo } from "./helpers";
import { pruneTombstones } from "../../src/features/dav/dav.repo";

const V = "/api/v1";
let app: TestApp;
let web: TestClient;
let dav: DavClient;
let list: { id: string };
let other: { id: string };
let coll: string;
let ocoll: string;

beforeEach(async () => {
  app = makeTestApp();
  web = await setupAdmin(app);
  dav = await davClientFor(app, web, "owner");
  list = (await web.post(`${V}/lists`, { name: "Home" })).body;
  other = (await web.post(`${V}/lists`, { name: "Work" })).body;
  coll = `/dav/calendars/owner/${list.id}/`;
  ocoll = `/dav/calendars/owner/${other.id}/`;
});
afterEach(() => app.close());

async function unchanged<T>(run: () => Promise<T>): Promise<T> {
  const ignore = ["audit_logs", "sessions", "__drizzle_migrations", "api_tokens", "login_throttle"];
  const before = dump(app.db, ignore);
  const r = await run();
  expect(dump(app.db, ignore)).toEqual(before);
  return r;
}

const token = (c: string) => dav.propfind(c, "<d:sync-token/>").then((r) => textOf(r.text, "d:sync-token")!);
const move = (from: string, to: string, h: Record<string, string> = {}, client = dav) => client.request("MOVE", from, undefined, { destination: to, ...h });

/** What a sync from `tok` tells: the hrefs answered 200 and those answered 404. */
async function syncFrom(c: string, tok: string): Promise<{ changed: string[]; removed: string[] }> {
  const r = await dav.report(c, SYNC(tok));
  expect(r.status).toBe(207);
  const removed = [...r.text.matchAll(/<d:response><d:href>([^<]*)<\/d:href><d:status>HTTP\/1.1 404 Not Found<\/d:status>/g)].map((m) => m[1]!.slice(c.length));
  const changed = responseHrefs(r.text)
    .map((h) => h.slice(c.length))
    .filter((h) => !removed.includes(h));
  return { changed: changed.sort(), removed: removed.sort() };
}

test("rename within a collection: same task and UID under the new href; the old href 404s; sync: the old name a tombstone, the new one changed", async () => {
  expect((await dav.put(`${coll}a.ics`, vtodo("uid-a", ["SUMMARY:a", "X-ODD;P=1:kept"]))).status).toBe(201);
  const [task] = (await web.get(`${V}/tasks?list_id=${list.id}`)).body.items as { id: string }[];
  const t0 = await token(coll);
  const mv = await move(`${coll}a.ics`, `https://tasks.example.org${coll}b.ics`);
  expect(mv.status).toBe(201);
  expect(mv.headers.get("location")).toBe(`${coll}b.ics`);
  expect((await dav.request("GET", `${coll}a.ics`)).status).toBe(404);
  const got = await dav.request("GET", `${coll}b.ics`);
  expect(got.status).toBe(200);
  expect(got.text).toContain("UID:uid-a");
  expect(got.text).toContain("X-ODD;P=1:kept");
  const items = (await web.get(`${V}/tasks?list_id=${list.id}`)).body.items as { id: string }[];
  expect(items.map((t) => t.id)).toEqual([task!.id]);
  expect(await syncFrom(coll, t0)).toEqual({ changed: ["b.ics"], removed: ["a.ics"] });
  // A full listing and a fresh sync know the new name only.
  expect(responseHrefs((await dav.report(coll, QUERY_VTODO())).text)).toEqual([`${coll}b.ics`]);
  expect(await syncFrom(coll, "")).toEqual({ changed: ["b.ics"], removed: [] });
  // The task is edited at its new href; its UID cannot come back under the old one.
  expect((await dav.put(`${coll}b.ics`, vtodo("uid-a", ["SUMMARY:a2"]), { "if-match": got.headers.get("etag")! })).status).toBe(204);
  expect((await web.get(`${V}/tasks/${task!.id}`)).body.title).toBe("a2");
  const again = await dav.put(`${coll}a.ics`, vtodo("uid-a", ["SUMMARY:a"]));
  expect(again.status).toBe(403);
  expect(again.text).toContain(`<d:href>${coll}b.ics</d:href>`);
});

test("move and rename into another collection: the source's clients get the old name as a tombstone, the target's the new name; an earlier list's tombstone keeps the name its clients knew", async () => {
  const third = (await web.post(`${V}/lists`, { name: "Later" })).body as { id: string };
  const tcoll = `/dav/calendars/owner/${third.id}/`;
  expect((await dav.put(`${coll}a.ics`, vtodo("uid-a", ["SUMMARY:a"]))).status).toBe(201);
  const [s0, o0, t0] = [await token(coll), await token(ocoll), await token(tcoll)];
  expect((await move(`${coll}a.ics`, `${ocoll}c.ics`)).status).toBe(201);
  expect((await dav.request("GET", `${coll}a.ics`)).status).toBe(404);
  expect((await dav.request("GET", `${ocoll}a.ics`)).status).toBe(404);
  expect((await dav.request("GET", `${ocoll}c.ics`)).text).toContain("UID:uid-a");
  expect(await syncFrom(coll, s0)).toEqual({ changed: [], removed: ["a.ics"] });
  expect(await syncFrom(ocoll, o0)).toEqual({ changed: ["c.ics"], removed: [] });
  // On again, renamed: the first list still says a.ics is gone, the second c.ics, the third has d.ics.
  expect((await move(`${ocoll}c.ics`, `${tcoll}d.ics`)).status).toBe(201);
  expect(await syncFrom(coll, s0)).toEqual({ changed: [], removed: ["a.ics"] });
  expect(await syncFrom(ocoll, o0)).toEqual({ changed: [], removed: ["c.ics"] });
  expect(await syncFrom(tcoll, t0)).toEqual({ changed: ["d.ics"], removed: [] });
  expect((await web.get(`${V}/tasks?list_id=${third.id}`)).body.items.map((t: { title: string }) => t.title)).toEqual(["a"]);
});

test("a task made in the web app (default name <id>.ics) renamed: the default href 404s afterwards; renamed back, its old name is a member again, never also a tombstone", async () => {
  const t = (await web.post(`${V}/tasks`, { title: "web", list_id: list.id })).body as { id: string };
  const t0 = await token(coll);
  expect((await move(`${coll}${t.id}.ics`, `${coll}nice.ics`)).status).toBe(201);
  expect((await dav.request("GET", `${coll}${t.id}.ics`)).status).toBe(404);
  expect((await dav.request("GET", `${coll}nice.ics`)).text).toContain(`UID:${t.id}`);
  expect(await syncFrom(coll, t0)).toEqual({ changed: ["nice.ics"], removed: [`${t.id}.ics`] });
  const t1 = await token(coll);
  expect((await move(`${coll}nice.ics`, `${coll}${t.id}.ics`)).status).toBe(201);
  expect(await syncFrom(coll, t0)).toEqual({ changed: [`${t.id}.ics`], removed: ["nice.ics"] });
  expect(await syncFrom(coll, t1)).toEqual({ changed: [`${t.id}.ics`], removed: ["nice.ics"] });
});

test("Overwrite: F onto another resource's name is 412 and changes nothing; Overwrite: T replaces it (the occupant goes to the trash, as a DELETE would): 204, and sync answers the name as the moved task's", async () => {
  expect((await dav.put(`${coll}a.ics`, vtodo("uid-a", ["SUMMARY:a"]))).status).toBe(201);
  expect((await dav.put(`${coll}b.ics`, vtodo("uid-b", ["SUMMARY:b"]))).status).toBe(201);
  expect((await dav.put(`${ocoll}x.ics`, vtodo("uid-x", ["SUMMARY:x"]))).status).toBe(201);
  await unchanged(async () => {
    expect((await move(`${coll}a.ics`, `${coll}b.ics`, { overwrite: "F" })).status).toBe(412);
    expect((await move(`${coll}a.ics`, `${ocoll}x.ics`, { overwrite: "F" })).status).toBe(412);
  });
  const t0 = await token(coll);
  expect((await move(`${coll}a.ics`, `${coll}b.ics`, { overwrite: "T" })).status).toBe(204);
  expect((await dav.request("GET", `${coll}b.ics`)).text).toContain("UID:uid-a");
  expect((await dav.request("GET", `${coll}a.ics`)).status).toBe(404);
  expect((await web.get(`${V}/tasks?list_id=${list.id}`)).body.items.map((t: { title: string }) => t.title)).toEqual(["a"]);
  expect((await web.get(`${V}/trash`)).body.items.map((t: { title: string }) => t.title)).toEqual(["b"]);
  expect(await syncFrom(coll, t0)).toEqual({ changed: ["b.ics"], removed: ["a.ics"] });
  // Across collections with the default Overwrite: x is replaced by the moved task.
  const o0 = await token(ocoll);
  expect((await move(`${coll}b.ics`, `${ocoll}x.ics`)).status).toBe(204);
  expect((await dav.request("GET", `${ocoll}x.ics`)).text).toContain("UID:uid-a");
  expect(await syncFrom(ocoll, o0)).toEqual({ changed: ["x.ics"], removed: [] });
  expect(await syncFrom(coll, t0)).toEqual({ changed: [], removed: ["a.ics", "b.ics"] });
});

test("refusals under another name: a viewer's collection as the destination 403, another user's 403, outside /dav 403 (never a 5xx), the same href 403, a missing collection 409; nothing changes", async () => {
  expect((await dav.put(`${coll}a.ics`, vtodo("uid-a", ["SUMMARY:a"]))).status).toBe(201);
  const bobWeb = await signedInUser(app, web, "bob");
  const bob = await davClientFor(app, bobWeb, "bob");
  const bobList = (await bobWeb.post(`${V}/lists`, { name: "Bob's" })).body as { id: string };
  const inv = (await web.post(`${V}/lists/${list.id}/invitations`, { username: "bob", role: "viewer" })).body;
  expect((await bobWeb.post(`${V}/invitations/${inv.id}/accept`)).status).toBe(200);
  expect((await bob.put(`/dav/calendars/bob/${bobList.id}/mine.ics`, vtodo("uid-bob", ["SUMMARY:bob's"]))).status).toBe(201);
  await unchanged(async () => {
    // Bob's own task into the list he only views, under another name; and renaming inside it.
    expect((await move(`/dav/calendars/bob/${bobList.id}/mine.ics`, `/dav/calendars/bob/${list.id}/renamed.ics`, {}, bob)).status).toBe(403);
    expect((await move(`/dav/calendars/bob/${list.id}/a.ics`, `/dav/calendars/bob/${list.id}/renamed.ics`, {}, bob)).status).toBe(403);
    expect((await move(`${coll}a.ics`, `/dav/calendars/bob/${bobList.id}/renamed.ics`)).status).toBe(403);
    expect((await move(`${coll}a.ics`, "https://elsewhere.example/remote.php/dav/renamed.ics")).status).toBe(403);
    expect((await move(`${coll}a.ics`, `${coll}a.ics`)).status).toBe(403);
    expect((await move(`${coll}a.ics`, `/dav/calendars/owner/no-such-list/renamed.ics`)).status).toBe(409);
    expect((await move(`${coll}a.ics`, `${coll}renamed.ics`, { "if-match": '"0-0"' })).status).toBe(412);
  });
});

test("a name deleted and then used again by a new task: a sync from before answers it once, as the new member (not also 404)", async () => {
  expect((await dav.put(`${coll}a.ics`, vtodo("uid-a", ["SUMMARY:a"]))).status).toBe(201);
  const t0 = await token(coll);
  expect((await dav.request("DELETE", `${coll}a.ics`)).status).toBe(204);
  expect((await dav.put(`${coll}a.ics`, vtodo("uid-a2", ["SUMMARY:a again"]))).status).toBe(201);
  expect(await syncFrom(coll, t0)).toEqual({ changed: ["a.ics"], removed: [] });
});

test("the old name's tombstone is pruned with the others after the retention: a token from before it then answers valid-sync-token; the renamed task stays", async () => {
  expect((await dav.put(`${coll}a.ics`, vtodo("uid-a", ["SUMMARY:a"]))).status).toBe(201);
  const t0 = await token(coll);
  expect((await move(`${coll}a.ics`, `${coll}b.ics`)).status).toBe(201);
  const aliases = () => app.db.sqlite.query<{ n: number }, []>("SELECT count(*) AS n FROM dav_objects WHERE task_id LIKE 'renamed~%'").get()!.n;
  expect(aliases()).toBe(1);
  expect(pruneTombstones(app.db, Math.floor(Date.now() / 1000) - 60)).toBe(0);
  expect(pruneTombstones(app.db, Math.floor(Date.now() / 1000) + 60)).toBe(1);
  expect(aliases()).toBe(0);
  const stale = await dav.report(coll, SYNC(t0));
  expect(stale.status).toBe(403);
  expect(stale.text).toContain("valid-sync-token");
  expect(await syncFrom(coll, "")).toEqual({ changed: ["b.ics"], removed: [] });
  expect((await dav.request("GET", `${coll}b.ics`)).text).toContain("UID:uid-a");
});
