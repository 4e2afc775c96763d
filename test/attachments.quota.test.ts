import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import net from "node:net";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { dump, makeTestApp, setupAdmin, signedInUser, type TestApp } from "./helpers/app";
import { multipart, rawRequest as inProcessRequest } from "./helpers/multipart";
import { serve, SocketClient, type ServedApp } from "./helpers/server";
import { expectProblem } from "./helpers/problem";
import { mkTask, uname } from "./helpers/tasks";
import { ConfigError, loadConfig } from "../src/config";

// Issue 11 §6: a per-user storage quota for attachments (APP_ATTACHMENT_QUOTA_BYTES, off by
// default). An upload that would take the user's attachments past it is 413
// storage_quota_exceeded, decided while streaming (the file is never written whole), nothing
// stored; GET /me shows the use and the quota. Over a real socket.

const QUOTA = 10_000;
const app: TestApp = makeTestApp({ config: { attachmentQuotaBytes: QUOTA, attachmentMaxBytes: 64 * 1024 } });
let server: ServedApp;
let owner: SocketClient;
let taskId: string;

beforeAll(async () => {
  server = serve(app);
  await setupAdmin(app);
  owner = new SocketClient(server.base);
  expect((await owner.post("/api/v1/auth/login", { username: "owner", password: "correct horse battery" })).status).toBe(200);
  const t = await owner.post("/api/v1/tasks", { title: "with files" });
  taskId = t.json.id;
});
afterAll(() => {
  server.stop();
  app.close();
});

const attDir = () => join(app.dir, "attachments");
const tmpDir = () => join(app.dir, "tmp", "attachments");
const text = (n: number, ch = "a") => new Uint8Array(n).fill(ch.charCodeAt(0));

async function upload(c: SocketClient, task: string, data: Uint8Array, filename = "f.txt") {
  const { body, contentType } = multipart([{ name: "file", filename, data }]);
  const headers: Record<string, string> = { "content-type": contentType, cookie: [...c.jar].map(([k, v]) => `${k}=${v}`).join("; "), "x-csrf-token": c.jar.get("app_csrf")! };
  const r = await fetch(`${server.base}/api/v1/tasks/${task}/attachments`, { method: "POST", headers, body });
  const t = await r.text();
  return { status: r.status, headers: r.headers, text: t, json: t ? JSON.parse(t) : undefined };
}

/** Refused with storage_quota_exceeded: problem+json, database, files and temporary files unchanged. */
type Answer = Awaited<ReturnType<typeof upload>>;

async function refused(run: () => Promise<Answer>): Promise<Answer> {
  const before = dump(app.db);
  const files = readdirSync(attDir()).sort();
  const r = await run();
  expectProblem({ status: r.status, headers: r.headers, text: r.text, body: r.json }, 413, "storage_quota_exceeded");
  expect(dump(app.db)).toEqual(before);
  expect(readdirSync(attDir()).sort()).toEqual(files);
  expect(readdirSync(tmpDir())).toEqual([]);
  return r;
}

const me = async (c: SocketClient) => (await c.get("/api/v1/me")).json;

