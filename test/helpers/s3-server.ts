// An S3 stand-in (s3rver) as a process of its own, for tests that need a real S3 protocol peer:
// `bun test/helpers/s3-server.ts <dir> <bucket>...` prints `{"port": N}` once it listens on a
// port the system picked, and serves until killed. A process of its own, so its logger's module
// quirk below stays out of the test process.
import { createRequire } from "node:module";

// s3rver's logger (winston → logform) calls safe-stable-stringify 2's `configure`; under bun,
// logform's require resolves the hoisted safe-stable-stringify 1.1.1 (another package's), which has
// none, and every request then fails with a 500. Version 1's stringify serves for a log line.
const require = createRequire(import.meta.url);
const sss = require("safe-stable-stringify") as { configure?: unknown } & ((...a: unknown[]) => string);
if (typeof sss.configure !== "function") sss.configure = () => sss;
const { default: S3rver } = await import("s3rver");

const [dir, ...buckets] = process.argv.slice(2);
const server = new S3rver({ port: 0, address: "127.0.0.1", silent: process.env.S3_VERBOSE !== "1", directory: dir!, configureBuckets: buckets.map((name) => ({ name, configs: [] })) });
const addr = (await server.run()) as { port: number };
console.log(JSON.stringify({ port: addr.port }));
