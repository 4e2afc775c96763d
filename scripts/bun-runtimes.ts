// The Bun runtimes an executable for another machine is built on (`bun build --compile
// --compile-executable-path`), taken from the npm registry, the one place this project downloads
// from: Oven publishes each platform's runtime there as @oven/bun-<platform>, at the same version.
//
// `bun add` skips a package whose os/cpu differ from this machine's (all but the x64 ones here), so
// they are fetched with `npm pack`, which checks the tarball against the registry's sha512
// integrity, and unpacked into node_modules/.cache/bun-runtimes/<package>-<version>/. The version is
// always the running Bun's (the compiled program must be built by the runtime it will run on).
import { $ } from "bun";
import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";

export interface Target {
  /** What `bun run build --target` takes. */
  name: string;
  /** bun build's --target. */
  bunTarget: string;
  /** The npm package holding that runtime; null: the running Bun is it. */
  pkg: string | null;
  /** The executable's file name under dist/. */
  outfile: string;
  arch: "x64" | "arm64";
  libc: "glibc" | "musl";
}

export const TARGETS: readonly Target[] = [
  { name: "linux-x64", bunTarget: "bun-linux-x64", pkg: null, outfile: "app", arch: "x64", libc: "glibc" },
  { name: "linux-x64-baseline", bunTarget: "bun-linux-x64-baseline", pkg: "@oven/bun-linux-x64-baseline", outfile: "app-baseline", arch: "x64", libc: "glibc" },
  { name: "linux-x64-musl", bunTarget: "bun-linux-x64-musl", pkg: "@oven/bun-linux-x64-musl", outfile: "app-linux-x64-musl", arch: "x64", libc: "musl" },
  { name: "linux-arm64", bunTarget: "bun-linux-arm64", pkg: "@oven/bun-linux-aarch64", outfile: "app-linux-arm64", arch: "arm64", libc: "glibc" },
  { name: "linux-arm64-musl", bunTarget: "bun-linux-arm64-musl", pkg: "@oven/bun-linux-aarch64-musl", outfile: "app-linux-arm64-musl", arch: "arm64", libc: "musl" },
];

export function targetNamed(name: string): Target {
  const t = TARGETS.find((x) => x.name === name);
  if (!t) throw new Error(`unknown target ${JSON.stringify(name)}; one of: ${TARGETS.map((x) => x.name).join(", ")}`);
  return t;
}

const ROOT = resolve(import.meta.dir, "..");
const CACHE = join(ROOT, "node_modules", ".cache", "bun-runtimes");

/** The path of the `bun` runtime for `t`, fetched from the npm registry on first use; null for this machine's own. */
export async function runtimeFor(t: Target, version = Bun.version): Promise<string | null> {
  if (!t.pkg) return null;
  // Installed with `bun add --no-save` (possible for the x64 packages), at the right version.
  const installed = join(ROOT, "node_modules", t.pkg, "bin", "bun");
  const installedPkg = join(ROOT, "node_modules", t.pkg, "package.json");
  if (existsSync(installed) && existsSync(installedPkg) && (await Bun.file(installedPkg).json()).version === version) return installed;

  const dir = join(CACHE, `${t.pkg.replace("/", "+")}-${version}`);
  const exe = join(dir, "bin", "bun");
  if (existsSync(exe)) return exe;
  mkdirSync(CACHE, { recursive: true });
  const work = `${dir}.part-${process.pid}`;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  console.log(`fetching ${t.pkg}@${version} from the npm registry (npm pack)`);
  const packed = await $`npm pack ${`${t.pkg}@${version}`} --pack-destination ${work} --json --silent`.quiet().nothrow();
  if (packed.exitCode !== 0) {
    rmSync(work, { recursive: true, force: true });
    throw new Error(`npm pack ${t.pkg}@${version} failed: ${packed.stderr.toString().trim() || packed.stdout.toString().trim()}`);
  }
  const [info] = JSON.parse(packed.stdout.toString()) as { filename: string; integrity: string }[];
  await $`tar -xzf ${join(work, info!.filename)} -C ${work}`;
  // The tarball's root is `package/`; its bin/bun is the runtime.
  rmSync(dir, { recursive: true, force: true });
  renameSync(join(work, "package"), dir);
  rmSync(work, { recursive: true, force: true });
  if (!existsSync(exe)) throw new Error(`${t.pkg}@${version} has no bin/bun`);
  console.log(`${t.pkg}@${version}: ${info!.integrity}`);
  return exe;
}
