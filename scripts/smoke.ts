// Smoke test of the compiled executable: start on a fresh data directory, wait for ready, set up,
// log in, stop with SIGTERM, start again on the same directory, log in again, stop.
// Usage: bun run scripts/smoke.ts [path/to/app]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const exe = process.argv[2] ?? "dist/app";
const dir = mkdtempSync(join(tmpdir(), "app-smoke-"));
const port = 20000 + Math.floor(Math.random() * 20000);
const base = `http://127.0.0.1:${port}/api/v1`;
let failures = 0;

function check(ok: boolean, what: string): void {
  console.log(`${ok ? "ok  " : "FAIL"} ${what}`);
  if (!ok) failures++;
}

async function start(): Promise<{ proc: ReturnType<typeof Bun.spawn>; ms: number }> {
  const t0 = performance.now();
  const proc = Bun.spawn([exe, "serve", "--data-dir", dir, "--port", String(port), "--log-format", "off"], { stdout: "inherit", stderr: "inherit" });
  for (let i = 0; i < 500; i++) {
    try {
      const r = await fetch(`${base}/health/ready`);
      if (r.status === 200) return { proc, ms: performance.now() - t0 };
    } catch {
      /* not listening yet */
    }
    await Bun.sleep(10);
  }
  proc.kill();
  throw new Error("the server did not become ready within 5 s");
}

async function stop(proc: ReturnType<typeof Bun.spawn>): Promise<number> {
  proc.kill("SIGTERM");
  return await proc.exited;
}

async function login(): Promise<Response> {
  return fetch(`${base}/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: "smoke", password: "smoke-password" }),
  });
}

try {
  const first = await start();
  check(true, `started and ready in ${first.ms.toFixed(0)} ms`);
  const setup = await fetch(`${base}/setup/initialize`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: "smoke", password: "smoke-password" }),
  });
  check(setup.status === 201, `setup answered ${setup.status}`);
  const l1 = await login();
  check(l1.status === 200, `login answered ${l1.status}`);
  const cookie = l1.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
  const me = await fetch(`${base}/me`, { headers: { cookie } });
  check(me.status === 200 && ((await me.json()) as { username?: string }).username === "smoke", `GET /me answered ${me.status}`);
  check((await stop(first.proc)) === 0, "SIGTERM stopped it with exit code 0");
  const second = await start();
  check(true, `restarted on the same data directory in ${second.ms.toFixed(0)} ms`);
  const status = (await (await fetch(`${base}/setup/status`)).json()) as { initialized?: boolean };
  check(status.initialized === true, "still initialized after restart");
  const l2 = await login();
  check(l2.status === 200, `login after restart answered ${l2.status}`);
  check((await stop(second.proc)) === 0, "SIGTERM stopped it again with exit code 0");
} catch (e) {
  check(false, (e as Error).message);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(failures === 0 ? "smoke: all checks passed" : `smoke: ${failures} check(s) failed`);
process.exit(failures === 0 ? 0 : 1);
