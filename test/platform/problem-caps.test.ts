import { afterAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { strToU8 } from "fflate";
import { makeTestApp, rejected, setupAdmin, type TestResponse } from "../helpers/app";
import { expectProblem } from "../helpers/problem";
import { entriesOf, exportBytes, preflight, rebuild } from "../backup/helpers";
import { PROBLEM_LIST_BYTES_MAX, PROBLEM_LIST_MAX, PROBLEM_MESSAGE_MAX, capErrors, capText, quoteValue } from "../../src/core/problem";

// Requests over a real stack on a shared, loaded machine: generous per-test time.
setDefaultTimeout(60_000);

/**
 * Every problem answer is small whatever produced it (issue 11: a 4.9 MB backup answered a 743 MiB
 * 422). The caps live in core/problem-caps.ts and are applied by toProblem() to every answer.
 */

const app = makeTestApp();
afterAll(() => app.close());
const c = await setupAdmin(app);

/** What every capped answer satisfies. */
function expectCapped(r: TestResponse, maxChars = 40_000): void {
  expect(r.text.length).toBeLessThan(maxChars);
  expect(r.body.detail === undefined || r.body.detail.length <= PROBLEM_MESSAGE_MAX).toBe(true);
  for (const e of r.body.errors ?? []) {
    expect(e.path.length).toBeLessThanOrEqual(PROBLEM_MESSAGE_MAX);
    expect(e.message.length).toBeLessThanOrEqual(PROBLEM_MESSAGE_MAX);
  }
  expect((r.body.errors ?? []).length).toBeLessThanOrEqual(PROBLEM_LIST_MAX + 1);
}

describe("validation problems", () => {
  test("20,000 unknown fields: 100 listed, then one entry counting the rest", async () => {
    const body: Record<string, unknown> = { title: "x" };
    for (let i = 0; i < 20_000; i++) body[`k${i}`] = 1;
    const r = await rejected(app, () => c.post("/api/v1/tasks", body), 422, "validation_failed");
    expectProblem(r, 422, "validation_failed");
    expectCapped(r);
    expect(r.body.errors).toHaveLength(PROBLEM_LIST_MAX + 1);
    expect(r.body.errors[0]).toEqual({ path: "k0", message: "unknown field" });
    expect(r.body.errors[PROBLEM_LIST_MAX]).toEqual({ path: "", message: `${20_000 - PROBLEM_LIST_MAX} more problems not listed` });
  });

  test("an unknown field named by 500,000 characters is quoted by a prefix only", async () => {
    const key = "k".repeat(500_000);
    const r = await rejected(app, () => c.post("/api/v1/tasks", { title: "x", [key]: 1 }), 422, "validation_failed");
    expectCapped(r, 2_000);
    expect(r.body.errors[0].path).toBe(`${"k".repeat(PROBLEM_MESSAGE_MAX - 1)}…`);
  });

  test("an array of 100,000 wrong items in a body field", async () => {
    const r = await rejected(app, () => c.post("/api/v1/tasks/batch", { task_ids: Array.from({ length: 100_000 }, (_, i) => i), completed: true }), 422, "validation_failed");
    expectProblem(r, 422, "validation_failed");
    expectCapped(r);
  });
});

describe("restore problems", () => {
  test("a legacy restore naming 300 unknown keys of 20,000 characters answers a small 422", async () => {
    const tasks = Array.from({ length: 300 }, (_, i) => ({ title: `t${i}`, [`${i}${"x".repeat(20_000)}`]: 1 }));
    const r = await rejected(app, () => c.post("/api/v1/restore?mode=merge", { format: "app-legacy", version: 1, tasks }), 422, "validation_failed");
    expectProblem(r, 422, "validation_failed");
    expectCapped(r);
  }, 60_000);

  test("a backup whose memos each carry an unknown key of 40,000 characters answers a small 422", async () => {
    await c.post("/api/v1/memos", { content: "hello" });
    const entries = entriesOf(await exportBytes(app, c));
    const memos = JSON.parse(new TextDecoder().decode(entries["data/memos.json"]!)) as Record<string, unknown>[];
    const one = memos[0]!;
    // Random letters: the archive's compression-ratio check must not be what refuses it.
    const randomKey = () => Buffer.from(crypto.getRandomValues(new Uint8Array(30_000))).toString("base64");
    const many = Array.from({ length: 200 }, () => ({ ...one, id: crypto.randomUUID(), [randomKey()]: 1 }));
    entries["data/memos.json"] = strToU8(JSON.stringify(many));
    const r = await preflight(c, rebuild(entries));
    expect(r.status).toBe(422);
    expectProblem(r, 422, r.body.code);
    expectCapped(r);
  }, 60_000);
});

describe("the caps themselves", () => {
  test("capText never splits a surrogate pair and marks the cut", () => {
    const s = `${"a".repeat(PROBLEM_MESSAGE_MAX - 2)}😀😀😀`;
    const cut = capText(s);
    expect(cut.length).toBeLessThanOrEqual(PROBLEM_MESSAGE_MAX);
    expect(cut.endsWith("…")).toBe(true);
    expect(cut.isWellFormed()).toBe(true);
    expect(capText("short")).toBe("short");
  });

  test("quoteValue quotes at most a prefix of a user's value", () => {
    expect(quoteValue("abc")).toBe('"abc"');
    expect(quoteValue("z".repeat(10_000)).length).toBeLessThan(50);
  });

  test("capErrors: count, size, and a producer's own count of what it left out", () => {
    const many = Array.from({ length: 1000 }, (_, i) => ({ path: `p${i}`, message: "m" }));
    const capped = capErrors(many);
    expect(capped).toHaveLength(PROBLEM_LIST_MAX + 1);
    expect(capped.at(-1)).toEqual({ path: "", message: "900 more problems not listed" });
    // A producer that stopped at the cap and counted the rest: the count is kept, not recounted.
    const fromProducer = capErrors([...many.slice(0, PROBLEM_LIST_MAX), { path: "", message: "5000 more problems not listed" }]);
    expect(fromProducer.at(-1)).toEqual({ path: "", message: "5000 more problems not listed" });
    expect(fromProducer).toHaveLength(PROBLEM_LIST_MAX + 1);
    // Long entries: the list stops by size before the count.
    const long = Array.from({ length: 100 }, () => ({ path: "\u0001".repeat(1000), message: "\u0002".repeat(1000) }));
    const bySize = capErrors(long);
    expect(Buffer.byteLength(JSON.stringify(bySize))).toBeLessThan(PROBLEM_LIST_BYTES_MAX + 200);
    const wide = capErrors(Array.from({ length: 100 }, () => ({ path: "任".repeat(1000), message: "务".repeat(1000) })));
    expect(Buffer.byteLength(JSON.stringify(wide))).toBeLessThan(PROBLEM_LIST_BYTES_MAX + 200);
    expect(bySize.at(-1)!.message).toMatch(/^\d+ more problems? not listed$/);
  });
});
