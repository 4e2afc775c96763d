import { afterAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { rawRequest, setupOwner, spawnServer } from "../helpers/spawn";
import { PNG, multipart } from "../helpers/multipart";

// Requests over a real stack on a shared, loaded machine: generous per-test time.
setDefaultTimeout(60_000);

/**
 * Issue 11 against the server as users run it (`bun src/main.ts`, or APP_EXE=dist/app): a real
 * listening socket, raw requests where the Host header matters.
 */

// NODE_ENV says development: the server must run Elysia in production mode all the same.
const srv = await spawnServer({ env: { NODE_ENV: "development" } });
afterAll(() => srv.stop());
const owner = await setupOwner(srv.base);
const api = (path: string) => `${srv.base}/api/v1${path}`;

async function problemOf(r: Response): Promise<{ code: string; detail?: string; status: number }> {
  expect(r.headers.get("content-type")).toStartWith("application/problem+json");
  return (await r.json()) as { code: string; detail?: string; status: number };
}

describe("production mode", () => {
  test("Elysia runs in production mode whatever NODE_ENV says", () => {
    const line = srv.lines.find((l) => l.includes('"listening"'))!;
    expect(JSON.parse(line).elysia_mode).toBe("production");
  });
});

describe("JSON nesting limit (64)", () => {
  const deepLogin = (n: number) => `{"password":${"[".repeat(n)}${"]".repeat(n)}}`;
  const login = (body: string) => fetch(api("/auth/login"), { method: "POST", headers: { "content-type": "application/json" }, body });

  for (const n of [30_000, 40_000]) {
    test(`the issue's login with ${n} nested arrays is 400 malformed_request with a small body`, async () => {
      const r = await login(deepLogin(n));
      const text = await r.text();
      expect(r.status).toBe(400);
      expect(text.length).toBeLessThan(1000);
      const p = JSON.parse(text);
      expect(p.code).toBe("malformed_request");
      expect(p.detail).toContain("64");
      // The server is still there, and answers at once.
      expect((await fetch(api("/health/live"))).status).toBe(200);
    });
  }

  test("64 levels are parsed (then validated); 65 are refused before parsing", async () => {
    // The object is level 1, so 63 arrays make 64 levels.
    const at = (arrays: number) => `{"username":"owner","password":${"[".repeat(arrays)}${"]".repeat(arrays)}}`;
    const ok = await login(at(63));
    expect(ok.status).toBe(422);
    expect((await problemOf(ok)).code).toBe("validation_failed");
    const deep = await login(at(64));
    expect(deep.status).toBe(400);
    const p = await problemOf(deep);
    expect(p.code).toBe("malformed_request");
    expect(p.detail).toBe("the JSON body is nested deeper than 64 levels");
    // Objects count as arrays do.
    const objects = `{"username":"owner","password":${'{"a":'.repeat(64)}1${"}".repeat(64)}}`;
    expect((await problemOf(await login(objects))).code).toBe("malformed_request");
  });

  test("brackets inside strings, escaped quotes included, do not count", async () => {
    const password = `${"[".repeat(300)}\\"${"{".repeat(300)}\\\\`;
    const r = await login(`{"username":"nobody","password":"${password}"}`);
    // Parsed and validated as usual: no such user.
    expect(r.status).toBe(401);
    expect((await problemOf(r)).code).toBe("invalid_credentials");
  });

  test("a legacy restore whose record is nested deeper than 64 levels is refused the same way, data unchanged", async () => {
    const before = await (await fetch(api("/tasks"), { headers: owner.headers })).json();
    for (const n of [70, 100_000]) {
      const body = `{"format":"app-legacy","version":1,"tasks":[{"title":"x","description":${"[".repeat(n)}${"]".repeat(n)}}]}`;
      const r = await fetch(api("/restore?mode=merge"), { method: "POST", headers: { ...owner.headers, "content-type": "application/json" }, body });
      expect(r.status).toBe(400);
      const p = await problemOf(r);
      expect(p.code).toBe("malformed_request");
      expect(p.detail).toBe("the JSON body is nested deeper than 64 levels");
    }
    expect(await (await fetch(api("/tasks"), { headers: owner.headers })).json()).toEqual(before);
  });
});

describe("the guard and the router see the same path, whatever the Host", () => {
  const hosts = ["nas", "a", "a.b", "nas:8080", "[::1]:8080", "192.168.1.10", ""];
  for (const host of hosts) {
    test(`Host: ${JSON.stringify(host)}`, async () => {
      const get = (path: string, extra = "") => rawRequest(srv.port, `GET ${path} HTTP/1.1\r\nHost: ${host}${extra}`);
      const me = await get("/api/v1/me");
      expect(me.status).toBe(401);
      expect(me.headers.get("content-type")).toStartWith("application/problem+json");
      expect(JSON.parse(me.body).code).toBe("unauthenticated");

      const signedIn = await get("/api/v1/me", `\r\nCookie: ${owner.cookie}`);
      expect(signedIn.status).toBe(200);
      expect(JSON.parse(signedIn.body).username).toBe("owner");

      const task = await get("/api/v1/tasks?limit=1", `\r\nCookie: ${owner.cookie}`);
      expect(task.status).toBe(200);
      expect(JSON.parse(task.body).items).toBeArray();

      const live = await get("/api/v1/health/live");
      expect(live.status).toBe(200);
      expect(live.headers.get("content-type")).toStartWith("application/json");

      const doc = await get("/api/openapi.json");
      expect(doc.status).toBe(401);

      const web = await get("/");
      expect(web.status).toBe(200);
      expect(web.headers.get("content-type")).toStartWith("text/html");

      // A path the guard thinks is outside /api must not be routed to an /api endpoint.
      for (const path of ["/ab/api/openapi.json", "/abc/api/v1/me", "/x/api/v1/tasks"]) {
        const r = await get(path);
        expect(r.body).not.toContain('"openapi"');
        expect(r.body).not.toContain('"items"');
      }
    });
  }

  test("a streamed upload (multipart) and a JSON write through Host: nas reach their routes whole", async () => {
    const cookieAndCsrf = `Cookie: ${owner.cookie}\r\nX-CSRF-Token: ${owner.csrf}`;
    const created = await rawRequest(
      srv.port,
      `POST /api/v1/tasks HTTP/1.1\r\nHost: nas\r\n${cookieAndCsrf}\r\nContent-Type: application/json`,
      JSON.stringify({ title: "short host" }),
    );
    expect(created.status).toBe(201);
    const task = JSON.parse(created.body) as { id: string; title: string };
    expect(task.title).toBe("short host");
    const data = new Uint8Array(300_000);
    data.set(PNG);
    for (let i = PNG.length; i < data.length; i++) data[i] = i % 251;
    const { body, contentType } = multipart([{ name: "file", filename: "big.png", type: "image/png", data }]);
    const up = await rawRequest(srv.port, `POST /api/v1/tasks/${task.id}/attachments HTTP/1.1\r\nHost: nas\r\n${cookieAndCsrf}\r\nContent-Type: ${contentType}`, body);
    expect(up.status).toBe(201);
    const a = JSON.parse(up.body) as { id: string; size: number };
    expect(a.size).toBe(data.length);
    const back = await fetch(api(`/attachments/${a.id}`), { headers: owner.headers });
    expect(new Uint8Array(await back.arrayBuffer())).toEqual(data);
    // A download keeps its own sandboxing policy, and cannot be framed either.
    expect(back.headers.get("content-security-policy")).toContain("sandbox");
    expect(back.headers.get("x-frame-options")).toBe("DENY");
    expect(back.headers.get("cross-origin-resource-policy")).toBe("same-origin");
  });

  test("login through a proxy with a short host name (Host: nas, Origin: http://nas)", async () => {
    const body = JSON.stringify({ username: "owner", password: "h11-Owner-passphrase-4821" });
    const r = await rawRequest(
      srv.port,
      `POST /api/v1/auth/login HTTP/1.1\r\nHost: nas\r\nOrigin: http://nas\r\nSec-Fetch-Site: same-origin\r\nContent-Type: application/json`,
      body,
    );
    expect(r.status).toBe(200);
    const cross = await rawRequest(srv.port, `POST /api/v1/auth/login HTTP/1.1\r\nHost: nas\r\nOrigin: http://evil\r\nContent-Type: application/json`, body);
    expect(cross.status).toBe(403);
    expect(JSON.parse(cross.body).code).toBe("csrf_failed");
  });
});

describe("response headers", () => {
  test("API answers (success and problem) carry Referrer-Policy, CORP and a CSP with frame-ancestors 'none'", async () => {
    for (const r of [await fetch(api("/health/live")), await fetch(api("/me")), await fetch(api("/tasks"), { headers: owner.headers })]) {
      expect(r.headers.get("referrer-policy")).toBe("no-referrer");
      expect(r.headers.get("cross-origin-resource-policy")).toBe("same-origin");
      expect(r.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
      expect(r.headers.get("x-frame-options")).toBe("DENY");
      expect(r.headers.get("x-content-type-options")).toBe("nosniff");
    }
  });

  test("the web page and the API docs page cannot be framed either", async () => {
    for (const path of ["/", "/api/docs"]) {
      const r = await fetch(`${srv.base}${path}`, { headers: owner.headers });
      expect(r.status).toBe(200);
      expect(r.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
      expect(r.headers.get("cross-origin-resource-policy")).toBe("same-origin");
    }
  });
});

describe("heavy GETs refuse cross-site requests", () => {
  for (const path of ["/backup/export.zip", "/export", "/export.csv"]) {
    test(`GET ${path}`, async () => {
      const cross = await fetch(api(path), { headers: { ...owner.headers, "sec-fetch-site": "cross-site" } });
      expect(cross.status).toBe(403);
      const p = await problemOf(cross);
      expect(p.code).toBe("csrf_failed");
      // Same for the path the router also takes (trailing slash), and for HEAD.
      expect((await fetch(api(`${path}/`), { headers: { ...owner.headers, "sec-fetch-site": "cross-site" } })).status).toBe(403);
      expect((await fetch(api(path), { method: "HEAD", headers: { ...owner.headers, "sec-fetch-site": "cross-site" } })).status).toBe(403);
      // Anonymous: still 401 first? No: a cross-site heavy GET is refused whoever sends it.
      for (const site of ["same-origin", "same-site", "none", undefined]) {
        const headers: Record<string, string> = { ...owner.headers };
        if (site) headers["sec-fetch-site"] = site;
        const ok = await fetch(api(path), { headers });
        expect(ok.status).toBe(200);
        await ok.arrayBuffer();
      }
    });
  }

  test("other GETs are not affected (a link from another site may open the app)", async () => {
    const r = await fetch(api("/tasks"), { headers: { ...owner.headers, "sec-fetch-site": "cross-site" } });
    expect(r.status).toBe(200);
  });
});
