import { afterAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { makeTestApp, setupAdmin, signedInUser, type TestClient } from "./helpers/app";
import { inboxOf, mkList, mkTag, mkTask, rejected, uname } from "./helpers/tasks";
import { TAG_IDS_MAX } from "../src/features/tasks/tasks.schemas";
import { share } from "./sharing/helpers";

const app = makeTestApp();
const admin = await setupAdmin(app);
afterAll(() => app.close());

async function get(c: TestClient, id: string) {
  return (await c.get(`/api/v1/tasks/${id}`)).body;
}

describe("POST /tasks/batch", () => {
  test("complete, set due date, replace tags, move: each version grows by exactly one", async () => {
    const c = await signedInUser(app, admin, uname());
    const l = await mkList(c, "L");
    const t1 = await mkTag(c, "one");
    const t2 = await mkTag(c, "two");
    const a = await mkTask(c, { title: "a", tag_ids: [t1] });
    const b = await mkTask(c, { title: "b", completed: true });
    const untouched = await mkTask(c, { title: "u" });
    const r = await c.post("/api/v1/tasks/batch", { task_ids: [a.id, b.id, a.id], completed: true, due_at: "2026-12-24T18:00:00+01:00", tag_ids: [t2], list_id: l });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ updated: 2 });
    const A = await get(c, a.id);
    const B = await get(c, b.id);
    expect(A).toMatchObject({ completed: true, due_at: "2026-12-24T17:00:00.000Z", list_id: l, version: 2 });
    expect(A.tags.map((t: { id: string }) => t.id)).toEqual([t2]);
    expect(A.completed_at).toEqual(expect.any(String));
    // Already completed: its completion time is kept.
    expect(B).toMatchObject({ completed: true, completed_at: b.completed_at, version: 2 });
    expect((await get(c, untouched.id)).version).toBe(1);
    const clear = await c.post("/api/v1/tasks/batch", { task_ids: [a.id], due_at: null, completed: false, tag_ids: [] });
    expect(clear.body).toEqual({ updated: 1 });
    expect(await get(c, a.id)).toMatchObject({ due_at: null, completed: false, completed_at: null, tags: [], version: 3 });
  });

  test("move: subtasks follow their parent; a subtask alone cannot leave its parent's list", async () => {
    const c = await signedInUser(app, admin, uname());
    const l = await mkList(c, "L");
    const p = await mkTask(c, { title: "p" });
    const s1 = await mkTask(c, { title: "s1", parent_id: p.id });
    const s2 = await mkTask(c, { title: "s2", parent_id: p.id });
    await rejected(app, () => c.post("/api/v1/tasks/batch", { task_ids: [s1.id], list_id: l }), 422, "invalid_parent");
    const r = await c.post("/api/v1/tasks/batch", { task_ids: [p.id, s1.id], list_id: l });
    expect(r.body).toEqual({ updated: 2 });
    const P = await get(c, p.id);
    expect(P.list_id).toBe(l);
    expect(P.subtasks.map((s: { id: string; list_id: string; version: number }) => [s.id, s.list_id, s.version])).toEqual([
      [s1.id, l, 2],
      [s2.id, l, 2],
    ]);
    // Completing a subtask alone is fine.
    expect((await c.post("/api/v1/tasks/batch", { task_ids: [s2.id], completed: true })).status).toBe(200);
  });

  test("soft_delete: alone, takes subtasks along", async () => {
    const c = await signedInUser(app, admin, uname());
    const p = await mkTask(c, { title: "p" });
    const s = await mkTask(c, { title: "s", parent_id: p.id });
    const q = await mkTask(c, { title: "q" });
    const r = await c.post("/api/v1/tasks/batch", { task_ids: [p.id, q.id], soft_delete: true });
    expect(r.body).toEqual({ updated: 2 });
    expect((await c.get(`/api/v1/tasks/${s.id}`)).status).toBe(404);
    const trash = await c.get("/api/v1/trash");
    expect(trash.body.items.map((t: { id: string }) => t.id).sort()).toEqual([p.id, q.id].sort());
    expect(trash.body.items.find((t: { id: string }) => t.id === p.id).subtasks[0]).toMatchObject({ id: s.id, version: 2 });
  });

  test("invalid bodies are 422 and change nothing", async () => {
    const c = await signedInUser(app, admin, uname());
    const t = await mkTask(c, { title: "t" });
    const many = Array.from({ length: 501 }, (_, i) => `id-${i}`);
    for (const body of [
      { task_ids: [t.id] },
      { task_ids: [], completed: true },
      { task_ids: many, completed: true },
      { task_ids: [t.id], soft_delete: false },
      { task_ids: [t.id], soft_delete: true, completed: true },
      { task_ids: [t.id], completed: "yes" },
      { task_ids: [t.id], due_at: "2026-02-30" },
      { task_ids: [t.id], due_at: "2026-13-01T00:00Z" },
      { task_ids: [1], completed: true },
      { task_ids: t.id, completed: true },
      { task_ids: [t.id], completed: true, title: "x" },
      { task_ids: [t.id], tag_ids: "x" },
    ]) {
      await rejected(app, () => c.post("/api/v1/tasks/batch", body), 422, "validation_failed");
    }
  });

  test("any missing, foreign or deleted id: invalid_reference naming them; nothing changes", async () => {
    const c = await signedInUser(app, admin, uname());
    const o = await signedInUser(app, admin, uname());
    const mine = await mkTask(c, { title: "mine" });
    const gone = await mkTask(c, { title: "gone" });
    await c.delete(`/api/v1/tasks/${gone.id}`);
    const theirs = await mkTask(o, { title: "theirs" });
    const theirList = await mkList(o, "theirs");
    const theirTag = await mkTag(o, "theirs");
    const r = await rejected(app, () => c.post("/api/v1/tasks/batch", { task_ids: [mine.id, theirs.id, "missing", gone.id], completed: true }), 422, "invalid_reference");
    expect(r.body.errors).toEqual([
      { path: "task_ids.1", message: `no task ${theirs.id}` },
      { path: "task_ids.2", message: "no task missing" },
      { path: "task_ids.3", message: `no task ${gone.id}` },
    ]);
    expect(r.body.detail).toContain(theirs.id);
    expect(r.body.detail).toContain("missing");
    await rejected(app, () => c.post("/api/v1/tasks/batch", { task_ids: [mine.id], list_id: theirList }), 422, "invalid_reference");
    const t = await rejected(app, () => c.post("/api/v1/tasks/batch", { task_ids: [mine.id], tag_ids: [theirTag] }), 422, "invalid_reference");
    expect(t.body.errors).toEqual([{ path: "tag_ids.0", message: `no tag ${theirTag}` }]);
    await rejected(app, () => c.post("/api/v1/tasks/batch", { task_ids: [theirs.id], soft_delete: true }), 422, "invalid_reference");
    expect((await o.get(`/api/v1/tasks/${theirs.id}`)).body.version).toBe(1);
  });

  test("500 ids in one batch", async () => {
    const c = await signedInUser(app, admin, uname());
    const inbox = await inboxOf(c);
    const me = (await c.get("/api/v1/me")).body.id;
    const ids: string[] = [];
    const ins = app.db.sqlite.query(
      "INSERT INTO tasks (id, user_id, list_id, title, created_at, updated_at) VALUES (?, ?, ?, 'bulk', ?, ?)",
    );
    for (let i = 0; i < 500; i++) {
      const id = Bun.randomUUIDv7();
      ins.run(id, me, inbox, "2026-01-01T00:00:00.000Z", "2026-01-01T00:00:00.000Z");
      ids.push(id);
    }
    const r = await c.post("/api/v1/tasks/batch", { task_ids: ids, completed: true });
    expect(r.body).toEqual({ updated: 500 });
    const n = app.db.sqlite.query("SELECT count(*) AS n FROM tasks WHERE user_id = ? AND completed = 1 AND version = 2").get(me) as { n: number };
    expect(n.n).toBe(500);
  });
});

