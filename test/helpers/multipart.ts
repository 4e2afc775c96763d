import type { TestApp, TestClient } from "./app";

export interface Part {
  name: string;
  /** Written into the header as given (raw bytes of its UTF-8); omit for a plain field. */
  filename?: string;
  /** A ready-made Content-Disposition value instead of one built from name/filename. */
  disposition?: string;
  type?: string;
  data: Uint8Array | string;
}

/** A multipart/form-data body built by hand, so tests control every byte of the part headers. */
export function multipart(parts: Part[], boundary = "----test-boundary-7MA4YWxkTrZu0gW"): { body: Uint8Array<ArrayBuffer>; contentType: string } {
  const enc = new TextEncoder();
  const chunks: Uint8Array[] = [];
  for (const p of parts) {
    const disp = p.disposition ?? `form-data; name="${p.name}"${p.filename !== undefined ? `; filename="${p.filename}"` : ""}`;
    let head = `--${boundary}\r\nContent-Disposition: ${disp}\r\n`;
    if (p.type) head += `Content-Type: ${p.type}\r\n`;
    head += "\r\n";
    chunks.push(enc.encode(head));
    chunks.push(typeof p.data === "string" ? enc.encode(p.data) : p.data);
    chunks.push(enc.encode("\r\n"));
  }
  chunks.push(enc.encode(`--${boundary}--\r\n`));
  const joined = Buffer.concat(chunks);
  const body = new Uint8Array(joined.byteLength);
  body.set(joined);
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

export interface RawResponse {
  status: number;
  headers: Headers;
  bytes: Uint8Array;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON bodies of any shape
  json: any;
}

/** A request through the app with the client's cookies and CSRF token, answer bytes kept as they are. */
export async function rawRequest(
  app: TestApp,
  c: TestClient,
  method: string,
  path: string,
  init: { body?: RequestInit["body"]; headers?: Record<string, string> } = {},
): Promise<RawResponse> {
  const headers: Record<string, string> = { ...init.headers };
  headers["cookie"] = [...c.jar].map(([k, v]) => `${k}=${v}`).join("; ");
  const csrf = c.csrfCookie;
  if (method !== "GET" && method !== "HEAD" && csrf !== undefined) headers["x-csrf-token"] ??= csrf;
  const req = new Request(`http://localhost${path}`, { method, headers, body: init.body ?? null, duplex: "half" } as RequestInit);
  const res = await app.handle.fetch(req, { requestIP: () => ({ address: "127.0.0.1" }) });
  const bytes = new Uint8Array(await res.arrayBuffer());
  let json: unknown = undefined;
  if ((res.headers.get("content-type") ?? "").includes("json") && bytes.byteLength) json = JSON.parse(new TextDecoder().decode(bytes));
  return { status: res.status, headers: res.headers, bytes, json };
}

/** Uploads one file through the multipart endpoint. */
export function upload(app: TestApp, c: TestClient, taskId: string, file: Omit<Part, "name"> & { name?: string }, extra: Part[] = []) {
  const { body, contentType } = multipart([{ name: "file", ...file }, ...extra]);
  return rawRequest(app, c, "POST", `/api/v1/tasks/${taskId}/attachments`, { body, headers: { "content-type": contentType } });
}

export const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 1, 2, 3, 4]);
export const PDF = new TextEncoder().encode("%PDF-1.7\n1 0 obj << >> endobj\ntrailer\n%%EOF\n");
export const ELF = new Uint8Array([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0x3e, 0]);
