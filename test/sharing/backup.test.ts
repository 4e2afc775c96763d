// sharing.md "Backup, legacy, audit": a user's backup holds what they own — a shared list whole,
// with its members by username — and never a list owned by someone else; restoring an owner's
// backup on another server creates only pending invitations for the usernames that exist there.
import { afterAll, expect, test } from "bun:test";
import { makeTestApp, setupAdmin, signedInUser } from "../helpers/app";
import { mkList, mkTag, mkTask, uname } from "../helpers/tasks";
import { PNG, upload } from "../helpers/multipart";
import { entriesOf, exportBytes, preflight, readJson, rebuild } from "../backup/helpers";
import { meOf, share } from "./helpers";

const source = makeTestApp();
const target = makeTestApp();
afterAll(() => {
  source.close();
  target.close();
});
const sAdmin = await setupAdmin(source);
const tAdmin = await setupAdmin(target);

type Rec = Record<string, unknown>;

test("the owner's backup holds the shared list whole; a member's backup holds none of it", async () => {
  const owner = await signedInUser(source, sAdmin, uname("o"));
  const memberName = uname("m");
  const member = await signedInUser(source, sAdmin, memberName);
  const list = await mkList(owner, "Shared");
  await share(owner, member, list, "editor");
  const ownTag = await mkTag(owner, "o-tag");
  const memberTag = await mkTag(member, "m-tag");
  const byOwner = await mkTask(owner, { title: "by owner", list_id: list, tag_ids: [ownTag] });
  const byMember = await mkTask(member, { title: "by member", list_id: list, tag_ids: [memberTag] });
  const att = await upload(source, member, byOwner.id, { filename: "m.png", type: "image/png", data: PNG });
  expect(att.status).toBe(201);
  const memberOwn = await mkTask(member, { title: "member private" });

  const o = entriesOf(await exportBytes(source, owner));
  const oLists = readJson<Rec[]>(o, "data/lists.json");
  expect(oLists.find((l) => l.id === list)).toMatchObject({ name: "Shared", members: [{ username: memberName, role: "editor" }] });
  const oTasks = readJson<Rec[]>(o, "data/tasks.json");
  expect(oTasks.map((t) => t.id).sort()).toEqual([byOwner.id, byMember.id].sort());
  // Only the owner's own tags: the member's label is theirs.
  expect(oTasks.find((t) => t.id === byMember.id)!.tag_ids).toEqual([]);
  expect(oTasks.find((t) => t.id === byOwner.id)!.tag_ids).toEqual([ownTag]);
  expect(readJson<Rec[]>(o, "data/attachments.json").map((a) => a.id)).toEqual([att.json.id]);
  expect(readJson<Rec[]>(o, "data/tags.json").map((t) => t.id)).toEqual([ownTag]);

  const m = entriesOf(await exportBytes(source, member));
  expect(readJson<Rec[]>(m, "data/lists.json").map((l) => l.id)).not.toContain(list);
  expect(readJson<Rec[]>(m, "data/tasks.json").map((t) => t.id)).toEqual([memberOwn.id]);
  expect(readJson<Rec[]>(m, "data/attachments.json")).toEqual([]);
  // The member's own archive restores cleanly into their account (nothing dangles).
  const pf = await preflight(member, rebuild(m), "replace");
  expect(pf.status).toBe(200);
  expect((await member.post("/api/v1/backup/restore", { preflight_token: pf.body.preflight_token, mode: "replace" })).status).toBe(200);
  expect((await member.get(`/api/v1/tasks/${byMember.id}`)).status).toBe(200);
});

