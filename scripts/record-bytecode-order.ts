// Records assets/bytecode-order.txt, the profile build.ts lays the executable's bytecode out by
// (`bun build --bytecode-order`): builds dist/app, runs it with BUN_BYTECODE_ORDER_OUT on a fresh data
// directory through a start, first-run setup and the requests the web app makes on its first page,
// stops it with SIGTERM, keeps the file, and builds again with it. Re-run after large changes; a
// stale profile still applies to the functions that did not change.
// Usage: bun run scripts/record-bytecode-order.ts
import { $ } from "bun";
import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setupAndLogin, startServer, stopServer } from "../bench/lib";

const OUT = join("assets", "bytecode-order.txt");
await $`bun run build`;
const dir = mkdtempSync(join(tmpdir(), "app-order-"));
const profile = join(dir, "order.txt");
const s = await startServer(join(dir, "data"), undefined, { BUN_BYTECODE_ORDER_OUT: profile });
try {
  const auth = await setupAndLogin(s.base);
  const get = async (path: string) => {
    const r = await fetch(`${s.base}${path}`, { headers: auth.headers });
    if (!r.ok) throw new Error(`GET ${path}: ${r.status}`);
    await r.arrayBuffer();
  };
  const post = async (path: string, body: unknown) => {
    const r = await fetch(`${s.base}${path}`, { method: "POST", headers: auth.headers, body: JSON.stringify(body) });
    if (!r.ok) throw new Error(`POST ${path}: ${r.status}`);
    return (await r.json()) as Record<string, unknown>;
  };
  await get("/");
  await get("/api/v1/me");
  const lists = (await (await fetch(`${s.base}/api/v1/lists`, { headers: auth.headers })).json()) as { items: { id: string }[] };
  await post("/api/v1/tasks", { list_id: lists.items[0]!.id, title: "first task" });
  for (const path of ["/api/v1/tasks?limit=50", "/api/v1/folders", "/api/v1/tags", "/api/v1/habits", "/api/v1/countdowns", "/api/v1/memos", "/api/v1/trash", "/api/v1/me"]) {
    await get(path);
  }
} finally {
  await stopServer(s);
}
if (!existsSync(profile)) throw new Error(`the executable wrote no profile to ${profile}`);
copyFileSync(profile, OUT);
rmSync(dir, { recursive: true, force: true });
console.log(`${OUT}: ${(Bun.file(OUT).size / 1024).toFixed(0)} KiB; building again with it`);
await $`bun run build`;
