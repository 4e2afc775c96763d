// Tokens and the backups (issue 16): a token is a credential, like a session or the password, and
// follows them. A user's backup (app-backup v2) and the legacy export hold none; a restore of either
// leaves the account's tokens as they are. The stored hash is keyed by the server secret
// (secret.key): a whole-instance snapshot carries that secret, so the tokens keep working after
// `app restore`; the database alone on a server with another secret accepts none of them.
import { describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { createApp } from "../../src/app";
import { Config } from "../../src/config";
import { ServerSecret } from "../../src/core/secret";
import { makeTestApp, setupAdmin, type TestApp } from "../helpers/app";
import { expectProblem } from "../helpers/problem";
import { entriesOf, exportBytes, preflight, seed } from "../backup/helpers";

async function withApp(fn: (app: TestApp) => Promise<void>): Promise<void> {
  const app = makeTestApp();
  try {
    await fn(app);
  } finally {
    app.close();
  }
}

/** A GET with only a Bearer token, on `handle` (another server over the same database). */
async function bearerStatus(handle: { fetch: TestApp["handle"]["fetch"] }, secret: string): Promise<{ status: number; code?: string }> {
  const res = await handle.fetch(new Request("http://localhost/api/v1/lists", { headers: { authorization: `Bearer ${secret}` } }), { requestIP: () => ({ address: "127.0.0.1" }) });
  const body = (await res.json()) as { code?: string };
  return { status: res.status, code: res.status === 200 ? undefined : body.code };
}

describe("tokens and backups", () => {
  test("a user's backup holds no token; a replace restore keeps the account's tokens working", () =>
    withApp(async (app) => {
      const c = await setupAdmin(app);
      await seed(c);
      const t = (await c.post("/api/v1/tokens", { name: "phone-token-name", scopes: ["read"] })).body as { id: string; secret: string };
      const zip = await exportBytes(app, c);
      const entries = entriesOf(zip);
      const all = Object.values(entries).map((b) => Buffer.from(b).toString("latin1")).join("\n");
      expect(Object.keys(entries).some((n) => n.includes("token"))).toBe(false);
      expect(all).not.toContain("phone-token-name");
      expect(all).not.toContain(t.secret.slice(4));
      const pf = await preflight(c, zip, "replace");
      expect(pf.status).toBe(200);
      expect((await c.post("/api/v1/backup/restore", { preflight_token: pf.body.preflight_token, mode: "replace" })).status).toBe(200);
      expect((await c.get("/api/v1/tokens")).body.items.map((x: { id: string }) => x.id)).toEqual([t.id]);
      expect((await bearerStatus(app.handle, t.secret)).status).toBe(200);
    }));

  test("the legacy export holds no token", () =>
    withApp(async (app) => {
      const c = await setupAdmin(app);
      const t = (await c.post("/api/v1/tokens", { name: "phone-token-name", scopes: ["read"] })).body as { secret: string };
      for (const path of ["/api/v1/export", "/api/v1/export.csv"]) {
        const r = await c.get(path);
        expect(r.status).toBe(200);
        expect(r.text).not.toContain("phone-token-name");
        expect(r.text).not.toContain(t.secret.slice(4));
      }
    }));

  test("the same database with the same secret.key (a whole-instance restore) accepts the tokens; with another secret.key none", () =>
    withApp(async (app) => {
      const c = await setupAdmin(app);
      const t = (await c.post("/api/v1/tokens", { name: "phone", scopes: ["read"] })).body as { id: string; secret: string };
      const config = Config.parse({ dataDir: app.dir, logFormat: "off", argon2MemoryKiB: 1024, argon2TimeCost: 1 });

      const same = createApp({ db: app.db, config, secret: ServerSecret.loadOrCreate(app.dir) });
      try {
        expect(await bearerStatus(same, t.secret)).toEqual({ status: 200, code: undefined });
      } finally {
        same.close();
      }
      const other = createApp({ db: app.db, config, secret: ServerSecret.fromBytes(randomBytes(32)) });
      try {
        expect(await bearerStatus(other, t.secret)).toEqual({ status: 401, code: "unauthenticated" });
      } finally {
        other.close();
      }
      // Still listed on the original server (and revocable there).
      expect((await c.get("/api/v1/tokens")).body.items).toHaveLength(1);
      expectProblem(await app.client().get("/api/v1/lists", { headers: { authorization: "Bearer app_x" } }), 401, "unauthenticated");
    }));
});
