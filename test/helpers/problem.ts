import { expect } from "bun:test";
import type { TestResponse } from "./app";

/** Asserts the RFC 9457 shape docs/spec/contract.md pins (§1 Errors), and that nothing internal leaks. */
export function expectProblem(r: TestResponse, status: number, code: string): void {
  expect({ status: r.status, code: r.body?.code }).toEqual({ status, code });
  expect(r.headers.get("content-type")).toStartWith("application/problem+json");
  expect(r.body.type).toBe("about:blank");
  expect(typeof r.body.title).toBe("string");
  expect(r.body.title.length).toBeGreaterThan(0);
  expect(r.body.status).toBe(status);
  if (r.body.detail !== undefined) expect(typeof r.body.detail).toBe("string");
  if (r.body.errors !== undefined) {
    expect(r.body.errors).toBeArray();
    for (const e of r.body.errors) expect(Object.keys(e).sort()).toEqual(["message", "path"]);
  }
  expectNoInternals(r.text);
}

/** No SQL, file path or stack trace in an answer body. */
export function expectNoInternals(text: string): void {
  expect(text).not.toMatch(/SELECT|INSERT|UPDATE |DELETE FROM|sqlite/i);
  expect(text).not.toMatch(/\/work\/|\/tmp\/|node_modules|\.ts:\d+|\bat [A-Za-z_.]+ \(/);
  expect(text).not.toMatch(/stack/i);
}
