// A job worker for test/platform/jobs.test.ts: the real host (serveJobs) with small jobs that show
// what crosses between the threads, how streamed jobs are paced and what happens when a worker ends.
import { AppError } from "../../src/core/errors";
import { Streamed, serveJobs, type Job } from "../../src/core/jobs/jobs.host";

let produced = 0;
let released = 0;

serveJobs({
  fixture: async () => ({
    echo: (p: unknown) => p,
    now: (_p: unknown, job: Job) => job.core.clock.now().toISOString(),
    refuse: () => {
      throw new AppError("merge_conflict", "1 record(s) conflict with existing data; nothing was changed", { errors: [{ path: "tasks/1", message: "differs" }], headers: { "X-Extra": "kept" } });
    },
    busy: (_p: unknown, job: Job) => {
      // A statement that finds the write lock taken, as SQLite reports it.
      const err = Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY" });
      void job;
      throw err;
    },
    bytes: (p: { bytes: Uint8Array }) => ({ length: p.bytes.byteLength, first: p.bytes[0], last: p.bytes[p.bytes.byteLength - 1] }),
    settings: (_p: unknown, job: Job) => ({
      busyTimeout: (job.core.db.sqlite.query("PRAGMA busy_timeout").get() as { timeout: number }).timeout,
      maxPageCount: (job.core.db.sqlite.query("PRAGMA max_page_count").get() as { max_page_count: number }).max_page_count,
      failpoint: process.env.APP_FAILPOINT ?? null,
      dataDir: job.core.dataDir,
    }),
    /** An endless stream of `chunk`-byte chunks; its cancel takes a while to release what it holds. */
    endless: (p: { chunk: number }) => {
      produced = 0;
      released = 0;
      const body = new ReadableStream<Uint8Array>(
        {
          pull(ctrl) {
            produced += p.chunk;
            ctrl.enqueue(new Uint8Array(p.chunk).fill(7));
          },
          async cancel() {
            await Bun.sleep(50);
            released++;
          },
        },
        { highWaterMark: 0 },
      );
      return new Streamed({ name: "endless" }, body);
    },
    /** A stream that fails after its first chunk. */
    failing: () => {
      let n = 0;
      const body = new ReadableStream<Uint8Array>(
        {
          pull(ctrl) {
            if (n++ === 0) ctrl.enqueue(new Uint8Array(10));
            else ctrl.error(new Error("the disk went away"));
          },
        },
        { highWaterMark: 0 },
      );
      return new Streamed(null, body);
    },
    counters: () => ({ produced, released }),
    exit: () => process.exit(3),
  }),
});
