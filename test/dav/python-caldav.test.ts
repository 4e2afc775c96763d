// Debian's python3-caldav (a CalDAV client nobody here wrote) against a real listening server: in
// process without APP_EXE; with APP_EXE, the executable behind the README's nginx and Caddy over https
// (test/dav/targets.ts; python verifies the proxy's certificate). Create, edit, complete and delete on
// both sides, sync tokens, and a conflict (a PUT with a stale ETag: 412, the server's version kept).
// Skips with a message when /usr/bin/python3 cannot import caldav (`apt-get install python3-caldav`; .ci/run does).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { TestClient } from "../helpers/app";
import { davTargets, startDavTarget, type DavTarget } from "./targets";

const PY = "/usr/bin/python3";
const SCRIPT = `${import.meta.dir}/clients/python_caldav_flow.py`;
const available = Bun.spawnSync([PY, "-c", "import caldav"], { stderr: "ignore", stdout: "ignore" }).exitCode === 0;
if (!available) console.warn("python-caldav test skipped: /usr/bin/python3 cannot import caldav (apt-get install python3-caldav)");

for (const spec of available ? davTargets("python-caldav.test.ts") : []) {
  describe.skipIf(spec.missing !== null)(`python-caldav: ${spec.name}`, () => {
    let target: DavTarget;
    let web: TestClient;
    let secret: string;

    beforeAll(async () => {
      target = await startDavTarget(spec);
      web = target.web;
      secret = (await web.post("/api/v1/tokens", { name: "python", scopes: ["caldav"] })).body.secret;
    });
    afterAll(async () => {
      await target?.stop();
    });

    async function run(phase: string, extra: Record<string, string> = {}): Promise<Record<string, unknown>> {
      const env = { PATH: "/usr/bin:/bin", DAV_URL: `${target.base}/dav/`, DAV_USER: "owner", DAV_SECRET: secret, DAV_CA: target.ca ?? "", ...extra };
      const p = Bun.spawn([PY, SCRIPT, phase], { env, stdout: "pipe", stderr: "pipe" });
      const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
      if (code !== 0) throw new Error(`python exited ${code}: ${err.slice(-2000)}`);
      return JSON.parse(out.trim().split("\n").pop()!);
    }

    test("discovery, make_calendar, save/complete todos (plain and repeating), edits and deletions on both sides through sync tokens, a stale ETag refused", async () => {
      const a = await run("a");
      expect(a.calendars).toEqual(["Inbox"]);
      expect(a.open_before).toEqual(["py-plain", "py-repeat"]);
      expect(a.open_after_plain).toEqual(["py-repeat"]);
      expect(a.all_after_plain).toBe(2);
      // Completing the series moved it on once (the done occurrence stays as a completed task).
      expect(a.repeat_after_complete).toEqual({ status: "NEEDS-ACTION", due: "2026-12-08" });
      expect(a.all_after_repeat).toBe(3);
      expect(a.synced).toBe(3);
      const list = ((await web.get("/api/v1/lists")).body.items as { id: string; name: string }[]).find((l) => l.name === "py list")!;
      const openTasks = async () => (await web.get(`/api/v1/tasks?list_id=${list.id}&completed=false`)).body.items as { id: string; title: string; version: number }[];
      const plain = ((await web.get(`/api/v1/tasks?list_id=${list.id}&completed=true`)).body.items as { id: string; title: string }[]).find((t) => t.title === "py-plain")!;
      expect(plain).toBeDefined();

      // The web app edits the series and adds a task: python's sync sees both.
      const rep = (await openTasks()).find((t) => t.title === "py-repeat")!;
      expect((await web.patch(`/api/v1/tasks/${rep.id}`, { version: rep.version, title: "renamed on the web" })).status).toBe(200);
      const added = (await web.post("/api/v1/tasks", { title: "added on the web", list_id: list.id })).body;
      const b = await run("b", { DAV_TOKEN: String(a.token) });
      expect(b.changed).toEqual([`${added.id}.ics`, "py-repeat.ics"].sort());

      // Python edits the web's task and deletes the completed one: the web app sees both.
      const c = await run("c");
      expect(c.open).toEqual(["edited in python", "renamed on the web"]);
      expect((await web.get(`/api/v1/tasks/${added.id}`)).body.title).toBe("edited in python");
      expect((await web.get(`/api/v1/tasks/${plain.id}`)).body.deleted_at).not.toBeNull();
      expect(String(c.repeat_etag)).toMatch(/^"/);

      // The web app edits the series again, completes python's edit and deletes a new task.
      const rep2 = (await openTasks()).find((t) => t.id === rep.id)!;
      expect((await web.patch(`/api/v1/tasks/${rep.id}`, { version: rep2.version, title: "web wins" })).status).toBe(200);
      const edited = (await web.get(`/api/v1/tasks/${added.id}`)).body;
      expect((await web.patch(`/api/v1/tasks/${added.id}`, { version: edited.version, completed: true })).status).toBe(200);
      const doomed = (await web.post("/api/v1/tasks", { title: "deleted on the web", list_id: list.id })).body;
      const d0 = await run("b", { DAV_TOKEN: String(c.token) });
      expect(d0.changed).toContain(`${doomed.id}.ics`);
      expect((await web.delete(`/api/v1/tasks/${doomed.id}`)).status).toBe(204);

      // Python writes with the ETag it read before the web's edit: 412, nothing overwritten.
      const d = await run("d", { DAV_TOKEN: String(c.token), DAV_OBJ: String(c.repeat_url), DAV_ETAG: String(c.repeat_etag), DAV_DATA: String(c.repeat_data) });
      expect(d.stale_put).toBe(412);
      expect(d.repeat_summary).toBe("web wins");
      expect((await web.get(`/api/v1/tasks/${rep.id}`)).body.title).toBe("web wins");
      expect(d.open).toEqual(["web wins"]);
      expect(d.all).toContain("edited in python");
      expect(d.all).not.toContain("deleted on the web");
      expect(d.changed).toEqual([`${added.id}.ics`, "py-repeat.ics"].sort());
      expect(d.deleted).toEqual([`${doomed.id}.ics`]);
    });
  });
}
