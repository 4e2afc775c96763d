import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { AppProcess, serverEnv } from "../helpers/spawn";
import { SERVING_BUSY_TIMEOUT_MS } from "../../src/core/db";
import { dump, makeTestApp, setupAdmin, signedInUser, type TestApp } from "../helpers/app";

/**
 * One event loop serves every user of a household: a heavy job (a legacy restore, a backup
 * export) must not stall it (issue 11). Through a real server process (APP_EXE=/path/to/app runs
 * the compiled executable): while a large restore is being written, the health probe and another
 * user's task list keep being answered, counted by ordering (answers that arrive after the upload
 * ended and before the restore answered), not by timing. And a write that finds the database held
 * by another connection is refused at once with 503 busy and Retry-After, changing nothing.
 */

const ROOT = resolve(import.meta.dir, "../..");
const roots: string[] = [];
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});


async function startServer(dir: string): Promise<{ proc: AppProcess["proc"]; base: string }> {
  return await AppProcess.start(["serve", "--data-dir", dir, "--port", "0"], { env: serverEnv({ APP_LOG_FORMAT: "json" }), stderr: "inherit" });
}

interface Session {
  cookie: string;
  csrf: string;
}

async function signIn(base: string, path: string, body: unknown): Promise<Session> {
  const r = await fetch(base + path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  if (r.status !== 200 && r.status !== 201) throw new Error(`${path}: ${r.status} ${await r.text()}`);
  const jar = new Map<string, string>();
  for (const c of r.headers.getSetCookie()) {
    const k = Bun.Cookie.parse(c);
    jar.set(k.name, k.value);
  }
  return { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join("; "), csrf: jar.get("app_csrf")! };
}

/** A legacy v1 file with `n` tasks in a few lists (a third of them subtasks), each with a tag. */
function legacyFile(n: number): Uint8Array {
  const at = "2026-11-01T10:00:00.000Z";
  const lists = Array.from({ length: 5 }, (_, i) => ({
    id: Bun.randomUUIDv7(),
    name: `List ${i}`,
    folder_id: null,
    is_inbox: false,
    color: null,
    position: i,
    created_at: at,
    updated_at: at,
    deleted_at: null,
  }));
  const tasks: Record<string, unknown>[] = [];
  let parent: { id: string; list: string } | null = null;
  for (let i = 0; i < n; i++) {
    const id = Bun.randomUUIDv7();
    const sub: boolean = parent !== null && i % 3 === 2;
    const list: string = sub ? parent!.list : lists[i % lists.length]!.id;
    tasks.push({
      id,
      list_id: list,
      parent_id: sub ? parent!.id : null,
      title: `Task ${i} with a title of ordinary length`,
      description: i % 2 ? `Some notes about task ${i}, a sentence or two long, as people write them.` : "",
      completed: i % 7 === 0,
      completed_at: i % 7 === 0 ? at : null,
      due_at: i % 4 === 0 ? "2026-12-01" : null,
      priority: i % 4,
      tags: [`tag-${i % 20}`],
      created_at: at,
      updated_at: at,
      deleted_at: null,
    });
    if (!sub) parent = { id, list };
  }
  const file = { format: "app-legacy", version: 1, exported_at: at, folders: [], lists, tasks, recurrences: [], habits: [], countdowns: [], memos: [] };
  return new TextEncoder().encode(JSON.stringify(file));
}

describe("a heavy job does not stall the server (real server process)", () => {
  test("during a large legacy restore, /health/live and another user's GET /tasks keep being answered; the restore completes", async () => {
    const dir = mkdtempSync(join(tmpdir(), "app-heavy-"));
    roots.push(dir);
    const { proc, base } = await startServer(dir);
    try {
      const owner = await signIn(base, "/api/v1/setup/initialize", { username: "owner", password: "correct horse battery" });
      const created = await fetch(`${base}/api/v1/users`, {
        method: "POST",
        headers: { cookie: owner.cookie, "x-csrf-token": owner.csrf, "content-type": "application/json" },
        body: JSON.stringify({ username: "other", password: "other-password-1" }),
      });
      expect(created.status).toBe(201);
      const other = await signIn(base, "/api/v1/auth/login", { username: "other", password: "other-password-1" });

      const TASKS = 20_000;
      const file = legacyFile(TASKS);
      // The body is sent as a stream so that the end of the upload is known: answers counted after
      // it were given while the server held the whole file and was restoring it.
      let uploaded = false;
      let offset = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(ctrl) {
          if (offset >= file.byteLength) {
            uploaded = true;
            ctrl.close();
            return;
          }
          ctrl.enqueue(file.subarray(offset, offset + 1024 * 1024));
          offset += 1024 * 1024;
        },
      });
      let restored = false;
      const restore = fetch(`${base}/api/v1/restore?mode=replace`, {
        method: "POST",
        headers: { cookie: owner.cookie, "x-csrf-token": owner.csrf, "content-type": "application/json" },
        body,
        duplex: "half",
      } as RequestInit).then(async (r) => {
        restored = true;
        return { status: r.status, body: (await r.json()) as { counts?: { tasks: number } } };
      });

      // Polls one after the other; an answer counts when its request was sent after the upload
      // ended and it came back before the restore's answer.
      const poll = async (url: string, headers: Record<string, string>) => {
        let during = 0;
        while (!restored) {
          const sentAfterUpload = uploaded;
          const r = await fetch(url, { headers });
          expect(r.status).toBe(200);
          await r.arrayBuffer();
          if (sentAfterUpload && !restored) during++;
          await Bun.sleep(5);
        }
        return during;
      };
      const [health, page, result] = await Promise.all([
        poll(`${base}/api/v1/health/live`, {}),
        poll(`${base}/api/v1/tasks?limit=20`, { cookie: other.cookie }),
        restore,
      ]);
      expect(result.status).toBe(200);
      expect(result.body.counts?.tasks).toBe(TASKS);
      // Before the job worker, the restore held the event loop from the end of the upload to its
      // answer: nothing else was answered in between (0 or 1 at the edges).
      expect(health).toBeGreaterThanOrEqual(5);
      expect(page).toBeGreaterThanOrEqual(5);
    } finally {
      proc.kill("SIGTERM");
      await proc.exited;
    }
  }, 120_000);
});

