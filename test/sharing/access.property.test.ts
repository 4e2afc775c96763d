// sharing.md, checked against a model: random sequences of invite / accept / decline / role
// change / leave / remove and task actions by three users, each answer compared with what the
// model says, and after every step what each user sees (lists with roles, GET /tasks, the trash,
// each task by id) compared with the model's "who may see what". The model is written from the
// spec alone, independently of lists.access.ts.
import { afterAll, expect, test } from "bun:test";
import fc from "fast-check";
import { makeTestApp, setupAdmin, signedInUser, type TestClient } from "../helpers/app";
import { uname } from "../helpers/tasks";
import { meOf } from "./helpers";

const app = makeTestApp();
const admin = await setupAdmin(app);
afterAll(() => app.close());

type Role = "owner" | "editor" | "viewer";
type U = 0 | 1 | 2;

interface MList {
  id: string;
  owner: U;
  members: Map<U, "editor" | "viewer">;
  invites: Map<U, { id: string; role: "editor" | "viewer" }>;
}
interface MTask {
  id: string;
  list: number;
  deleted: boolean;
  version: number;
  purged: boolean;
}

const roleOf = (l: MList, u: U): Role | null => (l.owner === u ? "owner" : (l.members.get(u) ?? null));
const canEdit = (r: Role | null) => r === "owner" || r === "editor";

const user = fc.constantFrom<U>(0, 1, 2);
const listIx = fc.constantFrom(0, 1, 2);
const memberRole = fc.constantFrom<"editor" | "viewer">("editor", "viewer");
const taskIx = fc.nat({ max: 7 });
const step = fc.oneof(
  // Most invitations come from the list's owner (actor -1), some from anyone (refusals).
  { weight: 5, arbitrary: fc.tuple(fc.constant("invite" as const), fc.constantFrom<U | -1>(-1, -1, -1, 0, 1, 2), listIx, user, memberRole) },
  // The user answers one of their invitations (list -1: their first pending one).
  { weight: 5, arbitrary: fc.tuple(fc.constant("accept" as const), user, fc.constantFrom(-1, -1, -1, 0, 1, 2)) },
  { weight: 1, arbitrary: fc.tuple(fc.constant("decline" as const), user, fc.constantFrom(-1, 0, 1, 2)) },
  { weight: 2, arbitrary: fc.tuple(fc.constant("role" as const), user, listIx, user, fc.constantFrom<Role>("owner", "editor", "viewer")) },
  { weight: 1, arbitrary: fc.tuple(fc.constant("leave" as const), user, listIx) },
  { weight: 1, arbitrary: fc.tuple(fc.constant("remove" as const), user, listIx, user) },
  { weight: 4, arbitrary: fc.tuple(fc.constant("create" as const), user, listIx) },
  { weight: 3, arbitrary: fc.tuple(fc.constant("edit" as const), user, taskIx) },
  { weight: 2, arbitrary: fc.tuple(fc.constant("delete" as const), user, taskIx) },
  { weight: 2, arbitrary: fc.tuple(fc.constant("restore" as const), user, taskIx) },
  { weight: 1, arbitrary: fc.tuple(fc.constant("purge" as const), user, taskIx) },
);

