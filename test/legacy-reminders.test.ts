import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { FixedClock, makeTestApp, rejected, setupAdmin, signedInUser, type TestClient } from "./helpers/app";
import { mkList, mkTask, uname } from "./helpers/tasks";
import { share } from "./sharing/helpers";

/**
 * Reminders in the legacy JSON/CSV files: a `reminders` field on each task, habit and countdown
 * record (the user's own, as the API creates them), restored by the legacy restore with new ids and
 * scheduled again; invalid ones refuse the file and change nothing; a shared list's task carries
 * only the exporting member's reminders.
 */
const clock = new FixedClock(new Date("2026-11-20T10:00:00.000Z"));
const app = makeTestApp({ clock });
let admin: TestClient;
let alice: TestClient;

type Rem = { kind: string; minutes_before: number | null; at: string | null; time: string | null; days_before: number | null; next_fire_at: string | null };
const defs = (items: Rem[]) => items.map(({ kind, minutes_before, at, time, days_before }) => ({ kind, minutes_before, at, time, days_before }));

async function remindersByTitle(c: TestClient): Promise<Record<string, Rem[]>> {
  const out: Record<string, Rem[]> = {};
  const tasks = (await c.get("/api/v1/tasks?limit=100")).body.items as { id: string; title: string }[];
  for (const t of tasks) out[`task:${t.title}`] = (await c.get(`/api/v1/tasks/${t.id}/reminders`)).body.items;
  for (const h of (await c.get("/api/v1/habits")).body.items as { id: string; name: string }[]) out[`habit:${h.name}`] = (await c.get(`/api/v1/habits/${h.id}/reminders`)).body.items;
  for (const x of (await c.get("/api/v1/countdowns")).body.items as { id: string; name: string }[]) out[`countdown:${x.name}`] = (await c.get(`/api/v1/countdowns/${x.id}/reminders`)).body.items;
  return out;
}
const definitions = (m: Record<string, Rem[]>) => Object.fromEntries(Object.entries(m).map(([k, v]) => [k, defs(v)]));

beforeAll(async () => {
  admin = await setupAdmin(app);
  alice = await signedInUser(app, admin, uname("alice"), { timezone: "UTC" });
  const timed = await mkTask(alice, { title: "Dentist", due_at: "2026-12-01T09:00:00Z" });
  await alice.post(`/api/v1/tasks/${timed.id}/reminders`, { kind: "before_due", minutes_before: 60 });
  await alice.post(`/api/v1/tasks/${timed.id}/reminders`, { kind: "at", at: "2026-11-30T18:00:00+01:00" });
  await mkTask(alice, { title: "No reminder" });
  const h = await alice.post("/api/v1/habits", { name: "Stretch", frequency: { type: "daily" }, start_date: "2026-11-01" });
  await alice.post(`/api/v1/habits/${h.body.id}/reminders`, { kind: "daily", time: "07:30" });
  const cd = await alice.post("/api/v1/countdowns", { name: "Birthday", date: "2027-03-14", type: "anniversary", repeat: "yearly" });
  expect(cd.status).toBe(201);
  await alice.post(`/api/v1/countdowns/${cd.body.id}/reminders`, { kind: "days_before", days_before: 3, time: "09:00" });
});
afterAll(() => app.close());

