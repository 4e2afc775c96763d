import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { unzipSync } from "fflate";
import { AppProcess, serverEnv } from "../helpers/spawn";

/**
 * The executables built for other machines (bun run build --target …), run on this x64 machine:
 * linux-arm64 under Debian's qemu-user-static with the arm64 glibc of libc6-arm64-cross. Start,
 * first-run setup, a task, a complete backup (the app-backup export, made in the job worker
 * thread), SIGTERM. Built and run by .ci/run: APP_ARM64_EXE names the executable (building it takes
 * a while, so a plain `bun run test` skips this unless it is set).
 */

const ROOT = resolve(import.meta.dir, "../..");
const QEMU = Bun.which("qemu-aarch64-static");
const SYSROOT = "/usr/aarch64-linux-gnu";
const ARM64_EXE = process.env.APP_ARM64_EXE ? resolve(ROOT, process.env.APP_ARM64_EXE) : null;

const skipWhy = !ARM64_EXE
  ? "APP_ARM64_EXE is not set (bun run build --target linux-arm64, then APP_ARM64_EXE=dist/app-linux-arm64)"
  : !existsSync(ARM64_EXE)
    ? `${ARM64_EXE} does not exist (bun run build --target linux-arm64)`
    : !QEMU
      ? "qemu-aarch64-static is missing (apt-get install -y qemu-user-static)"
      : !existsSync(join(SYSROOT, "lib", "ld-linux-aarch64.so.1"))
        ? `no arm64 glibc under ${SYSROOT} (apt-get install -y libc6-arm64-cross)`
        : null;
if (skipWhy) console.warn(`cross-smoke.test.ts: the arm64 smoke test is skipped: ${skipWhy}`);

const roots: string[] = [];
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

describe.skipIf(skipWhy !== null)("linux-arm64 executable under qemu", () => {
  test("start, setup, a task, a complete backup, stop", async () => {
    const dir = mkdtempSync(join(tmpdir(), "app-arm64-"));
    roots.push(dir);
    const t0 = performance.now();
    const server = await AppProcess.start(["serve", "--data-dir", dir, "--port", "0", "--log-format", "json"], {
      program: [QEMU!, "-L", SYSROOT, ARM64_EXE!],
      env: serverEnv(),
    });
    const startedMs = performance.now() - t0;
    try {
      const version = JSON.parse(server.lines.find((l) => l.includes('"listening"'))!);
      expect(version.elysia_mode).toBe("production");
      expect((await server.fetch("/api/v1/health/ready")).status).toBe(200);

      const setup = await server.fetch("/api/v1/setup/initialize", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ username: "owner", password: "correct horse battery" }),
      });
      expect(setup.status).toBe(201);
      const cookies = setup.headers.getSetCookie().map((c) => c.split(";")[0]!);
      const cookie = cookies.join("; ");
      const csrf = cookies.find((c) => c.startsWith("app_csrf="))!.slice("app_csrf=".length);

      const task = await server.fetch("/api/v1/tasks", {
        method: "POST",
        headers: { "content-type": "application/json", cookie, "x-csrf-token": csrf },
        body: JSON.stringify({ title: "made on arm64", due_at: "2026-12-24" }),
      });
      expect(task.status).toBe(201);
      const taskId = ((await task.json()) as { id: string }).id;

      const backup = await server.fetch("/api/v1/backup/export.zip", { headers: { cookie } });
      expect(backup.status).toBe(200);
      expect(backup.headers.get("content-type")).toBe("application/zip");
      const files = unzipSync(new Uint8Array(await backup.arrayBuffer()));
      expect(Object.keys(files)).toContain("manifest.json");
      const tasks = JSON.parse(new TextDecoder().decode(files["data/tasks.json"]!)) as { id: string; title: string }[];
      expect(tasks.map((t) => [t.id, t.title])).toEqual([[taskId, "made on arm64"]]);
    } finally {
      expect(await server.stop()).toBe(0);
    }
    console.log(`arm64 under qemu: ready in ${(startedMs / 1000).toFixed(1)} s, whole smoke ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }, 180_000);
});
