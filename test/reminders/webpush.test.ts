import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createECDH, createHmac, createDecipheriv, createPublicKey, randomBytes, verify } from "node:crypto";
import { FixedClock, makeTestApp, setupAdmin, type TestClient } from "../helpers/app";
import { mkTask } from "../helpers/tasks";
import { Receiver, type Received } from "./helpers";

/**
 * Web Push against a push-service stand-in written from the RFCs with node:crypto (not web-push):
 * it decrypts the aes128gcm payload (RFC 8188 record, RFC 8291 key derivation) with the
 * subscription's own private key and auth secret, and checks the VAPID token (RFC 8292): an
 * ES256 JWT for the endpoint's origin, signed by the key in `k`, which is the server's public key.
 */
const b64u = (b: Buffer) => b.toString("base64url");
const hmac = (key: Buffer, data: Buffer) => createHmac("sha256", key).update(data).digest();

/** The browser's side of one subscription. */
const ua = createECDH("prime256v1");
ua.generateKeys();
const uaPublic = ua.getPublicKey();
const authSecret = randomBytes(16);

function decrypt(body: Buffer): unknown {
  const salt = body.subarray(0, 16);
  const rs = body.readUInt32BE(16);
  const idlen = body[20]!;
  const asPublic = body.subarray(21, 21 + idlen);
  const ciphertext = body.subarray(21 + idlen);
  expect(idlen).toBe(65);
  expect(rs).toBeGreaterThanOrEqual(ciphertext.length);
  const ecdhSecret = ua.computeSecret(asPublic);
  const prkKey = hmac(authSecret, ecdhSecret);
  const ikm = hmac(prkKey, Buffer.concat([Buffer.from("WebPush: info\0"), uaPublic, asPublic, Buffer.from([1])]));
  const prk = hmac(salt, ikm);
  const cek = hmac(prk, Buffer.from("Content-Encoding: aes128gcm\0\x01", "binary")).subarray(0, 16);
  const nonce = hmac(prk, Buffer.from("Content-Encoding: nonce\0\x01", "binary")).subarray(0, 12);
  const d = createDecipheriv("aes-128-gcm", cek, nonce);
  d.setAuthTag(ciphertext.subarray(ciphertext.length - 16));
  const plain = Buffer.concat([d.update(ciphertext.subarray(0, ciphertext.length - 16)), d.final()]);
  // The last record ends with the delimiter 0x02, then padding zeros.
  let end = plain.length - 1;
  while (end >= 0 && plain[end] === 0) end--;
  expect(plain[end]).toBe(2);
  return JSON.parse(plain.subarray(0, end).toString("utf8"));
}

function checkVapid(h: Record<string, string>, audience: string, serverKey: string, now: number): void {
  const m = /^vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/.exec(h["authorization"] ?? "");
  expect(m).not.toBeNull();
  const [, jwt, k] = m!;
  expect(k).toBe(serverKey);
  const [head, payload, sig] = jwt!.split(".");
  expect(JSON.parse(Buffer.from(head!, "base64url").toString())).toMatchObject({ typ: "JWT", alg: "ES256" });
  const claims = JSON.parse(Buffer.from(payload!, "base64url").toString()) as { aud: string; exp: number; sub: string };
  expect(claims.aud).toBe(audience);
  expect(claims.exp).toBeGreaterThan(now / 1000);
  expect(claims.exp).toBeLessThanOrEqual(now / 1000 + 24 * 3600);
  expect(claims.sub).toMatch(/^(mailto:|https:)/);
  const raw = Buffer.from(k!, "base64url");
  const key = createPublicKey({ key: { kty: "EC", crv: "P-256", x: b64u(raw.subarray(1, 33)), y: b64u(raw.subarray(33, 65)) }, format: "jwk" });
  expect(verify("sha256", Buffer.from(`${head}.${payload}`), { key, dsaEncoding: "ieee-p1363" }, Buffer.from(sig!, "base64url"))).toBe(true);
}

const clock = new FixedClock(new Date(Date.now()));
const app = makeTestApp({ clock });
app.handle.channels.publicUrl = "http://localhost";
const push = new Receiver();
let alice: TestClient;

beforeAll(async () => {
  alice = await setupAdmin(app);
  push.answer = () => new Response(null, { status: 201 });
});
afterAll(() => {
  push.stop();
  app.close();
});

describe("Web Push", () => {
  test("the payload decrypts with the subscription's keys to the webhook body; the VAPID JWT verifies with the server's key", async () => {
    const key = (await alice.get("/api/v1/push/vapid-public-key")).body.key as string;
    const endpoint = `${push.url}/push/sub-1`;
    const ch = await alice.post("/api/v1/notification-channels", {
      type: "webpush",
      name: "This browser",
      config: { subscription: { endpoint, expirationTime: null, keys: { p256dh: b64u(uaPublic), auth: b64u(authSecret) } } },
    });
    expect(ch.status).toBe(201);
    expect(ch.body.config).toEqual({ subscription: { endpoint } });
    expect(ch.text).not.toContain(b64u(authSecret));

    expect((await alice.post(`/api/v1/notification-channels/${ch.body.id}/test`)).status).toBe(200);
    const t = await mkTask(alice, { title: "Push me", due_at: new Date(clock.now().getTime() + 3600_000).toISOString() });
    await alice.post(`/api/v1/tasks/${t.id}/reminders`, { kind: "before_due", minutes_before: 60 });
    await app.handle.scheduler.runDue();
    const got: Received[] = push.got.filter((g) => g.path === "/push/sub-1");
    expect(got).toHaveLength(2);
    for (const g of got) {
      expect(g.headers["content-encoding"]).toBe("aes128gcm");
      expect(Number(g.headers["ttl"])).toBeGreaterThan(0);
      checkVapid(g.headers, push.url, key, clock.now().getTime());
    }
    expect(decrypt(got[0]!.raw)).toMatchObject({ event: "test", actions: null });
    const body = decrypt(got[1]!.raw) as Record<string, unknown>;
    const d = (await alice.get("/api/v1/deliveries")).body.items[0];
    expect(d).toMatchObject({ status: "delivered", channel_id: ch.body.id });
    expect(body).toMatchObject({ event: "reminder", id: d.id, reminder_id: d.reminder_id, late: false, target: { type: "task", id: t.id, title: "Push me" } });
    expect((body.actions as { done: string }).done).toStartWith("http://localhost/api/v1/reminder-actions/");

    // The push service says the subscription is gone (410): failed at once, the channel disabled.
    push.answer = () => new Response(null, { status: 410 });
    const t2 = await mkTask(alice, { title: "Gone", due_at: new Date(clock.now().getTime() + 7200_000).toISOString() });
    await alice.post(`/api/v1/tasks/${t2.id}/reminders`, { kind: "before_due", minutes_before: 120 });
    await app.handle.scheduler.runDue();
    const gone = (await alice.get("/api/v1/deliveries")).body.items[0];
    expect(gone).toMatchObject({ status: "failed", attempts: 1 });
    expect(gone.last_error).toContain("expired (410)");
    expect((await alice.get("/api/v1/notification-channels")).body.items[0].enabled).toBe(false);
  });
});
