// `app import ticktick|todoist|ics FILE --user NAME [--dry-run]`, run as a process from the sources
// on a data directory made by the real migrations.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { makeTestApp, setupAdmin } from "../helpers/app";
import { cleanEnv } from "../helpers/spawn";
import { FIXTURES } from "./import-helpers";

const MAIN = resolve(import.meta.dir, "../../src/main.ts");

async function run(args: string[]) {
  const p = Bun.spawn([process.execPath, MAIN, ...args], { env: cleanEnv({}), stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, stdout, stderr };
}

let dir = "";
const tasks = () => {
  const db = new Database(join(dir, "app.db"));
  try {
    return db.query<{ n: number }, []>("SELECT count(*) AS n FROM tasks").get()!.n;
  } finally {
    db.close();
  }
};

beforeAll(async () => {
  const app = makeTestApp();
  await setupAdmin(app, { timezone: "Europe/Berlin" });
  dir = app.dir;
  app.handle.close();
  app.db.close();
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("app import", () => {
  const file = join(FIXTURES, "ticktick-7.2.csv");

  test("--dry-run prints the preview with line numbers and writes nothing", async () => {
    const r = await run(["import", "ticktick", file, "--user", "owner", "--dry-run", "--data-dir", dir]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("(dry run: nothing is written)");
    expect(r.stdout).toContain("will create: 2 folder(s), 2 list(s), 7 task(s), 3 subtask(s), 4 tag(s), 2 recurrence(s), 1 memo(s), 3 reminder(s)");
    expect(r.stdout).toContain("  line 14: Old idea: won't do: imported as completed");
    expect(r.stdout).toContain("  line 17: Pay rent: repeat dropped: ERULE");
    expect(tasks()).toBe(0);
  }, 30_000);

  test("imports into the user's account; the same file again creates nothing", async () => {
    const r = await run(["import", "ticktick", file, "--user", "OWNER", "--data-dir", dir]);
    expect([r.code, r.stderr]).toEqual([0, ""]);
    expect(r.stdout).toContain("imported into owner: 2 folder(s), 2 list(s), 7 task(s)");
    expect(tasks()).toBe(10);
    const again = await run(["import", "ticktick", file, "--user", "owner", "--data-dir", dir]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("already imported");
    expect(tasks()).toBe(10);
  }, 30_000);

  test("a file that is not of the format: exit 1, the problems with their lines, nothing written", async () => {
    const bad = join(dir, "bad.ics");
    writeFileSync(bad, "BEGIN:VCALENDAR\nBEGIN:VTODO\nPRIORITY:high\nEND:VTODO\nEND:VCALENDAR\n");
    const r = await run(["import", "ics", bad, "--user", "owner", "--data-dir", dir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('line 3: PRIORITY "high" is not 0 to 9');
    expect(tasks()).toBe(10);
  }, 30_000);

  test("usage errors: unknown user, format, missing file, --user elsewhere", async () => {
    const noUser = await run(["import", "ticktick", file, "--user", "nobody", "--data-dir", dir]);
    expect([noUser.code, noUser.stderr.trim()]).toEqual([1, "app: user nobody not found"]);
    const badFormat = await run(["import", "omnifocus", file, "--user", "owner", "--data-dir", dir]);
    expect(badFormat.code).toBe(1);
    expect(badFormat.stderr).toContain("unknown format omnifocus");
    const missing = await run(["import", "ics", join(dir, "nope.ics"), "--user", "owner", "--data-dir", dir]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("ENOENT");
    const noFlag = await run(["import", "ics", file, "--data-dir", dir]);
    expect(noFlag.stderr).toContain("usage: app import");
    const stray = await run(["serve", "--dry-run", "--data-dir", dir]);
    expect([stray.code, stray.stderr.trim()]).toEqual([1, "app: --dry-run belongs to the import command (see app --help)"]);
  }, 60_000);
});
