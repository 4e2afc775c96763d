import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { dump, makeTestApp, setupAdmin, signedInUser, type TestClient } from "./helpers/app";
import { expectProblem } from "./helpers/problem";
import { mkList, mkTask, uname } from "./helpers/tasks";
import { ELF, PDF, PNG, multipart, rawRequest, upload, type RawResponse } from "./helpers/multipart";

const LIMIT = 64 * 1024;
const app = makeTestApp({ config: { attachmentMaxBytes: LIMIT } });
let owner: TestClient;
let other: TestClient;
let taskId: string;

beforeAll(async () => {
  owner = await setupAdmin(app);
  other = await signedInUser(app, owner, uname("other"));
  taskId = (await mkTask(owner, { title: "with files" })).id;
});
afterAll(() => app.close());

const attDir = () => join(app.dir, "attachments");
const tmpDir = () => join(app.dir, "tmp", "attachments");
const sha = (b: Uint8Array) => new Bun.CryptoHasher("sha256").update(b).digest("hex");

/** A rejected upload: problem answer, database unchanged, no file left anywhere. */
async function refusedUpload(run: () => Promise<RawResponse>, status: number, code: string): Promise<RawResponse> {
  const before = dump(app.db);
  const files = readdirSync(attDir()).sort();
  const r = await run();
  expect({ status: r.status, code: r.json?.code }).toEqual({ status, code });
  expect(r.headers.get("content-type")).toStartWith("application/problem+json");
  expect(dump(app.db)).toEqual(before);
  expect(readdirSync(attDir()).sort()).toEqual(files);
  expect(readdirSync(tmpDir())).toEqual([]);
  return r;
}

