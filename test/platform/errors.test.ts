import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { dump, makeTestApp, setupAdmin, type TestApp, type TestClient } from "../helpers/app";
import { expectProblem } from "../helpers/problem";

// docs/spec/contract.md §1 "Errors": every 4xx/5xx is application/problem+json with type/title/status/code,
// no internals in bodies, X-Request-Id on every answer; body parsing rules and limits.

let app: TestApp;
let admin: TestClient;

beforeAll(async () => {
  app = makeTestApp();
  admin = await setupAdmin(app);
});
afterAll(() => app.close());

function bytesStream(total: number, chunk = 64 * 1024): { stream: ReadableStream<Uint8Array>; produced: () => number } {
  let produced = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(ctrl) {
      if (produced >= total) {
        ctrl.close();
        return;
      }
      const n = Math.min(chunk, total - produced);
      // A JSON string that keeps going: valid as far as it is read.
      const c = new Uint8Array(n).fill(0x61);
      if (produced === 0) c.set(new TextEncoder().encode('{"display_name":"'), 0);
      produced += n;
      ctrl.enqueue(c);
    },
  });
  return { stream, produced: () => produced };
}

describe("problem+json on every error", () => {
  test("401 without a session", async () => {
    const r = await app.client().get("/api/v1/me");
    expectProblem(r, 401, "unauthenticated");
  });

  test("404 for an unknown route (outside /api, GETs belong to the web app's client-side routes)", async () => {
    expectProblem(await admin.get("/api/v1/no-such-thing"), 404, "not_found");
    expectProblem(await admin.get("/api/no-such-thing"), 404, "not_found");
    expectProblem(await admin.request("POST", "/no-such-page", { json: {} }), 404, "not_found");
    expectProblem(await admin.request("PUT", "/api/v1/me", { json: {} }), 404, "not_found");
  });

  test("404 for an unknown route without a session is 401 under /api (everything there needs a session)", async () => {
    expectProblem(await app.client().get("/api/v1/no-such-thing"), 401, "unauthenticated");
  });

  test("422 names the field: wrong type", async () => {
    const before = dump(app.db);
    const r = await admin.patch("/api/v1/me", { display_name: 5 });
    expectProblem(r, 422, "validation_failed");
    expect(r.body.errors).toBeArray();
    expect(r.body.errors.map((e: { path: string }) => e.path)).toContain("display_name");
    expect(dump(app.db)).toEqual(before);
  });

  test("422 names the field: unknown field", async () => {
    const before = dump(app.db);
    const r = await admin.patch("/api/v1/me", { display_name: "ok", colour: "red" });
    expectProblem(r, 422, "validation_failed");
    expect(r.body.errors).toContainEqual({ path: "colour", message: expect.any(String) });
    expect(dump(app.db)).toEqual(before);
  });

  test("422: over-long string and too-short password", async () => {
    const before = dump(app.db);
    const r = await admin.patch("/api/v1/me", { display_name: "x".repeat(101) });
    expectProblem(r, 422, "validation_failed");
    expect(r.body.errors[0].path).toBe("display_name");
    const r2 = await admin.post("/api/v1/users", { username: "u".repeat(65), password: "long enough pw" });
    expectProblem(r2, 422, "validation_failed");
    expect(r2.body.errors.map((e: { path: string }) => e.path)).toContain("username");
    expect(dump(app.db)).toEqual(before);
  });

  test("422 when the body is JSON but not an object, or missing", async () => {
    expectProblem(await admin.patch("/api/v1/me", [1, 2]), 422, "validation_failed");
    expectProblem(await admin.patch("/api/v1/me", "text"), 422, "validation_failed");
    expectProblem(await admin.request("PATCH", "/api/v1/me", { headers: { "content-type": "application/json" } }), 422, "validation_failed");
  });

  test("400 malformed_request for unparseable JSON, invalid UTF-8, wrong or missing Content-Type", async () => {
    const before = dump(app.db);
    const bad = await admin.request("PATCH", "/api/v1/me", { body: '{"display_name": ', headers: { "content-type": "application/json" } });
    expectProblem(bad, 400, "malformed_request");
    const utf = await admin.request("PATCH", "/api/v1/me", {
      body: new Uint8Array([0x7b, 0x22, 0x64, 0xff, 0xfe, 0x22, 0x7d]),
      headers: { "content-type": "application/json" },
    });
    expectProblem(utf, 400, "malformed_request");
    const text = await admin.request("PATCH", "/api/v1/me", { body: '{"display_name":"x"}', headers: { "content-type": "text/plain" } });
    expectProblem(text, 400, "malformed_request");
    const xml = await admin.request("PATCH", "/api/v1/me", { body: "<me/>", headers: { "content-type": "application/xml" } });
    expectProblem(xml, 400, "malformed_request");
    const form = await admin.request("PATCH", "/api/v1/me", { body: "display_name=x", headers: { "content-type": "application/x-www-form-urlencoded" } });
    expectProblem(form, 400, "malformed_request");
    const none = await admin.request("PATCH", "/api/v1/me", { body: '{"display_name":"x"}', headers: { "content-type": "" } });
    expectProblem(none, 400, "malformed_request");
    expect(dump(app.db)).toEqual(before);
  });

  test("413 for a body over 1 MiB with Content-Length, before reading it", async () => {
    const before = dump(app.db);
    const big = JSON.stringify({ display_name: "a".repeat(10 * 1024 * 1024) });
    const r = await admin.request("PATCH", "/api/v1/me", { body: big, headers: { "content-type": "application/json" } });
    expectProblem(r, 413, "payload_too_large");
    // Just over the limit is refused too; just under is parsed (and then validated).
    const over = '{"display_name":"' + "a".repeat(1024 * 1024) + '"}';
    expectProblem(await admin.request("PATCH", "/api/v1/me", { body: over, headers: { "content-type": "application/json" } }), 413, "payload_too_large");
    const under = '{"display_name":"' + "a".repeat(1024 * 1024 - 40) + '"}';
    expectProblem(await admin.request("PATCH", "/api/v1/me", { body: under, headers: { "content-type": "application/json" } }), 422, "validation_failed");
    expect(dump(app.db)).toEqual(before);
  });

  test("413 from a declared Content-Length alone: the body is not read", async () => {
    const { stream, produced } = bytesStream(10 * 1024 * 1024);
    const r = await admin.request("PATCH", "/api/v1/me", {
      body: stream,
      headers: { "content-type": "application/json", "content-length": String(10 * 1024 * 1024) },
    });
    expectProblem(r, 413, "payload_too_large");
    expect(produced()).toBeLessThanOrEqual(128 * 1024);
  });

  test("413 for a chunked 10 MB body without Content-Length, decided while reading", async () => {
    const before = dump(app.db);
    const { stream, produced } = bytesStream(10 * 1024 * 1024);
    const r = await admin.request("PATCH", "/api/v1/me", { body: stream, headers: { "content-type": "application/json" } });
    expectProblem(r, 413, "payload_too_large");
    // The server stopped pulling soon after the limit, not at the end of the 10 MB.
    expect(produced()).toBeLessThan(2 * 1024 * 1024);
    expect(dump(app.db)).toEqual(before);
  });

  test("413 on the session-starting endpoints too (no session yet)", async () => {
    const { stream, produced } = bytesStream(10 * 1024 * 1024);
    const r = await app.client().request("POST", "/api/v1/auth/login", { body: stream, headers: { "content-type": "application/json" } });
    expectProblem(r, 413, "payload_too_large");
    expect(produced()).toBeLessThan(2 * 1024 * 1024);
  });

  test("413 over a real socket with Content-Length", async () => {
    const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (req, srv) => app.handle.fetch(req, srv) });
    try {
      const cookie = [...admin.jar].map(([k, v]) => `${k}=${v}`).join("; ");
      const body = JSON.stringify({ display_name: "a".repeat(10 * 1024 * 1024) });
      const res = await fetch(`http://127.0.0.1:${server.port}/api/v1/me`, {
        method: "PATCH",
        body,
        headers: { "content-type": "application/json", cookie, "x-csrf-token": admin.jar.get("app_csrf")! },
      });
      expect(res.status).toBe(413);
      expect(res.headers.get("content-type")).toStartWith("application/problem+json");
      expect(res.headers.get("x-request-id")).toBeTruthy();
      expect(((await res.json()) as { code: string }).code).toBe("payload_too_large");
    } finally {
      server.stop(true);
    }
  });

  test("413 over a real socket: Bun.serve with the app's fetch, chunked upload", async () => {
    const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (req, srv) => app.handle.fetch(req, srv) });
    try {
      const cookie = [...admin.jar].map(([k, v]) => `${k}=${v}`).join("; ");
      const { stream, produced } = bytesStream(10 * 1024 * 1024);
      const res = await fetch(`http://127.0.0.1:${server.port}/api/v1/me`, {
        method: "PATCH",
        body: stream,
        headers: { "content-type": "application/json", cookie, "x-csrf-token": admin.jar.get("app_csrf")! },
        duplex: "half",
      }).catch((e: Error) => e);
      if (res instanceof Error) throw res;
      expect(res.status).toBe(413);
      expect(res.headers.get("content-type")).toStartWith("application/problem+json");
      expect(((await res.json()) as { code: string }).code).toBe("payload_too_large");
      expect(produced()).toBeLessThan(10 * 1024 * 1024);
    } finally {
      server.stop(true);
    }
  });
});

