import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { deflateSync } from "fflate";
import { dump, makeTestApp, setupAdmin, type TestApp, type TestClient } from "../helpers/app";
import { entriesOf, exportBytes, preflight, seed, userData } from "./helpers";
import { buildZip, rawEntries, type RawEntry } from "./zip-writer";

/**
 * Archives made by common tools: 7-Zip and macOS's "Compress" write the folders of the layout as
 * entries of their own (`data/`, `attachments/`), which the preflight refused as "unexpected
 * directory entry". An empty directory entry whose name is a folder of the layout is accepted
 * now; a symbolic link, a directory entry with content and any other directory are still refused.
 */

const HAVE_7Z = Bun.which("7z") !== null;
if (!HAVE_7Z) console.warn("directories.test.ts: `7z` not installed (apt-get install -y p7zip-full): the 7-Zip archive is skipped");

let app: TestApp;
let c: TestClient;
let uid: string;
let files: Record<string, Uint8Array>;
let work: string;

beforeAll(async () => {
  app = makeTestApp();
  c = await setupAdmin(app);
  await seed(c);
  uid = (await c.get("/api/v1/me")).body.id;
  files = entriesOf(await exportBytes(app, c));
  work = mkdtempSync(join(tmpdir(), "app-dirs-"));
});
afterAll(() => {
  app.close();
  rmSync(work, { recursive: true, force: true });
});

const UNIX_DIR = ((0o40755 << 16) | 0x10) >>> 0;
/** A directory entry as 7-Zip on Linux writes it (host Unix, mode 040755, MS-DOS directory bit). */
const dir = (name: string, extra: Partial<RawEntry> = {}): RawEntry => ({ name, data: new Uint8Array(0), method: 0, madeBy: (3 << 8) | 20, externalAttr: UNIX_DIR, ...extra });

/** Preflight, replace restore, and the account is as exported. */
async function restoresAsExported(zip: Uint8Array) {
  const before = userData(app.db, uid);
  const pf = await preflight(c, zip, "replace");
  if (pf.status !== 200) throw new Error(`preflight ${pf.status}: ${pf.text.slice(0, 500)}`);
  const r = await c.post("/api/v1/backup/restore", { preflight_token: pf.body.preflight_token, mode: "replace" });
  expect(r.status).toBe(200);
  expect(userData(app.db, uid)).toEqual(before);
}

/** 422 backup_invalid with `message` at `path`; nothing stored or staged. */
async function refused(zip: Uint8Array, path: string, message: RegExp) {
  const before = dump(app.db);
  const staged = readdirSync(join(app.dir, "backup", "staging")).sort();
  const r = await preflight(c, zip, "replace");
  expect(r.status).toBe(422);
  expect(r.body.code).toBe("backup_invalid");
  const errors = r.body.errors as { path: string; message: string }[];
  if (!errors.some((e) => e.path === path && message.test(e.message))) throw new Error(`no problem ${message} at ${path} in ${JSON.stringify(errors)}`);
  expect(dump(app.db)).toEqual(before);
  expect(readdirSync(join(app.dir, "backup", "staging")).sort()).toEqual(staged);
}

describe("accepted: empty directory entries of the layout's folders", () => {
  test("`data/` and `attachments/` written by the tests' zip writer, before their files (was 422 unexpected directory entry)", async () => {
    await restoresAsExported(buildZip([dir("data/"), dir("attachments/"), ...rawEntries(files)]));
  });

  test("as macOS's Compress writes them (host 19), and as an empty deflate stream", async () => {
    const mac = { madeBy: (19 << 8) | 21 };
    await restoresAsExported(buildZip([...rawEntries(files), dir("data/", mac), dir("attachments/", { ...mac, method: 8, raw: deflateSync(new Uint8Array(0)) })]));
  });

  test.skipIf(!HAVE_7Z)("an export unpacked and packed again by 7-Zip (`7z a -tzip`, folders as entries)", async () => {
    const src = join(work, "src");
    for (const [name, bytes] of Object.entries(files)) {
      mkdirSync(dirname(join(src, name)), { recursive: true });
      writeFileSync(join(src, name), bytes);
    }
    const out = join(work, "7z.zip");
    const p = Bun.spawnSync(["7z", "a", "-tzip", out, "manifest.json", "data", "attachments"], { cwd: src, stdout: "pipe", stderr: "pipe" });
    expect(p.exitCode).toBe(0);
    const zip = new Uint8Array(readFileSync(out));
    // 7-Zip did write the folders as entries.
    const listed = Bun.spawnSync(["7z", "l", "-slt", out], { stdout: "pipe" }).stdout.toString();
    expect(listed).toContain("Path = data\n");
    expect(listed).toContain("Path = attachments\n");
    expect(listed).toContain("Folder = +");
    await restoresAsExported(zip);
  });
});

describe("still refused", () => {
  test("a directory that is not a folder of the layout, nested or top-level", async () => {
    await refused(buildZip([...rawEntries(files), dir("attachments/more/")]), "attachments/more/", /unexpected directory entry/);
    await refused(buildZip([...rawEntries(files), dir("__MACOSX/")]), "__MACOSX/", /unexpected directory entry/);
  });

  test("a directory attribute on a name without the trailing slash", async () => {
    await refused(buildZip([...rawEntries(files), dir("data")]), "data", /unexpected directory entry/);
  });

  test("a directory entry of the layout with content", async () => {
    await refused(buildZip([...rawEntries(files), dir("attachments/", { data: new TextEncoder().encode("hidden bytes") })]), "attachments/", /a directory entry with content/);
    // Declared empty, but compressed bytes behind it.
    await refused(
      buildZip([...rawEntries(files), dir("data/", { method: 8, raw: deflateSync(new TextEncoder().encode("x".repeat(100))), size: 0, crc: 0 })]),
      "data/",
      /a directory entry with content/,
    );
  });

  test("a symbolic link named like a folder of the layout", async () => {
    await refused(buildZip([...rawEntries(files), dir("data/", { externalAttr: (0o120755 << 16) >>> 0, madeBy: (19 << 8) | 21 })]), "data/", /symbolic links are not allowed/);
  });
});
