import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { charCount } from "../../src/core/text";
import { makeTestApp, rejected, setupAdmin, signedInUser, type TestApp, type TestClient } from "../helpers/app";
import { uname } from "../helpers/tasks";

/**
 * A text limit counts characters as the OpenAPI document's maxLength does: code points. zod's
 * `.max()` counts UTF-16 units, so 101 emoji were refused under a documented limit of 200. Each
 * limit is read from /api/openapi.json and driven at its boundary with a character outside the
 * Basic Multilingual Plane (two UTF-16 units): max of them is accepted, max + 1 refused with
 * 422 validation_failed on the field, nothing changed.
 */

const ASTRAL = "😀"; // U+1F600: one code point, two UTF-16 units

describe("charCount", () => {
  test("counts code points, as [...s].length does (lone surrogates count one each)", () => {
    const unit = fc.oneof(
      fc.constantFrom("a", "é", "中", ASTRAL, "𝄞", "\ud800", "\udc00", "\u0000"),
      fc.string({ unit: "grapheme" }),
    );
    fc.assert(fc.property(fc.array(unit, { maxLength: 30 }), (parts) => {
      const s = parts.join("");
      expect(charCount(s)).toBe([...s].length);
    }));
    expect(charCount(ASTRAL.repeat(3))).toBe(3);
    expect(charCount(`${ASTRAL}\ud800`)).toBe(2);
    expect(charCount("")).toBe(0);
  });
});

type Case = {
  /** The operation in the document, e.g. `post /api/v1/tasks`. */
  op: string;
  field: string;
  /** The request: path (with ids filled in) and the body around the field's value. */
  send: (c: TestClient, value: string) => Promise<{ status: number; body: any; text: string; headers: Headers }>;
};

describe("text limits at the documented maxLength, in astral characters", () => {
  let app: TestApp;
  let c: TestClient;
  let doc: any;
  let habitId: string;
  beforeAll(async () => {
    app = makeTestApp();
    const admin = await setupAdmin(app);
    c = await signedInUser(app, admin, uname("txt"));
    doc = (await c.get("/api/openapi.json")).body;
    habitId = (await c.post("/api/v1/habits", { name: "water", start_date: "2026-01-01" })).body.id;
  });
  afterAll(() => app.close());

  const cases: Case[] = [
    { op: "post /api/v1/tasks", field: "title", send: (c, v) => c.post("/api/v1/tasks", { title: v }) },
    { op: "post /api/v1/tasks", field: "description", send: (c, v) => c.post("/api/v1/tasks", { title: "t", description: v }) },
    { op: "post /api/v1/memos", field: "content", send: (c, v) => c.post("/api/v1/memos", { content: v }) },
    { op: "post /api/v1/lists", field: "name", send: (c, v) => c.post("/api/v1/lists", { name: v }) },
    { op: "post /api/v1/folders", field: "name", send: (c, v) => c.post("/api/v1/folders", { name: v }) },
    { op: "post /api/v1/tags", field: "name", send: (c, v) => c.post("/api/v1/tags", { name: v, color: "#112233" }) },
    { op: "post /api/v1/habits", field: "name", send: (c, v) => c.post("/api/v1/habits", { name: v }) },
    { op: "post /api/v1/habits", field: "icon", send: (c, v) => c.post("/api/v1/habits", { name: "h", icon: v }) },
    { op: "post /api/v1/habits", field: "unit", send: (c, v) => c.post("/api/v1/habits", { name: "h", unit: v }) },
    { op: "put /api/v1/habits/{habit_id}/logs/{date}", field: "note", send: (c, v) => c.put(`/api/v1/habits/${habitId}/logs/2026-01-05`, { value: 1, note: v }) },
    { op: "post /api/v1/countdowns", field: "name", send: (c, v) => c.post("/api/v1/countdowns", { name: v, date: "2030-01-01" }) },
    { op: "post /api/v1/countdowns", field: "icon", send: (c, v) => c.post("/api/v1/countdowns", { name: "c", date: "2030-01-01", icon: v }) },
    { op: "patch /api/v1/me", field: "display_name", send: (c, v) => c.patch("/api/v1/me", { display_name: v }) },
  ];

  function documentedMax(op: string, field: string): number {
    const [method, path] = op.split(" ") as [string, string];
    const schema = doc.paths[path][method].requestBody.content["application/json"].schema;
    const prop = schema.properties[field];
    const max = prop.maxLength ?? prop.anyOf?.find((s: { maxLength?: number }) => s.maxLength !== undefined)?.maxLength;
    expect(typeof max).toBe("number");
    return max as number;
  }

  for (const k of cases) {
    test(`${k.op} ${k.field}`, async () => {
      const max = documentedMax(k.op, k.field);
      const ok = await k.send(c, ASTRAL.repeat(max));
      expect(ok.status < 300 ? "accepted" : ok.text).toBe("accepted");
      const r = await rejected(app, () => k.send(c, ASTRAL.repeat(max + 1)), 422, "validation_failed");
      expect(r.body.errors.map((e: { path: string }) => e.path)).toContain(k.field);
    });
  }

  test("an id limit too: 64 astral characters are an id that names nothing (422 invalid_reference), 65 are too long", async () => {
    const max = documentedMax("post /api/v1/lists", "folder_id");
    const named = await rejected(app, () => c.post("/api/v1/lists", { name: "l", folder_id: ASTRAL.repeat(max) }), 422, "invalid_reference");
    expect(named.body.errors.map((e: { path: string }) => e.path)).toContain("folder_id");
    const r = await rejected(app, () => c.post("/api/v1/lists", { name: "l", folder_id: ASTRAL.repeat(max + 1) }), 422, "validation_failed");
    expect(r.body.errors.map((e: { path: string }) => e.path)).toContain("folder_id");
  });
});
