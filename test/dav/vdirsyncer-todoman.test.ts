// Debian's vdirsyncer (a real CalDAV sync tool) and todoman (a real todo client on its local copy)
// against a real listening server: create, edit, complete and delete on both sides, and a conflict.
// In process without APP_EXE; with APP_EXE, the executable behind the README's nginx and Caddy over
// https (test/dav/targets.ts; vdirsyncer verifies the proxy's certificate).
// Skips with a message when either is missing (`apt-get install vdirsyncer todoman`; .ci/run does).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestClient } from "../helpers/app";
import { davTargets, startDavTarget, type DavTarget } from "./targets";

const VDIR = "/usr/bin/vdirsyncer";
const TODO = "/usr/bin/todoman";
const available = Bun.spawnSync(["sh", "-c", `test -x ${VDIR} && test -x ${TODO}`]).exitCode === 0;
if (!available) console.warn("vdirsyncer/todoman test skipped: /usr/bin/vdirsyncer or /usr/bin/todoman missing (apt-get install vdirsyncer todoman)");

const V = "/api/v1";

for (const spec of available ? davTargets("vdirsyncer-todoman.test.ts") : []) {
  describe.skipIf(spec.missing !== null)(`vdirsyncer + todoman: ${spec.name}`, () => {
    let target: DavTarget;
    let web: TestClient;
    let dir: string;
    let listId: string;

    beforeAll(async () => {
      target = await startDavTarget(spec);
      web = target.web;
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
url = "${target.base}/"
username = "owner"
password = "${secret}"
item_types = ["VTODO"]
${target.ca ? `verify = "${target.ca}"\n` : ""}`,
      );
      writeFileSync(join(dir, "todoman.py"), `path = "${dir}/cal/*"\ndate_format = "%Y-%m-%d"\ntime_format = "%H:%M"\ndefault_due = 0\ndefault_priority = 0\ndefault_list = "${listId}"\n`);
    });
    afterAll(async () => {
      await target?.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
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
    async function todos(): Promise<{ id: number; summary: string; completed: boolean; due: number | null }[]> {
      const r = await todo("--porcelain", "list", "--status", "ANY");
      if (r.code !== 0) throw new Error(r.err);
      return JSON.parse(r.out);
    }
    async function sync(): Promise<void> {
      const r = await vdir("sync");
      if (r.code !== 0) throw new Error(`vdirsyncer sync: ${r.out}\n${r.err}`);
    }
    const apiTasks = async (completed: "true" | "false") => (await web.get(`${V}/tasks?list_id=${listId}&completed=${completed}`)).body.items as { id: string; title: string; version: number; due_at: string | null }[];

    test("both directions, completion, deletion and a conflict that loses nothing", async () => {
      const d = await vdir("discover");
      if (d.code !== 0) throw new Error(`vdirsyncer discover: ${d.out}\n${d.err}`);
      await sync();
      expect(readdirSync(join(dir, "cal"))).toContain(listId);
      expect((await todos()).map((t) => t.summary)).toEqual(["from the web"]);

      // Created in todoman → on the server; created on the server → in todoman.
      expect((await todo("new", "-l", listId, "--priority", "none", "from todoman")).code).toBe(0);
      const other = (await web.post(`${V}/tasks`, { title: "to complete on the web", list_id: listId })).body;
      const doomed = (await web.post(`${V}/tasks`, { title: "to delete on the web", list_id: listId })).body;
      await sync();
      expect((await apiTasks("false")).map((t) => t.title).sort()).toEqual(["from the web", "from todoman", "to complete on the web", "to delete on the web"]);
      expect((await todos()).map((t) => t.summary).sort()).toEqual(["from the web", "from todoman", "to complete on the web", "to delete on the web"]);

      // Completed and deleted on the server → in todoman. (This sync also brings the server's version
      // of todoman's upload: the server answered it without an ETag, as it stores the task, not the
      // bytes (RFC 4791 §5.3.4), so vdirsyncer 0.19 takes that version at its next sync; a local edit
      // before that sync would be a conflict — vdirsyncer's rule, nothing lost.)
      expect((await web.patch(`${V}/tasks/${other.id}`, { version: other.version, completed: true })).status).toBe(200);
      expect((await web.delete(`${V}/tasks/${doomed.id}`)).status).toBe(204);
      await sync();
      const after = await todos();
      expect(after.map((t) => t.summary).sort()).toEqual(["from the web", "from todoman", "to complete on the web"]);
      expect(after.find((t) => t.summary === "to complete on the web")?.completed).toBe(true);

      // Edited and completed in todoman → on the server.
      const mine = after.find((t) => t.summary === "from todoman")!;
      expect((await todo("edit", String(mine.id), "--priority", "none", "--due", "2026-12-20")).code).toBe(0);
      const web1 = after.find((t) => t.summary === "from the web")!;
      expect((await todo("done", String(web1.id))).code).toBe(0);
      await sync();
      expect((await apiTasks("false")).map((t) => [t.title, t.due_at])).toEqual([["from todoman", "2026-12-20"]]);
      expect((await apiTasks("true")).map((t) => t.title).sort()).toEqual(["from the web", "to complete on the web"]);

      // Edited on the server → in todoman.
      const tm = (await apiTasks("false")).find((t) => t.title === "from todoman")!;
      expect((await web.patch(`${V}/tasks/${tm.id}`, { version: tm.version, title: "renamed on the web" })).status).toBe(200);
      await sync();
      expect((await todos()).map((t) => t.summary).sort()).toEqual(["from the web", "renamed on the web", "to complete on the web"]);

      // Both sides edit the same task: vdirsyncer reports the conflict; the server keeps its version.
      const tm2 = (await apiTasks("false"))[0]!;
      expect(tm2.title).toBe("renamed on the web");
      expect((await web.patch(`${V}/tasks/${tm2.id}`, { version: tm2.version, title: "server side" })).status).toBe(200);
      const local = (await todos()).find((t) => t.summary === "renamed on the web")!;
      expect((await todo("edit", String(local.id), "--priority", "none", "--due", "2026-12-24")).code).toBe(0);
      const conflict = await vdir("sync");
      expect(conflict.code).not.toBe(0);
      expect(`${conflict.out}${conflict.err}`.toLowerCase()).toContain("conflict");
      expect((await apiTasks("false")).map((t) => [t.title, t.due_at])).toEqual([["server side", "2026-12-20"]]);

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
  });
}