describe("attachment quota", () => {
  test("GET /me shows the use and the quota; uploads fill it up to exactly the quota; one byte more is 413 and nothing is stored", async () => {
    expect(await me(owner)).toMatchObject({ attachment_bytes: 0, attachment_quota_bytes: QUOTA });
    expect((await upload(owner, taskId, text(6000))).status).toBe(201);
    const r = await refused(() => upload(owner, taskId, text(4001)));
    expect(r.json.detail).toContain(`${QUOTA}`);
    expect(r.json.errors).toEqual([{ path: "file", message: expect.stringContaining("4000 bytes left") }]);
    expect(await me(owner)).toMatchObject({ attachment_bytes: 6000, attachment_quota_bytes: QUOTA });
    expect((await upload(owner, taskId, text(4000))).status).toBe(201);
    expect(await me(owner)).toMatchObject({ attachment_bytes: QUOTA });
    await refused(() => upload(owner, taskId, text(1)));
    // PATCH /me answers the same fields.
    expect((await owner.request("PATCH", "/api/v1/me", { display_name: "Owner" })).json).toMatchObject({ attachment_bytes: QUOTA, attachment_quota_bytes: QUOTA });
  });

  test("deleting an attachment makes room again; another user's quota is their own", async () => {
    const list = (await owner.get(`/api/v1/tasks/${taskId}/attachments`)).json.items as { id: string; size: number }[];
    const big = list.find((a) => a.size === 6000)!;
    expect((await owner.delete(`/api/v1/attachments/${big.id}`)).status).toBe(204);
    expect((await me(owner)).attachment_bytes).toBe(4000);
    expect((await upload(owner, taskId, text(6000))).status).toBe(201);

    const admin = app.client();
    await admin.post("/api/v1/auth/login", { username: "owner", password: "correct horse battery" });
    const other = await signedInUser(app, admin, uname("quota"));
    const otherTask = (await mkTask(other, { title: "theirs" })).id;
    const otherSocket = new SocketClient(server.base);
    for (const [k, v] of other.jar) otherSocket.jar.set(k, v);
    expect((await me(otherSocket)).attachment_bytes).toBe(0);
    expect((await upload(otherSocket, otherTask, text(QUOTA))).status).toBe(201);
  });

  test("the server stops reading at the quota: a body far larger is answered 413 before it has all been sent", async () => {
    // The owner has 0 bytes left; a fresh user has QUOTA.
    const admin = app.client();
    await admin.post("/api/v1/auth/login", { username: "owner", password: "correct horse battery" });
    const u = await signedInUser(app, admin, uname("stream"));
    const t = (await mkTask(u, { title: "big" })).id;
    // Under the per-file limit (64 KiB here), six times the quota.
    const { body, contentType } = multipart([{ name: "file", filename: "big.txt", data: text(60_000) }]);
    const sock = net.connect(server.port, "127.0.0.1");
    let answer = "";
    sock.on("data", (d: Buffer) => (answer += d.toString("latin1")));
    sock.on("error", () => {});
    await new Promise((r) => sock.on("connect", r));
    const before = dump(app.db);
    sock.write(
      [
        `POST /api/v1/tasks/${t}/attachments HTTP/1.1`,
        `Host: 127.0.0.1:${server.port}`,
        `Cookie: ${[...u.jar].map(([k, v]) => `${k}=${v}`).join("; ")}`,
        `X-CSRF-Token: ${u.jar.get("app_csrf")}`,
        `Content-Type: ${contentType}`,
        `Content-Length: ${body.byteLength}`,
        "",
        "",
      ].join("\r\n"),
    );
    // Send a third of the body (twice the quota) and no more: the answer must come anyway.
    sock.write(body.subarray(0, 20_000));
    const deadline = Date.now() + 10_000;
    while (!answer.includes("\r\n\r\n") && Date.now() < deadline) await Bun.sleep(10);
    sock.destroy();
    expect(answer).toStartWith("HTTP/1.1 413");
    expect(answer).toContain('"code":"storage_quota_exceeded"');
    expect(dump(app.db)).toEqual(before);
    expect(readdirSync(tmpDir())).toEqual([]);
  });

  test("the same, in process: reading stops near the quota, not at the end of the stream", async () => {
    const admin = app.client();
    await admin.post("/api/v1/auth/login", { username: "owner", password: "correct horse battery" });
    const u = await signedInUser(app, admin, uname("pull"));
    const t = (await mkTask(u, { title: "big" })).id;
    const { body, contentType } = multipart([{ name: "file", filename: "big.txt", data: text(QUOTA * 50) }]);
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(ctrl) {
        if (sent >= body.byteLength) return ctrl.close();
        const n = Math.min(4096, body.byteLength - sent);
        ctrl.enqueue(body.slice(sent, sent + n));
        sent += n;
      },
    });
    const r = await inProcessRequest(app, u, "POST", `/api/v1/tasks/${t}/attachments`, { body: stream, headers: { "content-type": contentType } });
    expect({ status: r.status, code: r.json?.code }).toEqual({ status: 413, code: "storage_quota_exceeded" });
    expect(sent).toBeLessThan(QUOTA * 5);
  });

  test("two uploads at once that fit alone but not together: one is stored, the other 413 at commit; the total never passes the quota", async () => {
    const admin = app.client();
    await admin.post("/api/v1/auth/login", { username: "owner", password: "correct horse battery" });
    const u = await signedInUser(app, admin, uname("race"));
    const t = (await mkTask(u, { title: "race" })).id;
    const socks = [0, 1].map(() => net.connect(server.port, "127.0.0.1"));
    const answers = ["", ""];
    socks.forEach((s, i) => {
      s.on("data", (d: Buffer) => (answers[i] += d.toString("latin1")));
      s.on("error", () => {});
    });
    await Promise.all(socks.map((s) => new Promise((r) => s.on("connect", r))));
    const bodies = [0, 1].map((i) => multipart([{ name: "file", filename: `r${i}.txt`, data: text(6000, i ? "b" : "c") }]));
    socks.forEach((s, i) => {
      const { body, contentType } = bodies[i]!;
      s.write(
        [
          `POST /api/v1/tasks/${t}/attachments HTTP/1.1`,
          `Host: 127.0.0.1:${server.port}`,
          `Cookie: ${[...u.jar].map(([k, v]) => `${k}=${v}`).join("; ")}`,
          `X-CSRF-Token: ${u.jar.get("app_csrf")}`,
          `Content-Type: ${contentType}`,
          `Content-Length: ${body.byteLength}`,
          "Connection: close",
          "",
          "",
        ].join("\r\n"),
      );
      s.write(body.subarray(0, 3000));
    });
    // Both uploads are under way (each has seen 0 bytes used) before either finishes.
    await Bun.sleep(200);
    socks.forEach((s, i) => s.write(bodies[i]!.body.subarray(3000)));
    const deadline = Date.now() + 10_000;
    while (answers.some((a) => !a.includes("\r\n\r\n")) && Date.now() < deadline) await Bun.sleep(10);
    for (const s of socks) s.destroy();
    const statuses = answers.map((a) => Number(a.split(" ")[1])).sort();
    expect(statuses).toEqual([201, 413]);
    expect(answers.find((a) => a.startsWith("HTTP/1.1 413"))).toContain("storage_quota_exceeded");
    const used = (await u.get("/api/v1/me")).body.attachment_bytes;
    expect(used).toBe(6000);
    expect(readdirSync(tmpDir())).toEqual([]);
  });
});

