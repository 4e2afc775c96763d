import { z } from "zod";
import { toOpenAPISchema } from "@elysiajs/openapi";
import type { AnyElysia } from "elysia";
import { Problem, WRITE, jsonSchema, namedSchemas } from "./openapi";

/** The whole document, generated from the routes' own schemas and tidied for linters and client generators. */
export function buildOpenApiDocument(app: AnyElysia, version: string): Record<string, unknown> {
  const mapper = (s: z.ZodType) => jsonSchema(s, "input");
  const generated = toOpenAPISchema(app, { staticFile: true }, undefined, { zod: mapper }, "3.1.1") as unknown as {
    paths: Record<string, Record<string, Record<string, unknown>>>;
  };
  // Our body parser is a function (it counts bytes), so the generator leaves request bodies
  // without a media type; take the body schemas from the routes themselves.
  const bodies = new Map<string, z.ZodType>();
  for (const r of app.routes as { method: string; path: string; hooks?: { body?: unknown } }[]) {
    const body = r.hooks?.body;
    if (body && typeof body === "object" && "~standard" in body) {
      bodies.set(`${r.method.toLowerCase()} ${r.path.replace(/:([^/]+)/g, "{$1}")}`, body as z.ZodType);
    }
  }
  jsonSchema(Problem, "output"); // registers components.schemas.Problem
  const paths: Record<string, Record<string, Record<string, unknown>>> = {};
  for (const [path, ops] of Object.entries(generated.paths)) {
    if (!path.startsWith("/api/v1/")) continue;
    for (const [method, op] of Object.entries(ops)) {
      const isPublic = op["x-app-public"] === true;
      delete op["x-app-public"];
      const bodyType = op["x-app-body-content-type"] as string | undefined;
      delete op["x-app-body-content-type"];
      const rb = op.requestBody as { content?: Record<string, { schema: unknown }>; required?: boolean } | undefined;
      if (rb) {
        // Our body parser is a function (it counts bytes), so the generator could not name the media type.
        const zodBody = bodies.get(`${method} ${path}`);
        const schema = zodBody ? jsonSchema(zodBody, "input") : Object.values(rb.content ?? {})[0]?.schema;
        rb.content = { [bodyType ?? "application/json"]: { schema: schema ?? { type: "object" } } };
      } else if (bodyType) {
        op.requestBody = { required: true, content: { [bodyType]: { schema: { type: "string", format: "binary" } } } };
      }
      op.security = isPublic ? [] : WRITE.has(method) ? [{ sessionCookie: [], csrfHeader: [] }] : [{ sessionCookie: [] }];
      op.operationId = operationId(method, path);
      (paths[path] ??= {})[method] = op;
    }
  }
  return {
    openapi: "3.1.1",
    info: {
      title: "app API",
      version,
      description:
        "Self-hosted personal productivity server. Cookie session (`app_session`) plus double-submit CSRF: every POST/PUT/PATCH/DELETE sent with the session cookie must carry `X-CSRF-Token` equal to the `app_csrf` cookie. Errors are RFC 9457 problem details with a stable `code`.",
      license: { name: "Proprietary", identifier: "LicenseRef-Proprietary" },
    },
    servers: [{ url: "/" }],
    tags: [...new Set(Object.values(paths).flatMap((ops) => Object.values(ops).flatMap((o) => (o.tags as string[]) ?? [])))].map((name) => ({ name })),
    paths,
    components: {
      schemas: Object.fromEntries([...namedSchemas].sort(([a], [b]) => a.localeCompare(b))),
      securitySchemes: {
        sessionCookie: { type: "apiKey", in: "cookie", name: "app_session", description: "set by login and setup" },
        csrfHeader: { type: "apiKey", in: "header", name: "X-CSRF-Token", description: "value of the app_csrf cookie" },
      },
    },
  };
}

/** Stable camelCase operation ids: `get /api/v1/tasks/{task_id}` → `getTasksByTaskId`. */
function operationId(method: string, path: string): string {
  const parts = path
    .replace(/^\/api\/v1\//, "")
    .split("/")
    .filter(Boolean)
    .map((p) => {
      const param = /^\{(.+)\}$/.exec(p);
      const word = (param ? `by_${param[1]}` : p).replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ""));
      return word.charAt(0).toUpperCase() + word.slice(1);
    });
  return method + parts.join("");
}
