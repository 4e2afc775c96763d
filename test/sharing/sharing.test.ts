// sharing.md through HTTP: look-up, invitations (14-day expiry), members, roles, ownership
// transfer, leaving and removal; the access rule on every path (non-member 404, viewer 403,
// editor's owner-only acts 403), the shared trash, personal tags, per-member placement, audit.
import { afterAll, describe, expect, test } from "bun:test";
import { makeTestApp, setupAdmin, signedInUser, type TestClient } from "../helpers/app";
import { FixedClock } from "../../src/core/time";
import { mkList, mkTag, mkTask, rejected, uname } from "../helpers/tasks";
import { PNG, upload as rawUpload } from "../helpers/multipart";
import type { TestResponse } from "../helpers/app";
import { meOf, share } from "./helpers";

const clock = new FixedClock(new Date("2026-11-20T10:00:00.000Z"));
const app = makeTestApp({ clock });
const admin = await setupAdmin(app);
afterAll(() => app.close());

/** An upload answered like the JSON client's responses (so rejected() can check it). */
async function upload(...args: Parameters<typeof rawUpload>): Promise<TestResponse> {
  const r = await rawUpload(...args);
  return { status: r.status, headers: r.headers, body: r.json, text: new TextDecoder().decode(r.bytes) } as unknown as TestResponse;
}

const ids = (r: { body: { items: { id: string }[] } }) => r.body.items.map((x) => x.id);

async function trio(): Promise<{ owner: TestClient; editor: TestClient; viewer: TestClient; stranger: TestClient; list: string }> {
  const owner = await signedInUser(app, admin, uname("own"));
  const editor = await signedInUser(app, admin, uname("ed"));
  const viewer = await signedInUser(app, admin, uname("vi"));
  const stranger = await signedInUser(app, admin, uname("st"));
  const list = await mkList(owner, "Groceries");
  await share(owner, editor, list, "editor");
  await share(owner, viewer, list, "viewer");
  return { owner, editor, viewer, stranger, list };
}

describe("look-up", () => {
  test("exact, case-insensitive username only; 404 otherwise", async () => {
    const a = await signedInUser(app, admin, "Zelda" + uname());
    const me = await meOf(a);
    const r = await a.get(`/api/v1/users/lookup?username=${encodeURIComponent(me.username.toUpperCase())}`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ id: me.id, username: me.username, display_name: expect.any(String) });
    expect((await a.get(`/api/v1/users/lookup?username=${encodeURIComponent(me.username.slice(0, 4))}`)).status).toBe(404);
    expect((await a.get("/api/v1/users/lookup?username=")).status).toBe(422);
    expect((await app.client().get(`/api/v1/users/lookup?username=${me.username}`)).status).toBe(401);
  });
});

