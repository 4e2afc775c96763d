// bun run build                             → dist/app                  (x64 with AVX2 and other modern CPUs)
// bun run build --baseline                  → dist/app-baseline         (older NAS CPUs without AVX2)
// bun run build --target linux-arm64        → dist/app-linux-arm64      (Raspberry Pi 3/4/5, ARM NAS, ARM VMs)
// bun run build --target linux-x64-musl     → dist/app-linux-x64-musl   (Alpine-based images)
// bun run build --target linux-arm64-musl   → dist/app-linux-arm64-musl (Alpine on ARM)
// Another machine's runtime comes from the npm registry (scripts/bun-runtimes.ts). Migrations
// (migrations/index.ts imports each .sql as text) and the docs UI assets are embedded.
import { $ } from "bun";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { embedWebAssets } from "./web/build-web";
import { runtimeFor, targetNamed, type Target } from "./scripts/bun-runtimes";

/** --target NAME or --target=NAME; --baseline is --target linux-x64-baseline. */
function chosenTarget(argv: string[]): Target {
  const i = argv.findIndex((a) => a === "--target" || a.startsWith("--target="));
  if (i !== -1) {
    const name = argv[i]!.includes("=") ? argv[i]!.slice("--target=".length) : argv[i + 1];
    if (!name) throw new Error("--target needs a name");
    return targetNamed(name);
  }
  return targetNamed(argv.includes("--baseline") ? "linux-x64-baseline" : "linux-x64");
}

let target: Target;
try {
  target = chosenTarget(process.argv.slice(2));
} catch (e) {
  console.error((e as Error).message);
  process.exit(2);
}
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

const outfile = join("dist", target.outfile);
// Another machine's executable is built on its runtime (cross-compiling), taken from the npm registry.
const runtime = await runtimeFor(target);
if (runtime) flags.push(`--target=${target.bunTarget}`, `--compile-executable-path=${runtime}`);

const started = performance.now();
// The web app's hashed assets go into a generated module (dist/web-assets.generated.ts, not tracked)
// that the `app-embed` condition makes `#web-assets` resolve to, so they are embedded in the executable.
await embedWebAssets();
// Two entry points: the server, and the job worker it starts for heavy work (src/jobs.worker.ts,
// found beside the bundle's root at run time: src/app.ts).
await $`bun build ./src/main.ts ./src/jobs.worker.ts ${flags} --conditions=app-embed --outfile ${outfile}`;
const size = Bun.file(outfile).size;
console.log(`${outfile}: ${(size / 1024 / 1024).toFixed(1)} MiB in ${((performance.now() - started) / 1000).toFixed(1)} s`);
