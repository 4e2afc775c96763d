import { describe, expect, test } from "bun:test";
import { MultipartReader, boundaryOf, parsePartHeaders } from "../src/features/attachments/attachments.multipart";
import { cleanFilename, contentDisposition } from "../src/features/attachments/attachments.names";
import { decideType } from "../src/features/attachments/attachments.types";
import { multipart } from "./helpers/multipart";

// The streaming multipart reader cut at every possible chunk boundary: the parts' bytes must come
// out identical whatever the network did to the body.

const BOUNDARY = "----test-boundary-7MA4YWxkTrZu0gW";

function streamOf(body: Uint8Array, sizes: number[]): ReadableStream<Uint8Array> {
  let off = 0;
  let k = 0;
  return new ReadableStream({
    pull(ctrl) {
      if (off >= body.byteLength) return ctrl.close();
      const n = Math.max(1, sizes[k++ % sizes.length]!);
      ctrl.enqueue(body.slice(off, off + n));
      off += n;
    },
  });
}

async function readAll(body: Uint8Array, sizes: number[]): Promise<{ field: string; filename: string | null; data: Uint8Array }[]> {
  const r = new MultipartReader(streamOf(body, sizes), BOUNDARY, 10 * 1024 * 1024);
  const out = [];
  for (let p = await r.nextPart(); p; p = await r.nextPart()) {
    const chunks: Uint8Array[] = [];
    for await (const c of r.partData()) chunks.push(new Uint8Array(c));
    out.push({ field: p.field, filename: p.filename, data: new Uint8Array(Buffer.concat(chunks)) });
  }
  return out;
}

describe("MultipartReader", () => {
  // Data full of near-delimiters (a real one cannot occur in a part): CRLF, "--", the boundary
  // without the CRLF before it, CRLF-- and all but the last character of the boundary.
  const near = BOUNDARY.slice(0, -1);
  const tricky = new TextEncoder().encode(`a\r\n--${BOUNDARY.slice(0, 20)}x\r\n-\r\n--${near}y--${BOUNDARY}\r\n`);
  const payload = new Uint8Array([...tricky, 0, 255, 13, 10, 45, 45, ...new TextEncoder().encode(near), 13, 10, 45, 45, ...new TextEncoder().encode(near)]);
  const { body } = multipart(
    [
      { name: "note", data: "hello\r\nworld" },
      { name: "file", filename: "x.bin", type: "application/octet-stream", data: payload },
      { name: "empty", data: "" },
    ],
    BOUNDARY,
  );

  for (const sizes of [[1], [2], [3], [7], [13], [39], [40], [41], [64], [4096], [1, 50, 3, 200], [45, 1, 1, 90]]) {
    test(`chunks of ${sizes.join(",")} bytes`, async () => {
      const parts = await readAll(body, sizes);
      expect(parts.map((p) => p.field)).toEqual(["note", "file", "empty"]);
      expect(new TextDecoder().decode(parts[0]!.data)).toBe("hello\r\nworld");
      expect(parts[1]!.filename).toBe("x.bin");
      expect(parts[1]!.data).toEqual(payload);
      expect(parts[2]!.data.byteLength).toBe(0);
    });
  }

  test("every split point of a body with a large part", async () => {
    const big = new Uint8Array(3000);
    for (let i = 0; i < big.length; i++) big[i] = i % 7 === 0 ? 13 : i % 7 === 1 ? 10 : 45;
    const { body: b } = multipart([{ name: "file", filename: "f", data: big }], BOUNDARY);
    for (let cut = 1; cut < b.byteLength; cut += 37) {
      const parts = await readAll(b, [cut, b.byteLength]);
      expect(parts[0]!.data).toEqual(big);
    }
  });

  test("a body over the limit is 413 while reading", async () => {
    const { body: b } = multipart([{ name: "file", filename: "f", data: new Uint8Array(5000) }], BOUNDARY);
    const r = new MultipartReader(streamOf(b, [100]), BOUNDARY, 1000);
    await r.nextPart();
    let err: unknown;
    try {
      for await (const _ of r.partData()) {
        // reading
      }
    } catch (e) {
      err = e;
    }
    expect((err as { code?: string }).code).toBe("payload_too_large");
    expect(r.bytesRead).toBeLessThanOrEqual(1100);
  });

  test("boundary parameter: quoted, unquoted, missing, not multipart", () => {
    expect(boundaryOf(`multipart/form-data; boundary="a b"`)).toBe("a b");
    expect(boundaryOf("multipart/form-data; charset=utf-8; boundary=xyz")).toBe("xyz");
    expect(() => boundaryOf("multipart/form-data")).toThrow();
    expect(() => boundaryOf("application/json")).toThrow();
    expect(() => boundaryOf(null)).toThrow();
  });

  test("part headers: escaped quotes, filename* wins, browser %22 escapes", () => {
    expect(parsePartHeaders('Content-Disposition: form-data; name="file"; filename="a\\"b.txt"').filename).toBe('a"b.txt');
    expect(parsePartHeaders(`Content-Disposition: form-data; name="file"; filename="x.txt"; filename*=UTF-8''%C3%A9.txt`).filename).toBe("é.txt");
    expect(parsePartHeaders('Content-Disposition: form-data; name="file"; filename="a%22b.txt"').filename).toBe('a"b.txt');
    expect(parsePartHeaders('Content-Disposition: form-data; name="file"').filename).toBeNull();
  });
});

