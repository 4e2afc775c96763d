import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { PNG, multipart } from "./helpers/multipart";
import { AppProcess, FROM_SOURCE, programUnderTest, serverEnv } from "./helpers/spawn";

// Faults of a real server process (`bun src/main.ts`): kill -9 during an upload, a full disk
// (a file-size limit on the process), a client that goes away, a lying Content-Length. After
// each: no row without its file, no file without its row, no temporary file, and the server
// (or its successor) keeps serving.

// APP_TEST_EXE=dist/app runs the same faults against the compiled executable.
const PROGRAM = process.env.APP_TEST_EXE ? programUnderTest(process.env.APP_TEST_EXE) : FROM_SOURCE;
const roots: string[] = [];
const procs: AppProcess["proc"][] = [];
afterAll(() => {
  for (const p of procs) if (p.exitCode === null) p.kill(9);
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});


interface Server {
  proc: AppProcess["proc"];
  port: number;
  base: string;
}

/** Starts the server; `fileBlocks` puts a file-size limit (`ulimit -f`, 512-byte blocks) on it. */
async function start(dataDir: string, env: Record<string, string> = {}, fileBlocks?: number): Promise<Server> {
  const s = await AppProcess.start(["serve", "--data-dir", dataDir, "--port", "0"], {
    program: PROGRAM,
    env: serverEnv({ APP_LOG_FORMAT: "json", ...env }),
    stderr: "inherit",
    fileBlocks,
  });
  procs.push(s.proc);
  return { proc: s.proc, port: s.port, base: `http://127.0.0.1:${s.port}` };
}

interface Session {
  cookie: string;
  csrf: string;
}

async function signIn(s: Server, first: boolean): Promise<Session> {
  const body = JSON.stringify({ username: "owner", password: "correct horse battery" });
  const r = await fetch(`${s.base}/api/v1/${first ? "setup/initialize" : "auth/login"}`, { method: "POST", headers: { "content-type": "application/json" }, body });
  expect(r.status).toBe(first ? 201 : 200);
  const jar = new Map<string, string>();
  for (const c of r.headers.getSetCookie()) {
    const k = Bun.Cookie.parse(c);
    jar.set(k.name, k.value);
  }
  return { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join("; "), csrf: jar.get("app_csrf")! };
}

async function api(s: Server, sess: Session, method: string, path: string, body?: unknown) {
  const r = await fetch(`${s.base}/api/v1${path}`, {
    method,
    headers: { cookie: sess.cookie, "x-csrf-token": sess.csrf, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : undefined };
}

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "app-attfault-"));
  roots.push(d);
  return d;
}

const files = (dir: string) => (existsSync(join(dir, "attachments")) ? readdirSync(join(dir, "attachments")).sort() : []);
const temps = (dir: string) => (existsSync(join(dir, "tmp", "attachments")) ? readdirSync(join(dir, "tmp", "attachments")) : []);
function rows(dir: string): string[] {
  const db = new Database(join(dir, "app.db"), { readonly: true });
  try {
    return (db.query("SELECT id FROM attachments ORDER BY id").all() as { id: string }[]).map((r) => r.id);
  } finally {
    db.close();
  }
}

/** Rows and files are the same set. */
function consistent(dir: string): void {
  expect(files(dir)).toEqual(rows(dir));
}

async function until(cond: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("condition not reached");
    await Bun.sleep(20);
  }
}

/** Opens a raw connection and sends the request head plus the first `sendBytes` of a multipart body. */
function partialUpload(s: Server, sess: Session, taskId: string, size: number, sendBytes: number, headers: Record<string, string> = {}) {
  const { body, contentType } = multipart([{ name: "file", filename: "big.txt", type: "text/plain", data: new Uint8Array(size).fill(0x61) }]);
  const sock = net.connect(s.port, "127.0.0.1");
  let answer = "";
  sock.on("data", (d) => (answer += d.toString("latin1")));
  sock.on("error", () => {});
  const head = [
    `POST /api/v1/tasks/${taskId}/attachments HTTP/1.1`,
    `Host: 127.0.0.1:${s.port}`,
    `Cookie: ${sess.cookie}`,
    `X-CSRF-Token: ${sess.csrf}`,
    `Content-Type: ${contentType}`,
    `Content-Length: ${headers["content-length"] ?? body.byteLength}`,
    "",
    "",
  ].join("\r\n");
  sock.write(head);
  sock.write(body.subarray(0, sendBytes));
  return { sock, body, answer: () => answer };
}

async function setupServer(env: Record<string, string> = {}, fileBlocks?: number) {
  const dir = tempDir();
  const s = await start(dir, env, fileBlocks);
  const sess = await signIn(s, true);
  const task = await api(s, sess, "POST", "/tasks", { title: "files" });
  expect(task.status).toBe(201);
  return { dir, s, sess, taskId: task.body.id as string };
}