describe("upload", () => {
  test("a PNG: 201, Location, record, file stored under its id with the same bytes", async () => {
    const r = await upload(app, owner, taskId, { filename: "pic.png", type: "image/png", data: PNG });
    expect(r.status).toBe(201);
    expect(r.headers.get("location")).toBe(`/api/v1/attachments/${r.json.id}`);
    expect(r.json).toEqual({
      id: r.json.id,
      task_id: taskId,
      filename: "pic.png",
      content_type: "image/png",
      size: PNG.byteLength,
      sha256: sha(PNG),
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    expect(new Uint8Array(readFileSync(join(attDir(), r.json.id)))).toEqual(PNG);
    expect(readdirSync(tmpDir())).toEqual([]);
  });

  test("the type comes from the content: a PDF declared octet-stream is stored as application/pdf", async () => {
    const r = await upload(app, owner, taskId, { filename: "doc.bin", type: "application/octet-stream", data: PDF });
    expect(r.status).toBe(201);
    expect(r.json.content_type).toBe("application/pdf");
  });

  test("text: markdown and csv by declared type or extension, UTF-8 checked", async () => {
    const md = await upload(app, owner, taskId, { filename: "notes.md", type: "text/markdown", data: "# Title\n\n* item é 中文\n" });
    expect(md.status).toBe(201);
    expect(md.json.content_type).toBe("text/markdown; charset=utf-8");
    const csv = await upload(app, owner, taskId, { filename: "t.csv", type: "application/octet-stream", data: "a,b\n1,2\n" });
    expect(csv.json.content_type).toBe("text/csv; charset=utf-8");
    const plain = await upload(app, owner, taskId, { filename: "readme", data: "hello" });
    expect(plain.json.content_type).toBe("text/plain; charset=utf-8");
  });

  test("a zip declared as a docx keeps the office type; a plain zip is application/zip", async () => {
    const zip = new Uint8Array([0x50, 0x4b, 0x03, 0x04, 20, 0, 0, 0, 8, 0]);
    const docx = await upload(app, owner, taskId, { filename: "report.docx", type: "application/octet-stream", data: zip });
    expect(docx.json.content_type).toBe("application/vnd.openxmlformats-officedocument.wordprocessingml.document");
    const z = await upload(app, owner, taskId, { filename: "x.zip", type: "application/zip", data: zip });
    expect(z.json.content_type).toBe("application/zip");
  });

  test("a body made by FormData (as a browser sends it) works", async () => {
    const fd = new FormData();
    fd.append("note", "ignored field");
    fd.append("file", new Blob([PNG], { type: "image/png" }), "from-form.png");
    const r = await rawRequest(app, owner, "POST", `/api/v1/tasks/${taskId}/attachments`, { body: fd });
    expect(r.status).toBe(201);
    expect(r.json.filename).toBe("from-form.png");
    expect(r.json.sha256).toBe(sha(PNG));
  });

  test("a file larger than one read chunk, with a boundary-like sequence inside, round-trips byte for byte", async () => {
    const data = new Uint8Array(LIMIT);
    for (let i = 0; i < data.length; i++) data[i] = (i * 7919) % 251;
    data.set(PNG, 0);
    data.set(new TextEncoder().encode("\r\n------test-boundary-7MA4YWxkTrZu"), 30000); // a delimiter prefix, not a delimiter
    const r = await upload(app, owner, taskId, { filename: "big.png", type: "image/png", data });
    expect(r.status).toBe(201);
    expect(r.json.size).toBe(LIMIT);
    expect(r.json.sha256).toBe(sha(data));
    const d = await rawRequest(app, owner, "GET", `/api/v1/attachments/${r.json.id}`);
    expect(d.bytes).toEqual(data);
  });

  test("exactly the limit is accepted; limit + 1 byte is 413 and nothing is stored", async () => {
    const ok = new Uint8Array(LIMIT).fill(0x61);
    expect((await upload(app, owner, taskId, { filename: "a.txt", data: ok })).status).toBe(201);
    const over = new Uint8Array(LIMIT + 1).fill(0x61);
    await refusedUpload(() => upload(app, owner, taskId, { filename: "a.txt", data: over }), 413, "payload_too_large");
  });

  test("a chunked body without Content-Length at twice the limit is cut off with 413", async () => {
    const { body, contentType } = multipart([{ name: "file", filename: "big.txt", data: new Uint8Array(LIMIT * 2).fill(0x62) }]);
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(ctrl) {
        if (sent >= body.byteLength) return ctrl.close();
        const n = Math.min(4096, body.byteLength - sent);
        ctrl.enqueue(body.slice(sent, sent + n));
        sent += n;
      },
    });
    const r = await refusedUpload(
      () => rawRequest(app, owner, "POST", `/api/v1/tasks/${taskId}/attachments`, { body: stream, headers: { "content-type": contentType } }),
      413,
      "payload_too_large",
    );
    expectProblem({ status: r.status, headers: r.headers, text: new TextDecoder().decode(r.bytes), body: r.json }, 413, "payload_too_large");
    // Reading stopped near the limit, not at the end of the body.
    expect(sent).toBeLessThan(body.byteLength);
  });

  test("a declared Content-Length over the limit is refused before reading", async () => {
    const { contentType } = multipart([{ name: "file", filename: "x.txt", data: "x" }]);
    let pulled = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(ctrl) {
        pulled++;
        ctrl.enqueue(new Uint8Array(1024));
        if (pulled > 200) ctrl.close();
      },
    });
    await refusedUpload(
      () =>
        rawRequest(app, owner, "POST", `/api/v1/tasks/${taskId}/attachments`, {
          body: stream,
          headers: { "content-type": contentType, "content-length": String(LIMIT * 10) },
        }),
      413,
      "payload_too_large",
    );
  });

  test("HTML or SVG declared image/png, and XML, are 415", async () => {
    for (const data of [
      "<!DOCTYPE html><html><script>alert(1)</script></html>",
      "  <svg xmlns='http://www.w3.org/2000/svg' onload='alert(1)'/>",
      '<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"/>',
      "\ufeff<html><body>x</body></html>",
      "hello <script>alert(1)</script>",
    ]) {
      const r = await refusedUpload(() => upload(app, owner, taskId, { filename: "pic.png", type: "image/png", data }), 415, "unsupported_media_type");
      expect(r.json.detail).toBeString();
    }
  });

  test("an ELF binary declared application/pdf is 415; so are other binaries and invalid UTF-8", async () => {
    await refusedUpload(() => upload(app, owner, taskId, { filename: "doc.pdf", type: "application/pdf", data: ELF }), 415, "unsupported_media_type");
    await refusedUpload(() => upload(app, owner, taskId, { filename: "x.txt", type: "text/plain", data: new Uint8Array([0x68, 0x69, 0xff, 0xfe]) }), 415, "unsupported_media_type");
    await refusedUpload(() => upload(app, owner, taskId, { filename: "x.txt", type: "text/plain", data: new Uint8Array([0x68, 0, 0x69]) }), 415, "unsupported_media_type");
    // Binary garbage after a long text head is caught too (the whole stream is checked).
    const late = new Uint8Array(10000).fill(0x61);
    late[9000] = 0;
    await refusedUpload(() => upload(app, owner, taskId, { filename: "x.txt", data: late }), 415, "unsupported_media_type");
  });

  test("an empty file is 422", async () => {
    const r = await refusedUpload(() => upload(app, owner, taskId, { filename: "empty.txt", type: "text/plain", data: "" }), 422, "validation_failed");
    expect(r.json.errors).toEqual([{ path: "file", message: "the file is empty" }]);
  });

  test("no file field is 422; not multipart, no boundary, a cut-off body are 400", async () => {
    const noFile = multipart([{ name: "other", data: "x" }]);
    await refusedUpload(
      () => rawRequest(app, owner, "POST", `/api/v1/tasks/${taskId}/attachments`, { body: noFile.body, headers: { "content-type": noFile.contentType } }),
      422,
      "validation_failed",
    );
    await refusedUpload(
      () => rawRequest(app, owner, "POST", `/api/v1/tasks/${taskId}/attachments`, { body: "{}", headers: { "content-type": "application/json" } }),
      400,
      "malformed_request",
    );
    await refusedUpload(
      () => rawRequest(app, owner, "POST", `/api/v1/tasks/${taskId}/attachments`, { body: "x", headers: { "content-type": "multipart/form-data" } }),
      400,
      "malformed_request",
    );
    const full = multipart([{ name: "file", filename: "a.png", data: PNG }]);
    const cut = full.body.slice(0, full.body.byteLength - 30); // no closing boundary
    await refusedUpload(
      () => rawRequest(app, owner, "POST", `/api/v1/tasks/${taskId}/attachments`, { body: cut, headers: { "content-type": full.contentType } }),
      400,
      "malformed_request",
    );
  });

  test("a stream that fails halfway (client gone) leaves no file and no row", async () => {
    const { body, contentType } = multipart([{ name: "file", filename: "a.txt", data: new Uint8Array(40000).fill(0x61) }]);
    let n = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(ctrl) {
        if (n === 3) return ctrl.error(new Error("connection reset"));
        ctrl.enqueue(body.slice(n * 8192, (n + 1) * 8192));
        n++;
      },
    });
    await refusedUpload(
      () => rawRequest(app, owner, "POST", `/api/v1/tasks/${taskId}/attachments`, { body: stream, headers: { "content-type": contentType } }),
      400,
      "malformed_request",
    );
  });

  test("another user's task, a missing task, a task in the trash: 404 and nothing stored", async () => {
    await refusedUpload(() => upload(app, other, taskId, { filename: "a.png", data: PNG }), 404, "not_found");
    await refusedUpload(() => upload(app, owner, "0190a0a0-0000-7000-8000-000000000000", { filename: "a.png", data: PNG }), 404, "not_found");
    const t = await mkTask(owner, { title: "trashed" });
    expect((await owner.delete(`/api/v1/tasks/${t.id}`)).status).toBe(204);
    await refusedUpload(() => upload(app, owner, t.id, { filename: "a.png", data: PNG }), 404, "not_found");
  });

  test("without the CSRF token: 403 and nothing stored", async () => {
    const { body, contentType } = multipart([{ name: "file", filename: "a.png", data: PNG }]);
    await refusedUpload(
      () => rawRequest(app, owner, "POST", `/api/v1/tasks/${taskId}/attachments`, { body, headers: { "content-type": contentType, "x-csrf-token": "nope" } }),
      403,
      "csrf_failed",
    );
  });
});

