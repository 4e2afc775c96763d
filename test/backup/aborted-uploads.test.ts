import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import net from "node:net";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { setupOwner, spawnServer, type SpawnedServer } from "../helpers/spawn";

/**
 * Issue 12: "an upload cut off by the client (connection closed mid-body) once showed a 500 on
 * backup preflight". The server as users run it (`bun src/main.ts`, or APP_EXE=dist/app), uploads
 * cut off through a real socket at several points (in the part headers, in the middle of the file,
 * a few bytes before the closing boundary), with a Content-Length and chunked, to every endpoint
 * that reads an upload: the backup preflight, an attachment upload and the CSV legacy restore
 * (multipart), and the legacy restores' raw bodies. A client that went away is the client's doing:
 * no answer and no log line says 500 or logs an error, nothing is stored, no staging file is left,
 * and the server keeps serving. (Not reproduced as a 500 here before this test was written either:
 * every cut was answered 400 `the upload was interrupted`; the test holds it so.)
 */

let s: SpawnedServer;
let auth: { cookie: string; csrf: string; headers: Record<string, string> };
let taskId: string;
let zip: Uint8Array;
let csv: Uint8Array;
let json: Uint8Array;

beforeAll(async () => {
  s = await spawnServer();
  auth = await setupOwner(s.base);
  const h = { ...auth.headers, "content-type": "application/json" };
  const post = async (path: string, body: unknown) => {
    const r = await fetch(`${s.base}/api/v1${path}`, { method: "POST", headers: h, body: JSON.stringify(body) });
    expect(r.status).toBe(201);
    return (await r.json()) as { id: string };
  };
  taskId = (await post("/tasks", { title: "files" })).id;
  // An archive and files of a few hundred KiB: cut points fall between many socket chunks.
  for (let i = 0; i < 30; i++) await post("/memos", { content: `memo ${i} ` + Array.from({ length: 200 }, () => crypto.randomUUID()).join(" ") });
  const get = async (path: string) => new Uint8Array(await (await fetch(`${s.base}/api/v1${path}`, { headers: auth.headers })).arrayBuffer());
  zip = await get("/backup/export.zip");
  csv = await get("/export.csv");
  json = await get("/export");
}, 60_000);
afterAll(() => s?.stop());

const enc = new TextEncoder();
const BOUNDARY = "----cut-off-upload";

function multipart(data: Uint8Array): { body: Uint8Array; contentType: string; fileStart: number } {
  const head = enc.encode(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="upload.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`);
  const tail = enc.encode(`\r\n--${BOUNDARY}--\r\n`);
  const body = new Uint8Array(head.byteLength + data.byteLength + tail.byteLength);
  body.set(head);
  body.set(data, head.byteLength);
  body.set(tail, head.byteLength + data.byteLength);
  return { body, contentType: `multipart/form-data; boundary=${BOUNDARY}`, fileStart: head.byteLength };
}

/** Writes the request and the first `sent` bytes of `body`, then closes the connection; what came back before the close. */
function cutOff(path: string, contentType: string, body: Uint8Array, sent: number, chunked: boolean): Promise<string> {
  return new Promise((done) => {
    const sock = net.connect(s.port, "127.0.0.1");
    let answer = "";
    sock.on("data", (d) => (answer += d.toString("latin1")));
    sock.on("error", () => {});
    sock.on("close", () => done(answer));
    sock.on("connect", async () => {
      const framing = chunked ? "Transfer-Encoding: chunked" : `Content-Length: ${body.byteLength}`;
      sock.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${s.port}\r\nCookie: ${auth.cookie}\r\nX-CSRF-Token: ${auth.csrf}\r\nContent-Type: ${contentType}\r\n${framing}\r\n\r\n`);
      const part = body.subarray(0, sent);
      if (chunked) sock.write(`${part.byteLength.toString(16)}\r\n`);
      sock.write(part);
      if (chunked) sock.write("\r\n");
      await Bun.sleep(150);
      sock.destroy();
    });
  });
}

interface LogLine {
  level: string;
  msg: string;
  path?: string;
  status?: number;
}
const logs = () => s.lines.map((l) => JSON.parse(l) as LogLine);
const requestsTo = (paths: string[]) => logs().filter((l) => l.msg === "request" && paths.includes(l.path ?? ""));

describe("uploads cut off by the client, through a real socket", () => {
  test("no 500 answered or logged, no error logged, nothing stored, no staging file left; the server keeps serving", async () => {
    const targets: { path: string; logPath: string; contentType: string; body: Uint8Array; cuts: number[] }[] = [];
    for (const [path, data] of [
      ["/api/v1/backup/preflight?mode=merge", zip],
      [`/api/v1/tasks/${taskId}/attachments`, csv],
      ["/api/v1/restore.csv?mode=merge", csv],
    ] as const) {
      const m = multipart(data);
      targets.push({ path, logPath: path.split("?")[0]!, contentType: m.contentType, body: m.body, cuts: [m.fileStart - 20, m.fileStart + (data.byteLength >> 1), m.body.byteLength - 3] });
    }
    for (const [path, contentType, body] of [
      ["/api/v1/restore.csv?mode=merge", "text/csv", csv],
      ["/api/v1/restore?mode=merge", "application/json", json],
    ] as const) {
      targets.push({ path, logPath: path.split("?")[0]!, contentType, body, cuts: [10, body.byteLength >> 1, body.byteLength - 3] });
    }
    const before = requestsTo(targets.map((t) => t.logPath)).length;
    let sent = 0;
    for (const t of targets) {
      for (const cut of t.cuts) {
        for (const chunked of [false, true]) {
          const answer = await cutOff(t.path, t.contentType, t.body, cut, chunked);
          // Mostly nothing comes back before the close; whatever does is never a 5xx.
          expect({ path: t.path, cut, chunked, fiveHundred: /^HTTP\/1\.1 5/.test(answer) }).toEqual({ path: t.path, cut, chunked, fiveHundred: false });
          sent++;
        }
      }
    }
    // Every cut-off request was seen and logged (the log is flushed at least every second).
    for (let i = 0; i < 100 && requestsTo(targets.map((t) => t.logPath)).length < before + sent; i++) await Bun.sleep(100);
    const seen = requestsTo(targets.map((t) => t.logPath)).slice(before);
    expect(seen.length).toBe(sent);
    expect(seen.filter((l) => (l.status ?? 0) >= 500 || (l.status ?? 0) < 400)).toEqual([]);
    expect(logs().filter((l) => l.level === "error" || l.level === "fatal")).toEqual([]);

    // Nothing stored, nothing left behind.
    const items = (await (await fetch(`${s.base}/api/v1/tasks/${taskId}/attachments`, { headers: auth.headers })).json()) as { items: unknown[] };
    expect(items.items).toEqual([]);
    expect(readdirSync(join(s.dir, "backup", "staging"))).toEqual([]);
    expect(readdirSync(join(s.dir, "backup", "restores"))).toEqual([]);
    expect(readdirSync(join(s.dir, "tmp", "attachments"))).toEqual([]);
    expect(readdirSync(join(s.dir, "attachments"))).toEqual([]);

    // Still serving: the same uploads, whole, go through.
    expect((await fetch(`${s.base}/api/v1/health/live`)).status).toBe(200);
    const whole = multipart(zip);
    const pf = await fetch(`${s.base}/api/v1/backup/preflight?mode=merge`, { method: "POST", headers: { ...auth.headers, "content-type": whole.contentType }, body: whole.body });
    expect(pf.status).toBe(200);
  }, 120_000);
});
