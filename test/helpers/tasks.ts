import { expect } from "bun:test";
import { type TestClient } from "./app";

let seq = 0;
/** A fresh username per call, so tests in one file never collide. */
export function uname(prefix = "u"): string {
  return `${prefix}${++seq}${Math.random().toString(36).slice(2, 6)}`;
}

export async function inboxOf(c: TestClient): Promise<string> {
  const r = await c.get("/api/v1/lists");
  return r.body.items[0].id;
}

export async function mkList(c: TestClient, name = "List", extra: Record<string, unknown> = {}): Promise<string> {
  const r = await c.post("/api/v1/lists", { name, ...extra });
  expect(r.status).toBe(201);
  return r.body.id;
}

export async function mkTag(c: TestClient, name: string, color = "#112233"): Promise<string> {
  const r = await c.post("/api/v1/tags", { name, color });
  expect(r.status).toBe(201);
  return r.body.id;
}

// Task bodies in tests vary per case.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function mkTask(c: TestClient, body: Record<string, unknown>): Promise<any> {
  const r = await c.post("/api/v1/tasks", body);
  if (r.status !== 201) throw new Error(`task creation failed: ${r.status} ${r.text}`);
  return r.body;
}

export { rejected } from "./app";
