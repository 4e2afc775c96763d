// Issue 11, item 4: no input may produce a 5xx. Every operation of /api/openapi.json is driven over a
// real socket (the app behind Bun.serve on a real SQLite file), signed in with CSRF, with values drawn
// from the document's own schemas for every path, query and JSON body field: valid-looking values,
// strings with NUL, lone surrogates, huge and odd numbers, far dates, empty values and wrong types.
// Path parameters are mostly real ids of the user's objects (refilled as the run deletes them).
// Asserted on every answer: no 5xx; every 4xx is problem+json of the contract's shape, within the
// size caps. First a sweep (each field × each nasty value, deterministic), then random requests.
import { afterAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { makeTestApp, setupAdmin } from "../helpers/app";
import { PNG, multipart } from "../helpers/multipart";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON Schema of any shape
type Schema = Record<string, any>;

const app = makeTestApp();
const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (req, srv) => app.handle.fetch(req, srv) });
afterAll(() => {
  server.stop(true);
  app.close();
});
const base = `http://127.0.0.1:${server.port}`;

// The signed-in admin (cookie + CSRF), as a browser would send them.
const admin = await setupAdmin(app);
const cookie = [...admin.jar].map(([k, v]) => `${k}=${v}`).join("; ");
const csrf = admin.jar.get("app_csrf")!;
const doc = (await admin.get("/api/openapi.json")).body as { paths: Record<string, Record<string, Schema>>; components: { schemas: Record<string, Schema> } };

// ---- the user's objects, for path parameters and *_id fields ----------------------------------

const pool: Record<string, string[]> = {};
const add = (name: string, id: unknown) => {
  if (typeof id === "string") (pool[name] ??= []).push(id);
};
const other = await admin.post("/api/v1/users", { username: "fuzz-other", password: "other-Passphrase-5531" });
add("user_id", other.body.id);
// A second session of the admin: DELETE /sessions/{id} may end it, never the one the run uses.
const second = app.client();
await second.post("/api/v1/auth/login", { username: "owner", password: "correct horse battery" });

async function refill(): Promise<void> {
  for (const k of Object.keys(pool)) if (k !== "user_id") pool[k] = [];
  const sessions = await admin.get("/api/v1/sessions");
  for (const s of sessions.body?.items ?? []) if (!s.current) add("session_id", s.id);
  const folder = await admin.post("/api/v1/folders", { name: `f${Math.random()}` });
  add("folder_id", folder.body?.id);
  const list = await admin.post("/api/v1/lists", { name: `l${Math.random()}`, folder_id: folder.body?.id ?? null });
  add("list_id", list.body?.id);
  const tag = await admin.post("/api/v1/tags", { name: `t${Math.random()}`, color: "#336699" });
  add("tag_id", tag.body?.id);
  const task = await admin.post("/api/v1/tasks", { title: "fuzz task", list_id: list.body?.id, due_at: "2026-11-20", tag_ids: tag.body?.id ? [tag.body.id] : [] });
  add("task_id", task.body?.id);
  add("parent_id", task.body?.id);
  const sub = await admin.post("/api/v1/tasks", { title: "fuzz subtask", parent_id: task.body?.id });
  add("task_id", sub.body?.id);
  const done = await admin.post("/api/v1/tasks", { title: "fuzz deleted", due_at: "2026-11-21T10:00:00Z" });
  add("task_id", done.body?.id);
  await admin.delete(`/api/v1/tasks/${done.body?.id}`);
  const rec = await admin.post("/api/v1/recurrences", { task_id: task.body?.id, kind: "rrule", rrule: "FREQ=WEEKLY;BYDAY=MO" });
  add("id", rec.body?.id);
  const memo = await admin.post("/api/v1/memos", { content: "fuzz memo" });
  add("memo_id", memo.body?.id);
  const habit = await admin.post("/api/v1/habits", { name: "fuzz habit" });
  add("habit_id", habit.body?.id);
  const pause = await admin.post(`/api/v1/habits/${habit.body?.id}/pauses`, { start_date: "2026-12-01", end_date: "2026-12-05" });
  add("pause_id", pause.body?.id);
  await admin.put(`/api/v1/habits/${habit.body?.id}/logs/2026-11-20`, { value: 1 });
  const countdown = await admin.post("/api/v1/countdowns", { name: "fuzz countdown", date: "2026-12-24" });
  add("countdown_id", countdown.body?.id);
  const { body, contentType } = multipart([{ name: "file", filename: "a.png", type: "image/png", data: PNG }]);
  const up = await fetch(`${base}/api/v1/tasks/${task.body?.id}/attachments`, { method: "POST", headers: { cookie, "x-csrf-token": csrf, "content-type": contentType }, body });
  add("attachment_id", ((await up.json()) as { id?: string }).id);
  for (const d of ["2026-11-20", "2026-12-01", "2026-11-23"]) add("date", d);
}