describe("a write that finds the database held by another connection", () => {
  let app: TestApp;
  let holder: Database | null = null;
  afterEach(() => {
    holder?.close();
    holder = null;
    app?.close();
  });

  test("is answered at once with 503 busy and Retry-After, changes nothing, and goes through once the lock is free; reads are served meanwhile", async () => {
    app = makeTestApp();
    const admin = await setupAdmin(app);
    const user = await signedInUser(app, admin, "alice");
    // The serving connection never waits long for a lock: bun:sqlite would wait on the event loop.
    expect((app.db.sqlite.query("PRAGMA busy_timeout").get() as { timeout: number }).timeout).toBe(SERVING_BUSY_TIMEOUT_MS);
    expect(SERVING_BUSY_TIMEOUT_MS).toBeLessThanOrEqual(50);

    // Another connection holds the write lock (as the job worker does during a restore).
    holder = new Database(app.db.path);
    holder.run("BEGIN IMMEDIATE");
    holder.run("UPDATE users SET display_name = display_name");
    const before = dump(app.db);
    for (const [method, path, json] of [
      ["POST", "/api/v1/tasks", { title: "while a restore runs" }],
      ["POST", "/api/v1/memos", { content: "while a restore runs" }],
    ] as const) {
      const r = await user.request(method, path, { json });
      expect(r.status).toBe(503);
      expect(r.body.code).toBe("busy");
      expect(r.headers.get("content-type")).toContain("application/problem+json");
      expect(Number(r.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    }
    expect(dump(app.db)).toEqual(before);
    // Reads do not need the lock.
    expect((await user.get("/api/v1/tasks")).status).toBe(200);
    expect((await user.get("/api/v1/health/live")).status).toBe(200);

    holder.run("ROLLBACK");
    const ok = await user.post("/api/v1/tasks", { title: "after the restore" });
    expect(ok.status).toBe(201);
  });

  test("the answer is documented: every write operation lists 503 busy with Retry-After", async () => {
    app = makeTestApp();
    const doc = (await (await setupAdmin(app)).get("/api/openapi.json")).body as { paths: Record<string, Record<string, { responses: Record<string, { description: string; headers?: Record<string, unknown> }> }>> };
    let writes = 0;
    for (const ops of Object.values(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        if (!["post", "put", "patch", "delete"].includes(method)) continue;
        writes++;
        expect(op.responses["503"]?.description).toContain("`busy`");
        expect(op.responses["503"]?.headers?.["Retry-After"]).toBeDefined();
      }
    }
    expect(writes).toBeGreaterThan(20);
  });
});