describe("setting and documentation", () => {
  test("off by default: GET /me says null and any size up to the file limit is stored", async () => {
    const plain = makeTestApp();
    try {
      const c = await setupAdmin(plain);
      expect((await c.get("/api/v1/me")).body).toMatchObject({ attachment_bytes: 0, attachment_quota_bytes: null });
    } finally {
      plain.close();
    }
  });

  test("APP_ATTACHMENT_QUOTA_BYTES: bytes, 0 = off, negative or not a number refused", () => {
    expect(loadConfig({}, {}).attachmentQuotaBytes).toBe(0);
    expect(loadConfig({}, { APP_ATTACHMENT_QUOTA_BYTES: "1073741824" }).attachmentQuotaBytes).toBe(1073741824);
    expect(() => loadConfig({}, { APP_ATTACHMENT_QUOTA_BYTES: "-1" })).toThrow(ConfigError);
    expect(() => loadConfig({}, { APP_ATTACHMENT_QUOTA_BYTES: "lots" })).toThrow(ConfigError);
  });

  test("the OpenAPI document lists 413 storage_quota_exceeded for uploads and attachment_quota_bytes on /me", async () => {
    const doc = (await owner.get("/api/openapi.json")).json;
    const upload = doc.paths["/api/v1/tasks/{task_id}/attachments"].post;
    expect(upload.responses["413"].description).toContain("storage_quota_exceeded");
    expect(upload.description).toContain("APP_ATTACHMENT_QUOTA_BYTES");
    expect(doc.components.schemas.Me.properties.attachment_quota_bytes).toBeDefined();
  });
});
