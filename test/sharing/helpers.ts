import { expect } from "bun:test";
import type { TestClient } from "../helpers/app";

export async function meOf(c: TestClient): Promise<{ id: string; username: string }> {
  const r = await c.get("/api/v1/me");
  return { id: r.body.id, username: r.body.username };
}

/** Invites `member` to the owner's list and accepts: the list is shared from then on. */
export async function share(owner: TestClient, member: TestClient, listId: string, role: "editor" | "viewer"): Promise<void> {
  const m = await meOf(member);
  const inv = await owner.post(`/api/v1/lists/${listId}/invitations`, { username: m.username, role });
  expect(inv.status).toBe(201);
  const a = await member.post(`/api/v1/invitations/${inv.body.id}/accept`);
  expect(a.status).toBe(200);
}