describe("POST /tasks/batch: add_tag_ids and remove_tag_ids", () => {
  const tagsOf = async (c: TestClient, id: string) => ((await get(c, id)).tags as { id: string }[]).map((t) => t.id).sort();

  test("add keeps each task's own tags; remove takes only the named ones; both together; each version grows by one", async () => {
    const c = await signedInUser(app, admin, uname());
    const [red, blue, green, urgent] = [await mkTag(c, "red"), await mkTag(c, "blue"), await mkTag(c, "green"), await mkTag(c, "urgent")];
    const a = await mkTask(c, { title: "a", tag_ids: [red] });
    const b = await mkTask(c, { title: "b", tag_ids: [blue, green] });
    const d = await mkTask(c, { title: "d" });
    const sub = await mkTask(c, { title: "sub", parent_id: a.id, tag_ids: [green] });
    const untouched = await mkTask(c, { title: "u", tag_ids: [red] });
    // A duplicate id is one tag; a task that has it already keeps one link.
    const r = await c.post("/api/v1/tasks/batch", { task_ids: [a.id, b.id, d.id], add_tag_ids: [urgent, urgent, red] });
    expect(r.body).toEqual({ updated: 3 });
    expect(await tagsOf(c, a.id)).toEqual([red, urgent].sort());
    expect(await tagsOf(c, b.id)).toEqual([blue, green, urgent, red].sort());
    expect(await tagsOf(c, d.id)).toEqual([red, urgent].sort());
    for (const t of [a, b, d]) expect((await get(c, t.id)).version).toBe(t.version + 1);
    // Named tasks only: the subtask and the other task keep theirs.
    expect(await tagsOf(c, sub.id)).toEqual([green]);
    expect(await get(c, untouched.id)).toMatchObject({ version: untouched.version, tags: [expect.objectContaining({ id: red })] });

    // Removing a tag a task does not have is no error: that task keeps what it has.
    const rm = await c.post("/api/v1/tasks/batch", { task_ids: [a.id, b.id, d.id], remove_tag_ids: [red, green] });
    expect(rm.body).toEqual({ updated: 3 });
    expect(await tagsOf(c, a.id)).toEqual([urgent]);
    expect(await tagsOf(c, b.id)).toEqual([blue, urgent].sort());
    expect(await tagsOf(c, d.id)).toEqual([urgent]);

    const both = await c.post("/api/v1/tasks/batch", { task_ids: [a.id, b.id], add_tag_ids: [green], remove_tag_ids: [urgent], priority: 2 });
    expect(both.body).toEqual({ updated: 2 });
    expect(await get(c, a.id)).toMatchObject({ priority: 2, version: a.version + 3 });
    expect(await tagsOf(c, a.id)).toEqual([green]);
    expect(await tagsOf(c, b.id)).toEqual([blue, green].sort());
  });

  test("with tag_ids (which replaces), the same tag added and removed, empty or bad lists: 422 validation_failed, nothing changes", async () => {
    const c = await signedInUser(app, admin, uname());
    const x = await mkTag(c, "x");
    const y = await mkTag(c, "y");
    const t = await mkTask(c, { title: "t", tag_ids: [x] });
    const many = Array.from({ length: 101 }, (_, i) => `tag-${i}`);
    for (const body of [
      { task_ids: [t.id], tag_ids: [y], add_tag_ids: [x] },
      { task_ids: [t.id], tag_ids: [], remove_tag_ids: [x] },
      { task_ids: [t.id], tag_ids: [y], add_tag_ids: [x], remove_tag_ids: [y] },
      { task_ids: [t.id], add_tag_ids: [x, y], remove_tag_ids: [y] },
      { task_ids: [t.id], add_tag_ids: [] },
      { task_ids: [t.id], remove_tag_ids: [] },
      { task_ids: [t.id], add_tag_ids: many },
      { task_ids: [t.id], remove_tag_ids: x },
      { task_ids: [t.id], add_tag_ids: [1] },
      { task_ids: [t.id], add_tag_ids: null },
      { task_ids: [t.id], soft_delete: true, add_tag_ids: [x] },
    ]) {
      await rejected(app, () => c.post("/api/v1/tasks/batch", body), 422, "validation_failed");
    }
    const r = await rejected(app, () => c.post("/api/v1/tasks/batch", { task_ids: [t.id], tag_ids: [y], add_tag_ids: [x], remove_tag_ids: [y] }), 422, "validation_failed");
    expect(r.body.errors.map((e: { path: string }) => e.path).sort()).toEqual(["add_tag_ids", "remove_tag_ids"]);
    const same = await rejected(app, () => c.post("/api/v1/tasks/batch", { task_ids: [t.id], add_tag_ids: [x, y], remove_tag_ids: [x] }), 422, "validation_failed");
    expect(same.body.errors).toEqual([{ path: "remove_tag_ids.0", message: `tag ${x} is both added and removed` }]);
  });

  test("an unknown tag or another user's: 422 invalid_reference as tag_ids gives, naming it; nothing changes", async () => {
    const c = await signedInUser(app, admin, uname());
    const o = await signedInUser(app, admin, uname());
    const mine = await mkTag(c, "mine");
    const theirs = await mkTag(o, "theirs");
    const t = await mkTask(c, { title: "t", tag_ids: [mine] });
    const replace = await rejected(app, () => c.post("/api/v1/tasks/batch", { task_ids: [t.id], tag_ids: [mine, theirs] }), 422, "invalid_reference");
    expect(replace.body.errors).toEqual([{ path: "tag_ids.1", message: `no tag ${theirs}` }]);
    const add = await rejected(app, () => c.post("/api/v1/tasks/batch", { task_ids: [t.id], add_tag_ids: [mine, theirs, "missing"] }), 422, "invalid_reference");
    expect(add.body.errors).toEqual([
      { path: "add_tag_ids.1", message: `no tag ${theirs}` },
      { path: "add_tag_ids.2", message: "no tag missing" },
    ]);
    expect(add.body.detail).toContain(theirs);
    const rm = await rejected(app, () => c.post("/api/v1/tasks/batch", { task_ids: [t.id], remove_tag_ids: [theirs] }), 422, "invalid_reference");
    expect(rm.body.errors).toEqual([{ path: "remove_tag_ids.0", message: `no tag ${theirs}` }]);
    // A bad task id with a good tag: the same invalid_reference as any batch.
    await rejected(app, () => c.post("/api/v1/tasks/batch", { task_ids: [t.id, "missing"], add_tag_ids: [mine] }), 422, "invalid_reference");
    // Another user's task, even with the user's own tag.
    const theirTask = await mkTask(o, { title: "theirs" });
    await rejected(app, () => c.post("/api/v1/tasks/batch", { task_ids: [theirTask.id], add_tag_ids: [mine] }), 422, "invalid_reference");
    expect(await get(c, t.id)).toMatchObject({ version: t.version, tags: [expect.objectContaining({ id: mine })] });
  });

  test(`at most ${TAG_IDS_MAX} of the user's tags per task, as tag_ids allows: an add over it is 422 naming the tasks, nothing changes`, async () => {
    const c = await signedInUser(app, admin, uname());
    const tags: string[] = [];
    for (let i = 0; i < TAG_IDS_MAX + 2; i++) tags.push(await mkTag(c, `t${i}`));
    const full = await mkTask(c, { title: "full", tag_ids: tags.slice(0, TAG_IDS_MAX) }); // 100
    const almost = await mkTask(c, { title: "almost", tag_ids: tags.slice(0, TAG_IDS_MAX - 1) }); // 99
    const light = await mkTask(c, { title: "light" });
    const extra = [tags[TAG_IDS_MAX]!, tags[TAG_IDS_MAX + 1]!];
    const r = await rejected(app, () => c.post("/api/v1/tasks/batch", { task_ids: [light.id, full.id, almost.id], add_tag_ids: extra }), 422, "validation_failed");
    expect(r.body.errors).toEqual([
      { path: "add_tag_ids", message: `task ${full.id} would have ${TAG_IDS_MAX + 2} tags, at most ${TAG_IDS_MAX}` },
      { path: "add_tag_ids", message: `task ${almost.id} would have ${TAG_IDS_MAX + 1} tags, at most ${TAG_IDS_MAX}` },
    ]);
    // A tag a task has already does not count twice; what is removed in the same batch makes room.
    expect((await c.post("/api/v1/tasks/batch", { task_ids: [full.id, almost.id], add_tag_ids: [tags[0]!] })).status).toBe(200);
    expect((await c.post("/api/v1/tasks/batch", { task_ids: [almost.id], add_tag_ids: [extra[0]] })).status).toBe(200);
    expect((await get(c, almost.id)).tags).toHaveLength(TAG_IDS_MAX);
    expect((await c.post("/api/v1/tasks/batch", { task_ids: [full.id, almost.id], add_tag_ids: extra, remove_tag_ids: [tags[1]!, tags[2]!] })).status).toBe(200);
    expect((await get(c, full.id)).tags).toHaveLength(TAG_IDS_MAX);
    expect((await get(c, almost.id)).tags).toHaveLength(TAG_IDS_MAX - 1);
  });

  test("a shared list: a viewer adds and removes their own tags (no edit right needed); the owner's tags stay, and count only for the owner", async () => {
    const owner = await signedInUser(app, admin, uname("own"));
    const viewer = await signedInUser(app, admin, uname("vi"));
    const list = await mkList(owner, "Shared");
    await share(owner, viewer, list, "viewer");
    const ownerTags: string[] = [];
    for (let i = 0; i < TAG_IDS_MAX; i++) ownerTags.push(await mkTag(owner, `o${i}`));
    const t = await mkTask(owner, { title: "t", list_id: list, tag_ids: ownerTags }); // the owner's 100
    const vt = await mkTag(viewer, "mine");
    const r = await viewer.post("/api/v1/tasks/batch?undo=true", { task_ids: [t.id], add_tag_ids: [vt] });
    expect(r.status).toBe(200);
    expect((await get(viewer, t.id)).tags.map((g: { id: string }) => g.id)).toEqual([vt]);
    expect((await get(owner, t.id)).tags).toHaveLength(TAG_IDS_MAX);
    // The viewer's remove and the undo touch only the viewer's own links.
    await rejected(app, () => viewer.post("/api/v1/tasks/batch", { task_ids: [t.id], remove_tag_ids: [ownerTags[0]!] }), 422, "invalid_reference");
    expect((await viewer.post("/api/v1/tasks/batch/undo", { undo_token: r.body.undo_token })).status).toBe(200);
    expect((await get(viewer, t.id)).tags).toEqual([]);
    expect((await get(owner, t.id)).tags).toHaveLength(TAG_IDS_MAX);
    // Anything else is an edit: refused for a viewer.
    await rejected(app, () => viewer.post("/api/v1/tasks/batch", { task_ids: [t.id], add_tag_ids: [vt], priority: 3 }), 403, "forbidden");
  });
});

