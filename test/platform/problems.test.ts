import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { PROBLEMS } from "../../src/core/problem";
import { en } from "../../web/src/i18n";
import { makeTestApp, setupAdmin, signedInUser, type TestApp, type TestClient } from "../helpers/app";
import { multipart } from "../helpers/multipart";
import { expectProblem } from "../helpers/problem";
import { mkTask, uname } from "../helpers/tasks";

/**
 * Errors carry codes, not statuses (ARCHITECTURE.md, "Lessons from our own code"): a throw site
 * says what happened; core/problem.ts alone picks status and title, builds every problem body and
 * logs every 5xx with its cause. The web app has a sentence for every code.
 */

const ROOT = join(import.meta.dir, "..", "..");

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sourceFiles(p));
    else if (/\.tsx?$/.test(name)) out.push(p);
  }
  return out;
}

type LogLine = Record<string, unknown>;
const logLines = (app: TestApp): LogLine[] => app.logs.map((l) => JSON.parse(l) as LogLine).filter((l) => l.msg !== "request");

describe("one table", () => {
  test("no problem body is built outside src/core/problem.ts", () => {
    const offenders = sourceFiles(join(ROOT, "src"))
      .filter((f) => !f.endsWith(join("core", "problem.ts")))
      .filter((f) => /about:blank/.test(readFileSync(f, "utf8")))
      .map((f) => relative(ROOT, f));
    expect(offenders).toEqual([]);
  });

  test("no throw site chooses a status: AppError takes a code, a detail and options", () => {
    // `new AppError("code", 409, ...)` was the old shape; the type system refuses it, this catches a cast.
    const offenders = sourceFiles(join(ROOT, "src")).filter((f) => /new AppError\(\s*[^,]+,\s*\d{3}\s*,/.test(readFileSync(f, "utf8")));
    expect(offenders).toEqual([]);
  });

  test("every code has a 4xx or 5xx status and a title", () => {
    for (const [code, p] of Object.entries(PROBLEMS)) {
      expect({ code, ok: p.status >= 400 && p.status <= 599 && p.title.length > 0 }).toEqual({ code, ok: true });
    }
  });

  test("the web app has a sentence for every code (it switches on the code, never on the text)", () => {
    // Field problems are listed by field, rate limits say how long, a state conflict names its rule.
    const bySwitch = new Set(["validation_failed", "invalid_reference", "invalid_parent", "invalid_cursor", "rate_limited", "state_conflict"]);
    const missing = Object.keys(PROBLEMS).filter((c) => !bySwitch.has(c) && !en.errors.byCode[c]);
    expect(missing).toEqual([]);
  });
});

describe("every 5xx is logged with its cause", () => {
  let app: TestApp;
  let admin: TestClient;
  beforeAll(async () => {
    app = makeTestApp();
    admin = await setupAdmin(app);
  });
  afterAll(() => app.close());

  async function withAttachment(c: TestClient): Promise<string> {
    const t = await mkTask(c, { title: "with a file" });
    const m = multipart([{ name: "file", filename: "a.txt", type: "text/plain", data: "hello" }]);
    const r = await c.request("POST", `/api/v1/tasks/${t.id}/attachments`, { body: m.body, headers: { "content-type": m.contentType } });
    expect(r.status).toBe(201);
    return r.body.id as string;
  }

  test("backup export, an attachment file gone: 500 saying so, the fs error in the log", async () => {
    const c = await signedInUser(app, admin, uname("ena"));
    const id = await withAttachment(c);
    rmSync(join(app.dir, "attachments", id));
    const r = await c.get("/api/v1/backup/export.zip");
    expectProblem(r, 500, "internal_error");
    expect(r.body).toEqual({ type: "about:blank", title: "Export failed", status: 500, code: "internal_error", detail: "an attachment file is missing; try again" });
    const line = logLines(app).find((l) => l.request_id === r.headers.get("x-request-id"));
    expect(line).toMatchObject({ level: "error", status: 500, code: "internal_error", detail: "an attachment file is missing; try again" });
    expect(String(line!.cause)).toContain("ENOENT");
  });

  test("backup export failing for another reason does not blame a missing file; the cause is logged", async () => {
    const c = await signedInUser(app, admin, uname("eli"));
    const id = await withAttachment(c);
    // The file's place holds a directory: linking it fails, and not because it is missing.
    const file = join(app.dir, "attachments", id);
    rmSync(file);
    mkdirSync(file);
    try {
      const r = await c.get("/api/v1/backup/export.zip");
      expectProblem(r, 500, "internal_error");
      expect(r.body).toEqual({ type: "about:blank", title: "Export failed", status: 500, code: "internal_error", detail: "the export could not be prepared; try again later" });
      const line = logLines(app).find((l) => l.request_id === r.headers.get("x-request-id"));
      expect(line).toMatchObject({ level: "error", status: 500, code: "internal_error" });
      expect(String(line!.cause)).toMatch(/EPERM|EISDIR/);
      expect(readdirSync(join(app.dir, "backup", "exports"))).toEqual([]);
    } finally {
      rmSync(file, { recursive: true, force: true });
    }
  });

  test("507 storage_full (a legacy restore on a full database) is logged with SQLite's error", async () => {
    const c = await signedInUser(app, admin, uname("fay"));
    expect((await c.post("/api/v1/memos", { content: "note" })).status).toBe(201);
    const file = (await c.get("/api/v1/export")).body;
    // Enough data that the import needs pages the database may no longer have.
    file.memos = Array.from({ length: 400 }, (_, i) => ({ ...file.memos[0], id: Bun.randomUUIDv7(), content: `m${i} ${"x".repeat(4000)}` }));
    const pages = (app.db.sqlite.query("PRAGMA page_count").get() as { page_count: number }).page_count;
    app.db.sqlite.run(`PRAGMA max_page_count = ${pages + 20}`);
    let r;
    try {
      r = await c.post("/api/v1/restore?mode=replace", file);
    } finally {
      app.db.sqlite.run("PRAGMA max_page_count = 1073741823");
    }
    expectProblem(r, 507, "storage_full");
    const line = logLines(app).find((l) => l.request_id === r.headers.get("x-request-id"));
    expect(line).toMatchObject({ level: "error", status: 507, code: "storage_full" });
    expect(String(line!.cause)).toMatch(/full/i);
  });
});
