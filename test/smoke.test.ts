import { afterAll, expect, test } from "bun:test";
import { makeTestApp, setupAdmin } from "./helpers/app";

const app = makeTestApp();
afterAll(() => app.close());

test("setup, me, csrf, openapi", async () => {
  const c = await setupAdmin(app);
  const me = await c.get("/api/v1/me");
  expect(me.status).toBe(200);
  expect(me.body.username).toBe("owner");
  const noCsrf = await c.patch("/api/v1/me", { display_name: "X" }, { csrf: false });
  expect(noCsrf.status).toBe(403);
  const ok = await c.patch("/api/v1/me", { display_name: "X" });
  expect(ok.status).toBe(200);
  const bad = await c.patch("/api/v1/me", { display_name: "X", nope: 1 });
  expect(bad.status).toBe(422);
  console.log(JSON.stringify(bad.body));
  const doc = await c.get("/api/openapi.json");
  expect(doc.status).toBe(200);
  console.log(JSON.stringify(doc.body.paths["/api/v1/me"]).slice(0, 1500));
  const audit = await c.get("/api/v1/audit-logs?limit=1");
  console.log(JSON.stringify(audit.body));
  const a2 = await c.get("/api/v1/audit-logs?limit=1&cursor=" + audit.body.next_cursor + "x");
  console.log(a2.status, JSON.stringify(a2.body));
  const mal = await c.request("PATCH", "/api/v1/me", { body: "{bad", headers: { "content-type": "application/json" } });
  console.log(mal.status, JSON.stringify(mal.body));
  const nf = await c.get("/api/v1/nothing");
  console.log(nf.status, JSON.stringify(nf.body));
});
