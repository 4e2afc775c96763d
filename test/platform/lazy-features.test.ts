import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { AppProcess, serverEnv } from "../helpers/spawn";

/**
 * Rarely used features are loaded on their first use (src/core/lazy.ts): the backup service, the
 * legacy export/restore and the lunar calendar (lunar-typescript); their heavy parts (ZIP,
 * validation, import, export, fflate, the records' schemas) only ever in the job worker. A server
 * that has just started must not hold them (its resident memory), and the first request that
 * needs each must work, also in the compiled executable (APP_EXE=/path/to/app runs it instead of
 * `bun src/main.ts`).
 */

const ROOT = resolve(import.meta.dir, "../..");
const roots: string[] = [];
afterAll(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

const cleanEnv = () => serverEnv();

describe("features loaded on first use", () => {
  test("a fresh app holds none of them; each loads when first needed, and only then", async () => {
    const p = Bun.spawn([process.execPath, join(import.meta.dir, "lazy-features.probe.ts")], { cwd: ROOT, env: cleanEnv(), stdout: "pipe", stderr: "pipe" });
    const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
    expect(err).toBe("");
    expect(code).toBe(0);
    const r = JSON.parse(out.trim().split("\n").pop()!);
    expect(r.atStart).toEqual([]);
    // Gregorian countdowns never need the lunar calendar.
    expect(r.gregorian).toEqual({ create: 201, list: 200, loaded: [] });
    expect(r.lunar.status).toBe(201);
    expect(r.lunar.body.lunar).toEqual({ month: 1, day: 1, leap: false });
    expect(r.lunar.loaded).toEqual(["lunar", "lunarTypescript"]);
    // The legacy file and the backup archive are made in the job worker (src/jobs.worker.ts): the
    // main thread loads only their thin services, never the records' schemas or fflate.
    expect(r.legacy).toEqual({ status: 200, countdowns: 2, loaded: ["legacy", "lunar", "lunarTypescript"] });
    expect(r.backup.status).toBe(200);
    expect(r.backup.type).toBe("application/zip");
    expect(r.backup.loaded).toEqual(["backup", "legacy", "lunar", "lunarTypescript"]);
    expect(r.feed).toEqual({ create: 201, before: false, fetch: 200, after: true });
    // CalDAV loads on the first request to its paths (an OPTIONS probe, as clients start), not before.
    expect(r.dav).toEqual({ before: false, options: 200, after: true });
  });

  test("the first lunar countdown, legacy export and restore, backup export and API document of a started server work", async () => {
    const dir = mkdtempSync(join(tmpdir(), "app-lazy-"));
    roots.push(dir);
    const server = await AppProcess.start(["serve", "--data-dir", dir, "--port", "0", "--log-format", "json"], { env: cleanEnv() });
    const { proc, base } = server;
    try {
      expect(base).toMatch(/^http:\/\//);

      const jar = new Map<string, string>();
      const call = async (method: string, path: string, body?: unknown) => {
        const headers: Record<string, string> = { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join("; ") };
        if (method !== "GET") headers["x-csrf-token"] = jar.get("app_csrf") ?? "";
        if (body !== undefined) headers["content-type"] = "application/json";
        const res = await fetch(base + path, { method, headers, body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body) });
        for (const c of res.headers.getSetCookie()) {
          const cookie = Bun.Cookie.parse(c);
          jar.set(cookie.name, cookie.value);
        }
        return res;
      };

      expect((await call("POST", "/api/v1/setup/initialize", { username: "owner", password: "correct horse battery" })).status).toBe(201);
      const created = await call("POST", "/api/v1/countdowns", { name: "Spring Festival", date: "2024-02-10", repeat: "yearly", calendar: "lunar" });
      expect(created.status).toBe(201);
      const countdown = (await created.json()) as { lunar: unknown; next_date: string | null };
      expect(countdown.lunar).toEqual({ month: 1, day: 1, leap: false });
      expect(countdown.next_date).not.toBeNull();
      expect(((await (await call("GET", "/api/v1/countdowns")).json()) as { items: unknown[] }).items).toHaveLength(1);

      const legacy = await call("GET", "/api/v1/export");
      expect(legacy.status).toBe(200);
      const file = await legacy.text();
      expect((JSON.parse(file) as { countdowns: { calendar: string }[] }).countdowns.map((c) => c.calendar)).toEqual(["lunar"]);
      const csv = await call("GET", "/api/v1/export.csv");
      expect(csv.status).toBe(200);
      expect(await csv.text()).toContain("countdown");
      // The restore checks the lunar countdown against the calendar; a merge skips what is there.
      const restored = await call("POST", "/api/v1/restore?mode=merge", file);
      expect(restored.status).toBe(200);
      expect(((await restored.json()) as { skipped: { countdowns: number } }).skipped.countdowns).toBe(1);

      const zip = await call("GET", "/api/v1/backup/export.zip");
      expect(zip.status).toBe(200);
      expect([...new Uint8Array(await zip.arrayBuffer()).subarray(0, 4)]).toEqual([0x50, 0x4b, 0x03, 0x04]);

      // The legacy file's schema is documented from its lazily loaded module.
      const api = await call("GET", "/api/openapi.json");
      expect(api.status).toBe(200);
      const schemas = ((await api.json()) as { components: { schemas: Record<string, unknown> } }).components.schemas;
      expect(schemas.LegacyExport).toBeDefined();
    } finally {
      proc.kill("SIGTERM");
      await proc.exited;
    }
  });
});
