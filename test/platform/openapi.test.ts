import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import SwaggerParser from "@apidevtools/swagger-parser";
import { ADMIN, makeTestApp, setupAdmin, type TestApp, type TestClient } from "../helpers/app";
import { expectNoInternals, expectProblem } from "../helpers/problem";

// Contract §2: /api/docs and /api/openapi.json answer 401 without a session. The document must
// describe every operation the app serves under /api/v1, with its problem+json error answers.

let app: TestApp;
let admin: TestClient;
// The OpenAPI document: a deeply nested JSON object of any shape.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
let docBody: any;

beforeAll(async () => {
  app = makeTestApp();
  admin = await setupAdmin(app);
  const r = await admin.get("/api/openapi.json");
  expect(r.status).toBe(200);
  docBody = r.body;
});
afterAll(() => app.close());

async function signIn(): Promise<TestClient> {
  const c = app.client({ ip: "10.77.0.1" });
  const r = await c.post("/api/v1/auth/login", ADMIN);
  expect(r.status).toBe(200);
  return c;
}
const setupAdminAgain = signIn;

const METHODS = ["get", "post", "put", "patch", "delete"];

describe("docs behind login", () => {
  test("/api/openapi.json and /api/docs (and its assets) are 401 problem+json without a session", async () => {
    for (const p of ["/api/openapi.json", "/api/docs", "/api/docs/swagger-ui-bundle.js", "/api/docs/swagger-ui.css", "/api/docs/init.js"]) {
      expectProblem(await app.client().get(p), 401, "unauthenticated");
    }
  });

  test("/api/docs is an HTML page whose scripts and styles are served locally (no CDN)", async () => {
    const r = await admin.get("/api/docs");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toStartWith("text/html");
    expect(r.text).not.toMatch(/https?:\/\//);
    expect(r.text).not.toMatch(/src="\/\//);
    const refs = [...r.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThanOrEqual(2);
    for (const ref of refs) {
      expect(ref.startsWith("/")).toBe(true);
      const asset = await admin.get(ref);
      expect(asset.status).toBe(200);
      expect(asset.text.length).toBeGreaterThan(0);
      if (ref.endsWith(".js")) expect(asset.headers.get("content-type")).toStartWith("text/javascript");
      if (ref.endsWith(".css")) expect(asset.headers.get("content-type")).toStartWith("text/css");
    }
    // The page's script-src allows only this origin.
    expect(r.headers.get("content-security-policy")).toContain("script-src 'self'");
    // The init script points at the local document.
    expect((await admin.get("/api/docs/init.js")).text).toContain("/api/openapi.json");
  });

  test("/api/openapi.json is JSON", async () => {
    const r = await admin.get("/api/openapi.json");
    expect(r.headers.get("content-type")).toStartWith("application/json");
  });
});

describe("the OpenAPI document", () => {
  test("is OpenAPI 3.1 with info and paths", () => {
    expect(docBody.openapi).toMatch(/^3\.1\.\d+$/);
    expect(docBody.info.title).toBeString();
    expect(docBody.info.version).toBeString();
    expect(Object.keys(docBody.paths).length).toBeGreaterThan(10);
  });

  test("lists every route the app serves under /api/v1, and nothing else", () => {
    const served = new Set<string>();
    for (const r of app.handle.app.routes as { method: string; path: string }[]) {
      if (!r.path.startsWith("/api/v1/") || !METHODS.includes(r.method.toLowerCase())) continue;
      served.add(`${r.method.toLowerCase()} ${r.path.replace(/:([A-Za-z_]+)/g, "{$1}")}`);
    }
    const documented = new Set<string>();
    for (const [path, ops] of Object.entries(docBody.paths as Record<string, Record<string, unknown>>)) {
      for (const m of Object.keys(ops)) if (METHODS.includes(m)) documented.add(`${m} ${path}`);
    }
    expect([...served].filter((x) => !documented.has(x)).sort()).toEqual([]);
    expect([...documented].filter((x) => !served.has(x)).sort()).toEqual([]);
    for (const p of ["get /api/v1/me", "post /api/v1/auth/login", "get /api/v1/audit-logs", "delete /api/v1/sessions/{session_id}", "get /api/v1/health/ready"]) {
      expect(documented.has(p)).toBe(true);
    }
  });

  test("every operation: summary, unique operationId, success answer, problem+json errors incl. 401 when not public and 500", () => {
    const ids = new Set<string>();
    for (const [path, ops] of Object.entries(docBody.paths as Record<string, Record<string, Record<string, unknown>>>)) {
      for (const [method, op] of Object.entries(ops)) {
        if (!METHODS.includes(method)) continue;
        const where = `${method} ${path}`;
        expect({ where, summary: typeof op.summary }).toEqual({ where, summary: "string" });
        expect(typeof op.operationId).toBe("string");
        expect(ids.has(op.operationId as string)).toBe(false);
        ids.add(op.operationId as string);
        const responses = op.responses as Record<string, { content?: Record<string, unknown>; description?: string }>;
        const statuses = Object.keys(responses);
        expect({ where, ok: statuses.some((s) => /^2\d\d$/.test(s)) }).toEqual({ where, ok: true });
        expect({ where, has500: statuses.includes("500") }).toEqual({ where, has500: true });
        const isPublic = Array.isArray(op.security) && (op.security as unknown[]).length === 0;
        if (!isPublic) expect({ where, has401: statuses.includes("401") }).toEqual({ where, has401: true });
        if (["post", "put", "patch", "delete"].includes(method) && !isPublic) {
          expect({ where, has403: statuses.includes("403") }).toEqual({ where, has403: true });
          expect(responses["403"]!.description).toContain("csrf_failed");
        }
        for (const s of statuses.filter((x) => Number(x) >= 400)) {
          const content = responses[s]!.content ?? {};
          expect({ where, s, types: Object.keys(content) }).toEqual({ where, s, types: ["application/problem+json"] });
          expect(responses[s]!.description).toMatch(/`[a-z_]+`/);
        }
        // A success answer with a body has a schema; 204 has none.
        for (const s of statuses.filter((x) => /^2\d\d$/.test(x))) {
          if (s === "204") expect(responses[s]!.content).toBeUndefined();
        }
        // Path parameters are declared.
        for (const m of path.matchAll(/\{([^}]+)\}/g)) {
          const params = (op.parameters as { in: string; name: string }[] | undefined) ?? [];
          expect({ where, param: m[1], declared: params.some((p) => p.in === "path" && p.name === m[1]) }).toEqual({
            where,
            param: m[1],
            declared: true,
          });
        }
      }
    }
  });

  test("validated parameters and bodies document 422; every write 400 and 413 (any body sent is parsed)", () => {
    for (const [path, ops] of Object.entries(docBody.paths as Record<string, Record<string, Record<string, unknown>>>)) {
      for (const [method, op] of Object.entries(ops)) {
        const responses = op.responses as Record<string, { description: string }>;
        const where = `${method} ${path}`;
        const hasParams = Array.isArray(op.parameters) && op.parameters.length > 0;
        const rb = op.requestBody as { content: Record<string, unknown> } | undefined;
        if (hasParams || rb) expect({ where, d: responses["422"]?.description.includes("`validation_failed`") }).toEqual({ where, d: true });
        if (rb?.content["application/json"] || method !== "get") {
          expect({ where, d: responses["400"]?.description.includes("`malformed_request`") }).toEqual({ where, d: true });
          expect({ where, d: responses["413"]?.description.includes("`payload_too_large`") }).toEqual({ where, d: true });
        }
      }
    }
  });

  test("every status the app gives to probing requests is one the document lists for that operation", async () => {
    let c = await setupAdminAgain();
    const undocumented: string[] = [];
    const SKIP = /logout|sessions\/others|change-password/;
    for (const [path, ops] of Object.entries(docBody.paths as Record<string, Record<string, { responses: Record<string, unknown> }>>)) {
      for (const [method, op] of Object.entries(ops)) {
        if (SKIP.test(path)) continue;
        const variants = [
          path.replace(/\{[^}]+\}/g, "x".repeat(300)),
          path.replace(/\{[^}]+\}/g, "01900000-0000-7000-8000-000000000000"),
          path.replace(/\{[^}]+\}/g, "2026-01-01") + "?bogus=1",
          path.replace(/\{[^}]+\}/g, "01900000-0000-7000-8000-000000000000") + "?limit=0",
        ];
        for (const v of variants) {
          const write = method !== "get";
          let r = await c.request(method.toUpperCase(), v, write ? { json: { bogus_field: 1 } } : {});
          if (r.status === 401 && !path.includes("login")) {
            c = await signIn();
            r = await c.request(method.toUpperCase(), v, write ? { json: { bogus_field: 1 } } : {});
          }
          if (write && r.status < 300) continue;
          if (r.status >= 400) {
            expect(r.headers.get("content-type")).toStartWith("application/problem+json");
            expectNoInternals(r.text);
          }
          if (!(String(r.status) in op.responses)) undocumented.push(`${method} ${path} (${v.slice(0, 50)}) → ${r.status} ${r.body?.code}`);
          if (write) {
            const m = await c.request(method.toUpperCase(), v, { body: "{", headers: { "content-type": "application/json" } });
            if (!(String(m.status) in op.responses)) undocumented.push(`${method} ${path} malformed → ${m.status} ${m.body?.code}`);
          }
        }
      }
    }
    expect(undocumented).toEqual([]);
  });

  test("paginated operations document limit (1..100) and cursor", () => {
    const op = docBody.paths["/api/v1/audit-logs"].get;
    const limit = op.parameters.find((p: { name: string }) => p.name === "limit");
    expect(limit.in).toBe("query");
    expect(limit.schema.minimum).toBe(1);
    expect(limit.schema.maximum).toBe(100);
    expect(op.parameters.some((p: { name: string }) => p.name === "cursor")).toBe(true);
  });

  test("request bodies are documented with their schemas, strict objects refusing unknown fields", () => {
    const login = docBody.paths["/api/v1/auth/login"].post;
    const schema = login.requestBody.content["application/json"].schema;
    expect(schema.properties.username).toBeDefined();
    expect(schema.properties.password).toBeDefined();
    expect(schema.additionalProperties).toBe(false);
    const me = docBody.paths["/api/v1/me"].patch.requestBody.content["application/json"].schema;
    expect(Object.keys(me.properties).sort()).toEqual(["display_name", "timezone"]);
  });

  test("the cookie session and CSRF header are declared as security schemes", () => {
    expect(docBody.components.securitySchemes.sessionCookie).toMatchObject({ type: "apiKey", in: "cookie", name: "app_session" });
    expect(docBody.components.securitySchemes.csrfHeader).toMatchObject({ type: "apiKey", in: "header" });
    expect(docBody.paths["/api/v1/auth/login"].post.security).toEqual([]);
  });

  test("every $ref resolves inside the document", () => {
    const refs: string[] = [];
    const walk = (v: unknown): void => {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === "object") {
        for (const [k, x] of Object.entries(v)) {
          if (k === "$ref" && typeof x === "string") refs.push(x);
          else walk(x);
        }
      }
    };
    walk(docBody);
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of new Set(refs)) {
      expect(ref.startsWith("#/")).toBe(true);
      let node: unknown = docBody;
      for (const part of ref.slice(2).split("/")) {
        node = (node as Record<string, unknown> | undefined)?.[part.replace(/~1/g, "/").replace(/~0/g, "~")];
      }
      expect({ ref, resolved: node !== undefined }).toEqual({ ref, resolved: true });
    }
  });

  test("the Problem schema matches what errors actually carry", () => {
    const p = docBody.components.schemas.Problem;
    expect(p.required.sort()).toEqual(["code", "status", "title", "type"]);
    expect(Object.keys(p.properties)).toEqual(expect.arrayContaining(["type", "title", "status", "code", "detail", "errors", "request_id"]));
  });

  test("validates with @apidevtools/swagger-parser (OpenAPI 3.1 schema + $ref resolution)", async () => {
    const copy = structuredClone(docBody);
    const api = await SwaggerParser.validate(copy);
    expect((api as { openapi?: string }).openapi).toMatch(/^3\.1/);
  });
});
