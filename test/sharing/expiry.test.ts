// sharing.md: invitations expire after 14 days. Its own app: moving the clock two weeks ends
// every session (idle expiry), so the users sign in again afterwards.
import { afterAll, expect, test } from "bun:test";
import { makeTestApp, setupAdmin, signedInUser, type TestApp } from "../helpers/app";
import { FixedClock } from "../../src/core/time";
import { mkList, rejected, uname } from "../helpers/tasks";

const clock = new FixedClock(new Date("2026-11-20T10:00:00.000Z"));
const app = makeTestApp({ clock });
const admin = await setupAdmin(app);
afterAll(() => app.close());

async function login(a: TestApp, username: string) {
  const c = a.client();
  expect((await c.post("/api/v1/auth/login", { username, password: `${username}-password` })).status).toBe(200);
  return c;
}

test("an invitation expires after 14 days: gone from the inbox, cannot be accepted, may be sent again", async () => {
  const on = uname();
  const bn = uname();
  let owner = await signedInUser(app, admin, on);
  let bob = await signedInUser(app, admin, bn);
  const list = await mkList(owner, "L");
  const inv = (await owner.post(`/api/v1/lists/${list}/invitations`, { username: bn, role: "viewer" })).body.id;
  clock.advance(14 * 24 * 3600 * 1000 - 1000);
  owner = await login(app, on);
  bob = await login(app, bn);
  expect((await bob.get("/api/v1/invitations")).body.items.map((i: { id: string }) => i.id)).toEqual([inv]);
  clock.advance(1000);
  expect((await bob.get("/api/v1/invitations")).body.items).toEqual([]);
  expect((await owner.get(`/api/v1/lists/${list}/invitations`)).body.items).toEqual([]);
  await rejected(app, () => bob.post(`/api/v1/invitations/${inv}/accept`), 404, "not_found");
  await rejected(app, () => owner.delete(`/api/v1/invitations/${inv}`), 404, "not_found");
  const again = await owner.post(`/api/v1/lists/${list}/invitations`, { username: bn, role: "editor" });
  expect(again.status).toBe(201);
  expect((await bob.post(`/api/v1/invitations/${again.body.id}/accept`)).body.role).toBe("editor");
});
