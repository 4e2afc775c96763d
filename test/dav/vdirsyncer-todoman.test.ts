// Debian's vdirsyncer (a real CalDAV sync tool) and todoman (a real todo client on its local copy)
// against a real listening server: create, edit, complete and delete on both sides, and a conflict.
// Skips with a message when either is missing (`apt-get install vdirsyncer todoman`; .ci/run does).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { makeTestApp, setupAdmin, type TestApp, type TestClient } from "../helpers/app";
import { serve, type ServedApp } from "../helpers/server";

const VDIR = "/usr/bin/vdirsyncer";
const TODO = "/usr/bin/todoman";
const available = Bun.spawnSync(["sh", "-c", `test -x ${VDIR} && test -x ${TODO}`]).exitCode === 0;
if (!available) console.warn("vdirsyncer/todoman test skipped: /usr/bin/vdirsyncer or /usr/bin/todoman missing (apt-get install vdirsyncer todoman)");

const V = "/api/v1";
let app: TestApp;
let server: ServedApp;
let web: TestClient;
let dir: string;
let listId: string;

beforeAll(async () => {
  if (!available) return;
  app = makeTestApp();
  server = serve(app);
  web = await setupAdmin(app);
  const secret = (await web.post(`${V}/tokens`, { name: "vdirsyncer", scopes: ["caldav"] })).body.secret;
  listId = (await web.post(`${V}/lists`, { name: "Chores" })).body.id;
  await web.post(`${V}/tasks`, { title: "from the web", list_id: listId });
  dir = mkdtempSync(join(tmpdir(), "vdir-"));
  mkdirSync(join(dir, "cal"));
  writeFileSync(
    join(dir, "vdirsyncer.conf"),
    `[general]
status_path = "${dir}/status/"

[pair tasks]
a = "local"
b = "remote"
collections = ["from b"]

[storage local]
type = "filesystem"
path = "${dir}/cal/"
fileext = ".ics"

[storage remote]
type = "caldav"
url = "${server.base}/"
username = "owner"
password = "${secret}"
item_types = ["VTODO"]
`,
  );
  writeFileSync(join(dir, "todoman.py"), `path = "${dir}/cal/*"\ndate_format = "%Y-%m-%d"\ntime_format = "%H:%M"\ndefault_due = 0\ndefault_priority = 0\ndefault_list = "${listId}"\n`);
});
afterAll(() => {
  if (!available) return;
  server.stop();
  app.close();
  rmSync(dir, { recursive: true, force: true });
});

async function sh(cmd: string[], input?: string): Promise<{ code: number; out: string; err: string }> {
  const p = Bun.spawn(cmd, { env: { PATH: "/usr/bin:/bin", HOME: dir, LANG: "C.UTF-8" }, stdin: input === undefined ? "ignore" : new Response(input), stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, out, err };
}
const vdir = (...args: string[]) => sh([VDIR, "-c", join(dir, "vdirsyncer.conf"), ...args], "y\ny\ny\ny\n");
async function todo(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const r = await sh([TODO, "-c", join(dir, "todoman.py"), ...args]);
  if (r.code !== 0) throw new Error(`todoman ${args.join(" ")}: ${r.out}\n${r.err}`);
  return r;
}
async function todos(): Promise<{ id: number; summary: string; completed: boolean }[]> {
  const r = await todo("--porcelain", "list", "--status", "ANY");
  if (r.code !== 0) throw new Error(r.err);
  return JSON.parse(r.out);
}
async function sync(): Promise<void> {
  const r = await vdir("sync");
  if (r.code !== 0) throw new Error(`vdirsyncer sync: ${r.out}\n${r.err}`);
}
const apiTasks = async (completed: "true" | "false") => (await web.get(`${V}/tasks?list_id=${listId}&completed=${completed}`)).body.items as { id: string; title: string; version: number }[];

test.skipIf(!available)("vdirsyncer + todoman: both directions, completion, deletion and a conflict that loses nothing", async () => {
  const d = await vdir("discover");
  if (d.code !== 0) throw new Error(`vdirsyncer discover: ${d.out}\n${d.err}`);
  await sync();
  expect(readdirSync(join(dir, "cal"))).toContain(listId);
  expect((await todos()).map((t) => t.summary)).toEqual(["from the web"]);

  // Created in todoman → on the server.
  expect((await todo("new", "-l", listId, "--priority", "none", "from todoman")).code).toBe(0);
  await sync();
  expect((await apiTasks("false")).map((t) => t.title).sort()).toEqual(["from the web", "from todoman"]);

  // Completed in todoman → completed on the server.
  const web1 = (await todos()).find((t) => t.summary === "from the web")!;
  expect((await todo("done", String(web1.id))).code).toBe(0);
  await sync();
  expect((await apiTasks("true")).map((t) => t.title)).toEqual(["from the web"]);

  // Edited on the server → in todoman.
  const tm = (await apiTasks("false")).find((t) => t.title === "from todoman")!;
  expect((await web.patch(`${V}/tasks/${tm.id}`, { version: tm.version, title: "renamed on the web" })).status).toBe(200);
  await sync();
  expect((await todos()).map((t) => t.summary).sort()).toEqual(["from the web", "renamed on the web"]);

  // Both sides edit the same task: vdirsyncer reports the conflict; the server keeps its version.
  const tm2 = (await apiTasks("false"))[0]!;
  expect((await web.patch(`${V}/tasks/${tm2.id}`, { version: tm2.version, title: "server side" })).status).toBe(200);
  const local = (await todos()).find((t) => t.summary === "renamed on the web")!;
  expect((await todo("edit", String(local.id), "--priority", "none", "--due", "2026-12-24")).code).toBe(0);
  const conflict = await vdir("sync");
  expect(conflict.code).not.toBe(0);
  expect(`${conflict.out}${conflict.err}`.toLowerCase()).toContain("conflict");
  expect((await apiTasks("false")).map((t) => t.title)).toEqual(["server side"]);

  // Deleted in todoman → in the server's trash (resolve the conflict for the server first).
  rmSync(join(dir, "status"), { recursive: true, force: true });
  rmSync(join(dir, "cal", listId), { recursive: true, force: true });
  await vdir("discover");
  await sync();
  const gone = (await todos()).find((t) => t.summary === "server side")!;
  expect((await todo("delete", "--yes", String(gone.id))).code).toBe(0);
  await sync();
  expect((await apiTasks("false")).map((t) => t.title)).toEqual([]);
  expect((await web.get(`${V}/tasks/${tm2.id}`)).body.deleted_at).not.toBeNull();
});
