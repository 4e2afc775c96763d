import { z } from "zod";
import type { ErrorCode } from "./errors";
import { statusOf } from "./problem";
import { PROBLEM_LIST_MAX, PROBLEM_MESSAGE_MAX } from "./problem-caps";

/** problem+json, as every 4xx/5xx answers (contract §1). */
export const Problem = z.object({
    type: z.string(),
    title: z.string(),
    status: z.number().int().min(400).max(599),
    code: z.string().describe("stable, machine-readable error code"),
    detail: z.string().optional().describe(`at most ${PROBLEM_MESSAGE_MAX} characters`),
    errors: z
      .array(z.object({ path: z.string(), message: z.string() }))
      .optional()
      .describe(
        `at most ${PROBLEM_LIST_MAX} problems (path and message at most ${PROBLEM_MESSAGE_MAX} characters each), then one entry {"path": "", "message": "N more problems not listed"}`,
      ),
    request_id: z.string().optional().describe("present on 500 answers; also in the X-Request-Id header"),
  })
  .meta({ id: "Problem" });

/**
 * A zod schema whose JSON Schema is only worked out when /api/openapi.json is first built: doing it
 * for every route at start-up cost tens of milliseconds and megabytes of resident memory.
 */
export class DeferredSchema {
  constructor(
    readonly schema: z.ZodType | LazySchema,
    readonly io: "input" | "output",
  ) {}
}

export function deferredJsonSchema(schema: z.ZodType | LazySchema, io: "input" | "output"): DeferredSchema {
  return new DeferredSchema(schema, io);
}

/**
 * A schema that lives in a module loaded on first use (a rarely used feature's records): a route
 * documents it without importing it. loadLazySchemas() loads them all before the document is built.
 */
export class LazySchema {
  schema: z.ZodType | null = null;
  constructor(readonly load: () => Promise<z.ZodType>) {}
}

const lazySchemas = new Set<LazySchema>();

/** Made once per module (at its top level), not per route or per app. */
export function lazySchema(load: () => Promise<z.ZodType>): LazySchema {
  const s = new LazySchema(load);
  lazySchemas.add(s);
  return s;
}

/** Loads every lazy schema's module (before resolveDeferred, which cannot wait). */
export async function loadLazySchemas(): Promise<void> {
  await Promise.all([...lazySchemas].map(async (s) => void (s.schema ??= await s.load())));
}

function schemaOf(s: z.ZodType | LazySchema): z.ZodType {
  if (!(s instanceof LazySchema)) return s;
  if (!s.schema) throw new Error("a lazy schema was not loaded: await loadLazySchemas() before building the document");
  return s.schema;
}

/** Replaces every DeferredSchema inside `v` by its JSON Schema. */
export function resolveDeferred(v: unknown): unknown {
  if (v instanceof DeferredSchema) return jsonSchema(schemaOf(v.schema), v.io);
  if (Array.isArray(v)) return v.map(resolveDeferred);
  if (v && typeof v === "object") {
    const o: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) o[k] = resolveDeferred(x);
    return o;
  }
  return v;
}

/** Named schemas (zod `.meta({ id })`), hoisted to components.schemas. */
export const namedSchemas = new Map<string, unknown>();

/**
 * JSON Schema of a zod schema as OpenAPI 3.1 embeds it: no $schema keyword, and named sub-schemas
 * moved to `#/components/schemas` (a `#/$defs/…` ref would point at the document root).
 */
export function jsonSchema(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const js = z.toJSONSchema(schema, { io, unrepresentable: "any", target: "draft-2020-12" }) as Record<string, unknown>;
  delete js.$schema;
  const defs = js.$defs as Record<string, unknown> | undefined;
  delete js.$defs;
  const rewrite = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(rewrite);
    if (v && typeof v === "object") {
      const o: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) {
        o[k] = k === "$ref" && typeof x === "string" ? x.replace("#/$defs/", "#/components/schemas/") : rewrite(x);
      }
      return withIntegerFormat(o);
    }
    return v;
  };
  if (defs) for (const [name, def] of Object.entries(defs)) namedSchemas.set(io === "input" ? `${name}` : name, rewrite(def));
  // A schema that is itself named comes back as {$ref}; keep it so.
  return rewrite(js) as Record<string, unknown>;
}

