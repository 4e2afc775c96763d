// The release: every executable, a Debian package per architecture, and their checksums.
//
//   bun run scripts/release.ts                 build all four targets, then package them
//   bun run scripts/release.ts --skip-build    package the executables already in dist/
//   ... --targets linux-x64,linux-arm64        only these (default: all four below)
//   ... --out DIR                              where to write (default: dist/release)
//
// Writes into DIR (emptied first):
//   app-linux-x64, app-linux-x64-musl, app-linux-arm64, app-linux-arm64-musl   the executables
//   app-server_<version>_amd64.deb, app-server_<version>_arm64.deb             glibc builds, packaged
//   SHA256SUMS                                                                 `sha256sum -c SHA256SUMS`
//
// The .deb (packaging/deb/): /usr/bin/app, the systemd unit /lib/systemd/system/app-server.service
// (hardened), /etc/app-server/app-server.env (a conffile: the settings, as APP_* variables, which is
// all the program reads besides flags), the README, and maintainer scripts that create the app-server
// system user and enable and start the unit. Built with dpkg-deb, files owned by root.
import { $ } from "bun";
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { APP_VERSION } from "../src/version";
import { TARGETS, targetNamed, type Target } from "./bun-runtimes";

const ROOT = resolve(import.meta.dir, "..");
const PACKAGING = join(ROOT, "packaging", "deb");
export const RELEASE_TARGETS = ["linux-x64", "linux-x64-musl", "linux-arm64", "linux-arm64-musl"];
/** Debian's name of each glibc target's architecture; musl builds are not packaged (Alpine uses apk). */
const DEB_ARCH: Record<string, string> = { "linux-x64": "amd64", "linux-arm64": "arm64" };
/** The oldest glibc the executables need (their newest GLIBC_ symbol version: 2.17 on both, measured with objdump -T). */
const GLIBC_MIN = "2.17";

function option(name: string): string | undefined {
  const argv = process.argv;
  const i = argv.findIndex((a) => a === name || a.startsWith(`${name}=`));
  if (i === -1) return undefined;
  return argv[i]!.includes("=") ? argv[i]!.slice(name.length + 1) : argv[i + 1];
}

/** One executable's release name. */
export const releaseName = (t: Target) => `app-${t.name}`;

/** A .deb of the executable `exe` for Debian architecture `arch`, written into `outDir`; returns its file name. */
export async function buildDeb(exe: string, arch: string, outDir: string, version = APP_VERSION): Promise<string> {
  const stage = join(outDir, `.deb-${arch}`);
  rmSync(stage, { recursive: true, force: true });
  const put = (from: string, to: string, mode: number) => {
    mkdirSync(join(stage, to, ".."), { recursive: true });
    copyFileSync(from, join(stage, to));
    chmodSync(join(stage, to), mode);
  };
  put(exe, "usr/bin/app", 0o755);
  put(join(PACKAGING, "app-server.service"), "lib/systemd/system/app-server.service", 0o644);
  put(join(PACKAGING, "app-server.env"), "etc/app-server/app-server.env", 0o640);
  put(join(ROOT, "README.md"), "usr/share/doc/app-server/README.md", 0o644);
  for (const script of ["postinst", "prerm", "postrm"]) put(join(PACKAGING, script), `DEBIAN/${script}`, 0o755);
  writeFileSync(join(stage, "DEBIAN", "conffiles"), "/etc/app-server/app-server.env\n");
  const installedKiB = Math.ceil(statSync(exe).size / 1024) + 64;
  writeFileSync(
    join(stage, "DEBIAN", "control"),
    [
      "Package: app-server",
      `Version: ${version}`,
      `Architecture: ${arch}`,
      // No project address exists yet; .invalid can never be a real one (RFC 6761).
      "Maintainer: app maintainers <maintainers@app.invalid>",
      `Installed-Size: ${installedKiB}`,
      `Depends: libc6 (>= ${GLIBC_MIN}), passwd`,
      "Section: web",
      "Priority: optional",
      "Description: self-hosted personal productivity server",
      " Tasks, lists, habits, countdowns, memos and attachments in one executable",
      " with its web app inside, run as the app-server systemd service.",
      "",
    ].join("\n"),
  );
  const file = `app-server_${version}_${arch}.deb`;
  // gzip, not dpkg-deb's default xz: xz took 7 minutes for one 124 MiB executable on the shared
  // 2-core machine (45.9 MB .deb); every dpkg reads gzip (zstd only from Debian 12 / Ubuntu 21.10).
  const built = await $`dpkg-deb --root-owner-group -Zgzip -z6 --build ${stage} ${join(outDir, file)}`.quiet().nothrow();
  rmSync(stage, { recursive: true, force: true });
  if (built.exitCode !== 0) throw new Error(`dpkg-deb failed: ${built.stderr.toString()}`);
  return file;
}

/** SHA256SUMS of every file in `dir` (sorted by name), as `sha256sum -c` reads it. */
export async function writeChecksums(dir: string): Promise<void> {
  const lines: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    if (name === "SHA256SUMS" || name.startsWith(".")) continue;
    const hasher = new Bun.CryptoHasher("sha256");
    for await (const chunk of Bun.file(join(dir, name)).stream()) hasher.update(chunk);
    lines.push(`${hasher.digest("hex")}  ${name}`);
  }
  writeFileSync(join(dir, "SHA256SUMS"), lines.join("\n") + "\n");
}

async function main(): Promise<void> {
  const targets = (option("--targets")?.split(",") ?? RELEASE_TARGETS).map(targetNamed);
  const out = resolve(ROOT, option("--out") ?? join("dist", "release"));
  const skipBuild = process.argv.includes("--skip-build");
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const started = performance.now();
  for (const t of targets) {
    const exe = join(ROOT, "dist", t.outfile);
    if (!skipBuild) {
      const t0 = performance.now();
      await $`bun run build.ts --target ${t.name}`.cwd(ROOT);
      console.log(`${t.name}: built in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    } else if (!existsSync(exe)) {
      throw new Error(`${exe} is missing: run bun run build --target ${t.name}, or leave out --skip-build`);
    }
    copyFileSync(exe, join(out, releaseName(t)));
    chmodSync(join(out, releaseName(t)), 0o755);
    const arch = DEB_ARCH[t.name];
    if (arch) console.log(`${t.name}: ${await buildDeb(exe, arch, out)}`);
  }
  await writeChecksums(out);
  console.log(`${out}: ${readdirSync(out).sort().join(", ")} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

if (import.meta.main) {
  main().catch((e: unknown) => {
    console.error(`release: ${(e as Error).message}`);
    process.exit(1);
  });
}

export { TARGETS };