// ---- values ------------------------------------------------------------------------------------

const NASTY_STRINGS = [
  "",
  " ",
  "\u0000",
  "abc\u0000def",
  "\ud800",
  "x\udfffy",
  "\ud83d",
  "9999-12-31",
  "0000-01-01",
  "0000-02-29",
  "-000001-01-01",
  "+275760-09-13",
  "2026-02-30",
  "2026-11-20T25:00:00Z",
  "9999-12-31T23:59:59.999-23:59",
  "1e309",
  "-0",
  "NaN",
  "Infinity",
  "__proto__",
  "constructor",
  "../../etc/passwd",
  "%00",
  "\r\nX-Injected: 1",
  "'); DROP TABLE tasks; --",
  '"*NEAR()',
  "\u202egnp.exe",
  "😀".repeat(300),
  "x".repeat(5000),
  "01900000-0000-7000-8000-000000000000",
];
const NASTY_NUMBERS = [0, -1, 1, 2 ** 31, 2 ** 53, 2 ** 53 + 2, -(2 ** 53), 1e308, -1e308, 1.5, 5e-324, Number.MAX_SAFE_INTEGER];
const WRONG_TYPES: unknown[] = [null, true, false, [], {}, [[["deep"]]], { a: { b: [1] } }, 0, "", -1, "true"];
const SWEEP_VALUES: unknown[] = ["a\u0000b", "\ud800", "", "9999-12-31", "0000-01-01", "x".repeat(5000), 1e308, -1, 2 ** 53 + 2, null, {}, [[["deep"]]]];

const loneSurrogates = fc.string({ unit: fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)), maxLength: 4 });
const anyString = fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: "binary", maxLength: 40 }), loneSurrogates, fc.constantFrom(...NASTY_STRINGS));
const anyNumber = fc.oneof(fc.constantFrom(...NASTY_NUMBERS), fc.double({ noNaN: true }), fc.integer());

function deref(s: Schema | undefined): Schema {
  let out = s ?? {};
  for (let i = 0; out.$ref && i < 10; i++) out = doc.components.schemas[String(out.$ref).split("/").pop()!] ?? {};
  return out;
}

const DATES = ["2026-11-20", "2026-12-31", "2024-02-29", "1000-01-01", "9999-12-31"];