/** A response header: what it carries and its JSON Schema (a plain string when not given). */
export interface HeaderDoc {
  description: string;
  schema?: Record<string, unknown>;
}

/**
 * `Retry-After` of a 429 or 503 answer: whole seconds. The longest wait asked for is the login
 * throttle's 15 minutes per address (core/auth/throttle.ts); the bound leaves room above it.
 */
export const RETRY_AFTER_HEADER = { description: "seconds to wait", schema: { type: "integer", format: "int32", minimum: 0, maximum: 3600 } } as const;

/** Every header documented with a schema (OpenAPI requires `schema` or `content`). */
export function headersWithSchemas(headers: Record<string, HeaderDoc>): Record<string, Required<HeaderDoc>> {
  return Object.fromEntries(Object.entries(headers).map(([name, h]) => [name, { description: h.description, schema: h.schema ?? { type: "string" } }]));
}

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

/**
 * An integer schema gets the `format` its bounds allow: `int32` when zod bounds it inside 32 bits
 * (priorities, limits, versions), else `int64` (byte counts, unbounded counters: JSON numbers of
 * this API are at most 2^53 − 1, which int64 holds). Client generators pick their integer type by it.
 */
function withIntegerFormat(o: Record<string, unknown>): Record<string, unknown> {
  const isInteger = o.type === "integer" || (Array.isArray(o.type) && o.type.includes("integer"));
  if (!isInteger || o.format !== undefined) return o;
  const min = typeof o.minimum === "number" ? o.minimum : typeof o.exclusiveMinimum === "number" ? o.exclusiveMinimum : null;
  const max = typeof o.maximum === "number" ? o.maximum : typeof o.exclusiveMaximum === "number" ? o.exclusiveMaximum : null;
  const fits32 = min !== null && max !== null && min >= INT32_MIN && max <= INT32_MAX;
  return { ...o, format: fits32 ? "int32" : "int64" };
}

export interface RouteDoc {
  summary: string;
  /** What the operation does beyond its summary: rules, side effects, limits (every operation has one). */
  description: string;
  /** The feature's tag (openapi-document.ts describes each one). */
  tags: string[];
  /** Success status and body (omit schema for 204). */
  ok: { status: number; schema?: z.ZodType | LazySchema; description?: string; contentType?: string; headers?: Record<string, HeaderDoc> };
  /** Error codes this operation can answer besides the ones every operation can. */
  errors?: ErrorCode[];
  /** No session needed. */
  public?: boolean;
  /** Request body media type when not JSON. */
  bodyContentType?: string;
}

export const WRITE = new Set(["post", "put", "patch", "delete"]);

/** OpenAPI `detail` for a route: success and error answers, documented from the zod schemas. */
export function doc(d: RouteDoc): Record<string, unknown> {
  const codes = new Set<ErrorCode>(d.errors ?? []);
  if (!d.public) codes.add("unauthenticated");
  codes.add("internal_error");
  const byStatus = new Map<number, ErrorCode[]>();
  for (const c of codes) {
    const s = statusOf(c);
    byStatus.set(s, [...(byStatus.get(s) ?? []), c]);
  }
  const responses: Record<string, unknown> = {};
  const headers = d.ok.headers ? { headers: headersWithSchemas(d.ok.headers) } : {};
  responses[String(d.ok.status)] = d.ok.schema
    ? {
        description: d.ok.description ?? "Success",
        ...headers,
        content: { [d.ok.contentType ?? "application/json"]: { schema: deferredJsonSchema(d.ok.schema, "output") } },
      }
    : { description: d.ok.description ?? "No content", ...headers };
  for (const [status, list] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    responses[String(status)] = {
      description: `Problem: ${list.map((c) => `\`${c}\``).join(", ")}`,
      ...(status === 429 || list.includes("busy") ? { headers: { "Retry-After": RETRY_AFTER_HEADER } } : {}),
      content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } },
    };
  }
  return {
    summary: d.summary,
    tags: d.tags,
    description: d.description,
    responses,
    "x-app-public": d.public === true,
    ...(d.bodyContentType ? { "x-app-body-content-type": d.bodyContentType } : {}),
  };
}

