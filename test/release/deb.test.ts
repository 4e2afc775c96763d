import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Config, envName, loadConfig } from "../../src/config";
import { buildDeb, writeChecksums } from "../../scripts/release";
import { AppProcess, cleanEnv, FAST_ARGON2 } from "../helpers/spawn";

/**
 * The Debian package (scripts/release.ts, packaging/deb/).
 *
 * Always (with dpkg-deb): the package around a stand-in executable — its fields, files, modes and
 * conffile, the maintainer scripts' syntax, the unit through `systemd-analyze verify` and
 * `systemd-analyze security --offline` (exposure level), and the settings file read by the
 * program's own config loader; SHA256SUMS checked by `sha256sum -c`.
 *
 * With APP_DEB_TEST_EXE=<a real linux-x64 executable> (.ci/run sets it to dist/app after the build):
 * - the executable taken out of the .deb (`dpkg-deb -x`) starts with the packaged settings;
 * - as root with systemd-nspawn (Debian's systemd-container): a container booted with systemd as
 *   PID 1 on this machine's /usr (an overlay: nothing reaches the host) gets the package through
 *   `dpkg -i`: the unit is enabled and started by the postinst under all its hardening (checked in
 *   /proc: no capabilities, no_new_privs, a seccomp filter, not root), answers HTTP, makes a backup
 *   in its job worker, survives an upgrade, stops on `dpkg -r`, and `dpkg --purge` keeps the data.
 * The container shares nothing writable with the host but its own temporary directories; its
 * network is private (`--private-network`), so the services of the copied /etc cannot take ports.
 */

const ROOT = resolve(import.meta.dir, "../..");
const PKG_VERSION = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;
const dpkgDeb = Bun.which("dpkg-deb");
const systemdAnalyze = Bun.which("systemd-analyze");
const nspawn = Bun.which("systemd-nspawn");
const REAL_EXE = process.env.APP_DEB_TEST_EXE ? resolve(ROOT, process.env.APP_DEB_TEST_EXE) : null;
if (!dpkgDeb) console.warn("deb.test.ts: skipped, dpkg-deb is missing (apt-get install -y dpkg)");
if (!systemdAnalyze) console.warn("deb.test.ts: the unit checks are skipped, systemd-analyze is missing (apt-get install -y systemd)");
const installWhy = !REAL_EXE
  ? "APP_DEB_TEST_EXE is not set (bun run build, then APP_DEB_TEST_EXE=dist/app)"
  : !existsSync(REAL_EXE)
    ? `${REAL_EXE} does not exist`
    : !nspawn
      ? "systemd-nspawn is missing (apt-get install -y systemd-container)"
      : process.getuid?.() !== 0
        ? "not root (systemd-nspawn and dpkg -i need it)"
        : !Bun.which("curl")
          ? "curl is missing (apt-get install -y curl)"
          : null;
if (REAL_EXE && installWhy) console.warn(`deb.test.ts: the install test under systemd is skipped: ${installWhy}`);
if (!REAL_EXE) console.warn(`deb.test.ts: the tests of the packaged executable are skipped: ${installWhy}`);

const roots: string[] = [];
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
}, 120_000);
function tempRoot(prefix = "app-deb-"): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  roots.push(d);
  return d;
}

function run(cmd: string[], opts: { cwd?: string } = {}): { code: number; out: string; err: string } {
  const p = Bun.spawnSync(cmd, { cwd: opts.cwd, stdout: "pipe", stderr: "pipe" });
  return { code: p.exitCode ?? -1, out: p.stdout.toString(), err: p.stderr.toString() };
}

const UNIT = readFileSync(join(ROOT, "packaging/deb/app-server.service"), "utf8");
const ENV_FILE = readFileSync(join(ROOT, "packaging/deb/app-server.env"), "utf8");

/** The settings file's assignments (comments and blank lines left out). */
function envAssignments(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split("\n")) {
    if (!line.trim() || line.startsWith("#")) continue;
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line);
    expect({ line, ok: m !== null }).toEqual({ line, ok: true });
    out[m![1]!] = m![2]!;
  }
  return out;
}