test("restoring an owner's backup on another server: pending invitations for existing usernames only, never access", async () => {
  const owner = await signedInUser(source, sAdmin, uname("o"));
  const present = uname("p");
  const absent = uname("a");
  const p = await signedInUser(source, sAdmin, present);
  const a = await signedInUser(source, sAdmin, absent);
  const list = await mkList(owner, "Trip");
  await share(owner, p, list, "viewer");
  await share(owner, a, list, "editor");
  const t = await mkTask(owner, { title: "pack", list_id: list });
  const archive = entriesOf(await exportBytes(source, owner));

  // The other server: the restorer, and a user named like one of the members (not the other).
  const restorer = await signedInUser(target, tAdmin, uname("r"));
  const there = await signedInUser(target, tAdmin, present);
  const pf = await preflight(restorer, rebuild(archive), "replace");
  expect(pf.status).toBe(200);
  const r = await restorer.post("/api/v1/backup/restore", { preflight_token: pf.body.preflight_token, mode: "replace" });
  expect(r.status).toBe(200);
  // No access: the list and its task are 404 for the namesake until they accept.
  expect((await there.get(`/api/v1/lists/${list}`)).status).toBe(404);
  expect((await there.get(`/api/v1/tasks/${t.id}`)).status).toBe(404);
  const inbox = await there.get("/api/v1/invitations");
  expect(inbox.body.items).toEqual([expect.objectContaining({ list: expect.objectContaining({ id: list, name: "Trip" }), from: expect.objectContaining({ id: (await meOf(restorer)).id }), role: "viewer" })]);
  expect((await restorer.get(`/api/v1/lists/${list}`)).body).toMatchObject({ role: "owner", member_count: 1 });
  expect((await restorer.get(`/api/v1/lists/${list}/invitations`)).body.items.map((i: { invitee: { username: string } }) => i.invitee.username)).toEqual([present]);
  expect(target.db.sqlite.query("SELECT count(*) AS n FROM list_members").get()).toEqual({ n: 0 });
  // Accepting is what grants access.
  expect((await there.post(`/api/v1/invitations/${inbox.body.items[0].id}/accept`)).status).toBe(200);
  expect((await there.get(`/api/v1/tasks/${t.id}`)).status).toBe(200);
  // A merge of the same archive invites nobody twice and conflicts with nothing.
  const pf2 = await preflight(restorer, rebuild(archive), "merge");
  expect((await restorer.post("/api/v1/backup/restore", { preflight_token: pf2.body.preflight_token, mode: "merge" })).status).toBe(200);
  expect((await restorer.get(`/api/v1/lists/${list}/invitations`)).body.items).toEqual([]);
});

test("a member's reminder on a shared task stays out of their backup (its task is not theirs), which restores cleanly", async () => {
  const owner = await signedInUser(source, sAdmin, uname("o"));
  const member = await signedInUser(source, sAdmin, uname("m"));
  const list = await mkList(owner, "Shared");
  await share(owner, member, list, "editor");
  const shared = await mkTask(owner, { title: "shared", list_id: list, due_at: "2030-01-02T10:00:00Z" });
  const own = await mkTask(member, { title: "own", due_at: "2030-01-02T10:00:00Z" });
  const onShared = await member.post(`/api/v1/tasks/${shared.id}/reminders`, { kind: "before_due", minutes_before: 5 });
  const onOwn = await member.post(`/api/v1/tasks/${own.id}/reminders`, { kind: "before_due", minutes_before: 5 });
  expect([onShared.status, onOwn.status]).toEqual([201, 201]);
  const ownerRem = await owner.post(`/api/v1/tasks/${shared.id}/reminders`, { kind: "before_due", minutes_before: 5 });

  const m = entriesOf(await exportBytes(source, member));
  expect(readJson<Rec[]>(m, "data/reminders.json").map((r) => r.id)).toEqual([onOwn.body.id]);
  const pf = await preflight(member, rebuild(m), "replace");
  expect(pf.status).toBe(200);
  expect((await member.post("/api/v1/backup/restore", { preflight_token: pf.body.preflight_token, mode: "replace" })).status).toBe(200);
  // The owner's archive holds the owner's reminder on their task, not the member's.
  const o = entriesOf(await exportBytes(source, owner));
  expect(readJson<Rec[]>(o, "data/reminders.json").map((r) => r.id)).toEqual([ownerRem.body.id]);
});
