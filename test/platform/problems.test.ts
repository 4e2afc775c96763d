import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
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
/** The one line logged for the answer `r` (its request id), besides the request line. */
function loggedFor(app: TestApp, r: { headers: Headers }): LogLine[] {
  return logLines(app).filter((l) => l.request_id === r.headers.get("x-request-id"));
}

/** A real full file system: a tiny tmpfs (needs root, as .ci/run has; skipped otherwise). */
function mountTmpfs(dir: string, options: string): boolean {
  mkdirSync(dir, { recursive: true });
  return Bun.spawnSync(["mount", "-t", "tmpfs", "-o", options, "tmpfs", dir], { stderr: "ignore" }).exitCode === 0;
}
const umount = (dir: string) => Bun.spawnSync(["umount", dir]);
const canMount = (() => {
  const probe = mkdtempSync(join(tmpdir(), "mount-probe-"));
  const ok = mountTmpfs(probe, "size=64k");
  if (ok) umount(probe);
  rmSync(probe, { recursive: true, force: true });
  return ok;
})();
if (!canMount) console.warn("problems.test.ts: the full-disk export test is skipped (mounting a tmpfs needs root)");

describe("one table", () => {
  test("no problem body is built outside src/core/problem.ts", () => {
    const offenders = sourceFiles(join(ROOT, "src"))
      .filter((f) => !f.endsWith(join("core", "problem.ts")))
      .filter((f) => /about:blank/.test(readFileSync(f, "utf8")))
      .map((f) => relative(ROOT, f));
    expect(offenders).toEqual([]);
  });

  test("no 4xx/5xx status is written outside src/core/problem.ts (a plain-text 404 of a web asset aside)", () => {
    const offenders: string[] = [];
    for (const f of sourceFiles(join(ROOT, "src")).filter((f) => !f.endsWith(join("core", "problem.ts")))) {
      for (const line of readFileSync(f, "utf8").split("\n")) {
        if (/\bstatus:\s*[45]\d\d\b/.test(line) && !line.includes("text/plain")) offenders.push(`${relative(ROOT, f)}: ${line.trim()}`);
      }
    }
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

  test("the web app never decides on a problem's text (detail, title, message): only on its code", () => {
    const decides = /\b(e|err|error|problem)\.(detail|title|message)\s*(===|!==|==|!=)|\b(e|err|error|problem)\.(detail|title|message)\.(includes|startsWith|endsWith|match|indexOf|search)\(|\.test\(\s*(e|err|error|problem)\.(detail|title|message)\b/;
    const offenders = sourceFiles(join(ROOT, "web", "src"))
      .filter((f) => decides.test(readFileSync(f, "utf8")))
      .map((f) => relative(ROOT, f));
    expect(offenders).toEqual([]);
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
    const [line, ...more] = loggedFor(app, r);
    expect(more).toEqual([]);
    expect(line).toMatchObject({ level: "error", status: 500, code: "internal_error", detail: "an attachment file is missing; try again" });
    expect(String(line!.cause)).toContain("AttachmentFileMissing");
    expect(String(line!.cause)).toContain(id);
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
      const [line, ...more] = loggedFor(app, r);
      expect(more).toEqual([]);
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
    const [line, ...more] = loggedFor(app, r);
    expect(more).toEqual([]);
    expect(line).toMatchObject({ level: "error", status: 507, code: "storage_full" });
    expect(String(line!.cause)).toMatch(/full/i);
  });

  test.skipIf(!canMount)("backup export on a full disk: 507 storage_full, not a missing file; the ENOSPC logged", async () => {
    const c = await signedInUser(app, admin, uname("fia"));
    await withAttachment(c);
    // The exports' directory on a file system with no inode left: the export's link directory cannot be made.
    const exports = join(app.dir, "backup", "exports");
    expect(mountTmpfs(exports, "size=64k,nr_inodes=8")).toBe(true);
    try {
      for (let i = 0; ; i++) {
        try {
          writeFileSync(join(exports, `fill${i}`), "");
        } catch (e) {
          expect((e as NodeJS.ErrnoException).code).toBe("ENOSPC");
          break;
        }
      }
      const r = await c.get("/api/v1/backup/export.zip");
      expectProblem(r, 507, "storage_full");
      expect(r.body).toEqual({ type: "about:blank", title: "Insufficient storage", status: 507, code: "storage_full", detail: "the server has no space left to prepare the export" });
      const [line, ...more] = loggedFor(app, r);
      expect(more).toEqual([]);
      expect(line).toMatchObject({ level: "error", status: 507, code: "storage_full" });
      expect(String(line!.cause)).toContain("ENOSPC");
    } finally {
      umount(exports);
    }
  });

  test("an unexpected error (not an AppError): 500 with the request id, logged with the driver's error and a stack", async () => {
    const c = await signedInUser(app, admin, uname("gil"));
    app.db.sqlite.run("PRAGMA query_only = 1");
    let r;
    try {
      r = await c.post("/api/v1/tasks", { title: "cannot be written" });
    } finally {
      app.db.sqlite.run("PRAGMA query_only = 0");
    }
    expectProblem(r, 500, "internal_error");
    expect(r.body).toEqual({
      type: "about:blank",
      title: "Internal server error",
      status: 500,
      code: "internal_error",
      detail: "an unexpected error occurred",
      request_id: r.headers.get("x-request-id"),
    });
    const [line, ...more] = loggedFor(app, r);
    expect(more).toEqual([]);
    expect(line).toMatchObject({ level: "error", msg: "unhandled error" });
    expect(String(line!.error)).toMatch(/readonly/i);
    expect(String(line!.stack)).toContain("at ");
  });

  test("503 busy (another connection holds the write lock) is logged as a warning with SQLite's SQLITE_BUSY", async () => {
    const c = await signedInUser(app, admin, uname("hal"));
    const other = new Database(join(app.dir, "app.db"));
    other.run("BEGIN IMMEDIATE");
    let r;
    try {
      r = await c.post("/api/v1/tasks", { title: "waits for nobody" });
    } finally {
      other.run("ROLLBACK");
      other.close();
    }
    expectProblem(r, 503, "busy");
    expect(r.headers.get("retry-after")).toBe("2");
    const [line, ...more] = loggedFor(app, r);
    expect(more).toEqual([]);
    expect(line).toMatchObject({ level: "warn", status: 503, code: "busy" });
    expect(String(line!.cause)).toContain("SQLITE_BUSY");
  });

  test("a 4xx is not logged beyond its request line", async () => {
    const c = await signedInUser(app, admin, uname("ivy"));
    const r = await c.get(`/api/v1/tasks/${Bun.randomUUIDv7()}`);
    expectProblem(r, 404, "not_found");
    expect(loggedFor(app, r)).toEqual([]);
  });
});