test("three users: every answer and every view matches the model after every step", async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(step, { minLength: 15, maxLength: 40 }), async (steps) => {
      const names = [uname("p"), uname("q"), uname("r")];
      const cs: TestClient[] = [];
      for (const n of names) cs.push(await signedInUser(app, admin, n));
      const ids = await Promise.all(cs.map(async (c) => (await meOf(c)).id));
      const lists: MList[] = [];
      for (let i = 0; i < 3; i++) {
        const r = await cs[i]!.post("/api/v1/lists", { name: `L${i}` });
        lists.push({ id: r.body.id, owner: i as U, members: new Map(), invites: new Map() });
      }
      const tasks: MTask[] = [];

      const expectStatus = (what: string, got: number, want: number) => expect({ what, got }).toEqual({ what, got: want });

      for (const raw of steps) {
        // Resolve "the list's owner" and "my first pending invitation" against the model.
        const s = (
          raw[0] === "invite" && raw[1] === -1
            ? ["invite", lists[raw[2]]!.owner, raw[2], raw[3], raw[4]]
            : (raw[0] === "accept" || raw[0] === "decline") && raw[2] === -1
              ? [raw[0], raw[1], Math.max(0, lists.findIndex((l) => l.invites.has(raw[1] as U)))]
              : raw
        ) as unknown as [string, U, number, ...unknown[]];
        const [kind, a] = s;
        const c = cs[a]!;
        const what = JSON.stringify(s);
        if (kind === "invite") {
          const [, , li, v, role] = s as unknown as [string, U, number, U, "editor" | "viewer"];
          const l = lists[li]!;
          const r = await c.post(`/api/v1/lists/${l.id}/invitations`, { username: names[v], role });
          const mine = roleOf(l, a);
          const want = !mine ? 404 : mine !== "owner" ? 403 : v === a ? 422 : l.members.has(v) || l.invites.has(v) ? 409 : 201;
          expectStatus(what, r.status, want);
          if (want === 201) l.invites.set(v, { id: r.body.id, role });
        } else if (kind === "accept" || kind === "decline") {
          const l = lists[s[2]]!;
          const inv = l.invites.get(a);
          // No invitation: another user's (or a stale) id is 404 as well.
          const other = [...l.invites.values()][0];
          const id = inv?.id ?? other?.id ?? "00000000-0000-7000-8000-000000000000";
          const r = await c.post(`/api/v1/invitations/${id}/${kind}`);
          expectStatus(what, r.status, inv ? (kind === "accept" ? 200 : 204) : 404);
          if (inv) {
            l.invites.delete(a);
            if (kind === "accept") l.members.set(a, inv.role);
          }
        } else if (kind === "role") {
          const [, , li, v, role] = s as unknown as [string, U, number, U, Role];
          const l = lists[li]!;
          const r = await c.patch(`/api/v1/lists/${l.id}/members/${ids[v]}`, { role });
          const mine = roleOf(l, a);
          const target = l.members.get(v);
          const want = !mine ? 404 : mine !== "owner" ? 403 : !target ? 404 : role === "owner" && target !== "editor" ? 409 : 200;
          expectStatus(what, r.status, want);
          if (want === 200) {
            if (role === "owner") {
              l.members.delete(v);
              l.members.set(a, "editor");
              l.owner = v;
              l.invites.delete(v);
              for (const t of tasks) if (t.list === li && !t.purged) t.version++;
            } else l.members.set(v, role);
          }
        } else if (kind === "leave" || kind === "remove") {
          const l = lists[s[2]]!;
          const v = kind === "leave" ? a : (s[3] as U);
          const r = await c.delete(`/api/v1/lists/${l.id}/members/${ids[v]}`);
          const mine = roleOf(l, a);
          const want = !mine ? 404 : v === a ? (mine === "owner" ? 409 : 204) : mine !== "owner" ? 403 : l.members.has(v) ? 204 : 404;
          expectStatus(what, r.status, want);
          if (want === 204) l.members.delete(v);
        } else if (kind === "create") {
          const li = s[2];
          const l = lists[li]!;
          const r = await c.post("/api/v1/tasks", { title: `t${tasks.length}`, list_id: l.id });
          const mine = roleOf(l, a);
          const want = !mine ? 422 : !canEdit(mine) ? 403 : 201;
          expectStatus(what, r.status, want);
          if (want === 201) tasks.push({ id: r.body.id, list: li, deleted: false, version: 1, purged: false });
        } else {
          const t = tasks[s[2] as number];
          if (!t) continue;
          const mine = t.purged ? null : roleOf(lists[t.list]!, a);
          if (kind === "edit") {
            const r = await c.patch(`/api/v1/tasks/${t.id}`, { version: t.version, title: `e${t.version}` });
            const want = !mine || t.deleted ? 404 : !canEdit(mine) ? 403 : 200;
            expectStatus(what, r.status, want);
            if (want === 200) t.version++;
          } else if (kind === "delete") {
            const r = await c.delete(`/api/v1/tasks/${t.id}`);
            const want = !mine || t.deleted ? 404 : !canEdit(mine) ? 403 : 204;
            expectStatus(what, r.status, want);
            if (want === 204) {
              t.deleted = true;
              t.version++;
            }
          } else if (kind === "restore") {
            const r = await c.post(`/api/v1/tasks/${t.id}/restore`);
            const want = !mine ? 404 : !canEdit(mine) ? 403 : !t.deleted ? 409 : 200;
            expectStatus(what, r.status, want);
            if (want === 200) {
              t.deleted = false;
              t.version++;
            }
          } else {
            const r = await c.delete(`/api/v1/trash/${t.id}`);
            const want = !mine ? 404 : mine !== "owner" ? 403 : !t.deleted ? 409 : 204;
            expectStatus(what, r.status, want);
            if (want === 204) t.purged = true;
          }
        }

        // What each user sees, after every step.
        for (const u of [0, 1, 2] as U[]) {
          const seenLists = (await cs[u]!.get("/api/v1/lists")).body.items
            .filter((x: { is_inbox: boolean }) => !x.is_inbox)
            .map((x: { id: string; role: string; owner: { id: string } }) => `${x.id}:${x.role}:${x.owner.id}`)
            .sort();
          const wantLists = lists
            .filter((l) => roleOf(l, u))
            .map((l) => `${l.id}:${roleOf(l, u)}:${ids[l.owner]}`)
            .sort();
          expect({ after: what, u, lists: seenLists }).toEqual({ after: what, u, lists: wantLists });
          const live = tasks.filter((t) => !t.purged && !t.deleted && roleOf(lists[t.list]!, u));
          const page = (await cs[u]!.get("/api/v1/tasks?limit=100")).body.items.map((x: { id: string }) => x.id).sort();
          expect({ after: what, u, tasks: page }).toEqual({ after: what, u, tasks: live.map((t) => t.id).sort() });
          const trash = (await cs[u]!.get("/api/v1/trash?limit=100")).body.items.map((x: { id: string }) => x.id).sort();
          const wantTrash = tasks.filter((t) => !t.purged && t.deleted && canEdit(roleOf(lists[t.list]!, u))).map((t) => t.id);
          expect({ after: what, u, trash }).toEqual({ after: what, u, trash: wantTrash.sort() });
          for (const t of tasks) {
            const r = await cs[u]!.get(`/api/v1/tasks/${t.id}`);
            const visible = !t.purged && !t.deleted && !!roleOf(lists[t.list]!, u);
            expect({ after: what, u, task: t.id, status: r.status }).toEqual({ after: what, u, task: t.id, status: visible ? 200 : 404 });
            if (visible) expect(r.body.version).toBe(t.version);
          }
        }
      }
    }),
    { numRuns: 15 },
  );
  // Some 10,000 requests: minutes on a loaded machine.
}, 600_000);