/** Values the schema allows (ids of the user's objects for *_id names), so a request is refused only for the field a test makes bad. */
function valid(raw: Schema | undefined, name: string, depth: number): fc.Arbitrary<unknown> {
  const s = deref(raw);
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
  if ("const" in s) return fc.constant(s.const);
  const alts = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
  if (alts) return fc.oneof(...alts.map((a) => valid(a, name, depth)));
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  const ids = pool[name];
  switch (type) {
    case "string": {
      if (ids?.length) return fc.constantFrom(...ids);
      if (s.format === "date" || name === "date" || name.endsWith("_date") || name.startsWith("due_")) return fc.constantFrom(...DATES);
      if (s.pattern) return fc.stringMatching(new RegExp(s.pattern));
      const min = s.minLength ?? 0;
      const max = Math.max(min, Math.min(typeof s.maxLength === "number" ? s.maxLength : 40, 40));
      return fc.string({ unit: fc.constantFrom(..."abcdefghij klmnop-é任"), minLength: Math.max(min, 1), maxLength: Math.max(max, 1) });
    }
    case "integer":
    case "number": {
      const lo = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : 1);
      const hi = s.maximum ?? (s.exclusiveMaximum !== undefined ? s.exclusiveMaximum - 1 : 100);
      return fc.integer({ min: Math.ceil(lo), max: Math.max(Math.ceil(lo), Math.floor(Math.min(hi, 1e6))) });
    }
    case "boolean":
      return fc.boolean();
    case "null":
      return fc.constant(null);
    case "array": {
      const items = name.endsWith("_ids") && pool[name.slice(0, -1)]?.length ? fc.constantFrom(...pool[name.slice(0, -1)]!) : valid(s.items, name, depth + 1);
      return fc.array(items, { minLength: s.minItems ?? 0, maxLength: Math.min(s.maxItems ?? 3, 3) });
    }
    default: {
      if (depth > 4 || !s.properties) return fc.constant({});
      const required = new Set<string>(s.required ?? []);
      const entries = Object.entries(s.properties as Record<string, Schema>).map(([k, v]) =>
        fc.tuple(fc.constant(k), required.has(k) ? valid(v, k, depth + 1) : fc.option(valid(v, k, depth + 1), { nil: undefined })),
      );
      return fc.tuple(...entries).map((kv) => {
        const o: Record<string, unknown> = {};
        for (const [k, v] of kv) if (v !== undefined) o[k] = v;
        return o;
      });
    }
  }
}

/** What a careless or hostile client sends instead: bounds ±1, nasty strings and numbers, wrong types. */
function hostile(raw: Schema | undefined): fc.Arbitrary<unknown> {
  const s = deref(raw);
  const edges: unknown[] = [];
  if (typeof s.maxLength === "number") edges.push("y".repeat(s.maxLength + 1));
  if (typeof s.minimum === "number") edges.push(s.minimum - 1, s.minimum - 0.5);
  if (typeof s.maximum === "number") edges.push(s.maximum + 1, s.maximum + 0.5);
  return fc.oneof(anyString, anyNumber, fc.constantFrom(...WRONG_TYPES, ...(edges.length ? edges : [null])));
}

/** Bodies that are not the JSON a route expects at all. */
const RAW_BODIES: (string | Uint8Array)[] = [
  "",
  "{",
  "[1,",
  "nul",
  "1e999",
  '"\\ud800"',
  `{"a":${"[".repeat(100)}${"]".repeat(100)}}`,
  `{"a":1,"a":2}`,
  '{"__proto__":{"admin":true}}',
  new Uint8Array([0xff, 0xfe, 0x7b, 0x7d]),
  new Uint8Array([0x7b, 0x22, 0xc3, 0x28, 0x22, 0x3a, 0x31, 0x7d]),
];