describe("invitations", () => {
  test("invite, inbox, accept: the list appears with role, owner and member_count", async () => {
    const owner = await signedInUser(app, admin, uname());
    const bob = await signedInUser(app, admin, uname());
    const o = await meOf(owner);
    const b = await meOf(bob);
    const list = await mkList(owner, "Trip", { color: "#112233" });
    const inv = await owner.post(`/api/v1/lists/${list}/invitations`, { username: b.username.toUpperCase(), role: "editor" });
    expect(inv.status).toBe(201);
    expect(inv.body).toMatchObject({ list_id: list, invitee: { id: b.id, username: b.username }, role: "editor", created_at: "2026-11-20T10:00:00.000Z", expires_at: "2026-12-04T10:00:00.000Z" });
    expect(ids(await owner.get(`/api/v1/lists/${list}/invitations`))).toEqual([inv.body.id]);
    const inbox = await bob.get("/api/v1/invitations");
    expect(inbox.body.items).toEqual([
      { id: inv.body.id, list: { id: list, name: "Trip", color: "#112233" }, from: { id: o.id, username: o.username, display_name: expect.any(String) }, role: "editor", created_at: "2026-11-20T10:00:00.000Z", expires_at: "2026-12-04T10:00:00.000Z" },
    ]);
    // Not listed before accepting.
    expect(ids(await bob.get("/api/v1/lists"))).not.toContain(list);
    expect((await bob.get(`/api/v1/lists/${list}`)).status).toBe(404);
    const acc = await bob.post(`/api/v1/invitations/${inv.body.id}/accept`);
    expect(acc.status).toBe(200);
    expect(acc.body).toMatchObject({ id: list, name: "Trip", role: "editor", owner: { id: o.id, username: o.username }, member_count: 2, folder_id: null, is_inbox: false });
    const mine = (await bob.get("/api/v1/lists")).body.items.find((l: { id: string }) => l.id === list);
    expect(mine).toEqual(acc.body);
    expect((await owner.get(`/api/v1/lists/${list}`)).body).toMatchObject({ role: "owner", member_count: 2 });
    expect((await bob.get("/api/v1/invitations")).body.items).toEqual([]);
    expect((await owner.get(`/api/v1/lists/${list}/invitations`)).body.items).toEqual([]);
    const members = await bob.get(`/api/v1/lists/${list}/members`);
    expect(members.body.items.map((m: { user: { id: string }; role: string }) => [m.user.id, m.role])).toEqual([
      [o.id, "owner"],
      [b.id, "editor"],
    ]);
    // Accepting twice: the invitation is gone.
    await rejected(app, () => bob.post(`/api/v1/invitations/${inv.body.id}/accept`), 404, "not_found");
  });

  test("422 for yourself, an unknown user, the inbox, an archived list; 409 when invited or a member; nothing changes", async () => {
    const owner = await signedInUser(app, admin, uname());
    const bob = await signedInUser(app, admin, uname());
    const o = await meOf(owner);
    const b = await meOf(bob);
    const list = await mkList(owner, "L");
    const inbox = (await owner.get("/api/v1/lists")).body.items[0].id;
    await rejected(app, () => owner.post(`/api/v1/lists/${list}/invitations`, { username: o.username, role: "editor" }), 422, "validation_failed");
    await rejected(app, () => owner.post(`/api/v1/lists/${list}/invitations`, { username: "nobody-" + uname(), role: "editor" }), 422, "validation_failed");
    await rejected(app, () => owner.post(`/api/v1/lists/${inbox}/invitations`, { username: b.username, role: "editor" }), 422, "validation_failed");
    await rejected(app, () => owner.post(`/api/v1/lists/${list}/invitations`, { username: b.username, role: "owner" }), 422, "validation_failed");
    await rejected(app, () => owner.post(`/api/v1/lists/${list}/invitations`, { username: b.username }), 422, "validation_failed");
    const archived = await mkList(owner, "old");
    expect((await owner.delete(`/api/v1/lists/${archived}`)).status).toBe(204);
    await rejected(app, () => owner.post(`/api/v1/lists/${archived}/invitations`, { username: b.username, role: "viewer" }), 422, "validation_failed");
    expect((await owner.post(`/api/v1/lists/${list}/invitations`, { username: b.username, role: "viewer" })).status).toBe(201);
    await rejected(app, () => owner.post(`/api/v1/lists/${list}/invitations`, { username: b.username, role: "editor" }), 409, "state_conflict");
    const inv = (await bob.get("/api/v1/invitations")).body.items[0].id;
    expect((await bob.post(`/api/v1/invitations/${inv}/accept`)).status).toBe(200);
    await rejected(app, () => owner.post(`/api/v1/lists/${list}/invitations`, { username: b.username, role: "editor" }), 409, "state_conflict");
  });

  test("only the owner invites and sees invitations: a member 403, a stranger 404", async () => {
    const { owner, editor, viewer, stranger, list } = await trio();
    const s = await meOf(stranger);
    await rejected(app, () => editor.post(`/api/v1/lists/${list}/invitations`, { username: s.username, role: "viewer" }), 403, "forbidden");
    await rejected(app, () => viewer.post(`/api/v1/lists/${list}/invitations`, { username: s.username, role: "viewer" }), 403, "forbidden");
    const ou = (await meOf(owner)).username;
    await rejected(app, () => stranger.post(`/api/v1/lists/${list}/invitations`, { username: ou, role: "viewer" }), 404, "not_found");
    expect((await editor.get(`/api/v1/lists/${list}/invitations`)).status).toBe(403);
    expect((await stranger.get(`/api/v1/lists/${list}/invitations`)).status).toBe(404);
    expect((await stranger.get(`/api/v1/lists/${list}/members`)).status).toBe(404);
  });

  test("decline and withdraw; only the invitee answers, only the owner withdraws", async () => {
    const owner = await signedInUser(app, admin, uname());
    const bob = await signedInUser(app, admin, uname());
    const eve = await signedInUser(app, admin, uname());
    const b = await meOf(bob);
    const list = await mkList(owner, "L");
    const inv = (await owner.post(`/api/v1/lists/${list}/invitations`, { username: b.username, role: "viewer" })).body.id;
    await rejected(app, () => eve.post(`/api/v1/invitations/${inv}/accept`), 404, "not_found");
    await rejected(app, () => eve.post(`/api/v1/invitations/${inv}/decline`), 404, "not_found");
    await rejected(app, () => owner.post(`/api/v1/invitations/${inv}/accept`), 404, "not_found");
    await rejected(app, () => bob.delete(`/api/v1/invitations/${inv}`), 404, "not_found");
    await rejected(app, () => eve.delete(`/api/v1/invitations/${inv}`), 404, "not_found");
    expect((await bob.post(`/api/v1/invitations/${inv}/decline`)).status).toBe(204);
    expect((await bob.get(`/api/v1/lists/${list}`)).status).toBe(404);
    // Invited again, then withdrawn.
    const inv2 = (await owner.post(`/api/v1/lists/${list}/invitations`, { username: b.username, role: "viewer" })).body.id;
    expect((await owner.delete(`/api/v1/invitations/${inv2}`)).status).toBe(204);
    expect((await bob.get("/api/v1/invitations")).body.items).toEqual([]);
    await rejected(app, () => bob.post(`/api/v1/invitations/${inv2}/accept`), 404, "not_found");
  });
});