interface Model {
  completed: boolean;
  due_at: string | null;
  title: string;
  version: number;
}

describe("a batch racing a PATCH", () => {
  test("leaves a state equal to some serial order (property)", async () => {
    const c = await signedInUser(app, admin, uname());
    const outcomes = new Set<string>();
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 2, max: 5 }),
        fc.array(fc.boolean(), { minLength: 5, maxLength: 5 }),
        fc.oneof(
          fc.record({ completed: fc.boolean() }),
          fc.record({ due_at: fc.constantFrom("2026-12-01", "2027-01-15", null) }),
          fc.record({ completed: fc.boolean(), due_at: fc.constantFrom("2026-12-01", null) }),
        ),
        fc.nat(4),
        fc.record({ title: fc.constantFrom("p1", "p2"), completed: fc.option(fc.boolean(), { nil: undefined }) }),
        fc.boolean(),
        async (n, picks, op, patchAt, patch, patchStartsFirst) => {
          const tasks: { id: string; title: string }[] = [];
          for (let i = 0; i < n; i++) tasks.push(await mkTask(c, { title: `t${i}` }));
          let chosen = tasks.filter((_, i) => picks[i]).map((t) => t.id);
          if (chosen.length === 0) chosen = [tasks[0]!.id];
          const target = tasks[patchAt % n]!;
          const patchBody: Record<string, unknown> = { version: 1, title: patch.title };
          if (patch.completed !== undefined) patchBody.completed = patch.completed;

          // Both in flight at once; which one is sent first varies, so both serial orders occur.
          const sendBatch = () => c.post("/api/v1/tasks/batch", { task_ids: chosen, ...op });
          const sendPatch = () => c.patch(`/api/v1/tasks/${target.id}`, patchBody);
          const [br, pr] = patchStartsFirst
            ? await Promise.all([sendPatch(), sendBatch()]).then(([p, b]) => [b, p] as const)
            : await Promise.all([sendBatch(), sendPatch()]);
          outcomes.add(`${pr.status}:${chosen.includes(target.id)}`);
          expect(br.status).toBe(200);
          const observed = new Map<string, Model>();
          for (const t of tasks) {
            const b = await get(c, t.id);
            observed.set(t.id, { completed: b.completed, due_at: b.due_at, title: b.title, version: b.version });
          }

          const start = (): Map<string, Model> => new Map(tasks.map((t) => [t.id, { completed: false, due_at: null, title: t.title, version: 1 }]));
          const applyBatch = (m: Map<string, Model>) => {
            for (const id of chosen) {
              const s = m.get(id)!;
              if ("completed" in op) s.completed = op.completed;
              if ("due_at" in op) s.due_at = op.due_at ?? null;
              s.version++;
            }
          };
          const applyPatch = (m: Map<string, Model>): number => {
            const s = m.get(target.id)!;
            if (s.version !== 1) return 409;
            s.title = patch.title;
            if (patch.completed !== undefined) s.completed = patch.completed;
            s.version++;
            return 200;
          };
          const batchFirst = start();
          applyBatch(batchFirst);
          const st1 = applyPatch(batchFirst);
          const patchFirst = start();
          const st2 = applyPatch(patchFirst);
          applyBatch(patchFirst);
          const matches = (status: number, m: Map<string, Model>) =>
            pr.status === status && [...m].every(([id, s]) => JSON.stringify(observed.get(id)) === JSON.stringify(s));
          expect(matches(st1, batchFirst) || matches(st2, patchFirst)).toBe(true);
        },
      ),
      { numRuns: 40 },
    );
    // The race really went both ways on an overlapping task: the PATCH won (200) and lost (409).
    expect(outcomes.has("200:true")).toBe(true);
    expect(outcomes.has("409:true")).toBe(true);
  });
});