async function uploadOk(s: Server, sess: Session, taskId: string, data: Uint8Array | string, filename = "ok.txt") {
  const { body, contentType } = multipart([{ name: "file", filename, data }]);
  const r = await fetch(`${s.base}/api/v1/tasks/${taskId}/attachments`, { method: "POST", headers: { cookie: sess.cookie, "x-csrf-token": sess.csrf, "content-type": contentType }, body });
  return { status: r.status, body: JSON.parse(await r.text()) };
}

describe("attachment faults against a real server process", () => {
  test("kill -9 during an upload: after restart no stray temporary file, no row without file, no file without row", async () => {
    const { dir, s, sess, taskId } = await setupServer();
    const kept = await uploadOk(s, sess, taskId, "kept");
    expect(kept.status).toBe(201);
    const up = partialUpload(s, sess, taskId, 4 * 1024 * 1024, 1024 * 1024);
    await until(() => temps(dir).length === 1);
    s.proc.kill(9);
    await s.proc.exited;
    up.sock.destroy();
    expect(temps(dir).length).toBe(1); // the interrupted upload's leftover
    const s2 = await start(dir);
    expect(temps(dir)).toEqual([]);
    consistent(dir);
    expect(rows(dir)).toEqual([kept.body.id]);
    const sess2 = await signIn(s2, false);
    const list = await api(s2, sess2, "GET", `/tasks/${taskId}/attachments`);
    expect(list.body.items.map((a: { id: string }) => a.id)).toEqual([kept.body.id]);
    expect((await uploadOk(s2, sess2, taskId, PNG, "after.png")).status).toBe(201);
    consistent(dir);
    s2.proc.kill(9);
  }, 60_000);

  test("disk full (file-size limit) during an upload: 507 storage_full, no row, no partial file, the server keeps serving", async () => {
    // 8 MiB per file for the process; the upload is 12 MiB (under the 25 MiB attachment limit).
    const { dir, s, sess, taskId } = await setupServer({}, 16384);
    const big = new Uint8Array(12 * 1024 * 1024).fill(0x61);
    const before = rows(dir);
    const r = await uploadOk(s, sess, taskId, big, "big.txt");
    expect(r.status).toBe(507);
    expect(r.body.code).toBe("storage_full");
    expect(JSON.stringify(r.body)).not.toMatch(/\/tmp|EFBIG|ENOSPC/);
    expect(rows(dir)).toEqual(before);
    expect(temps(dir)).toEqual([]);
    consistent(dir);
    expect((await fetch(`${s.base}/api/v1/health/live`)).status).toBe(200);
    const small = await uploadOk(s, sess, taskId, "still works");
    expect(small.status).toBe(201);
    consistent(dir);
    s.proc.kill(9);
  }, 60_000);

  test("a client that disconnects halfway: no temporary file, no row, the server keeps serving", async () => {
    const { dir, s, sess, taskId } = await setupServer();
    const up = partialUpload(s, sess, taskId, 4 * 1024 * 1024, 1024 * 1024);
    await until(() => temps(dir).length === 1);
    up.sock.destroy();
    await until(() => temps(dir).length === 0);
    expect(rows(dir)).toEqual([]);
    expect(files(dir)).toEqual([]);
    expect((await uploadOk(s, sess, taskId, "fine")).status).toBe(201);
    consistent(dir);
    s.proc.kill(9);
  }, 60_000);

  test("a lying Content-Length: shorter than the body is a 400 (the multipart is cut), longer then hanging up leaves nothing", async () => {
    const { dir, s, sess, taskId } = await setupServer();
    const short = partialUpload(s, sess, taskId, 100_000, 200_000, { "content-length": "50000" });
    await until(() => short.answer().includes("\r\n\r\n"));
    expect(short.answer()).toStartWith("HTTP/1.1 400");
    expect(short.answer()).toContain("malformed_request");
    short.sock.destroy();
    const long = partialUpload(s, sess, taskId, 100_000, 200_000, { "content-length": "900000" });
    await Bun.sleep(300);
    long.sock.destroy();
    await until(() => temps(dir).length === 0);
    expect(rows(dir)).toEqual([]);
    expect(files(dir)).toEqual([]);
    expect((await uploadOk(s, sess, taskId, "fine")).status).toBe(201);
    consistent(dir);
    s.proc.kill(9);
  }, 60_000);

  test("the limit is configurable (APP_ATTACHMENT_MAX_BYTES) and enforced over a real socket", async () => {
    const { dir, s, sess, taskId } = await setupServer({ APP_ATTACHMENT_MAX_BYTES: "1000" });
    expect((await uploadOk(s, sess, taskId, new Uint8Array(1000).fill(0x61))).status).toBe(201);
    const r = await uploadOk(s, sess, taskId, new Uint8Array(1001).fill(0x61));
    expect([r.status, r.body.code]).toEqual([413, "payload_too_large"]);
    expect(temps(dir)).toEqual([]);
    consistent(dir);
    s.proc.kill(9);
  }, 60_000);
});
