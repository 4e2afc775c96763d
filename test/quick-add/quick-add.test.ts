// The quick-add parser on the sentences (fixed `now`, named zones), and its output sent
// through the real HTTP API: the server accepts what the parser produces and saves that task.
import { afterAll, describe, expect, test } from "bun:test";
import { parseDateAndRepeat, parseQuickAdd, taskCreateBody, type QuickAddContext } from "../../src/core/quick-add";
import { FixedClock, makeTestApp, setupAdmin } from "../helpers/app";
import { mkList, mkTag } from "../helpers/tasks";

// Thursday 26 November 2026, 11:00 in Berlin.
const NOW = new Date("2026-11-26T10:00:00.000Z");
const ctx: QuickAddContext = {
  now: NOW,
  timeZone: "Europe/Berlin",
  lists: [
    { id: "L1", name: "Work" },
    { id: "L2", name: "Home Stuff" },
  ],
  tags: [{ id: "T1", name: "work" }],
};
const kinds = (s: string, c = ctx) => parseQuickAdd(s, c).tokens.map((t) => `${t.kind}:${t.text}`);

describe("quick add: sentences", () => {
  test("the issue's example", () => {
    const q = parseQuickAdd("Call Bob tomorrow at 3pm #work !high", ctx);
    expect(q).toMatchObject({ title: "Call Bob", due_at: "2026-11-27T14:00:00.000Z", recurrence: null, tags: [{ name: "work", id: "T1" }], list: null, priority: 3 });
    expect(kinds("Call Bob tomorrow at 3pm #work !high")).toEqual(["date:tomorrow at 3pm", "tag:#work", "priority:!high"]);
  });

  test.each([
    ["Report next fri", "Report", "2026-12-04"],
    ["Report in 2 weeks", "Report", "2026-12-10"],
    ["Gift Dec 24", "Gift", "2026-12-24"],
    ["Gift tomorrow 3pm", "Gift", "2026-11-27T14:00:00.000Z"],
    ["Stretch in 3 hours", "Stretch", "2026-11-26T13:00:00.000Z"],
    ["Plan 2026-12-01", "Plan", "2026-12-01"],
  ])("date: %p", (text, title, due) => {
    expect(parseQuickAdd(text, ctx)).toMatchObject({ title, due_at: due, recurrence: null });
  });

  test("a date the API cannot hold (a year beyond 9999) stays text", () => {
    expect(parseQuickAdd("Capsule in 20000 years", ctx)).toMatchObject({ title: "Capsule in 20000 years", due_at: null, tokens: [] });
  });

  test("the same words in another zone name another instant", () => {
    expect(parseQuickAdd("x tomorrow at 3pm", { ...ctx, timeZone: "America/New_York" }).due_at).toBe("2026-11-27T20:00:00.000Z");
    // 23:30 on the 26th in UTC is already the 27th in Tokyo: "tomorrow" is the 28th there.
    expect(parseQuickAdd("x tomorrow", { ...ctx, now: new Date("2026-11-26T23:30:00Z"), timeZone: "Asia/Tokyo" }).due_at).toBe("2026-11-28");
    // Across the DST change (New York falls back on 1 November 2026): 09:00 stays 09:00 local.
    expect(parseQuickAdd("x Nov 2 at 9am", { ...ctx, now: new Date("2026-10-30T12:00:00Z"), timeZone: "America/New_York" }).due_at).toBe("2026-11-02T14:00:00.000Z");
  });

  test.each([
    ["Gym every monday", "2026-11-30", { kind: "rrule", rrule: "FREQ=WEEKLY;BYDAY=MO", timezone: "Europe/Berlin" }],
    ["Review every 2 weeks", "2026-11-26", { kind: "rrule", rrule: "FREQ=WEEKLY;INTERVAL=2", timezone: "Europe/Berlin" }],
    ["Rent every month on the last day", "2026-11-30", { kind: "rrule", rrule: "FREQ=MONTHLY;BYMONTHDAY=-1", timezone: "Europe/Berlin" }],
    ["Water plants every day after completion", "2026-11-26", { kind: "after_completion", interval: 1, unit: "day" }],
    ["Standup every weekday at 9:30", "2026-11-27T08:30:00.000Z", { kind: "rrule", rrule: "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR", timezone: "Europe/Berlin" }],
    ["Swim every mon, wed and fri at 7am", "2026-11-27T06:00:00.000Z", { kind: "rrule", rrule: "FREQ=WEEKLY;BYDAY=MO,WE,FR", timezone: "Europe/Berlin" }],
    ["Board every other month on the first monday", "2026-12-07", { kind: "rrule", rrule: "FREQ=MONTHLY;INTERVAL=2;BYDAY=1MO", timezone: "Europe/Berlin" }],
    ["Invoice every month on the 15th", "2026-12-15", { kind: "rrule", rrule: "FREQ=MONTHLY;BYMONTHDAY=15", timezone: "Europe/Berlin" }],
    // An ordinal before a weekday is a day of the month (as Todoist reads it), not every third week.
    ["Book club every 3rd friday", "2026-12-18", { kind: "rrule", rrule: "FREQ=MONTHLY;BYDAY=3FR", timezone: "Europe/Berlin" }],
    ["Mass every last sunday of the month", "2026-11-29", { kind: "rrule", rrule: "FREQ=MONTHLY;BYDAY=-1SU", timezone: "Europe/Berlin" }],
    ["Bins every 2 fridays", "2026-11-27", { kind: "rrule", rrule: "FREQ=WEEKLY;INTERVAL=2;BYDAY=FR", timezone: "Europe/Berlin" }],
    ["Filter every! 3 weeks", "2026-11-26", { kind: "after_completion", interval: 3, unit: "week" }],
    ["Dentist yearly starting Dec 24", "2026-12-24", { kind: "rrule", rrule: "FREQ=YEARLY", timezone: "Europe/Berlin" }],
  ])("repeat: %p", (text, due, recurrence) => {
    const q = parseQuickAdd(text, ctx);
    expect(q.due_at).toBe(due);
    expect(q.recurrence).toEqual(recurrence as never);
  });

  test("tags, lists, priorities", () => {
    const q = parseQuickAdd("Taxes ~home stuff #Work #new-tag #work #12 !2", ctx);
    expect(q).toMatchObject({ title: "Taxes #12", list: { id: "L2", name: "Home Stuff" }, priority: 2, tags: [{ name: "work", id: "T1" }, { name: "new-tag", id: null }] });
    expect(parseQuickAdd("x ~Nowhere !low", ctx)).toMatchObject({ title: "x ~Nowhere", list: null, priority: 1 });
    expect(parseQuickAdd("x !1 !3", ctx)).toMatchObject({ title: "x !3", priority: 1 });
    expect(parseQuickAdd("a!high b#tag c~Work", ctx).tokens).toEqual([]);
    expect(parseQuickAdd("x #tag, and more", ctx).tags).toEqual([{ name: "tag", id: null }]);
  });

  test("undo: an ignored token stays text and nothing else takes its place", () => {
    const q = parseQuickAdd("Read Tomorrow Never Dies tomorrow", { ...ctx, ignore: [{ kind: "date", text: "Tomorrow" }] });
    expect(q).toMatchObject({ title: "Read Tomorrow Never Dies", due_at: "2026-11-27" });
    const both = parseQuickAdd("Read Tomorrow Never Dies tomorrow", { ...ctx, ignore: [{ kind: "date", text: "Tomorrow" }, { kind: "date", text: "tomorrow" }] });
    expect(both).toMatchObject({ title: "Read Tomorrow Never Dies tomorrow", due_at: null, tokens: [] });
  });

  test("other locales where chrono parses them", () => {
    expect(parseQuickAdd("Anna treffen morgen um 14 Uhr", { ...ctx, locale: "de" })).toMatchObject({ title: "Anna treffen", due_at: "2026-11-27T13:00:00.000Z" });
    expect(parseQuickAdd("Appeler Marie demain à 14h", { ...ctx, locale: "fr" })).toMatchObject({ title: "Appeler Marie", due_at: "2026-11-27T13:00:00.000Z" });
  });

  test("parseDateAndRepeat reads a bare date column (Todoist's DATE)", () => {
    const c = { now: NOW, timeZone: "Europe/Berlin" };
    expect(parseDateAndRepeat("every monday", c)).toMatchObject({ due_at: "2026-11-30", recurrence: { kind: "rrule", rrule: "FREQ=WEEKLY;BYDAY=MO" } });
    expect(parseDateAndRepeat("Dec 24", c)).toMatchObject({ due_at: "2026-12-24", recurrence: null });
    expect(parseDateAndRepeat("tomorrow 3pm", c)).toMatchObject({ due_at: "2026-11-27T14:00:00.000Z", recurrence: null });
    expect(parseDateAndRepeat("#x !high", c)).toMatchObject({ due_at: null, recurrence: null, tokens: [] });
  });
});

