import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import SwaggerParser from "@apidevtools/swagger-parser";
import { ADMIN, makeTestApp, rejected, setupAdmin, type TestApp, type TestClient } from "../helpers/app";
import { expectNoInternals, expectProblem } from "../helpers/problem";
import { DOCUMENTED_OUTSIDE_API } from "../../src/core/openapi-document";

// docs/spec/contract.md §2: /api/docs and /api/openapi.json answer 401 without a session. The document must
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

  test("lists every route the app serves under /api/v1 (and the calendar feed's), and nothing else", () => {
    const served = new Set<string>();
    for (const r of app.handle.app.routes as { method: string; path: string }[]) {
      const path = r.path.replace(/:([A-Za-z_]+)/g, "{$1}");
      if (!(path.startsWith("/api/v1/") || DOCUMENTED_OUTSIDE_API.has(path)) || !METHODS.includes(r.method.toLowerCase())) continue;
      served.add(`${r.method.toLowerCase()} ${path}`);
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
    // /events answers 200 with an endless stream (its statuses: test/sharing/events.test.ts).
    const SKIP = /logout|sessions\/others|change-password|\/events$/;
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
    expect(Object.keys(me.properties).sort()).toEqual(["display_name", "quiet_hours", "reminder_time", "timezone"]);
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

// The rules Redocly (redocly.yaml) and Spectral (.spectral.yaml) hold in CI (`bun run lint:openapi`),
// plus the bounds the issue asks for, asserted on the document itself so `bun run test` fails too.
describe("the OpenAPI document's structural rules", () => {
  // JSON Schema objects of any shape, walked generically.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  type Schema = any;
  const ops = (): { where: string; method: string; path: string; op: Schema }[] =>
    Object.entries(docBody.paths as Record<string, Record<string, Schema>>).flatMap(([path, byMethod]) =>
      Object.entries(byMethod)
        .filter(([m]) => METHODS.includes(m))
        .map(([method, op]) => ({ where: `${method} ${path}`, method, path, op })),
    );
  const refTarget = (ref: string): Schema => docBody.components.schemas[ref.replace("#/components/schemas/", "")];

  /** Calls `visit` on every schema inside `schema` (following $refs once each), with a path for messages. */
  function walkSchema(schema: Schema, where: string, visit: (s: Schema, at: string) => void, seen = new Set<string>()): void {
    if (!schema || typeof schema !== "object") return;
    if (typeof schema.$ref === "string") {
      if (seen.has(schema.$ref)) return;
      seen.add(schema.$ref);
      walkSchema(refTarget(schema.$ref), `${where}→${schema.$ref.split("/").pop()}`, visit, seen);
      return;
    }
    visit(schema, where);
    for (const k of ["anyOf", "oneOf", "allOf", "prefixItems"]) (schema[k] ?? []).forEach((x: Schema, i: number) => walkSchema(x, `${where}/${k}${i}`, visit, seen));
    for (const k of ["items", "not", "additionalProperties", "contains"]) if (schema[k] && typeof schema[k] === "object") walkSchema(schema[k], `${where}/${k}`, visit, seen);
    for (const [name, x] of Object.entries(schema.properties ?? {})) walkSchema(x, `${where}.${name}`, visit, seen);
  }
  const typesOf = (s: Schema): string[] => (Array.isArray(s.type) ? s.type : s.type ? [s.type] : []);

  /** Every schema a client sends: parameters and request bodies. */
  function requestSchemas(): { at: string; schema: Schema }[] {
    return ops().flatMap(({ where, op }) => [
      ...((op.parameters ?? []) as Schema[]).map((p) => ({ at: `${where} ${p.in} ${p.name}`, schema: p.schema })),
      ...Object.entries((op.requestBody?.content ?? {}) as Record<string, Schema>).map(([type, c]) => ({ at: `${where} body (${type})`, schema: c.schema })),
    ]);
  }

  test("the walk reaches request strings, arrays and integers (so the rules below cannot pass on nothing)", () => {
    let strings = 0;
    let arrays = 0;
    let integers = 0;
    for (const { at, schema } of requestSchemas()) {
      walkSchema(schema, at, (s) => {
        if (typesOf(s).includes("string")) strings++;
        if (typesOf(s).includes("array")) arrays++;
        if (typesOf(s).includes("integer")) integers++;
      });
    }
    expect(strings).toBeGreaterThan(100);
    expect(arrays).toBeGreaterThan(10);
    expect(integers).toBeGreaterThan(10);
  });

  test("every request string has a maxLength (file uploads, format binary, are bounded in bytes by their route)", () => {
    const missing: string[] = [];
    for (const { at, schema } of requestSchemas()) {
      walkSchema(schema, at, (s, where) => {
        if (!typesOf(s).includes("string") || s.format === "binary") return;
        if (s.enum === undefined && s.const === undefined && typeof s.maxLength !== "number") missing.push(where);
      });
    }
    expect(missing).toEqual([]);
  });

  test("every request array has a maxItems", () => {
    const missing: string[] = [];
    for (const { at, schema } of requestSchemas()) {
      walkSchema(schema, at, (s, where) => {
        if (typesOf(s).includes("array") && typeof s.maxItems !== "number") missing.push(where);
      });
    }
    expect(missing).toEqual([]);
  });

  test("every integer, sent or answered, has format int32 (only when its bounds fit 32 bits) or int64", () => {
    const wrong: string[] = [];
    const check = (s: Schema, where: string) => {
      if (!typesOf(s).includes("integer")) return;
      if (s.format !== "int32" && s.format !== "int64") wrong.push(`${where}: format ${s.format}`);
      if (s.format === "int32" && !(s.minimum >= -(2 ** 31) && s.maximum <= 2 ** 31 - 1)) wrong.push(`${where}: int32 without 32-bit bounds`);
    };
    for (const { at, schema } of requestSchemas()) walkSchema(schema, at, check);
    for (const { where, op } of ops()) {
      for (const [status, r] of Object.entries(op.responses as Record<string, Schema>)) {
        for (const [type, c] of Object.entries((r.content ?? {}) as Record<string, Schema>)) walkSchema(c.schema, `${where} ${status} ${type}`, check);
        for (const [name, h] of Object.entries((r.headers ?? {}) as Record<string, Schema>)) walkSchema(h.schema, `${where} ${status} header ${name}`, check);
      }
    }
    for (const [name, s] of Object.entries(docBody.components.schemas as Record<string, Schema>)) walkSchema(s, `#/components/schemas/${name}`, check);
    expect(wrong).toEqual([]);
    // The bounds decide: a priority is int32, a byte count int64.
    expect(docBody.components.schemas.Task.properties.priority.format).toBe("int32");
    expect(docBody.components.schemas.Attachment.properties.size.format).toBe("int64");
  });

  test("every operation has a description and a tag, and every tag is described at the top level", () => {
    const problems: string[] = [];
    const described = new Map<string, string>(((docBody.tags ?? []) as { name: string; description?: string }[]).map((t) => [t.name, t.description ?? ""]));
    const used = new Set<string>();
    for (const { where, op } of ops()) {
      if (typeof op.description !== "string" || op.description.trim().length < 20) problems.push(`${where}: no description`);
      if (!Array.isArray(op.tags) || op.tags.length === 0) problems.push(`${where}: no tag`);
      for (const t of op.tags ?? []) {
        used.add(t);
        if (!(described.get(t) ?? "").trim()) problems.push(`${where}: tag ${t} is not described at the top level`);
      }
    }
    for (const name of described.keys()) if (!used.has(name)) problems.push(`tag ${name} is used by no operation`);
    expect(problems).toEqual([]);
  });

  test("every response header has a schema", () => {
    const missing: string[] = [];
    let headers = 0;
    for (const { where, op } of ops()) {
      for (const [status, r] of Object.entries(op.responses as Record<string, Schema>)) {
        for (const [name, h] of Object.entries((r.headers ?? {}) as Record<string, Schema>)) {
          headers++;
          if (!h.schema || typeof h.schema !== "object" || !h.description) missing.push(`${where} ${status} ${name}`);
        }
      }
    }
    expect(headers).toBeGreaterThan(50);
    expect(missing).toEqual([]);
  });

  test("every operation that takes input or needs a session documents a 4xx answer (redocly's operation-4xx-response, off only for the three input-less public GETs)", () => {
    const without: string[] = [];
    for (const { where, op } of ops()) {
      if (Object.keys(op.responses).some((s) => /^4\d\d$/.test(s))) continue;
      without.push(where);
    }
    expect(without.sort()).toEqual(["get /api/v1/health/live", "get /api/v1/health/ready", "get /api/v1/setup/status"]);
    for (const w of without) {
      const { op } = ops().find((o) => o.where === w)!;
      expect({ w, security: op.security, parameters: op.parameters, body: op.requestBody }).toEqual({ w, security: [], parameters: undefined, body: undefined });
    }
  });
});

// maxLength values documented from a refinement (code points, after trimming for names) rather
// than zod's own max: the documented figure is exactly where the API starts refusing.
describe("documented string limits are the enforced ones", () => {
  const bodyProp = (path: string, method: string, prop: string) => {
    const schema = docBody.paths[path][method].requestBody.content["application/json"].schema;
    return schema.properties[prop];
  };
  const maxOf = (s: { maxLength?: number; anyOf?: { maxLength?: number }[] }) => s.maxLength ?? s.anyOf?.find((x) => x.maxLength)?.maxLength;
  // 😀 is one code point (one JSON Schema character) and two UTF-16 units.
  const emoji = (n: number) => "😀".repeat(n);

  test("names of folders, lists and tags; task titles and descriptions", async () => {
    const cases: { path: string; prop: string; extra: Record<string, unknown>; max: number }[] = [
      { path: "/api/v1/folders", prop: "name", extra: {}, max: 200 },
      { path: "/api/v1/lists", prop: "name", extra: {}, max: 200 },
      { path: "/api/v1/tags", prop: "name", extra: { color: "#123456" }, max: 64 },
      { path: "/api/v1/tasks", prop: "title", extra: {}, max: 500 },
      { path: "/api/v1/tasks", prop: "description", extra: { title: "t" }, max: 20_000 },
    ];
    for (const c of cases) {
      expect({ ...c, documented: maxOf(bodyProp(c.path, "post", c.prop)) }).toEqual({ ...c, documented: c.max });
      const ok = await admin.post(c.path, { ...c.extra, [c.prop]: emoji(c.max) });
      expect({ ...c, status: ok.status }).toEqual({ ...c, status: 201 });
      const tooLong = await rejected(app, () => admin.post(c.path, { ...c.extra, [c.prop]: emoji(c.max + 1) }), 422, "validation_failed");
      expect(tooLong.body.errors[0].path).toBe(c.prop);
    }
  });

  test("time zones, calendar dates and colours", async () => {
    expect(maxOf(bodyProp("/api/v1/me", "patch", "timezone"))).toBe(64);
    await rejected(app, () => admin.patch("/api/v1/me", { timezone: `Europe/${"X".repeat(58)}` }), 422, "validation_failed");
    const dueBefore = docBody.paths["/api/v1/tasks"].get.parameters.find((p: { name: string }) => p.name === "due_before");
    expect(dueBefore.schema).toMatchObject({ maxLength: 10, format: "date" });
    expect((await admin.get("/api/v1/tasks?due_before=2026-01-011")).status).toBe(422);
    expect(maxOf(bodyProp("/api/v1/habits", "post", "start_date"))).toBe(10);
    expect(maxOf(bodyProp("/api/v1/countdowns", "post", "date"))).toBe(10);
    expect(maxOf(bodyProp("/api/v1/tags", "post", "color"))).toBe(7);
    await rejected(app, () => admin.post("/api/v1/tags", { name: "c", color: "#1234567" }), 422, "validation_failed");
  });

  test("ids in task, list, folder and tag URLs are documented as at most 64 characters; a longer one names nothing (404)", async () => {
    for (const [path, param] of [
      ["/api/v1/tasks/{task_id}", "task_id"],
      ["/api/v1/lists/{list_id}", "list_id"],
      ["/api/v1/folders/{folder_id}", "folder_id"],
      ["/api/v1/tags/{tag_id}", "tag_id"],
    ] as const) {
      const p = docBody.paths[path].get.parameters.find((x: { name: string }) => x.name === param);
      expect({ path, maxLength: p.schema.maxLength }).toEqual({ path, maxLength: 64 });
      expect((await admin.get(path.replace(/\{[^}]+\}/, "x".repeat(65)))).status).toBe(404);
    }
  });
});