describe("names and types", () => {
  test("cleanFilename never keeps a path, a control or a bidi character", () => {
    for (const raw of ["../../x", "..\\x", "/etc/passwd", "C:\\x", "a\u0000b", "a\r\nb", "x\u202Eexe.txt", "\u2066a\u2069"]) {
      const c = cleanFilename(raw);
      expect(c).not.toMatch(/[\\/\u0000-\u001f\u202a-\u202e\u2066-\u2069]/);
      expect(c.length).toBeGreaterThan(0);
    }
    expect(cleanFilename(null)).toBe("file");
    expect(Array.from(cleanFilename("😀".repeat(300))).length).toBe(255);
  });

  test("contentDisposition is pure ASCII and decodes back to the name", () => {
    for (const name of ['a"b;c.txt', "中文 name.pdf", "x'y(1)*.png", "%41.txt"]) {
      const h = contentDisposition(name);
      expect(h).toMatch(/^attachment; filename\*=UTF-8''[\x21-\x7e]+$/);
      expect(decodeURIComponent(h.split("''")[1]!)).toBe(name);
    }
  });

  test("decideType: magic bytes decide; markup refused; unknown binaries refused", () => {
    const enc = (s: string) => new TextEncoder().encode(s);
    expect(decideType(new Uint8Array([0xff, 0xd8, 0xff, 0xe0]), "text/plain", "a.txt")).toEqual({ ok: true, contentType: "image/jpeg", text: false });
    expect(decideType(enc("GIF89a...."), null, "x")).toMatchObject({ ok: true, contentType: "image/gif" });
    expect(decideType(enc("RIFF\x10\x00\x00\x00WEBPVP8 "), null, "x")).toMatchObject({ ok: true, contentType: "image/webp" });
    expect(decideType(new Uint8Array([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]), null, "old.xls")).toMatchObject({ ok: true, contentType: "application/vnd.ms-excel" });
    expect(decideType(new Uint8Array([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]), null, "x.msi")).toMatchObject({ ok: false });
    expect(decideType(enc("<svg/>"), "text/plain", "a.txt")).toMatchObject({ ok: false });
    expect(decideType(enc("  \n<HTML>"), "text/plain", "a.txt")).toMatchObject({ ok: false });
    expect(decideType(enc("MZ\x90\x00"), "application/pdf", "a.pdf")).toMatchObject({ ok: false });
    // A multi-byte character cut by the sniff window is still text.
    expect(decideType(enc("é").subarray(0, 1), null, "a.txt")).toMatchObject({ ok: true, text: true });
  });
});
