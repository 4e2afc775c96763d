import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AppHandle } from "../../src/app";
import { ADMIN, TestClient } from "../helpers/app";
import { AppProcess, serverEnv } from "../helpers/spawn";
import { seed, sha256 } from "../backup/helpers";

/**
 * The operator CLI driven as users run it (`bun src/main.ts …`, or the executable APP_EXE names),
 * against a real server's data directory: snapshot while serving, verify, refusals while serving,
 * restore into a stopped directory, kill -9 and a full disk mid-snapshot, doctor's findings.
 */

async function run(args: string[], opts: { env?: Record<string, string>; fileBlocks?: number; stdin?: string } = {}): Promise<{ code: number; out: string; err: string }> {
  const p = await AppProcess.start(args, { env: serverEnv(opts.env), ready: null, fileBlocks: opts.fileBlocks });
  const code = await p.proc.exited;
  await Bun.sleep(20);
  return { code, out: p.lines.join("\n"), err: p.stderr };
}

function clientOf(base: string): TestClient {
  const handle = { fetch: (req: Request) => fetch(new Request(req.url.replace("http://localhost", base), req)) } as unknown as AppHandle;
  return new TestClient(handle, "127.0.0.1");
}

/** Every table's rows (sessions and audit aside), and every attachment file's SHA-256. */
function stateOf(dir: string): { rows: Record<string, unknown[]>; files: Record<string, string> } {
  const db = new Database(join(dir, "app.db"), { readonly: true });
  try {
    const rows: Record<string, unknown[]> = {};
    for (const { name } of db.query("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all() as { name: string }[]) {
      if (["sessions", "audit_logs", "snapshot_status"].includes(name)) continue;
      rows[name] = (db.query(`SELECT * FROM "${name}"`).all() as Record<string, unknown>[]).map((r) => JSON.stringify(r)).sort();
    }
    const files: Record<string, string> = {};
    for (const n of readdirSync(join(dir, "attachments"))) files[n] = sha256(readFileSync(join(dir, "attachments", n)));
    return { rows, files };
  } finally {
    db.close();
  }
}

// Each test spawns the program a few times on a machine other tests share.
setDefaultTimeout(60_000);

const work = mkdtempSync(join(tmpdir(), "app-snapcli-"));
const dataDir = join(work, "data");
let server: AppProcess;
let snapshot: string;
/** The data directory's state when the first snapshot was taken (nothing writes in between but sessions). */
let snapshotState: ReturnType<typeof stateOf>;

beforeAll(async () => {
  server = await AppProcess.start(["--data-dir", dataDir, "--port", "0", "--log-format", "json"], { env: serverEnv() });
  const c = clientOf(server.base);
  expect((await c.post("/api/v1/setup/initialize", ADMIN)).status).toBe(201);
  await seed(c, "a");
  await seed(c, "b");
  snapshot = join(work, "first.zip");
}, 60_000);

afterAll(async () => {
  server.proc.kill("SIGKILL");
  await server.proc.exited;
  rmSync(work, { recursive: true, force: true });
});

describe("app backup / verify while the server runs", () => {
  test("backup writes a verified snapshot with the database, the secret and every attachment", async () => {
    const r = await run(["backup", "--out", snapshot, "--data-dir", dataDir]);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toContain("snapshot written and verified");
    expect(r.out).toContain("attachments 2");
    snapshotState = stateOf(dataDir);
    const v = await run(["verify", snapshot]);
    expect(v.code).toBe(0);
    expect(v.out).toMatch(/^ok: /);
    // No temporary file left beside it.
    expect(readdirSync(work).filter((n) => n.endsWith(".part"))).toEqual([]);
  });

  test("backup refuses an existing output file and a missing --out (exit 2)", async () => {
    expect((await run(["backup", "--out", snapshot, "--data-dir", dataDir])).code).toBe(2);
    expect((await run(["backup", "--data-dir", dataDir])).code).toBe(2);
    expect((await run(["backup", "--bogus", "--data-dir", dataDir])).code).toBe(2);
  });

  test("verify finds a changed byte, a missing file and a foreign archive (exit 4)", async () => {
    const bytes = new Uint8Array(readFileSync(snapshot));
    // The attachment files are stored (not deflated): "hello a" appears as it is.
    const at = Buffer.from(bytes).indexOf("hello a");
    expect(at).toBeGreaterThan(0);
    const bad = bytes.slice();
    bad[at] = "j".charCodeAt(0);
    writeFileSync(join(work, "bad.zip"), bad);
    const r = await run(["verify", join(work, "bad.zip")]);
    expect(r.code).toBe(4);
    expect(r.out).toContain("problem: attachments/");
    writeFileSync(join(work, "foreign.zip"), "not a zip at all, not even close to twenty-two bytes");
    expect((await run(["verify", join(work, "foreign.zip")])).code).toBe(4);
    expect((await run(["verify", join(work, "absent.zip")])).code).toBe(1);
    expect((await run(["verify"])).code).toBe(2);
  });

  test("restore and a second server are refused while the server holds the directory", async () => {
    const r = await run(["restore", snapshot, "--data-dir", dataDir]);
    expect(r.code).toBe(3);
    expect(r.err).toContain("a server is running");
    const second = await run(["--data-dir", dataDir, "--port", "0"]);
    expect(second.code).toBe(1);
    expect(second.err).toContain("a server is running");
  });

  test("doctor reports a healthy directory while serving (exit 0)", async () => {
    const r = await run(["doctor", "--data-dir", dataDir]);
    expect(r.code).toBe(0);
    expect(r.out).toContain("PRAGMA integrity_check: ok");
    expect(r.out).toContain("a server is running");
  });

  test("--help of every command answers 0 with its usage and the exit codes", async () => {
    for (const c of ["backup", "verify", "restore", "users", "doctor"]) {
      const r = await run([c, "--help"]);
      expect(r.code).toBe(0);
      expect(r.out).toContain(`app ${c}`);
      expect(r.out).toMatch(/Exit codes/);
    }
  });
});

describe("kill -9 and a full disk mid-snapshot leave no snapshot", () => {
  for (const fp of ["snapshot.after-copy", "snapshot.mid-write", "snapshot.before-publish"]) {
    test(`kill -9 at ${fp}`, async () => {
      const out = join(work, `killed-${fp}.zip`);
      const r = await run(["backup", "--out", out, "--data-dir", dataDir], { env: { APP_FAILPOINT: fp } });
      expect(r.code).not.toBe(0);
      expect(existsSync(out)).toBe(false);
      // A temporary file may remain (the process died); it never has the snapshot's name.
      for (const n of readdirSync(work)) expect(n === `killed-${fp}.zip`).toBe(false);
    });
  }

  test("a failure (thrown) removes the temporary file and the work directory", async () => {
    const out = join(work, "thrown.zip");
    const r = await run(["backup", "--out", out, "--data-dir", dataDir], { env: { APP_FAILPOINT: "snapshot.mid-write", APP_FAILPOINT_ACTION: "throw" } });
    expect(r.code).toBe(1);
    expect(existsSync(out)).toBe(false);
    expect(existsSync(join(work, ".thrown.zip.part"))).toBe(false);
    expect(readdirSync(join(dataDir, "backup", "snapshots")).length).toBeLessThanOrEqual(3); // only the killed runs' leftovers
  });

  test("a full disk (file-size limit) while the archive is written is exit 5 with nothing kept", async () => {
    // A large incompressible attachment: the archive outgrows the database copy, and the file-size
    // limit is set between the two, so the database copy fits and the archive does not.
    const db = new Database(join(dataDir, "app.db"), { readonly: true });
    const { page_count } = db.query("PRAGMA page_count").get() as { page_count: number };
    const { page_size } = db.query("PRAGMA page_size").get() as { page_size: number };
    db.close();
    const dbBytes = page_count * page_size;
    const c = clientOf(server.base);
    expect((await c.post("/api/v1/auth/login", ADMIN)).status).toBe(200);
    const task = (await c.post("/api/v1/tasks", { title: "big" })).body;
    const fd = new FormData();
    // Attachments are stored in the archive, not deflated: plain text weighs its full size there.
    fd.append("file", new Blob(["x".repeat(dbBytes * 3)], { type: "text/plain" }), "big.txt");
    expect((await c.request("POST", `/api/v1/tasks/${task.id}/attachments`, { body: fd })).status).toBe(201);
    const out = join(work, "full.zip");
    const r = await run(["backup", "--out", out, "--data-dir", dataDir], { fileBlocks: Math.ceil((dbBytes * 1.5) / 512) });
    expect(r.code).toBe(5);
    expect(r.err).toContain("no space left");
    expect(existsSync(out)).toBe(false);
    expect(existsSync(join(work, ".full.zip.part"))).toBe(false);
  });

  test("doctor warns about the leftovers of killed runs", async () => {
    const r = await run(["doctor", "--data-dir", dataDir]);
    expect(r.out).toContain("leftovers");
  });
});

describe("app restore into a stopped data directory", () => {
  test("the restored instance equals the snapshot, serves, and its users sign in", async () => {
    const target = join(work, "restored");
    const r = await run(["restore", snapshot, "--data-dir", target]);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    const before = snapshotState;
    const after = stateOf(target);
    expect(after.files).toEqual(before.files);
    expect(Object.keys(after.files).length).toBe(2);
    expect(after.rows.tasks).toEqual(before.rows.tasks);
    expect(after.rows.users).toEqual(before.rows.users);
    expect(readFileSync(join(target, "secret.key"), "utf8")).toBe(readFileSync(join(dataDir, "secret.key"), "utf8"));
    const s = await AppProcess.start(["--data-dir", target, "--port", "0", "--log-format", "json"], { env: serverEnv() });
    try {
      const c = clientOf(s.base);
      expect((await c.post("/api/v1/auth/login", ADMIN)).status).toBe(200);
      const tasks = await c.get("/api/v1/tasks?limit=100");
      expect(tasks.status).toBe(200);
      expect(tasks.body.items.length).toBeGreaterThanOrEqual(4);
    } finally {
      await s.stop();
    }
    // A second restore over it keeps what was there, moved aside.
    const again = await run(["restore", snapshot, "--data-dir", target]);
    expect(again.code).toBe(0);
    expect(again.out).toContain("pre-restore-");
    expect(readdirSync(target).some((n) => n.startsWith("pre-restore-"))).toBe(true);
  });

  test("a damaged snapshot changes nothing (exit 4)", async () => {
    const target = join(work, "untouched");
    const first = await run(["restore", snapshot, "--data-dir", target]);
    expect(first.code).toBe(0);
    const before = stateOf(target);
    const r = await run(["restore", join(work, "bad.zip"), "--data-dir", target]);
    expect(r.code).toBe(4);
    expect(stateOf(target)).toEqual(before);
    expect(readdirSync(target).filter((n) => n.startsWith("pre-restore-") || n.startsWith(".restore-"))).toEqual([]);
  });
});

describe("app users and app doctor's findings", () => {
  test("users list and create (password on standard input)", async () => {
    const list = await run(["users", "list", "--data-dir", dataDir]);
    expect(list.code).toBe(0);
    expect(list.out).toContain(ADMIN.username);
    const p = Bun.spawn([...(process.env.APP_EXE ? [process.env.APP_EXE] : [process.execPath, join(import.meta.dir, "../../src/main.ts")]), "users", "create", "carol", "--data-dir", dataDir], {
      env: serverEnv(),
      stdin: new TextEncoder().encode("a long and unusual passphrase 42\n"),
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(await p.exited).toBe(0);
    expect(await new Response(p.stdout).text()).toContain("created user carol");
    const c = clientOf(server.base);
    const carol = { username: "carol", password: "a long and unusual passphrase 42" };
    expect((await c.post("/api/v1/auth/login", carol)).status).toBe(200);
    expect((await c.get("/api/v1/me")).status).toBe(200);
    expect((await run(["users", "frobnicate", "--data-dir", dataDir])).code).toBe(2);
    expect((await run(["users", "disable", "--data-dir", dataDir])).code).toBe(2);

    // disable, while the server runs: the session stops working at once, sign-in fails like a wrong password.
    const d = await run(["users", "disable", "carol", "--data-dir", dataDir]);
    expect(d.code).toBe(0);
    expect((await c.get("/api/v1/me")).status).toBe(401);
    const denied = await clientOf(server.base).post("/api/v1/auth/login", carol);
    expect(denied.status).toBe(401);
    expect(denied.body.code).toBe("invalid_credentials");
    expect((await run(["users", "list", "--data-dir", dataDir])).out).toMatch(/carol\tno\t\S+\t\d{4}-/);
    // The only administrator cannot be disabled; an unknown user is an error; nothing changes.
    const last = await run(["users", "disable", ADMIN.username, "--data-dir", dataDir]);
    expect(last.code).toBe(1);
    expect(last.err).toContain("last active administrator");
    expect((await run(["users", "disable", "nobody", "--data-dir", dataDir])).code).toBe(1);
    expect((await clientOf(server.base).post("/api/v1/auth/login", ADMIN)).status).toBe(200);
    // enable: signs in again.
    expect((await run(["users", "enable", "carol", "--data-dir", dataDir])).code).toBe(0);
    expect((await clientOf(server.base).post("/api/v1/auth/login", carol)).status).toBe(200);
  });

  test("doctor: an attachment row without its file is a problem (exit 4) with a fix", async () => {
    const target = join(work, "doctored");
    expect((await run(["restore", snapshot, "--data-dir", target])).code).toBe(0);
    const [one] = readdirSync(join(target, "attachments"));
    rmSync(join(target, "attachments", one!));
    writeFileSync(join(target, "attachments", "stray"), "x");
    const r = await run(["doctor", "--data-dir", target]);
    expect(r.code).toBe(4);
    expect(r.out).toContain("1 attachments have no file");
    expect(r.out).toContain("belong to no attachment");
    expect(r.out).toContain("fix:");
  });
});

describe("the server takes scheduled snapshots by itself", () => {
  test("with a schedule every two seconds, a verified snapshot appears in <data>/backups while it serves", async () => {
    const dir = join(work, "scheduled");
    const s = await AppProcess.start(["--data-dir", dir, "--port", "0", "--log-format", "json"], { env: serverEnv({ APP_BACKUP_SCHEDULE: "*/2 * * * * *", APP_BACKUP_TIMEZONE: "UTC" }) });
    try {
      const c = clientOf(s.base);
      expect((await c.post("/api/v1/setup/initialize", ADMIN)).status).toBe(201);
      const stored = await Promise.race([s.waitFor(/snapshot stored/), Bun.sleep(40_000).then(() => null)]);
      expect(stored).not.toBeNull();
      const ready = (await (await s.fetch("/api/v1/health/ready")).json()) as { details: { backups: unknown[] } };
      expect(ready.details.backups[0]).toEqual(expect.objectContaining({ destination: "local", last_result: "success" }));
    } finally {
      await s.stop();
    }
    // Stopped: no run prunes the file while it is checked (each run keeps only the day's newest).
    const names = readdirSync(join(dir, "backups")).filter((n) => /^app-snapshot-\d{8}T\d{6}Z\.zip$/.test(n));
    expect(names.length).toBeGreaterThanOrEqual(1);
    for (const n of names) expect((await run(["verify", join(dir, "backups", n)])).code).toBe(0);
  });
});

describe("a restore killed while it swaps the files", () => {
  test("the server refuses to start; doctor says so; the next app restore finishes it and the instance is the snapshot's", async () => {
    const target = join(work, "interrupted");
    // Something there before: a restore of the same snapshot (its state is the snapshot's).
    expect((await run(["restore", snapshot, "--data-dir", target])).code).toBe(0);
    const killed = await run(["restore", snapshot, "--data-dir", target], { env: { APP_FAILPOINT: "restore.mid-swap" } });
    expect(killed.code).not.toBe(0);
    expect(existsSync(join(target, "restore-journal.json"))).toBe(true);
    const serve = await run(["--data-dir", target, "--port", "0"]);
    expect(serve.code).toBe(1);
    expect(serve.err).toContain("interrupted restore");
    const doc = await run(["doctor", "--data-dir", target]);
    expect(doc.code).toBe(4);
    expect(doc.out).toContain("fix: app restore");
    const again = await run(["restore", snapshot, "--data-dir", target]);
    expect(again.code).toBe(0);
    expect(again.out).toContain("finished the interrupted restore");
    expect(existsSync(join(target, "restore-journal.json"))).toBe(false);
    expect(readdirSync(target).filter((n) => n.startsWith(".restore-"))).toEqual([]);
    const after = stateOf(target);
    expect(after.files).toEqual(snapshotState.files);
    expect(after.rows.users).toEqual(snapshotState.rows.users);
    expect(after.rows.attachments).toEqual(snapshotState.rows.attachments);
    // The instance before the killed restore is kept aside, whole.
    const previous = readdirSync(target).filter((n) => n.startsWith("pre-restore-"));
    expect(previous.length).toBe(1);
    expect(existsSync(join(target, previous[0]!, "app.db"))).toBe(true);
    expect(readdirSync(join(target, previous[0]!, "attachments")).sort()).toEqual(Object.keys(snapshotState.files).sort());
  });
});
