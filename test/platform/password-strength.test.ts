import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { ADMIN, dump, makeTestApp, setupAdmin, type TestApp } from "../helpers/app";
import { serve, SocketClient, type ServedApp } from "../helpers/server";
import { expectNoInternals } from "../helpers/problem";

// docs/spec/contract.md §12 (last amendment), ASVS 6.2.4: setup, user creation, password change and the
// reset-password command refuse passwords that are common or easy to guess, with 422
// validation_failed on the password's field saying why. The rule (core/auth/password-strength.ts):
// zxcvbn score ≥ 2 with the username and display name as known words.

let app: TestApp | null = null;
let server: ServedApp | null = null;
afterEach(() => {
  server?.stop();
  app?.close();
  server = null;
  app = null;
});
const roots: string[] = [];
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

function start(): { app: TestApp; server: ServedApp; client: () => SocketClient } {
  app = makeTestApp();
  server = serve(app);
  const base = server.base;
  return { app, server, client: () => new SocketClient(base) };
}

/** 422 validation_failed naming `path`, with a reason, as problem+json. */
function expectWeak(r: { status: number; headers: Headers; json: { code?: string; errors?: { path: string; message: string }[]; detail?: string }; text: string }, path: string, reason: RegExp): void {
  expect({ status: r.status, code: r.json?.code }).toEqual({ status: 422, code: "validation_failed" });
  expect(r.headers.get("content-type")).toStartWith("application/problem+json");
  expect(r.json.errors).toEqual([{ path, message: expect.stringMatching(/^too easy to guess: /) }]);
  expect(r.json.errors![0]!.message).toMatch(reason);
  expect(r.json.detail).toContain("too easy to guess");
  expectNoInternals(r.text);
}

const COMMON = [
  ["12345678", /ten most used/],
  ["password", /ten most used/],
  ["P@ssw0rd", /commonly used/],
  ["letmein123", /commonly used/],
  ["qwertyuiop", /most used|keyboard/],
  ["aaaaaaaaaa", /repeats/],
  ["abcdefghij", /sequence/],
] as const;

describe("setup", () => {
  for (const [password, reason] of COMMON) {
    test(`${JSON.stringify(password)} is refused; nothing is created`, async () => {
      const { app, client } = start();
      const before = dump(app.db);
      expectWeak(await client().post("/api/v1/setup/initialize", { username: "owner", password }), "password", reason);
      expect(dump(app.db)).toEqual(before);
      expect((await client().get("/api/v1/setup/status")).json).toEqual({ initialized: false });
    });
  }

  test("a password built on the username or display name is refused; a passphrase is accepted", async () => {
    const { client } = start();
    expectWeak(await client().post("/api/v1/setup/initialize", { username: "marguerite", password: "marguerite1" }), "password", /username or the display name/);
    expectWeak(await client().post("/api/v1/setup/initialize", { username: "owner", display_name: "Zebulon", password: "zebulon2026" }), "password", /username or the display name/);
    expect((await client().post("/api/v1/setup/initialize", { username: "owner", password: "plum orbit canvas 42" })).status).toBe(201);
  });
});

describe("users, change-password", () => {
  test("POST /users refuses a common password; nothing is created", async () => {
    const { app, server } = start();
    const admin = new SocketClient(server.base);
    expect((await admin.post("/api/v1/setup/initialize", ADMIN)).status).toBe(201);
    const before = dump(app.db);
    expectWeak(await admin.post("/api/v1/users", { username: "bob", password: "password" }), "password", /ten most used/);
    expectWeak(await admin.post("/api/v1/users", { username: "quillon", password: "quillon123" }), "password", /username/);
    expect(dump(app.db)).toEqual(before);
    expect((await admin.post("/api/v1/users", { username: "bob", password: "bob's long password" })).status).toBe(201);
  });

  test("change-password refuses a common new password (path new_password); the password and sessions stay", async () => {
    const { app, server } = start();
    await setupAdmin(app);
    const c = new SocketClient(server.base);
    expect((await c.post("/api/v1/auth/login", ADMIN)).status).toBe(200);
    const before = dump(app.db, ["audit_logs", "__drizzle_migrations"]);
    const sessionsBefore = app.db.sqlite.query("SELECT id, revoked_at, token_hash FROM sessions ORDER BY id").all();
    expectWeak(await c.post("/api/v1/auth/change-password", { current_password: ADMIN.password, new_password: "12345678" }), "new_password", /ten most used/);
    expectWeak(await c.post("/api/v1/auth/change-password", { current_password: ADMIN.password, new_password: "owner2024" }), "new_password", /username|commonly|year/);
    expect(app.db.sqlite.query("SELECT id, revoked_at, token_hash FROM sessions ORDER BY id").all()).toEqual(sessionsBefore);
    const { sessions: _s, ...rest } = dump(app.db, ["audit_logs", "__drizzle_migrations"]);
    const { sessions: _b, ...restBefore } = before;
    expect(rest).toEqual(restBefore);
    // A wrong current password is still 401 first (the strength rule is not an oracle for strangers).
    const wrong = await c.post("/api/v1/auth/change-password", { current_password: "not it at all", new_password: "12345678" });
    expect({ status: wrong.status, code: wrong.json.code }).toEqual({ status: 401, code: "invalid_credentials" });
    expect((await c.post("/api/v1/auth/change-password", { current_password: ADMIN.password, new_password: "plum orbit canvas 42" })).status).toBe(204);
  });
});