describe("quick add: the server accepts and saves what the parser produces", () => {
  const app = makeTestApp({ clock: new FixedClock(NOW) });
  afterAll(() => app.close());

  test.each([
    "Call Bob tomorrow at 3pm #work !high",
    "Pay rent every month on the last day ~Home Stuff",
    "Water plants every day after completion #garden",
    "Standup every weekday at 9:30 !1",
    "Gift Dec 24 #work #presents",
  ])("%p", async (text) => {
    const c = await ensureUser();
    const lists = (await c.get("/api/v1/lists")).body.items as { id: string; name: string }[];
    const tags = (await c.get("/api/v1/tags")).body.items as { id: string; name: string }[];
    const q = parseQuickAdd(text, { now: NOW, timeZone: "Europe/Berlin", lists, tags });
    const tagIds = [];
    for (const t of q.tags) tagIds.push(t.id ?? (await mkTag(c, t.name)));
    const r = await c.post("/api/v1/tasks", taskCreateBody(q, { tagIds }));
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ title: q.title, due_at: q.due_at, priority: q.priority ?? 0, list_id: q.list?.id ?? lists[0]!.id });
    expect((r.body.tags as { name: string }[]).map((t) => t.name).sort()).toEqual(q.tags.map((t) => t.name).sort());
    if (q.recurrence) {
      const rec = await c.post("/api/v1/recurrences", { task_id: r.body.id, ...q.recurrence });
      expect(rec.status).toBe(201);
      expect(rec.body).toMatchObject(q.recurrence);
    }
  });

  let user: Awaited<ReturnType<typeof setupAdmin>> | null = null;
  async function ensureUser() {
    if (!user) {
      user = await setupAdmin(app);
      expect((await user.patch("/api/v1/me", { timezone: "Europe/Berlin" })).status).toBe(200);
      await mkList(user, "Home Stuff");
      await mkTag(user, "work");
    }
    return user;
  }
});
