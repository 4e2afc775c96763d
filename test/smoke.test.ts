import { afterAll, expect, test } from "bun:test";
import { makeTestApp, setupAdmin } from "./helpers/app";

// The shortest path through the platform; every rule has its own tests under test/platform/.
const app = makeTestApp();
afterAll(() => app.close());

test("setup, me, CSRF, unknown fields, OpenAPI, audit cursor, malformed JSON, unknown route", async () => {
  const c = await setupAdmin(app);
  const me = await c.get("/api/v1/me");
  expect(me.status).toBe(200);
  expect(me.body.username).toBe("owner");
  expect((await c.patch("/api/v1/me", { display_name: "X" }, { csrf: false })).status).toBe(403);
  expect((await c.patch("/api/v1/me", { display_name: "X" })).status).toBe(200);
  const bad = await c.patch("/api/v1/me", { display_name: "X", nope: 1 });
  expect(bad.status).toBe(422);
  expect(bad.body.errors).toContainEqual({ path: "nope", message: "unknown field" });
  const doc = await c.get("/api/openapi.json");
  expect(doc.status).toBe(200);
  expect(doc.body.paths["/api/v1/me"].get.responses["200"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/Me" });
  const limitParam = doc.body.paths["/api/v1/audit-logs"].get.parameters.find((p: { name: string }) => p.name === "limit");
  expect(limitParam.required).toBe(false);
  expect(limitParam.schema.default).toBe(50);
  const audit = await c.get("/api/v1/audit-logs?limit=1");
  expect(audit.body.items).toHaveLength(1);
  const tampered = await c.get(`/api/v1/audit-logs?limit=1&cursor=${audit.body.next_cursor}x`);
  expect(tampered.status).toBe(422);
  expect(tampered.body.code).toBe("invalid_cursor");
  const mal = await c.request("PATCH", "/api/v1/me", { body: "{bad", headers: { "content-type": "application/json" } });
  expect(mal.status).toBe(400);
  expect(mal.body.code).toBe("malformed_request");
  const nf = await c.get("/api/v1/nothing");
  expect(nf.status).toBe(404);
  expect(nf.body.code).toBe("not_found");
});