describe("file names", () => {
  const cases: [string, string][] = [
    ["../../x", "x"],
    ["..\\x", "x"],
    ["/etc/passwd", "passwd"],
    ["C:\\x", "x"],
    ["a\u0000.txt", "a.txt"],
    ['say \\"hi\\".txt', 'say "hi".txt'],
    ["semi;colon.txt", "semi;colon.txt"],
    ["evil\u202Etxt.exe", "eviltxt.exe"],
    ["cafe\u0301.txt", "caf\u00e9.txt"],
    ["..", "file"],
  ];
  for (const [sent, stored] of cases) {
    test(`${JSON.stringify(sent)} is stored as ${JSON.stringify(stored)} and downloads with one well-formed header`, async () => {
      const r = await upload(app, owner, taskId, { filename: sent, type: "text/plain", data: "content" });
      expect(r.status).toBe(201);
      expect(r.json.filename).toBe(stored);
      await expectGoodDisposition(r.json.id, stored);
    });
  }

  test("CR LF in a name (as a browser escapes it, and raw) never reaches a header", async () => {
    const r = await upload(app, owner, taskId, { filename: "a%0D%0ASet-Cookie: x=1.txt", data: "content" });
    expect(r.status).toBe(201);
    expect(r.json.filename).toBe("aSet-Cookie: x=1.txt");
    await expectGoodDisposition(r.json.id, "aSet-Cookie: x=1.txt");
    const raw = await upload(app, owner, taskId, { disposition: 'form-data; name="file"; filename="b\rc.txt"', data: "content" });
    expect(raw.status).toBe(201);
    expect(raw.json.filename).toBe("bc.txt");
  });

  test("filename* (RFC 8187) is understood", async () => {
    const r = await upload(app, owner, taskId, { disposition: `form-data; name="file"; filename*=UTF-8''%E4%B8%AD%E6%96%87.txt`, data: "content" });
    expect(r.json.filename).toBe("中文.txt");
    await expectGoodDisposition(r.json.id, "中文.txt");
  });

  test("a 300-character name is cut to 255, keeping the extension", async () => {
    const name = "n".repeat(296) + ".txt";
    const r = await upload(app, owner, taskId, { filename: name, data: "content" });
    expect(r.json.filename).toBe("n".repeat(251) + ".txt");
    await expectGoodDisposition(r.json.id, r.json.filename);
  });

  async function expectGoodDisposition(id: string, name: string) {
    const d = await rawRequest(app, owner, "GET", `/api/v1/attachments/${id}`);
    expect(d.status).toBe(200);
    const h = d.headers.get("content-disposition")!;
    expect(h).toMatch(/^attachment; filename\*=UTF-8''[A-Za-z0-9!#$&+\-.^_`|~%]+$/);
    expect(decodeURIComponent(h.slice("attachment; filename*=UTF-8''".length))).toBe(name);
  }
});

describe("download, list, delete", () => {
  let id: string;
  const data = new Uint8Array(1000);
  beforeAll(async () => {
    data.set(PNG);
    for (let i = PNG.length; i < data.length; i++) data[i] = i % 256;
    const r = await upload(app, owner, taskId, { filename: "range.png", type: "image/png", data });
    id = r.json.id;
  });

  test("headers of a download", async () => {
    const d = await rawRequest(app, owner, "GET", `/api/v1/attachments/${id}`);
    expect(d.status).toBe(200);
    expect(d.bytes).toEqual(data);
    expect(d.headers.get("content-type")).toBe("image/png");
    expect(d.headers.get("content-length")).toBe("1000");
    expect(d.headers.get("etag")).toBe(`"${sha(data)}"`);
    expect(d.headers.get("x-content-type-options")).toBe("nosniff");
    expect(d.headers.get("cross-origin-resource-policy")).toBe("same-origin");
    expect(d.headers.get("content-disposition")).toBe("attachment; filename*=UTF-8''range.png");
    expect(d.headers.get("accept-ranges")).toBe("bytes");
    expect(d.headers.get("content-security-policy")).toBe("default-src 'none'; sandbox");
  });

  test("a row whose file was lost outside the app answers 404, never a 200 that breaks mid-body", async () => {
    const a = await upload(app, owner, taskId, { filename: "lost.txt", data: "bytes" });
    const { rmSync } = await import("node:fs");
    rmSync(join(attDir(), a.json.id));
    const r = await rawRequest(app, owner, "GET", `/api/v1/attachments/${a.json.id}`);
    expect([r.status, r.json.code]).toEqual([404, "not_found"]);
    app.handle.attachments.sweepOrphans();
  });

  test("If-None-Match with the ETag is 304 without a body; another tag is 200", async () => {
    const etag = `"${sha(data)}"`;
    const nm = await rawRequest(app, owner, "GET", `/api/v1/attachments/${id}`, { headers: { "if-none-match": etag } });
    expect(nm.status).toBe(304);
    expect(nm.bytes.byteLength).toBe(0);
    expect(nm.headers.get("etag")).toBe(etag);
    expect((await rawRequest(app, owner, "GET", `/api/v1/attachments/${id}`, { headers: { "if-none-match": `"abc", W/${etag}` } })).status).toBe(304);
    expect((await rawRequest(app, owner, "GET", `/api/v1/attachments/${id}`, { headers: { "if-none-match": '"other"' } })).status).toBe(200);
  });

  test("ranges: first-last, open-ended, suffix, clamped end; 416 past the end; If-Range", async () => {
    const get = (range: string, extra: Record<string, string> = {}) => rawRequest(app, owner, "GET", `/api/v1/attachments/${id}`, { headers: { range, ...extra } });
    const a = await get("bytes=10-19");
    expect(a.status).toBe(206);
    expect(a.bytes).toEqual(data.slice(10, 20));
    expect(a.headers.get("content-range")).toBe("bytes 10-19/1000");
    expect(a.headers.get("content-length")).toBe("10");
    const b = await get("bytes=990-");
    expect(b.bytes).toEqual(data.slice(990));
    const c = await get("bytes=-5");
    expect(c.bytes).toEqual(data.slice(995));
    expect(c.headers.get("content-range")).toBe("bytes 995-999/1000");
    const d = await get("bytes=900-5000");
    expect(d.headers.get("content-range")).toBe("bytes 900-999/1000");
    const e = await get("bytes=1000-");
    expectProblem({ status: e.status, headers: e.headers, text: new TextDecoder().decode(e.bytes), body: e.json }, 416, "range_not_satisfiable");
    expect(e.headers.get("content-range")).toBe("bytes */1000");
    expect((await get("bytes=-0")).status).toBe(416);
    expect((await get("bytes=0-1,5-6")).status).toBe(200); // several ranges: the whole file
    expect((await get("lines=1-2")).status).toBe(200);
    expect((await get("bytes=10-19", { "if-range": '"stale"' })).status).toBe(200);
    expect((await get("bytes=10-19", { "if-range": `"${sha(data)}"` })).status).toBe(206);
  });

  test("another user's attachment is 404 like a missing one, for GET and DELETE", async () => {
    const a = await rawRequest(app, other, "GET", `/api/v1/attachments/${id}`);
    const b = await rawRequest(app, owner, "GET", `/api/v1/attachments/0190a0a0-0000-7000-8000-000000000000`);
    expect([a.status, a.json.code, a.json.detail]).toEqual([404, "not_found", b.json.detail]);
    await refusedUpload(() => rawRequest(app, other, "DELETE", `/api/v1/attachments/${id}`), 404, "not_found");
    expect((await other.get(`/api/v1/tasks/${taskId}/attachments`)).status).toBe(404);
  });

  test("list: the task's attachments, oldest first", async () => {
    const t = await mkTask(owner, { title: "list me" });
    const one = await upload(app, owner, t.id, { filename: "1.txt", data: "one" });
    const two = await upload(app, owner, t.id, { filename: "2.txt", data: "two" });
    const r = await owner.get(`/api/v1/tasks/${t.id}/attachments`);
    expect(r.status).toBe(200);
    expect(r.body.items.map((x: { id: string }) => x.id)).toEqual([one.json.id, two.json.id]);
    expect(r.body.items[0]).toEqual(one.json);
  });

  test("delete: 204, file gone, then 404", async () => {
    const r = await upload(app, owner, taskId, { filename: "gone.txt", data: "bye" });
    expect(existsSync(join(attDir(), r.json.id))).toBe(true);
    const d = await owner.delete(`/api/v1/attachments/${r.json.id}`);
    expect(d.status).toBe(204);
    expect(d.text).toBe("");
    expect(existsSync(join(attDir(), r.json.id))).toBe(false);
    expect((await owner.get(`/api/v1/attachments/${r.json.id}`)).status).toBe(404);
    expect((await owner.delete(`/api/v1/attachments/${r.json.id}`)).status).toBe(404);
  });

  test("a task in the trash hides its attachments (404); restoring brings them back", async () => {
    const t = await mkTask(owner, { title: "soon trashed" });
    const a = await upload(app, owner, t.id, { filename: "x.txt", data: "x" });
    await owner.delete(`/api/v1/tasks/${t.id}`);
    expect((await owner.get(`/api/v1/attachments/${a.json.id}`)).status).toBe(404);
    await owner.post(`/api/v1/tasks/${t.id}/restore`);
    expect((await owner.get(`/api/v1/attachments/${a.json.id}`)).status).toBe(200);
  });
});

describe("purge removes files; GET /me counts bytes", () => {
  test("DELETE /trash/{id} removes the files of the task and its subtasks, after the commit", async () => {
    const t = await mkTask(owner, { title: "parent" });
    const s = await mkTask(owner, { title: "child", parent_id: t.id });
    const a = await upload(app, owner, t.id, { filename: "p.txt", data: "p" });
    const b = await upload(app, owner, s.id, { filename: "c.txt", data: "c" });
    await owner.delete(`/api/v1/tasks/${t.id}`);
    expect((await owner.delete(`/api/v1/trash/${t.id}`)).status).toBe(204);
    for (const id of [a.json.id, b.json.id]) {
      expect(existsSync(join(attDir(), id))).toBe(false);
      expect(app.db.sqlite.query("SELECT count(*) AS n FROM attachments WHERE id = ?").get(id)).toEqual({ n: 0 });
    }
  });

  test("a refused purge (task not in the trash) keeps the files", async () => {
    const t = await mkTask(owner, { title: "live" });
    const a = await upload(app, owner, t.id, { filename: "p.txt", data: "p" });
    expect((await owner.delete(`/api/v1/trash/${t.id}`)).status).toBe(409);
    expect(existsSync(join(attDir(), a.json.id))).toBe(true);
  });

  test("DELETE /lists/{id}/purge removes the files of every task of the list", async () => {
    const listId = await mkList(owner, uname("L"));
    const t = await mkTask(owner, { title: "in list", list_id: listId });
    const a = await upload(app, owner, t.id, { filename: "l.txt", data: "l" });
    await owner.delete(`/api/v1/lists/${listId}`);
    expect((await owner.delete(`/api/v1/lists/${listId}/purge`)).status).toBe(204);
    expect(existsSync(join(attDir(), a.json.id))).toBe(false);
  });

  test("attachment_bytes follows uploads, deletes and purges", async () => {
    const c = await signedInUser(app, owner, uname("bytes"));
    const me0 = await c.get("/api/v1/me");
    expect(me0.body.attachment_bytes).toBe(0);
    const t = await mkTask(c, { title: "t" });
    const a = await upload(app, c, t.id, { filename: "a.txt", data: "12345" });
    await upload(app, c, t.id, { filename: "b.png", data: PNG });
    expect((await c.get("/api/v1/me")).body.attachment_bytes).toBe(5 + PNG.byteLength);
    await c.delete(`/api/v1/attachments/${a.json.id}`);
    expect((await c.get("/api/v1/me")).body.attachment_bytes).toBe(PNG.byteLength);
    await c.delete(`/api/v1/tasks/${t.id}`);
    await c.delete(`/api/v1/trash/${t.id}`);
    expect((await c.get("/api/v1/me")).body.attachment_bytes).toBe(0);
    // Other users' files never count.
    expect((await other.get("/api/v1/me")).body.attachment_bytes).toBe(0);
  });
});

describe("start-up sweep", () => {
  test("removes temporary files, files without rows and rows without files; keeps the rest", async () => {
    const keep = await upload(app, owner, taskId, { filename: "keep.txt", data: "keep" });
    const lost = await upload(app, owner, taskId, { filename: "lost.txt", data: "lost" });
    const { rmSync } = await import("node:fs");
    rmSync(join(attDir(), lost.json.id));
    writeFileSync(join(tmpDir(), "0190a0a0-0000-7000-8000-000000000001.part"), "half an upload");
    writeFileSync(join(attDir(), "0190a0a0-0000-7000-8000-000000000002"), "no row");
    writeFileSync(join(attDir(), "junk"), "not ours");
    const result = app.handle.attachments.sweepOrphans();
    expect(result).toEqual({ temporaryFiles: 1, filesWithoutRow: 2, rowsWithoutFile: [lost.json.id] });
    expect(readdirSync(tmpDir())).toEqual([]);
    expect(existsSync(join(attDir(), keep.json.id))).toBe(true);
    expect(existsSync(join(attDir(), "junk"))).toBe(false);
    expect((await owner.get(`/api/v1/attachments/${lost.json.id}`)).status).toBe(404);
    expect((await owner.get(`/api/v1/attachments/${keep.json.id}`)).status).toBe(200);
    // Every row has its file and every file its row.
    const ids = (app.db.sqlite.query("SELECT id FROM attachments").all() as { id: string }[]).map((r) => r.id).sort();
    expect(readdirSync(attDir()).sort()).toEqual(ids);
  });
});
