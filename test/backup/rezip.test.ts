import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { makeTestApp, setupAdmin, type TestApp, type TestClient } from "../helpers/app";
import { entriesOf, exportBytes, preflight, seed, userData } from "./helpers";
import { buildZip } from "./zip-writer";

/**
 * Issue 11 §5, "a valid archive is refused": an export re-zipped with stored (uncompressed)
 * entries whose manifest passes 256 KiB answered `manifest.json: not valid UTF-8 JSON` (the
 * manifest was gathered from views of one reused read buffer). Re-zipped here by Debian's `zip`
 * and `7z` (both pass `unzip -t`/`7z t`) and by the tests' own writer; each must preflight and
 * restore as the export does.
 */

const which = (cmd: string) => Bun.which(cmd) !== null;
const HAVE_ZIP = which("zip") && which("unzip");
const HAVE_7Z = which("7z");
if (!HAVE_ZIP) console.warn("rezip.test.ts: `zip`/`unzip` not installed (apt-get install -y zip unzip): the Info-ZIP re-zip is skipped");
if (!HAVE_7Z) console.warn("rezip.test.ts: `7z` not installed (apt-get install -y p7zip-full): the 7-Zip re-zip is skipped");

let app: TestApp;
let c: TestClient;
let uid: string;
let exported: Uint8Array;
let files: Record<string, Uint8Array>;
let work: string;
/** Enough attachments that the manifest passes 256 KiB (one read slice of a stored entry). */
const ATTACHMENTS = 2200;

beforeAll(async () => {
  app = makeTestApp();
  c = await setupAdmin(app);
  const ids = await seed(c);
  uid = (await c.get("/api/v1/me")).body.id;
  // Seeded straight into the database and the attachments directory (thousands of uploads would
  // only slow the test); each is what an upload of a small text file stores.
  const now = new Date().toISOString();
  const ins = app.db.sqlite.query("INSERT INTO attachments (id, user_id, task_id, filename, content_type, size, sha256, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  app.db.sqlite.transaction(() => {
    for (let i = 0; i < ATTACHMENTS; i++) {
      const id = Bun.randomUUIDv7();
      const bytes = new TextEncoder().encode(`note ${i}\n`);
      writeFileSync(join(app.dir, "attachments", id), bytes);
      ins.run(id, uid, ids.task, `n${i}.txt`, "text/plain; charset=utf-8", bytes.byteLength, new Bun.CryptoHasher("sha256").update(bytes).digest("hex"), now);
    }
  })();
  exported = await exportBytes(app, c);
  files = entriesOf(exported);
  work = mkdtempSync(join(tmpdir(), "app-rezip-"));
  for (const [name, bytes] of Object.entries(files)) {
    mkdirSync(dirname(join(work, "src", name)), { recursive: true });
    writeFileSync(join(work, "src", name), bytes);
  }
});
afterAll(() => {
  app.close();
  rmSync(work, { recursive: true, force: true });
});

/** Preflight, replace restore, and the account is as exported. */
async function restoresAsExported(zip: Uint8Array) {
  const before = userData(app.db, uid);
  const pf = await preflight(c, zip, "replace");
  if (pf.status !== 200) throw new Error(`preflight ${pf.status}: ${pf.text.slice(0, 500)}`);
  expect(pf.body.counts.attachments).toBe(ATTACHMENTS + 1);
  const r = await c.post("/api/v1/backup/restore", { preflight_token: pf.body.preflight_token, mode: "replace" });
  expect(r.status).toBe(200);
  expect(userData(app.db, uid)).toEqual(before);
}

/** The file names in the order of the export (no directory entries: directories.test.ts has those). */
const names = () => Object.keys(files);

function run(cmd: string[], cwd: string) {
  const p = Bun.spawnSync(cmd, { cwd, stdout: "pipe", stderr: "pipe" });
  if (p.exitCode !== 0) throw new Error(`${cmd[0]} failed: ${p.stderr.toString()}`);
}

describe("an export re-zipped with stored entries and a manifest over 256 KiB", () => {
  test("the manifest is over 256 KiB and the export itself restores", async () => {
    expect(files["manifest.json"]!.byteLength).toBeGreaterThan(256 * 1024);
    await restoresAsExported(exported);
  });

  test.skipIf(!HAVE_ZIP)("re-zipped by Info-ZIP `zip -0` (passes `unzip -t`)", async () => {
    const out = join(work, "zip0.zip");
    writeFileSync(join(work, "names.txt"), names().join("\n") + "\n");
    // -0 stored, -X no extra attributes, -D no directory entries; names from stdin (thousands of them).
    const p = Bun.spawnSync(["zip", "-0", "-X", "-D", "-q", out, "-@"], { cwd: join(work, "src"), stdin: readFileSync(join(work, "names.txt")), stdout: "pipe", stderr: "pipe" });
    expect(p.exitCode).toBe(0);
    run(["unzip", "-tq", out], work);
    await restoresAsExported(new Uint8Array(readFileSync(out)));
  });

  test.skipIf(!HAVE_7Z)("re-zipped by 7-Zip `-mx=0` (stored, with data descriptors; passes `7z t`)", async () => {
    const out = join(work, "7z0.zip");
    writeFileSync(join(work, "list.txt"), names().join("\n") + "\n");
    run(["7z", "a", "-tzip", "-mx=0", out, "@" + join(work, "list.txt")], join(work, "src"));
    run(["7z", "t", out], work);
    await restoresAsExported(new Uint8Array(readFileSync(out)));
  });

  test("re-zipped by the tests' own writer with stored entries", async () => {
    await restoresAsExported(buildZip(Object.entries(files).map(([name, data]) => ({ name, data, method: 0 }))));
  });
});
