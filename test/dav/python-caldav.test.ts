// Debian's python3-caldav (a CalDAV client nobody here wrote) against a real listening server.
// Skips with a message when /usr/bin/python3 cannot import caldav (`apt-get install python3-caldav`; .ci/run does).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { makeTestApp, setupAdmin, type TestApp, type TestClient } from "../helpers/app";
import { serve, type ServedApp } from "../helpers/server";

const PY = "/usr/bin/python3";
const SCRIPT = `${import.meta.dir}/clients/python_caldav_flow.py`;
const available = Bun.spawnSync([PY, "-c", "import caldav"], { stderr: "ignore", stdout: "ignore" }).exitCode === 0;
if (!available) console.warn("python-caldav test skipped: /usr/bin/python3 cannot import caldav (apt-get install python3-caldav)");

let app: TestApp;
let server: ServedApp;
let web: TestClient;
let secret: string;

beforeAll(async () => {
  if (!available) return;
  app = makeTestApp();
  server = serve(app);
  web = await setupAdmin(app);
  secret = (await web.post("/api/v1/tokens", { name: "python", scopes: ["caldav"] })).body.secret;
});
afterAll(() => {
  if (!available) return;
  server.stop();
  app.close();
});

async function run(phase: string, extra: Record<string, string> = {}): Promise<Record<string, unknown>> {
  const p = Bun.spawn([PY, SCRIPT, phase], { env: { PATH: "/usr/bin:/bin", DAV_URL: `${server.base}/dav/`, DAV_USER: "owner", DAV_SECRET: secret, ...extra }, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  if (code !== 0) throw new Error(`python exited ${code}: ${err.slice(-2000)}`);
  return JSON.parse(out.trim().split("\n").pop()!);
}

test.skipIf(!available)("python-caldav: discovery, make_calendar, save/complete todos (plain and repeating), sync tokens with web-app changes", async () => {
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
  const tasks = (await web.get(`/api/v1/tasks?list_id=${list.id}&completed=false`)).body.items as { id: string; title: string; version: number }[];
  const rep = tasks.find((t) => t.title === "py-repeat")!;
  expect((await web.patch(`/api/v1/tasks/${rep.id}`, { version: rep.version, title: "renamed on the web" })).status).toBe(200);
  const added = (await web.post("/api/v1/tasks", { title: "added on the web", list_id: list.id })).body;
  const b = await run("b", { DAV_TOKEN: String(a.token) });
  expect(b.changed).toEqual([`${added.id}.ics`, "py-repeat.ics"].sort());
});