describe.skipIf(!dpkgDeb)("the .deb", () => {
  let deb = "";
  let dir = "";

  test("fields, files, modes, owners, conffile; maintainer scripts parse", async () => {
    dir = tempRoot();
    const standIn = join(dir, "app-standin");
    writeFileSync(standIn, "#!/bin/sh\necho stand-in\n", { mode: 0o755 });
    deb = join(dir, await buildDeb(standIn, "amd64", dir));
    expect(deb).toEndWith(`app-server_${PKG_VERSION}_amd64.deb`);
    const info = run([dpkgDeb!, "-f", deb]);
    expect(info.code).toBe(0);
    expect(info.out).toContain("Package: app-server\n");
    expect(info.out).toContain(`Version: ${PKG_VERSION}\n`);
    expect(info.out).toContain("Architecture: amd64\n");
    expect(info.out).toMatch(/^Depends: libc6 \(>= 2\.17\), passwd$/m);
    const files = run([dpkgDeb!, "-c", deb]).out.trim().split("\n").map((l) => l.split(/\s+/));
    const entry = (path: string) => files.find((f) => f[5] === path)?.slice(0, 2);
    expect(entry("./usr/bin/app")).toEqual(["-rwxr-xr-x", "root/root"]);
    expect(entry("./lib/systemd/system/app-server.service")).toEqual(["-rw-r--r--", "root/root"]);
    expect(entry("./etc/app-server/app-server.env")).toEqual(["-rw-r-----", "root/root"]);
    expect(entry("./usr/share/doc/app-server/README.md")).toEqual(["-rw-r--r--", "root/root"]);
    expect(files.filter((f) => !f[0]!.startsWith("d")).map((f) => f[5]).sort()).toEqual(
      ["./etc/app-server/app-server.env", "./lib/systemd/system/app-server.service", "./usr/bin/app", "./usr/share/doc/app-server/README.md"].sort(),
    );
    const control = join(dir, "control");
    expect(run([dpkgDeb!, "-e", deb, control]).code).toBe(0);
    expect(readFileSync(join(control, "conffiles"), "utf8")).toBe("/etc/app-server/app-server.env\n");
    for (const s of ["postinst", "prerm", "postrm"]) {
      expect(run(["sh", "-n", join(control, s)])).toEqual({ code: 0, out: "", err: "" });
    }
  });

  test("the unit: ExecStart's data directory is the one it may write; the hardening the README promises", () => {
    const execStart = /^ExecStart=(\S+) serve --data-dir (\S+)$/m.exec(UNIT);
    expect(execStart?.[1]).toBe("/usr/bin/app");
    expect(execStart?.[2]).toBe("/var/lib/app-server");
    for (const line of [
      "User=app-server",
      "EnvironmentFile=/etc/app-server/app-server.env",
      "StateDirectory=app-server",
      "ReadWritePaths=/var/lib/app-server",
      "ProtectSystem=strict",
      "NoNewPrivileges=yes",
      "PrivateTmp=yes",
      "ProtectHome=yes",
      "CapabilityBoundingSet=",
      "SystemCallFilter=@system-service",
    ]) {
      expect(UNIT.split("\n")).toContain(line);
    }
    // The JIT needs writable executable memory: this option would kill the server at start.
    expect(UNIT).not.toMatch(/^MemoryDenyWriteExecute=/m);
  });

  test.skipIf(!systemdAnalyze)("systemd-analyze verify says nothing; security --offline rates its exposure at most 2.0", () => {
    const d = tempRoot();
    const exe = join(d, "app");
    writeFileSync(exe, "#!/bin/sh\n", { mode: 0o755 });
    const file = join(d, "app-server.service");
    writeFileSync(file, UNIT.replace("ExecStart=/usr/bin/app ", `ExecStart=${exe} `));
    const v = run([systemdAnalyze!, "verify", file]);
    expect({ code: v.code, said: (v.out + v.err).split("\n").filter((l) => l.includes("app-server.service")) }).toEqual({ code: 0, said: [] });
    const s = run([systemdAnalyze!, "security", "--offline=true", file]);
    const level = Number(/Overall exposure level for app-server\.service: ([\d.]+)/.exec(s.out + s.err)?.[1]);
    expect(level).toBeLessThanOrEqual(2.0);
  });

  test("the settings file holds only settings the program knows, with valid values", () => {
    const known = new Set((Object.keys(Config.shape) as (keyof Config)[]).map((k) => envName(k)));
    const vars = envAssignments(ENV_FILE);
    for (const k of Object.keys(vars)) expect({ k, known: known.has(k) }).toEqual({ k, known: true });
    const commented = [...ENV_FILE.matchAll(/^#(APP_[A-Z0-9_]+)=/gm)].map((m) => m[1]!);
    for (const k of commented) expect({ k, known: known.has(k) }).toEqual({ k, known: true });
    const config = loadConfig({}, vars);
    expect(config.host).toBe("127.0.0.1");
    expect(config.port).toBe(8080);
    expect(config.metricsToken).toBeUndefined();
  });

  test("SHA256SUMS: sha256sum -c accepts it, and catches a changed file", async () => {
    const d = tempRoot();
    writeFileSync(join(d, "app-linux-x64"), "one");
    writeFileSync(join(d, "app-linux-arm64"), "two");
    copyFileSync(deb, join(d, "app-server.deb"));
    await writeChecksums(d);
    expect(readFileSync(join(d, "SHA256SUMS"), "utf8").trim().split("\n").map((l) => l.split("  ")[1])).toEqual(["app-linux-arm64", "app-linux-x64", "app-server.deb"]);
    expect(run(["sha256sum", "-c", "SHA256SUMS"], { cwd: d }).code).toBe(0);
    writeFileSync(join(d, "app-linux-x64"), "changed");
    expect(run(["sha256sum", "-c", "--quiet", "SHA256SUMS"], { cwd: d }).code).not.toBe(0);
  });
});

describe.skipIf(!dpkgDeb || !REAL_EXE || !existsSync(REAL_EXE ?? ""))("the packaged executable", () => {
  let deb = "";
  let dir = "";
  beforeAll(async () => {
    dir = tempRoot();
    deb = join(dir, await buildDeb(REAL_EXE!, "amd64", dir));
  }, 300_000);

  test("taken out with dpkg-deb -x, it starts with the packaged settings", async () => {
    const tree = join(dir, "tree");
    expect(run([dpkgDeb!, "-x", deb, tree]).code).toBe(0);
    const vars = envAssignments(readFileSync(join(tree, "etc/app-server/app-server.env"), "utf8"));
    const data = join(dir, "data");
    const s = await AppProcess.start(["serve", "--data-dir", data], {
      program: [join(tree, "usr/bin/app")],
      env: cleanEnv({ ...vars, ...FAST_ARGON2, APP_PORT: "0", APP_LOG_FORMAT: "json" }),
    });
    try {
      expect((await s.fetch("/api/v1/health/ready")).status).toBe(200);
      expect(s.base).toStartWith("http://127.0.0.1:");
    } finally {
      expect(await s.stop()).toBe(0);
    }
  }, 120_000);

  test.skipIf(installWhy !== null)("dpkg -i into a container booted with systemd: enabled, started hardened, serves, upgrades, removes", async () => {
    const t0 = performance.now();
    const ct = container(deb);
    try {
      await ct.boot();
      // Docker-style images forbid starting services from maintainer scripts (policy-rc.d exits 101);
      // the container's /usr is an overlay, so removing it there changes nothing on this machine.
      ct.sh("rm -f /usr/sbin/policy-rc.d");
      const installed = ct.sh("dpkg -i /mnt/release/app-server.deb");
      // Nothing on stderr but systemd's note of the enabling symlink.
      expect({ code: installed.code, err: installed.err.split("\n").filter((l) => l && !l.startsWith("Created symlink ")) }).toEqual({ code: 0, err: [] });
      expect(ct.sh("systemctl is-enabled app-server").out.trim()).toBe("enabled");
      await ct.until("the service answers", () => ct.sh("curl -sf http://127.0.0.1:8080/api/v1/health/ready").out.includes("ready")).catch((e: Error) => {
        throw new Error(`${e.message}\n${ct.sh("systemctl status app-server --no-pager; systemctl list-jobs --no-pager; journalctl -u app-server --no-pager | tail -20").out}`);
      });
      expect(ct.sh("systemctl is-active app-server").out.trim()).toBe("active");

      // Its hardening, as the kernel sees the running process.
      const pid = ct.sh("systemctl show -p MainPID --value app-server").out.trim();
      const status = ct.sh(`cat /proc/${pid}/status`).out;
      expect(/^NoNewPrivs:\s+1$/m.test(status)).toBe(true);
      expect(/^Seccomp:\s+2$/m.test(status)).toBe(true);
      expect(/^CapBnd:\s+0+$/m.test(status)).toBe(true);
      expect(/^CapEff:\s+0+$/m.test(status)).toBe(true);
      expect(/^Uid:\s+0\s/m.test(status)).toBe(false);
      const exposure = Number(/Overall exposure level for app-server\.service: ([\d.]+)/.exec(ct.sh("systemd-analyze security app-server --no-pager").out)?.[1]);
      expect(exposure).toBeLessThanOrEqual(2.0);
      expect(ct.sh("stat -c '%U %a' /var/lib/app-server /etc/app-server/app-server.env").out.trim().split("\n")).toEqual(["app-server 700", "root 640"]);

      // Setup, then a complete backup: the job worker thread runs under the same seccomp filter.
      const setup = ct.sh(
        `curl -s -c /tmp/jar -o /dev/null -w '%{http_code}' -H 'content-type: application/json' -d '{"username":"owner","password":"correct horse battery"}' http://127.0.0.1:8080/api/v1/setup/initialize`,
      );
      expect(setup.out).toBe("201");
      expect(ct.sh("curl -s -b /tmp/jar -o /tmp/backup.zip -w '%{http_code} %{content_type}' http://127.0.0.1:8080/api/v1/backup/export.zip").out).toBe("200 application/zip");
      expect(ct.sh("head -c 4 /tmp/backup.zip | od -An -tx1").out.trim()).toBe("50 4b 03 04");

      // An upgrade (the same package again) restarts it on the same data.
      expect(ct.sh("dpkg -i /mnt/release/app-server.deb").code).toBe(0);
      await ct.until("the service answers after the upgrade", () => ct.sh("curl -sf http://127.0.0.1:8080/api/v1/setup/status").out.includes('"initialized":true'));
      expect(ct.sh("systemctl show -p MainPID --value app-server").out.trim()).not.toBe(pid);

      expect(ct.sh("dpkg -r app-server").code).toBe(0);
      expect(ct.sh("systemctl is-active app-server").out.trim()).toBe("inactive");
      expect(ct.sh("test -f /var/lib/app-server/app.db && test ! -e /usr/bin/app").code).toBe(0);
      const purged = ct.sh("dpkg --purge app-server");
      expect(purged.code).toBe(0);
      expect(purged.err).toContain("/var/lib/app-server was kept");
      expect(ct.sh("test ! -e /etc/app-server && test -f /var/lib/app-server/app.db").code).toBe(0);
    } finally {
      await ct.stop();
    }
    console.log(`deb.test.ts: container boot, install, checks and removal took ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }, 300_000);
});

/** The PID (on this machine) of the container's init: a child of nspawn that is PID 1 in its own PID namespace. */
function containerInit(nspawnPid: number): string {
  for (const pid of run(["ps", "-o", "pid=", "--ppid", String(nspawnPid)]).out.split("\n").map((l) => l.trim()).filter(Boolean)) {
    let status = "";
    try {
      status = readFileSync(`/proc/${pid}/status`, "utf8");
    } catch {
      continue; // gone between ps and the read: the outer child exiting
    }
    const nspid = /^NSpid:\s+(.+)$/m.exec(status)?.[1]?.trim().split(/\s+/) ?? [];
    if (nspid.length > 1 && nspid[nspid.length - 1] === "1") return pid;
  }
  return "";
}

/**
 * A throw-away system container: this machine's /usr as an overlay (writes go to a temporary upper
 * layer), copies of /etc (its enabled services dropped) and of dpkg's database, private network.
 */
function container(deb: string) {
  const root = tempRoot("app-deb-ct-");
  const name = `appdeb${process.pid}`;
  const releaseDir = join(root, "..", `${name}-release`);
  let nspawnProc: ReturnType<typeof Bun.spawn> | null = null;
  let initPid = "";
  let nspawnErr = "";
  return {
    async boot() {
      // mkdtemp makes 0700 directories: the container's / must be traversable by its service users.
      chmodSync(root, 0o755);
      for (const d of ["usr/lib", "dev", "proc", "sys", "run", "tmp", "root", "var/lib", "mnt/release"]) mkdirSync(join(root, d), { recursive: true });
      for (const l of ["bin", "lib", "lib64", "sbin"]) symlinkSync(`usr/${l}`, join(root, l));
      // nspawn looks for os-release before it mounts /usr over this directory.
      copyFileSync("/usr/lib/os-release", join(root, "usr/lib/os-release"));
      expect(run(["cp", "-a", "/etc", join(root, "etc")]).code).toBe(0);
      rmSync(join(root, "etc/machine-id"), { force: true });
      rmSync(join(root, "etc/systemd/system/multi-user.target.wants"), { recursive: true, force: true });
      mkdirSync(join(root, "etc/systemd/system/multi-user.target.wants"));
      // It would hold the boot for two minutes waiting for a network the container does not have.
      symlinkSync("/dev/null", join(root, "etc/systemd/system/systemd-networkd-wait-online.service"));
      cpSync("/var/lib/dpkg", join(root, "var/lib/dpkg"), { recursive: true });
      mkdirSync(releaseDir, { recursive: true });
      roots.push(releaseDir);
      copyFileSync(deb, join(releaseDir, "app-server.deb"));
      // nspawn keeps per-container state under /run/systemd/nspawn and refuses to clean it up on a
      // disk file system: where /run is not a tmpfs (this machine), that directory gets one.
      mkdirSync("/run/systemd/nspawn", { recursive: true });
      if (run(["mountpoint", "-q", "/run/systemd/nspawn"]).code !== 0 && run(["findmnt", "-n", "-o", "FSTYPE", "--target", "/run"]).out.trim() !== "tmpfs") {
        expect(run(["mount", "-t", "tmpfs", "-o", "mode=0755", "tmpfs", "/run/systemd/nspawn"]).code).toBe(0);
      }
      // No retry: the boots that "stalled" (about half of them, and both tries in one CI run) were
      // this fixture watching nspawn's exited outer child (see start); a boot that does not come up
      // now fails with what systemd was waiting for.
      try {
        await this.start();
      } catch (e) {
        if (!(e instanceof Error) || !e.message.includes("not within")) throw e;
        const jobs = initPid ? this.sh("systemctl list-jobs --no-pager; systemctl --failed --no-pager; systemctl is-system-running") : null;
        throw new Error(`${e.message}; init ${initPid || "not found"}; systemd was waiting for:\n${jobs ? jobs.out + jobs.err : "(no init process)"}\nnspawn: ${nspawnErr}`);
      }
    },
    async start() {
      // No systemd on the host: --register=no --keep-unit keep nspawn off the (absent) system bus.
      nspawnProc = Bun.spawn(
        [nspawn!, "-D", root, "--overlay=/usr::/usr", `--bind-ro=${releaseDir}:/mnt/release`, "--private-network", "--boot", "-M", name, "--register=no", "--keep-unit", "--link-journal=no", "--console=pipe"],
        // The container's console is not read (a full pipe would stall its boot); nspawn's own errors are.
        { stdin: "ignore", stdout: "ignore", stderr: "pipe" },
      );
      void new Response(nspawnProc.stderr as ReadableStream).text().then((t) => (nspawnErr = t));
      await this.until("the container's systemd is up", () => {
        // nspawn's first child is its short-lived "outer child", which clones the container's init
        // and exits (init is then re-parented to nspawn, a subreaper). Taking whichever child came
        // first cached that outer child's PID in about half the boots, and every nsenter into it
        // failed until the deadline: the "stall" this fixture used to retry. Init is the child that
        // is PID 1 in its own namespace (the last NSpid field), looked up until found.
        if (!initPid) initPid = containerInit(nspawnProc!.pid);
        if (!initPid) return false;
        // Up enough for dpkg's systemctl calls: basic.target reached (services of the copied /etc may still be starting).
        return this.sh("systemctl is-active basic.target").out.trim() === "active";
      });
    },
    sh(command: string) {
      return run(["nsenter", "-t", initPid, "-a", "sh", "-c", command]);
    },
    async until(what: string, ok: () => boolean, seconds = 90) {
      const end = performance.now() + seconds * 1000;
      while (!ok()) {
        if (nspawnProc?.exitCode !== null && nspawnProc?.exitCode !== undefined) throw new Error(`${what}: the container exited (${nspawnProc.exitCode}): ${nspawnErr}`);
        if (performance.now() > end) throw new Error(`${what}: not within ${seconds} s`);
        await Bun.sleep(500);
      }
    },
    async stop() {
      if (!nspawnProc) return;
      if (initPid) this.sh("systemctl poweroff");
      const exited = await Promise.race([nspawnProc.exited.then(() => true), Bun.sleep(30_000).then(() => false)]);
      if (!exited) nspawnProc.kill("SIGKILL");
      await nspawnProc.exited;
    },
  };
}
