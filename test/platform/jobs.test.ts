import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Config } from "../../src/config";
import { DEFAULT_BUSY_TIMEOUT_MS, migrate, openDatabase, type Db } from "../../src/core/db";
import { AppError } from "../../src/core/errors";
import { JobFailed, STREAM_CHUNK_BYTES, STREAM_WINDOW_BYTES } from "../../src/core/jobs/jobs.protocol";
import { JobRunner } from "../../src/core/jobs/jobs.runner";
import { Logger } from "../../src/core/log";
import { toProblem } from "../../src/core/problem";
import { FixedClock, systemClock, type Clock } from "../../src/core/time";

/**
 * The job worker's protocol (core/jobs): the real runner and host in a real Worker, with the small
 * jobs of test/helpers/jobs-fixture.worker.ts. The backup and legacy jobs themselves are tested
 * through HTTP (test/backup, test/legacy.test.ts, test/platform/heavy-jobs.test.ts).
 */

const FIXTURE = new URL("../helpers/jobs-fixture.worker.ts", import.meta.url).href;

let dir = "";
let db: Db | null = null;
let runner: JobRunner | null = null;
afterEach(() => {
  runner?.close();
  runner = null;
  db?.close();
  db = null;
  if (dir) rmSync(dir, { recursive: true, force: true });
  delete process.env.APP_FAILPOINT;
});

function makeRunner(opts: { clock?: Clock; idleMs?: number; logs?: string[] } = {}): JobRunner {
  dir = mkdtempSync(join(tmpdir(), "app-jobs-"));
  db = openDatabase(join(dir, "app.db"));
  migrate(db);
  const logger = new Logger("json", (l) => opts.logs?.push(l));
  runner = new JobRunner({ workerUrl: FIXTURE, db, config: Config.parse({ dataDir: dir }), clock: opts.clock ?? systemClock, logger, version: "test", idleMs: opts.idleMs });
  return runner;
}

async function until(cond: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("condition not reached");
    await Bun.sleep(10);
  }
}

describe("what crosses between the threads", () => {
  test("a result is plain data; an AppError comes back as the same AppError (code, status, problems, headers)", async () => {
    const r = makeRunner();
    expect(await r.run("fixture.echo", { a: [1, "two", null], b: { c: true } })).toEqual({ a: [1, "two", null], b: { c: true } });
    const e = await r.run("fixture.refuse", null).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(AppError);
    expect(toProblem(e).body).toEqual({
      type: "about:blank",
      title: "Merge conflict",
      status: 409,
      code: "merge_conflict",
      detail: "1 record(s) conflict with existing data; nothing was changed",
      errors: [{ path: "tasks/1", message: "differs" }],
    });
    expect(toProblem(e).headers).toEqual({ "X-Extra": "kept" });
  });

  test("an unexpected error is a 500 whose cause is logged; SQLITE_BUSY in a job is 503 busy like anywhere else", async () => {
    const r = makeRunner();
    const unknown = await r.run("fixture.nope", null).catch((x: unknown) => x);
    expect(unknown).toBeInstanceOf(JobFailed);
    expect(toProblem(unknown).body.status).toBe(500);
    expect(toProblem(unknown).internal).toBe(true);
    const busy = await r.run("fixture.busy", null).catch((x: unknown) => x);
    expect(toProblem(busy).body.code).toBe("busy");
    expect(toProblem(busy).headers?.["Retry-After"]).toBeDefined();
  });

  test("a transferred buffer arrives whole and is no longer usable here (not copied)", async () => {
    const r = makeRunner();
    const bytes = new Uint8Array(8 * 1024 * 1024);
    bytes[0] = 1;
    bytes[bytes.length - 1] = 2;
    expect(await r.run("fixture.bytes", { bytes }, [bytes.buffer])).toEqual({ length: 8 * 1024 * 1024, first: 1, last: 2 });
    expect(bytes.byteLength).toBe(0);
  });

  test("the job's now is the main thread's pinned clock; its connection mirrors the serving one's page limit and the failpoints", async () => {
    const clock = new FixedClock(new Date("2026-11-26T10:00:00.000Z"));
    const r = makeRunner({ clock });
    expect(await r.run("fixture.now", null)).toBe("2026-11-26T10:00:00.000Z");
    clock.advance(60_000);
    expect(await r.run("fixture.now", null)).toBe("2026-11-26T10:01:00.000Z");
    const pages = (db!.sqlite.query("PRAGMA page_count").get() as { page_count: number }).page_count;
    db!.sqlite.run(`PRAGMA max_page_count = ${pages + 100}`);
    process.env.APP_FAILPOINT = "restore.after_commit";
    expect(await r.run("fixture.settings", null)).toEqual({ busyTimeout: DEFAULT_BUSY_TIMEOUT_MS, maxPageCount: pages + 100, failpoint: "restore.after_commit", dataDir: dir });
    db!.sqlite.run("PRAGMA max_page_count = 1073741823");
    delete process.env.APP_FAILPOINT;
    expect(await r.run("fixture.settings", null)).toMatchObject({ maxPageCount: 1073741823, failpoint: null });
  });
});