describe("request ids and 500s", () => {
  test("X-Request-Id on every answer, unique per request", async () => {
    const answers = [
      await admin.get("/api/v1/me"),
      await app.client().get("/api/v1/health/live"),
      await app.client().get("/api/v1/me"),
      await admin.get("/api/v1/nope"),
      await admin.patch("/api/v1/me", { nope: 1 }),
    ];
    const ids = answers.map((r) => r.headers.get("x-request-id"));
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9_-]{8,64}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  test("a 500 is a generic problem with request_id = X-Request-Id, logged with that id, no internals", async () => {
    const broken = makeTestApp();
    try {
      const c = await setupAdmin(broken);
      // Corrupt the store underneath the app: the audit write of logout now fails in SQL.
      broken.db.sqlite.run("DROP TABLE audit_logs");
      const r = await c.post("/api/v1/auth/logout");
      expectProblem(r, 500, "internal_error");
      const id = r.headers.get("x-request-id");
      expect(id).toBeTruthy();
      expect(r.body.request_id).toBe(id);
      expect(r.text).not.toContain("audit_logs");
      expect(Object.keys(r.body).sort()).toEqual(["code", "detail", "request_id", "status", "title", "type"]);
      const logged = broken.logs.map((l) => JSON.parse(l) as Record<string, unknown>);
      const err = logged.find((l) => l.level === "error" && l.request_id === id);
      expect(err).toBeDefined();
      expect(String(err!.error)).toContain("audit_logs");
      // And the request line carries the same id with status 500.
      expect(logged.some((l) => l.msg === "request" && l.request_id === id && l.status === 500)).toBe(true);
    } finally {
      broken.close();
    }
  });

  test("4xx answers carry no request_id in the body (only 500s need it)", async () => {
    const r = await admin.patch("/api/v1/me", { nope: 1 });
    expect(r.body.request_id).toBeUndefined();
  });

  test("security headers on answers", async () => {
    const r = await admin.get("/api/v1/me");
    expect(r.headers.get("x-content-type-options")).toBe("nosniff");
    expect(r.headers.get("cache-control")).toBe("no-store");
  });
});