describe("reset-password command", () => {
  test("refuses a common password on standard input: exit non-zero, says why, nothing changed", async () => {
    const a = makeTestApp();
    await setupAdmin(a);
    const dataDir = a.dir;
    roots.push(dataDir);
    const hashOf = () => {
      const db = new Database(join(dataDir, "app.db"), { readonly: true });
      try {
        return db.query("SELECT password_hash FROM users").get();
      } finally {
        db.close();
      }
    };
    const before = hashOf();
    a.db.close();
    const main = resolve(import.meta.dir, "../../src/main.ts");
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("APP_")) env[k] = v;
    Object.assign(env, { APP_ARGON2_MEMORY_KIB: "1024", APP_ARGON2_TIME_COST: "1" });
    const runReset = async (stdin: string) => {
      const p = Bun.spawn([process.execPath, main, "reset-password", "owner", "--data-dir", dataDir], { env, stdin: new Blob([stdin]), stdout: "pipe", stderr: "pipe" });
      const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
      return { stdout, stderr, code };
    };
    const weak = await runReset("12345678\n");
    expect(weak.code).not.toBe(0);
    expect(weak.stderr).toContain("too easy to guess");
    expect(weak.stderr).toContain("password");
    expect(hashOf()).toEqual(before);
    const strong = await runReset("plum orbit canvas 42\n");
    expect(strong.code).toBe(0);
    expect(hashOf()).not.toEqual(before);
  }, 30_000);
});

describe("documentation and loading", () => {
  test("the rule is in the OpenAPI document (the password fields' description)", async () => {
    const { server } = start();
    const c = new SocketClient(server.base);
    expect((await c.post("/api/v1/setup/initialize", ADMIN)).status).toBe(201);
    const docBody = (await c.get("/api/openapi.json")).json;
    const setupSchema = docBody.paths["/api/v1/setup/initialize"].post.requestBody.content["application/json"].schema;
    const text = JSON.stringify(setupSchema.$ref ? docBody.components.schemas[setupSchema.$ref.split("/").pop()] : setupSchema);
    expect(text).toContain("too easy to guess");
    expect(text).toContain("score 2");
    const change = JSON.stringify(docBody.paths["/api/v1/auth/change-password"].post.requestBody);
    expect(change + JSON.stringify(docBody.components.schemas)).toContain("too easy to guess");
  });

  test("the dictionaries are loaded on the first password check, not at start-up", async () => {
    const probe = `
      const { mkdtempSync } = require("node:fs");
      const { join } = require("node:path");
      const { tmpdir } = require("node:os");
      const { createApp } = await import(${JSON.stringify(resolve(import.meta.dir, "../../src/app.ts"))});
      const { Config } = await import(${JSON.stringify(resolve(import.meta.dir, "../../src/config.ts"))});
      const { migrate, openDatabase } = await import(${JSON.stringify(resolve(import.meta.dir, "../../src/core/db.ts"))});
      const { ServerSecret } = await import(${JSON.stringify(resolve(import.meta.dir, "../../src/core/secret.ts"))});
      const { Logger } = await import(${JSON.stringify(resolve(import.meta.dir, "../../src/core/log.ts"))});
      const dir = mkdtempSync(join(tmpdir(), "app-zx-"));
      const db = openDatabase(join(dir, "app.db"));
      migrate(db);
      const app = createApp({ db, config: Config.parse({ dataDir: dir, logFormat: "off", argon2MemoryKiB: 1024, argon2TimeCost: 1 }), secret: ServerSecret.loadOrCreate(dir), logger: new Logger("off") });
      const zx = () => Object.keys(require.cache).filter((k) => k.includes("@zxcvbn-ts")).length > 0;
      const atStart = zx();
      const r = await app.fetch(new Request("http://localhost/api/v1/setup/initialize", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ username: "owner", password: "plum orbit canvas 42" }) }));
      console.log(JSON.stringify({ atStart, status: r.status, afterSetup: zx() }));
      db.close();
      require("node:fs").rmSync(dir, { recursive: true, force: true });
    `;
    const p = Bun.spawn([process.execPath, "-e", probe], { stdout: "pipe", stderr: "pipe", env: { ...process.env } });
    const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
    expect({ code, err }).toEqual({ code: 0, err: "" });
    expect(JSON.parse(out.trim().split("\n").pop()!)).toEqual({ atStart: false, status: 201, afterSetup: true });
  }, 30_000);
});