describe("access on every path", () => {
  test("a non-member gets 404 for the list and everything in it", async () => {
    const { owner, stranger, list } = await trio();
    const t = await mkTask(owner, { title: "milk secret", list_id: list });
    const sub = await mkTask(owner, { title: "sub", parent_id: t.id });
    const rec = await owner.post("/api/v1/recurrences", { task_id: (await mkTask(owner, { title: "weekly", list_id: list, due_at: "2026-11-21" })).id, kind: "rrule", rrule: "FREQ=WEEKLY" });
    expect(rec.status).toBe(201);
    const att = await upload(app, owner, t.id, { filename: "a.png", type: "image/png", data: PNG });
    expect(att.status).toBe(201);
    const gone = await mkTask(owner, { title: "gone", list_id: list });
    await owner.delete(`/api/v1/tasks/${gone.id}`);
    for (const path of [`/api/v1/lists/${list}`, `/api/v1/tasks/${t.id}`, `/api/v1/tasks/${sub.id}`, `/api/v1/recurrences/${rec.body.id}`, `/api/v1/tasks/${t.id}/recurrence`, `/api/v1/tasks/${t.id}/attachments`, `/api/v1/attachments/${att.body.id}`, `/api/v1/lists/${list}/members`]) {
      const r = await stranger.get(path);
      expect([path, r.status]).toEqual([path, 404]);
    }
    await rejected(app, () => stranger.patch(`/api/v1/tasks/${t.id}`, { version: 1, title: "x" }), 404, "not_found");
    await rejected(app, () => stranger.delete(`/api/v1/tasks/${t.id}`), 404, "not_found");
    await rejected(app, () => stranger.post(`/api/v1/tasks/${gone.id}/restore`), 404, "not_found");
    await rejected(app, () => stranger.delete(`/api/v1/trash/${gone.id}`), 404, "not_found");
    await rejected(app, () => stranger.post("/api/v1/tasks", { title: "x", list_id: list }), 422, "invalid_reference");
    await rejected(app, () => stranger.post("/api/v1/tasks/batch", { task_ids: [t.id], completed: true }), 422, "invalid_reference");
    await rejected(app, () => stranger.delete(`/api/v1/attachments/${att.body.id}`), 404, "not_found");
    await rejected(app, () => stranger.patch(`/api/v1/lists/${list}`, { name: "x" }), 404, "not_found");
    const oid = (await meOf(owner)).id;
    await rejected(app, () => stranger.delete(`/api/v1/lists/${list}/members/${oid}`), 404, "not_found");
    expect((await stranger.get(`/api/v1/tasks?list_id=${list}`)).body.items).toEqual([]);
    expect((await stranger.get("/api/v1/tasks?q=secret")).body.items).toEqual([]);
    expect((await stranger.get("/api/v1/trash")).body.items).toEqual([]);
    expect(ids(await stranger.get("/api/v1/lists"))).not.toContain(list);
  });

  test("members see the list's tasks in GET /tasks, the list filter and search; created_by names the creator", async () => {
    const { owner, editor, viewer, list } = await trio();
    const o = await meOf(owner);
    const e = await meOf(editor);
    const own = await mkTask(viewer, { title: "viewer private" });
    const a = await mkTask(owner, { title: "apples", list_id: list });
    clock.advance(1000);
    const b = await mkTask(editor, { title: "bananas", list_id: list });
    clock.advance(1000);
    expect(b.created_by).toEqual({ id: e.id, username: e.username });
    const page = await viewer.get("/api/v1/tasks");
    expect(ids(page)).toEqual([b.id, a.id, own.id]);
    expect(page.body.items[1].created_by).toEqual({ id: o.id, username: o.username });
    expect(ids(await viewer.get(`/api/v1/tasks?list_id=${list}`))).toEqual([b.id, a.id]);
    expect(ids(await viewer.get("/api/v1/tasks?q=banana"))).toEqual([b.id]);
    expect(ids(await viewer.get("/api/v1/tasks?q=groceries"))).toEqual([b.id, a.id]);
    // Cursor pages across the owner's own rows and the shared list.
    const p1 = await viewer.get("/api/v1/tasks?limit=2");
    expect(ids(p1)).toEqual([b.id, a.id]);
    const p2 = await viewer.get(`/api/v1/tasks?limit=2&cursor=${p1.body.next_cursor}`);
    expect(ids(p2)).toEqual([own.id]);
    expect(p2.body.next_cursor).toBeNull();
    // The owner sees the editor's task in their own list, the editor's private task stays private.
    await mkTask(editor, { title: "editor private" });
    expect(ids(await owner.get("/api/v1/tasks"))).toEqual([b.id, a.id]);
  });

  test("pages merge the member's own tasks and several shared lists newest first, through every cursor", async () => {
    const owner = await signedInUser(app, admin, uname());
    const other = await signedInUser(app, admin, uname());
    const member = await signedInUser(app, admin, uname());
    const l1 = await mkList(owner, "one");
    const l2 = await mkList(other, "two");
    await share(owner, member, l1, "viewer");
    await share(other, member, l2, "editor");
    const made: string[] = [];
    for (let i = 0; i < 45; i++) {
      const c = [owner, other, member][i % 3 === 0 ? 0 : i % 5 === 0 ? 1 : 2]!;
      const list = c === owner ? l1 : c === other ? l2 : undefined;
      made.push((await mkTask(c, { title: `m${i}`, ...(list ? { list_id: list } : {}) })).id);
      clock.advance(i % 4 === 0 ? 0 : 1000);
    }
    const want = [...made].reverse();
    for (const limit of [1, 3, 7, 50]) {
      const got: string[] = [];
      let cursor: string | null = null;
      do {
        const r = await member.get(`/api/v1/tasks?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
        got.push(...ids(r));
        cursor = r.body.next_cursor;
      } while (cursor);
      // Several tasks share a created_at (the clock stood still): the keyset breaks ties by id.
      expect(got.length).toBe(45);
      expect(new Set(got)).toEqual(new Set(want));
      const rows = app.db.sqlite.query("SELECT id, created_at FROM tasks WHERE id IN (SELECT value FROM json_each(?))").all(JSON.stringify(got)) as { id: string; created_at: string }[];
      const at = new Map(rows.map((r) => [r.id, r.created_at]));
      const sorted = [...got].sort((a, b) => (at.get(b)! < at.get(a)! ? -1 : at.get(b)! > at.get(a)! ? 1 : b < a ? -1 : 1));
      expect({ limit, got }).toEqual({ limit, got: sorted });
    }
  });

  test("a viewer's writes are 403 forbidden and change nothing; reads work", async () => {
    const { owner, viewer, list } = await trio();
    const t = await mkTask(owner, { title: "t", list_id: list, due_at: "2026-11-25" });
    const rec = (await owner.post("/api/v1/recurrences", { task_id: t.id, kind: "rrule", rrule: "FREQ=DAILY" })).body;
    const att = (await upload(app, owner, t.id, { filename: "a.png", type: "image/png", data: PNG })).body;
    const mine = await mkList(viewer, "mine");
    expect((await viewer.get(`/api/v1/tasks/${t.id}`)).status).toBe(200);
    expect((await viewer.get(`/api/v1/recurrences/${rec.id}`)).status).toBe(200);
    expect((await viewer.get(`/api/v1/attachments/${att.id}`)).status).toBe(200);
    const v = (await viewer.get(`/api/v1/tasks/${t.id}`)).body.version;
    await rejected(app, () => viewer.post("/api/v1/tasks", { title: "x", list_id: list }), 403, "forbidden");
    await rejected(app, () => viewer.post("/api/v1/tasks", { title: "x", parent_id: t.id }), 403, "forbidden");
    await rejected(app, () => viewer.patch(`/api/v1/tasks/${t.id}`, { version: v, title: "x" }), 403, "forbidden");
    await rejected(app, () => viewer.patch(`/api/v1/tasks/${t.id}`, { version: v, completed: true }), 403, "forbidden");
    await rejected(app, () => viewer.patch(`/api/v1/tasks/${t.id}`, { version: v, list_id: mine }), 403, "forbidden");
    await rejected(app, () => viewer.delete(`/api/v1/tasks/${t.id}`), 403, "forbidden");
    await rejected(app, () => viewer.post("/api/v1/tasks/batch", { task_ids: [t.id], completed: true }), 403, "forbidden");
    await rejected(app, () => viewer.post("/api/v1/tasks/batch", { task_ids: [t.id], soft_delete: true }), 403, "forbidden");
    await rejected(app, () => viewer.patch(`/api/v1/recurrences/${rec.id}`, { rrule: "FREQ=WEEKLY" }), 403, "forbidden");
    await rejected(app, () => viewer.delete(`/api/v1/recurrences/${rec.id}`), 403, "forbidden");
    await rejected(app, () => viewer.post(`/api/v1/recurrences/${rec.id}/complete`), 403, "forbidden");
    await rejected(app, () => viewer.delete(`/api/v1/attachments/${att.id}`), 403, "forbidden");
    await rejected(app, () => upload(app, viewer, t.id, { filename: "b.png", type: "image/png", data: PNG }), 403, "forbidden");
    await rejected(app, () => viewer.patch(`/api/v1/lists/${list}`, { name: "x" }), 403, "forbidden");
    await rejected(app, () => viewer.delete(`/api/v1/lists/${list}`), 403, "forbidden");
    // Moving one of their own tasks into a list they only view.
    const own = await mkTask(viewer, { title: "own" });
    await rejected(app, () => viewer.patch(`/api/v1/tasks/${own.id}`, { version: 1, list_id: list }), 403, "forbidden");
  });

  test("an editor writes tasks, subtasks, recurrences and attachments, but not owner-only acts", async () => {
    const { owner, editor, list } = await trio();
    const e = await meOf(editor);
    const t = await mkTask(editor, { title: "t", list_id: list, due_at: "2026-11-25" });
    const sub = await mkTask(editor, { title: "s", parent_id: t.id });
    expect(sub.list_id).toBe(list);
    const done = await editor.patch(`/api/v1/tasks/${t.id}`, { version: 1, completed: true });
    expect(done.body.completed_by).toEqual({ id: e.id, username: e.username });
    expect((await editor.patch(`/api/v1/tasks/${t.id}`, { version: 2, completed: false })).body.completed_by).toBeNull();
    const rec = await editor.post("/api/v1/recurrences", { task_id: t.id, kind: "rrule", rrule: "FREQ=DAILY" });
    expect(rec.status).toBe(201);
    const c = await editor.post(`/api/v1/recurrences/${rec.body.id}/complete`);
    expect(c.status).toBe(200);
    expect((await owner.get(`/api/v1/tasks/${c.body.completed.id}`)).status).toBe(200);
    const att = await upload(app, editor, t.id, { filename: "a.png", type: "image/png", data: PNG });
    expect(att.status).toBe(201);
    // Attachments count towards the uploader's storage.
    expect((await editor.get("/api/v1/me")).body.attachment_bytes).toBe(PNG.byteLength);
    expect((await owner.get("/api/v1/me")).body.attachment_bytes).toBe(0);
    expect((await owner.delete(`/api/v1/attachments/${att.body.id}`)).status).toBe(204);
    await rejected(app, () => editor.patch(`/api/v1/lists/${list}`, { name: "renamed" }), 403, "forbidden");
    await rejected(app, () => editor.delete(`/api/v1/lists/${list}`), 403, "forbidden");
    await rejected(app, () => editor.post(`/api/v1/lists/${list}/restore`), 403, "forbidden");
    await rejected(app, () => editor.delete(`/api/v1/lists/${list}/purge`), 403, "forbidden");
  });

  test("the shared trash: editors and the owner see and restore a deleted task; only the owner purges; viewers never see it", async () => {
    const { owner, editor, viewer, list } = await trio();
    const t = await mkTask(owner, { title: "t", list_id: list });
    expect((await editor.delete(`/api/v1/tasks/${t.id}`)).status).toBe(204);
    expect(ids(await owner.get("/api/v1/trash"))).toEqual([t.id]);
    expect(ids(await editor.get("/api/v1/trash"))).toEqual([t.id]);
    expect(ids(await viewer.get("/api/v1/trash"))).toEqual([]);
    await rejected(app, () => viewer.post(`/api/v1/tasks/${t.id}/restore`), 403, "forbidden");
    await rejected(app, () => editor.delete(`/api/v1/trash/${t.id}`), 403, "forbidden");
    expect((await editor.post(`/api/v1/tasks/${t.id}/restore`)).status).toBe(200);
    await editor.delete(`/api/v1/tasks/${t.id}`);
    expect((await owner.delete(`/api/v1/trash/${t.id}`)).status).toBe(204);
    expect((await editor.get("/api/v1/trash")).body.items).toEqual([]);
  });

  test("archiving a shared list removes it from the members' views", async () => {
    const { owner, editor, list } = await trio();
    const t = await mkTask(owner, { title: "t", list_id: list });
    expect((await owner.delete(`/api/v1/lists/${list}`)).status).toBe(204);
    expect(ids(await editor.get("/api/v1/lists"))).not.toContain(list);
    expect(ids(await editor.get("/api/v1/lists?archived=true"))).not.toContain(list);
    expect((await editor.get(`/api/v1/lists/${list}`)).status).toBe(404);
    expect((await editor.get(`/api/v1/tasks/${t.id}`)).status).toBe(404);
    expect((await owner.post(`/api/v1/lists/${list}/restore`)).status).toBe(200);
    expect((await editor.get(`/api/v1/tasks/${t.id}`)).status).toBe(200);
  });

  test("an editor moves a task out into their own list: it becomes theirs and leaves the others' views", async () => {
    const { owner, editor, viewer, list } = await trio();
    const mine = await mkList(editor, "mine");
    const t = await mkTask(owner, { title: "t", list_id: list });
    await mkTask(owner, { title: "s", parent_id: t.id });
    const r = await editor.patch(`/api/v1/tasks/${t.id}`, { version: 1, list_id: mine });
    expect(r.status).toBe(200);
    expect(r.body.subtasks.map((s: { list_id: string }) => s.list_id)).toEqual([mine]);
    expect((await owner.get(`/api/v1/tasks/${t.id}`)).status).toBe(404);
    expect((await viewer.get(`/api/v1/tasks/${t.id}`)).status).toBe(404);
    expect(ids(await editor.get(`/api/v1/tasks?list_id=${mine}`))).toEqual([t.id]);
    // And back in by batch (the editor may write the shared list).
    expect((await editor.post("/api/v1/tasks/batch", { task_ids: [t.id], list_id: list })).status).toBe(200);
    expect((await owner.get(`/api/v1/tasks/${t.id}`)).body.subtasks.length).toBe(1);
  });
});

describe("personal tags and placement", () => {
  test("each member sees only their own tags on a shared task; replacing tags keeps the others'", async () => {
    const { owner, viewer, list } = await trio();
    const ot = await mkTag(owner, "urgent");
    const vt = await mkTag(viewer, "mine");
    const t = await mkTask(owner, { title: "t", list_id: list, tag_ids: [ot] });
    expect((await viewer.get(`/api/v1/tasks/${t.id}`)).body.tags).toEqual([]);
    // A viewer labels what they see with their own tags (and nothing else).
    const r = await viewer.patch(`/api/v1/tasks/${t.id}`, { version: 1, tag_ids: [vt] });
    expect(r.status).toBe(200);
    expect(r.body.tags.map((g: { id: string }) => g.id)).toEqual([vt]);
    expect((await owner.get(`/api/v1/tasks/${t.id}`)).body.tags.map((g: { id: string }) => g.id)).toEqual([ot]);
    expect(ids(await viewer.get(`/api/v1/tasks?tag_id=${vt}`))).toEqual([t.id]);
    expect((await viewer.get(`/api/v1/tasks?tag_id=${ot}`)).body.items).toEqual([]);
    // Another user's tag cannot be attached.
    await rejected(app, () => viewer.patch(`/api/v1/tasks/${t.id}`, { version: 2, tag_ids: [ot] }), 422, "invalid_reference");
  });

  test("a member files a shared list in their own folder and position; the owner's placement stays", async () => {
    const { owner, editor, list } = await trio();
    const folder = (await editor.post("/api/v1/folders", { name: "Home" })).body.id;
    const r = await editor.patch(`/api/v1/lists/${list}`, { folder_id: folder, position: 7 });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ folder_id: folder, position: 7, role: "editor" });
    expect((await owner.get(`/api/v1/lists/${list}`)).body).toMatchObject({ folder_id: null, role: "owner" });
    // Someone else's folder is not a place to file it.
    const ownerFolder = (await owner.post("/api/v1/folders", { name: "O" })).body.id;
    await rejected(app, () => editor.patch(`/api/v1/lists/${list}`, { folder_id: ownerFolder }), 422, "invalid_reference");
    // The move endpoint and reorder place it too.
    expect((await editor.post(`/api/v1/lists/${list}/move`, { folder_id: null })).body.folder_id).toBeNull();
    const order = ids(await editor.get("/api/v1/lists")).slice(1).reverse();
    const re = await editor.post("/api/v1/lists/reorder", { ids: order });
    expect(re.status).toBe(200);
    expect(ids(await editor.get("/api/v1/lists")).slice(1)).toEqual(order);
  });
});

describe("members, roles, transfer, leaving", () => {
  test("role change takes effect on the next request", async () => {
    const { owner, viewer, list } = await trio();
    const v = await meOf(viewer);
    const r = await owner.patch(`/api/v1/lists/${list}/members/${v.id}`, { role: "editor" });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ user: { id: v.id }, role: "editor" });
    expect((await viewer.post("/api/v1/tasks", { title: "now I can", list_id: list })).status).toBe(201);
    expect((await owner.patch(`/api/v1/lists/${list}/members/${v.id}`, { role: "viewer" })).status).toBe(200);
    await rejected(app, () => viewer.post("/api/v1/tasks", { title: "not any more", list_id: list }), 403, "forbidden");
    await rejected(app, () => viewer.patch(`/api/v1/lists/${list}/members/${v.id}`, { role: "editor" }), 403, "forbidden");
    const oid = (await meOf(owner)).id;
    await rejected(app, () => owner.patch(`/api/v1/lists/${list}/members/${oid}`, { role: "viewer" }), 404, "not_found");
  });

  test("ownership transfer: to an editor only; the old owner becomes editor; the tasks follow the list", async () => {
    const { owner, editor, viewer, list } = await trio();
    const o = await meOf(owner);
    const e = await meOf(editor);
    const v = await meOf(viewer);
    const t = await mkTask(owner, { title: "t", list_id: list });
    await rejected(app, () => owner.patch(`/api/v1/lists/${list}/members/${v.id}`, { role: "owner" }), 409, "state_conflict");
    const r = await owner.patch(`/api/v1/lists/${list}/members/${e.id}`, { role: "owner" });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ user: { id: e.id }, role: "owner" });
    expect((await owner.get(`/api/v1/lists/${list}`)).body).toMatchObject({ role: "editor", owner: { id: e.id }, member_count: 3 });
    expect((await editor.get(`/api/v1/lists/${list}`)).body).toMatchObject({ role: "owner", owner: { id: e.id } });
    const members = (await viewer.get(`/api/v1/lists/${list}/members`)).body.items.map((m: { user: { id: string }; role: string }) => [m.user.id, m.role]);
    expect(members[0]).toEqual([e.id, "owner"]);
    expect(members).toContainEqual([o.id, "editor"]);
    // The new owner may rename and purge; the old one may not.
    await rejected(app, () => owner.patch(`/api/v1/lists/${list}`, { name: "mine again" }), 403, "forbidden");
    expect((await editor.patch(`/api/v1/lists/${list}`, { name: "Ours" })).status).toBe(200);
    await owner.delete(`/api/v1/tasks/${t.id}`);
    await rejected(app, () => owner.delete(`/api/v1/trash/${t.id}`), 403, "forbidden");
    expect((await editor.delete(`/api/v1/trash/${t.id}`)).status).toBe(204);
  });

  test("leaving and removal take effect on the next request; their own tags on the list's tasks go", async () => {
    const { owner, editor, viewer, list } = await trio();
    const e = await meOf(editor);
    const v = await meOf(viewer);
    const t = await mkTask(owner, { title: "t", list_id: list });
    const et = await mkTag(editor, "e-tag");
    await editor.patch(`/api/v1/tasks/${t.id}`, { version: 1, tag_ids: [et] });
    const oid = (await meOf(owner)).id;
    await rejected(app, () => owner.delete(`/api/v1/lists/${list}/members/${oid}`), 409, "state_conflict");
    await rejected(app, () => editor.delete(`/api/v1/lists/${list}/members/${v.id}`), 403, "forbidden");
    expect((await editor.delete(`/api/v1/lists/${list}/members/${e.id}`)).status).toBe(204);
    expect((await editor.get(`/api/v1/tasks/${t.id}`)).status).toBe(404);
    expect((await editor.get(`/api/v1/lists/${list}`)).status).toBe(404);
    expect((await editor.get("/api/v1/tasks")).body.items).toEqual([]);
    expect((await editor.get(`/api/v1/tasks?tag_id=${et}`)).body.items).toEqual([]);
    expect(app.db.sqlite.query("SELECT count(*) AS n FROM task_tags WHERE tag_id = ?").get(et)).toEqual({ n: 0 });
    expect((await owner.delete(`/api/v1/lists/${list}/members/${v.id}`)).status).toBe(204);
    expect((await viewer.get(`/api/v1/tasks/${t.id}`)).status).toBe(404);
    expect((await owner.get(`/api/v1/lists/${list}`)).body.member_count).toBe(1);
    await rejected(app, () => owner.delete(`/api/v1/lists/${list}/members/${v.id}`), 404, "not_found");
  });

  test("the audit log records sharing for the owner and the member concerned", async () => {
    const owner = await signedInUser(app, admin, uname());
    const bob = await signedInUser(app, admin, uname());
    const b = await meOf(bob);
    const list = await mkList(owner, "L");
    await share(owner, bob, list, "viewer");
    await owner.patch(`/api/v1/lists/${list}/members/${b.id}`, { role: "editor" });
    await bob.delete(`/api/v1/lists/${list}/members/${b.id}`);
    const actions = async (c: TestClient) => (await c.get("/api/v1/audit-logs")).body.items.map((x: { action: string }) => x.action).filter((a: string) => a.startsWith("list_"));
    const expected = ["list_left", "list_role_changed", "list_invitation_accepted", "list_invitation_sent"];
    expect(await actions(owner)).toEqual(expected);
    expect(await actions(bob)).toEqual(expected);
  });
});