describe("streamed jobs", () => {
  test("nothing is produced before the first read; the producer stays within a window of what the reader took", async () => {
    const r = makeRunner();
    const CHUNK = 16 * 1024;
    const { head, body } = await r.stream<{ name: string }>("fixture.endless", { chunk: CHUNK });
    expect(head).toEqual({ name: "endless" });
    const counters = () => r.run<{ produced: number; released: number }>("fixture.counters", null);
    await Bun.sleep(100);
    expect((await counters()).produced).toBe(0);

    const reader = body.getReader();
    let taken = 0;
    const first = await reader.read();
    taken += first.value!.byteLength;
    await Bun.sleep(100);
    // One read: the worker has made that chunk and at most a couple more.
    expect((await counters()).produced - taken).toBeLessThanOrEqual(3 * CHUNK);

    for (let i = 0; i < 400; i++) taken += (await reader.read()).value!.byteLength;
    await Bun.sleep(200);
    const { produced } = await counters();
    expect(produced).toBeGreaterThan(taken);
    expect(produced - taken).toBeLessThanOrEqual(STREAM_WINDOW_BYTES + STREAM_CHUNK_BYTES + CHUNK);
    expect([...(await reader.read()).value!.subarray(0, 4)]).toEqual([7, 7, 7, 7]);
    await reader.cancel();
  });

  test("a reader that goes away stops the producer, and the cancel resolves once it has released what it held", async () => {
    const r = makeRunner();
    const { body } = await r.stream("fixture.endless", { chunk: 1024 });
    const reader = body.getReader();
    await reader.read();
    await reader.cancel();
    expect((await r.run<{ released: number }>("fixture.counters", null)).released).toBe(1);
  });

  test("an error after the head ends the body with that error", async () => {
    const r = makeRunner();
    const { body } = await r.stream("fixture.failing", null);
    const reader = body.getReader();
    expect((await reader.read()).value!.byteLength).toBe(10);
    const failed = await reader.read().then(
      () => null,
      (e: unknown) => e,
    );
    expect(String(failed)).toContain("the disk went away");
  });
});

describe("checkpoints", () => {
  test("while a job runs, the serving connection leaves checkpoints to the worker; afterwards its own setting is back", async () => {
    const r = makeRunner();
    const setting = () => (db!.sqlite.query("PRAGMA wal_autocheckpoint").get() as { wal_autocheckpoint: number }).wal_autocheckpoint;
    db!.sqlite.run("PRAGMA wal_autocheckpoint = 700");
    const { body } = await r.stream("fixture.endless", { chunk: 1024 });
    expect(setting()).toBe(0);
    const reader = body.getReader();
    await reader.read();
    expect(setting()).toBe(0);
    await reader.cancel();
    expect(setting()).toBe(700);
    await r.run("fixture.echo", 1);
    expect(setting()).toBe(700);
  });
});

describe("the worker's life", () => {
  test("started on the first job, ended after being idle, started again by the next job", async () => {
    const r = makeRunner({ idleMs: 100 });
    expect(r.workerRunning).toBe(false);
    expect(r.started).toBe(0);
    await r.run("fixture.echo", 1);
    expect(r.started).toBe(1);
    await until(() => !r.workerRunning);
    expect(await r.run("fixture.echo", 2)).toBe(2);
    expect(r.started).toBe(2);
  });

  test("a worker that dies fails its running jobs (500, logged) and the next job gets a new worker", async () => {
    const logs: string[] = [];
    const r = makeRunner({ logs });
    await r.run("fixture.echo", 1);
    const e = await r.run("fixture.exit", null).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(JobFailed);
    expect(toProblem(e).body.status).toBe(500);
    expect(await r.run("fixture.echo", 3)).toBe(3);
    expect(r.started).toBe(2);
  });

  test("after close, a job is refused rather than left waiting", async () => {
    const r = makeRunner();
    await r.run("fixture.echo", 1);
    r.close();
    expect(r.workerRunning).toBe(false);
    expect(await r.run("fixture.echo", 2).catch((x: unknown) => x)).toBeInstanceOf(JobFailed);
  });
});
