import { expect } from "bun:test";
import { dump, type TestApp, type TestClient, type TestResponse } from "./app";

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

/** Runs a request that must be rejected and proves the database did not change. */
export async function rejected(app: TestApp, run: () => Promise<TestResponse>, status: number, code: string): Promise<TestResponse> {
  const before = dump(app.db);
  const r = await run();
  if (r.status !== status || r.body?.code !== code) throw new Error(`expected ${status} ${code}, got ${r.status} ${r.text}`);
  expect(r.headers.get("content-type")).toContain("application/problem+json");
  expect(dump(app.db)).toEqual(before);
  return r;
}
