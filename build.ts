// bun run build            → dist/app           (x64 with AVX2 and other modern CPUs)
// bun run build --baseline → dist/app-baseline  (older NAS CPUs without AVX2)
// Migrations (migrations/index.ts imports each .sql as text) and the docs UI assets are embedded.
import { $ } from "bun";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { embedWebAssets } from "./web/build-web";

const baseline = process.argv.includes("--baseline");
const JIT_POLICY = 100;
const BYTECODE_ORDER = join("assets", "bytecode-order.txt");
mkdirSync("dist", { recursive: true });

// Keep the embedded migration index in step with migrations/meta/_journal.json.
await $`bun run scripts/gen-migrations.ts`;

// Production mode needs no --define here: Elysia reads Bun.env.NODE_ENV through a variable when it
// is first imported, which a define cannot reach (measured); src/core/production-mode.ts, the first
// import of src/main.ts, sets it in the executable and in `bun run start` alike.
const flags = [
  "--compile",
  "--minify",
  "--bytecode",
  "--format=esm",
  "--sourcemap=linked",
  "--no-compile-autoload-dotenv",
  "--no-compile-autoload-bunfig",
  // Start-up code runs once: with JavaScriptCore's tier-up thresholds scaled ×JIT_POLICY it stays in
  // the interpreter instead of being JIT-compiled (−6 to −9 MiB resident at start, the JIT's code
  // and compilers untouched); src/main.ts sets the normal policy back once it is listening.
  `--compile-jit-policy=${JIT_POLICY}`,
];
// Profile-guided layout of the bytecode: the functions a recorded run used (start-up first, then
// the first requests) are placed together at the front, so fewer pages of the bundle are read in
// (−3 MiB resident). Recorded by `bun run scripts/record-bytecode-order.ts`; a profile from an older
// build still applies to the functions that did not change, so a stale one only helps less.
if (existsSync(BYTECODE_ORDER)) flags.push(`--bytecode-order=${BYTECODE_ORDER}`);

let outfile = join("dist", "app");
if (baseline) {
  // Cross-compiling needs the baseline runtime; the npm registry serves it as @oven/bun-linux-x64-baseline
  // (`bun add --no-save @oven/bun-linux-x64-baseline@1.4.4`), so no download from elsewhere is needed.
  const exe = join("node_modules", "@oven", "bun-linux-x64-baseline", "bin", "bun");
  if (!existsSync(exe)) {
    console.error(`missing ${exe}: run \`bun add --no-save @oven/bun-linux-x64-baseline@${Bun.version}\` first`);
    process.exit(1);
  }
  flags.push("--target=bun-linux-x64-baseline", `--compile-executable-path=${exe}`);
  outfile = join("dist", "app-baseline");
}

const started = performance.now();
// The web app's hashed assets go into a generated module (dist/web-assets.generated.ts, not tracked)
// that the `app-embed` condition makes `#web-assets` resolve to, so they are embedded in the executable.
await embedWebAssets();
// Two entry points: the server, and the job worker it starts for heavy work (src/jobs.worker.ts,
// found beside the bundle's root at run time: src/app.ts).
await $`bun build ./src/main.ts ./src/jobs.worker.ts ${flags} --conditions=app-embed --outfile ${outfile}`;
const size = Bun.file(outfile).size;
console.log(`${outfile}: ${(size / 1024 / 1024).toFixed(1)} MiB in ${((performance.now() - started) / 1000).toFixed(1)} s`);