/** Percent-encoding of the UTF-8 Bun would send (encodeURIComponent throws on lone surrogates). */
function enc(v: unknown): string {
  const s = typeof v === "string" ? v : typeof v === "object" && v !== null ? JSON.stringify(v) : String(v);
  if (s === "%ED%A0%80") return s; // invalid UTF-8 on purpose
  let out = "";
  for (const b of new TextEncoder().encode(s)) out += /[A-Za-z0-9\-_.~]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, "0")}`;
  return out;
}

// ---- operations --------------------------------------------------------------------------------

interface Param {
  name: string;
  in: "path" | "query";
  schema: Schema;
}
interface Op {
  method: string;
  path: string;
  params: Param[];
  bodyType?: string;
  body?: Schema;
}
// Logging out would end the session the run uses (covered by the auth tests).
// GET /events answers 200 with an endless stream (its statuses: test/sharing/events.test.ts).
const SKIP = new Set(["post /api/v1/auth/logout", "get /api/v1/events"]);
const ops: Op[] = [];
for (const [path, methods] of Object.entries(doc.paths)) {
  for (const [method, op] of Object.entries(methods)) {
    if (SKIP.has(`${method} ${path}`)) continue;
    const content = (op.requestBody?.content ?? {}) as Record<string, { schema: Schema }>;
    const bodyType = Object.keys(content)[0];
    ops.push({ method: method.toUpperCase(), path, params: (op.parameters ?? []) as Param[], bodyType, body: bodyType ? content[bodyType]!.schema : undefined });
  }
}

/** A raw body, sent as it is. */
class Raw {
  constructor(readonly bytes: string | Uint8Array) {}
}

interface Request_ {
  op: Op;
  path: Record<string, unknown>;
  query: [string, unknown][];
  body?: unknown;
}

/** Where a request can be made bad: each path and query parameter, the body, each top-level body field. */
function fieldsOf(op: Op): { name: string; schema?: Schema; set: (r: Request_, v: unknown) => void }[] {
  const fields: { name: string; schema?: Schema; set: (r: Request_, v: unknown) => void }[] = [];
  for (const p of op.params) {
    if (p.in === "path") fields.push({ name: p.name, schema: p.schema, set: (r, v) => (r.path[p.name] = v) });
    else fields.push({ name: p.name, schema: p.schema, set: (r, v) => (r.query = [...r.query.filter(([k]) => k !== p.name), [p.name, v]]) });
  }
  if (op.bodyType) fields.push({ name: "body", schema: op.body, set: (r, v) => (r.body = v) });
  if (op.bodyType === "application/json") {
    for (const [k, schema] of Object.entries((deref(op.body).properties ?? {}) as Record<string, Schema>)) {
      fields.push({ name: k, schema, set: (r, v) => (r.body = { ...(typeof r.body === "object" && r.body && !(r.body instanceof Raw) ? r.body : {}), [k]: v }) });
    }
  }
  return fields;
}

/** A valid request for `op` (optional query parameters sometimes present). */
function validRequest(op: Op, withQuery: boolean): fc.Arbitrary<Request_> {
  const path = fc.tuple(...op.params.filter((p) => p.in === "path").map((p) => fc.tuple(fc.constant(p.name), valid(p.schema, p.name, 0))));
  const query = fc.tuple(
    ...op.params
      .filter((p) => p.in === "query")
      .map((p) => (withQuery ? fc.option(fc.tuple(fc.constant(p.name), valid(p.schema, p.name, 0)), { nil: undefined }) : fc.constant(undefined))),
  );
  const body = op.bodyType === "application/json" ? valid(op.body, "body", 0) : op.bodyType ? fc.constant(new Raw("x")) : fc.constant(undefined);
  return fc.record({ path, query, body }).map((r) => ({
    op,
    path: Object.fromEntries(r.path),
    query: r.query.filter((q): q is [string, unknown] => q !== undefined),
    body: r.body,
  }));
}

/** A valid request with one field (or the raw body) made bad, or none. */
function requestArb(op: Op): fc.Arbitrary<Request_> {
  const fields = fieldsOf(op);
  const spoil = fc.oneof(
    { weight: 1, arbitrary: fc.constant(null) },
    ...(fields.length ? [{ weight: 6, arbitrary: fc.integer({ min: 0, max: fields.length - 1 }).chain((i) => fc.tuple(fc.constant(i), hostile(fields[i]!.schema))) }] : []),
    ...(op.bodyType ? [{ weight: 1, arbitrary: fc.constantFrom(...RAW_BODIES).map((b) => [-1, new Raw(b)] as const) }] : []),
  );
  return fc.tuple(validRequest(op, true), spoil).map(([r, sp]) => {
    if (sp) {
      const [i, v] = sp;
      if (i === -1) r.body = v;
      else fields[i]!.set(r, v);
    }
    return r;
  });
}

/** Random requests after the sweep (FUZZ_RUNS=20000 for a long search). */
const RUNS = Number(process.env.FUZZ_RUNS ?? 1000);
const failures: string[] = [];
const statuses = new Map<number, number>();
let sent = 0;
let refilledAt = 0;

async function send(r: Request_): Promise<void> {
  sent++;
  const url =
    base +
    r.op.path.replace(/\{([^}]+)\}/g, (_m, name: string) => enc(r.path[name])) +
    (r.query.length ? `?${r.query.map(([k, v]) => `${k}=${enc(v)}`).join("&")}` : "");
  const headers: Record<string, string> = { cookie, "x-csrf-token": csrf };
  let body: string | Uint8Array | undefined;
  if (r.body instanceof Raw) {
    headers["content-type"] = r.op.bodyType ?? "application/json";
    body = r.body.bytes;
  } else if (r.op.bodyType === "application/json") {
    headers["content-type"] = "application/json";
    body = r.body === undefined ? undefined : JSON.stringify(r.body);
  } else if (r.op.bodyType === "multipart/form-data") {
    // The value drawn for the body becomes the file's name, type and bytes.
    const v = typeof r.body === "string" ? r.body : JSON.stringify(r.body ?? null);
    const m = multipart([{ name: "file", filename: v.replaceAll('"', ""), type: v.length < 100 ? v.replace(/[\r\n]/g, "") : "image/png", data: v.length % 2 ? PNG : new TextEncoder().encode(v) }]);
    headers["content-type"] = m.contentType;
    body = m.body;
  } else if (r.op.bodyType) {
    headers["content-type"] = r.op.bodyType;
    body = typeof r.body === "string" ? r.body : JSON.stringify(r.body ?? "");
  }
  const where = `${r.op.method} ${url.slice(base.length, base.length + 300)}${body !== undefined ? ` body ${String(typeof body === "string" ? body : "[bytes]").slice(0, 300)}` : ""}`;
  const res = await fetch(url, { method: r.op.method, headers, body });
  const text = await res.text();
  statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
  if (res.status >= 500) {
    failures.push(`${where} → ${res.status} ${text.slice(0, 300)} | log: ${app.logs.filter((l) => l.includes("unhandled")).slice(-1)[0]?.slice(0, 600) ?? ""}`);
    return;
  }
  if (res.status >= 400) {
    let p: Schema | undefined;
    try {
      p = JSON.parse(text) as Schema;
    } catch {
      /* reported below */
    }
    const ok =
      (res.headers.get("content-type") ?? "").startsWith("application/problem+json") &&
      p?.type === "about:blank" &&
      typeof p.title === "string" &&
      p.status === res.status &&
      typeof p.code === "string" &&
      /^[a-z_]+$/.test(p.code) &&
      (p.detail === undefined || (typeof p.detail === "string" && p.detail.length <= 200)) &&
      (p.errors === undefined || (Array.isArray(p.errors) && p.errors.length <= 101 && p.errors.every((e: Schema) => typeof e.path === "string" && typeof e.message === "string"))) &&
      text.length < 64 * 1024;
    if (!ok) failures.push(`${where} → ${res.status} not a capped problem+json: ${res.headers.get("content-type")} ${text.slice(0, 300)}`);
  }
}

afterAll(() => console.log(`${sent} requests; answers by status: ${JSON.stringify(Object.fromEntries([...statuses].sort(([a], [b]) => a - b)))}`));

describe("every operation of the OpenAPI document, with values drawn from its schemas", () => {
  test("the document lists the operations the run drives", () => {
    expect(ops.length).toBeGreaterThan(90);
  });

  test("sweep: every path, query and top-level body field × each nasty value, the rest valid", async () => {
    await refill();
    for (const op of ops) {
      const [plain] = fc.sample(validRequest(op, false), { numRuns: 1, seed: 11 });
      const spoilt: Request_[] = [];
      for (const f of fieldsOf(op)) {
        for (const v of SWEEP_VALUES) {
          const r: Request_ = { ...plain!, path: { ...plain!.path }, query: [...plain!.query] };
          f.set(r, v);
          spoilt.push(r);
        }
      }
      if (op.bodyType) for (const b of RAW_BODIES) spoilt.push({ ...plain!, body: new Raw(b) });
      for (const r of spoilt) await send(r);
      if (sent - refilledAt > 400) {
        await refill();
        refilledAt = sent;
      }
    }
    console.log(`sweep: ${sent} requests`);
    if (failures.length) console.log(failures.join("\n"));
    expect(failures).toEqual([]);
  }, 120_000);

  test("random requests", async () => {
    await refill();
    failures.length = 0;
    const arb = fc.constantFrom(...ops).chain(requestArb);
    let n = 0;
    await fc.assert(
      fc.asyncProperty(arb, async (r) => {
        if (++n % 300 === 0) await refill();
        const before = failures.length;
        await send(r);
        return failures.length === before;
      }),
      { numRuns: RUNS, endOnFailure: true },
    ).catch((e: Error) => {
      console.log(failures.join("\n"));
      throw e;
    });
    expect(failures).toEqual([]);
  }, Math.max(120_000, RUNS * 100));
});