describe("legacy files carry reminders", () => {
  test("JSON: each task, habit and countdown record has its reminders as the API creates them", async () => {
    const d = (await alice.get("/api/v1/export")).body;
    const dentist = d.tasks.find((t: { title: string }) => t.title === "Dentist");
    expect(dentist.reminders).toEqual([
      { kind: "before_due", minutes_before: 60 },
      { kind: "at", at: "2026-11-30T17:00:00.000Z" },
    ]);
    expect(d.tasks.find((t: { title: string }) => t.title === "No reminder").reminders).toEqual([]);
    expect(d.habits[0].reminders).toEqual([{ kind: "daily", time: "07:30" }]);
    expect(d.countdowns[0].reminders).toEqual([{ kind: "days_before", days_before: 3, time: "09:00" }]);
  });

  for (const format of ["json", "csv"] as const) {
    test(`${format.toUpperCase()} round trip: restored with new ids, scheduled again as the originals were`, async () => {
      const file = format === "json" ? (await alice.get("/api/v1/export")).body : (await alice.get("/api/v1/export.csv")).text;
      if (format === "csv") expect(file.split("\r\n")[0]).toContain(",reminders,");
      const bob = await signedInUser(app, admin, uname(`bob${format}`), { timezone: "UTC" });
      const r = format === "json" ? await bob.post("/api/v1/restore?mode=replace", file) : await bob.request("POST", "/api/v1/restore.csv?mode=replace", { body: file, headers: { "content-type": "text/csv" } });
      expect(r.status).toBe(200);
      // Stored unarmed; the scheduler's next pass computes each schedule from the restored target.
      await app.handle.scheduler.runDue();
      const mine = await remindersByTitle(alice);
      const theirs = await remindersByTitle(bob);
      expect(definitions(theirs)).toEqual(definitions(mine));
      const fires = (m: Record<string, Rem[]>) => Object.fromEntries(Object.entries(m).map(([k, v]) => [k, v.map((x) => x.next_fire_at)]));
      expect(fires(theirs)).toEqual(fires(mine));
      expect(fires(theirs)["task:Dentist"]).toEqual(["2026-12-01T08:00:00.000Z", "2026-11-30T17:00:00.000Z"]);
      const aliceIds = new Set(Object.values(mine).flat().map((x) => (x as unknown as { id: string }).id));
      for (const x of Object.values(theirs).flat()) expect(aliceIds.has((x as unknown as { id: string }).id)).toBe(false);
      // The file exported again by bob carries the same reminders.
      const again = (await bob.get("/api/v1/export")).body;
      expect(again.tasks.find((t: { title: string }) => t.title === "Dentist").reminders).toHaveLength(2);
    });
  }

  test("merge: a record the user already has keeps its own reminders (the file's are not added twice)", async () => {
    const file = (await alice.get("/api/v1/export")).body;
    const before = definitions(await remindersByTitle(alice));
    expect((await alice.post("/api/v1/restore?mode=merge", file)).status).toBe(200);
    expect(definitions(await remindersByTitle(alice))).toEqual(before);
  });

  test("files without the field (made before it) restore, with no reminders", async () => {
    const file = (await alice.get("/api/v1/export")).body;
    for (const k of ["tasks", "habits", "countdowns"]) for (const r of file[k]) delete r.reminders;
    const carol = await signedInUser(app, admin, uname("carol"));
    expect((await carol.post("/api/v1/restore?mode=replace", file)).status).toBe(200);
    expect(Object.values(await remindersByTitle(carol)).flat()).toEqual([]);
  });

  test("an invalid reminder refuses the file with its path and changes nothing", async () => {
    const dave = await signedInUser(app, admin, uname("dave"));
    const base = (await alice.get("/api/v1/export")).body;
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a legacy document damaged field by field
    const cases: [(f: any) => void, RegExp][] = [
      [(f) => (f.tasks[0].reminders = [{ kind: "daily", time: "08:00" }]), /^tasks\.0\.reminders 0\.kind$/],
      [(f) => (f.tasks[0].reminders = [{ kind: "before_due" }]), /^tasks\.0\.reminders 0\.minutes_before$/],
      [(f) => (f.tasks[0].reminders = [{ kind: "at", at: "tomorrow" }]), /^tasks\.0\.reminders 0\.at$/],
      [(f) => (f.habits[0].reminders = [{ kind: "daily", time: "25:00" }]), /^habits\.0\.reminders 0\.time$/],
      [(f) => (f.countdowns[0].reminders = [{ kind: "days_before", days_before: 3, time: "09:00", extra: 1 }]), /^countdowns\.0\.reminders 0\.extra$/],
      [(f) => (f.tasks[0].reminders = Array.from({ length: 11 }, () => ({ kind: "before_due", minutes_before: 0 }))), /^tasks\.0\.reminders$/],
    ];
    for (const [damage, path] of cases) {
      const f = structuredClone(base);
      damage(f);
      const r = await rejected(app, () => dave.post("/api/v1/restore?mode=replace", f), 422, "validation_failed");
      expect(r.body.errors.map((e: { path: string }) => e.path)).toEqual([expect.stringMatching(path)]);
    }
  });

  test("CSV: a reminders cell that is not a list of reminders refuses the file, naming its line and column", async () => {
    const erin = await signedInUser(app, admin, uname("erin"));
    const csv = (await alice.get("/api/v1/export.csv")).text;
    const lines = csv.split("\r\n");
    const i = lines.findIndex((l) => l.startsWith("task,") && l.includes("Dentist"));
    lines[i] = lines[i]!.replace(/"\[\{""kind"":""before_due""[^\r\n]*?\]"/, '"[{""kind"":""daily"",""time"":""08:00""}]"');
    expect(lines[i]).toContain('""daily""');
    const r = await rejected(app, () => erin.request("POST", "/api/v1/restore.csv?mode=replace", { body: lines.join("\r\n"), headers: { "content-type": "text/csv" } }), 422, "validation_failed");
    expect(r.body.errors[0].path).toMatch(/^line \d+, column \d+ \(reminders\)/);
  });

  test("a shared list's task carries only the exporting member's own reminders", async () => {
    const owner = await signedInUser(app, admin, uname("owner"));
    const member = await signedInUser(app, admin, uname("member"));
    const listId = await mkList(owner, "Family");
    await share(owner, member, listId, "editor");
    const t = await mkTask(owner, { title: "Shared chore", list_id: listId, due_at: "2026-12-05" });
    expect((await owner.post(`/api/v1/tasks/${t.id}/reminders`, { kind: "before_due", minutes_before: 0 })).status).toBe(201);
    expect((await member.post(`/api/v1/tasks/${t.id}/reminders`, { kind: "before_due", minutes_before: 30 })).status).toBe(201);
    const d = (await owner.get("/api/v1/export")).body;
    expect(d.tasks.find((x: { title: string }) => x.title === "Shared chore").reminders).toEqual([{ kind: "before_due", minutes_before: 0 }]);
  });
});
