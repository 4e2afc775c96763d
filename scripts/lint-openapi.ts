// Lints /api/openapi.json with Redocly (redocly.yaml: its recommended ruleset) and Spectral
// (.spectral.yaml: spectral:oas). The document is built in-process from a real app on a temporary
// data directory, exactly as the route builds it, so no server is needed.
// Usage: bun run scripts/lint-openapi.ts [--keep]   (--keep leaves the document in the temp dir)
// Exits non-zero when either linter reports an error or a warning.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createApp } from "../src/app";
import { Config } from "../src/config";
import { migrate, openDatabase } from "../src/core/db";
import { Logger } from "../src/core/log";
import { loadLazySchemas } from "../src/core/openapi";
import { buildOpenApiDocument } from "../src/core/openapi-document";
import { ServerSecret } from "../src/core/secret";
import { APP_VERSION } from "../src/version";

const root = resolve(import.meta.dir, "..");
const keep = process.argv.includes("--keep");

/** The document the running server would answer at /api/openapi.json. */
export async function buildDocumentInProcess(): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(join(tmpdir(), "app-openapi-"));
  const db = openDatabase(join(dir, "app.db"));
  try {
    migrate(db);
    const config = Config.parse({ dataDir: dir, logFormat: "off" });
    const handle = createApp({ db, config, secret: ServerSecret.loadOrCreate(dir), logger: new Logger("off") });
    try {
      await loadLazySchemas();
      return buildOpenApiDocument(handle.app, APP_VERSION);
    } finally {
      handle.close();
    }
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs a linter's CLI (a Node program) under node when it is installed, else under bun. */
async function run(name: string, args: string[]): Promise<number> {
  const bin = join(root, "node_modules", ".bin", name);
  const runtime = Bun.which("node") ? ["node"] : [process.execPath];
  console.log(`\n$ ${name} ${args.join(" ")}`);
  const proc = Bun.spawn([...runtime, bin, ...args], {
    cwd: root,
    stdout: "inherit",
    stderr: "inherit",
    // Offline and quiet: no usage telemetry, no "new version available" look-up.
    env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_UPDATE_NOTIFIER: "1" },
  });
  return await proc.exited;
}

if (import.meta.main) {
  const out = mkdtempSync(join(tmpdir(), "app-openapi-lint-"));
  const file = join(out, "openapi.json");
  writeFileSync(file, JSON.stringify(await buildDocumentInProcess(), null, 2));
  console.log(`document: ${file}`);
  const redocly = await run("redocly", ["lint", "--config", join(root, "redocly.yaml"), "--format", "stylish", file]);
  const spectral = await run("spectral", ["lint", "--ruleset", join(root, ".spectral.yaml"), "--fail-severity", "warn", "--format", "stylish", file]);
  if (!keep) rmSync(out, { recursive: true, force: true });
  const ok = redocly === 0 && spectral === 0;
  console.log(`\nredocly: ${redocly === 0 ? "clean" : `failed (exit ${redocly})`}; spectral: ${spectral === 0 ? "clean" : `failed (exit ${spectral})`}`);
  process.exit(ok ? 0 : 1);
}
