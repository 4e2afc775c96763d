// Run by lazy-features.test.ts in a process of its own (the registry of loaded modules is per
// process): builds the app as the server does, then reports which rarely used modules are loaded at
// start and after each first use. Prints one JSON line.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp } from "../../src/app";
import { Config } from "../../src/config";
import { migrate, openDatabase } from "../../src/core/db";
import { Logger } from "../../src/core/log";
import { ServerSecret } from "../../src/core/secret";

/** Modules that must wait for their first use, by a part of their path. */
const WATCHED = {
  backup: "/src/transfer/backup/backup.service.ts",
  backupRecords: "/src/transfer/backup/backup.records.ts",
  fflate: "/node_modules/fflate/",
  // Import from other apps (issue 17): its service, its readers and ical.js wait for the first import.
  importer: "/src/transfer/import/import.service.ts",
  importReaders: "/src/transfer/import/import.read.ts",
  icalJs: "/node_modules/ical.js/",
  chrono: "/node_modules/chrono-node/",
  legacy: "/src/transfer/legacy/legacy.service.ts",
  legacyRecords: "/src/transfer/legacy/legacy.records.ts",
  lunar: "/src/features/countdowns/lunar-calendar.ts",
  lunarTypescript: "/node_modules/lunar-typescript/",
  // CalDAV (issue 16): its service and fast-xml-parser wait for the first request to /dav/.
  dav: "/src/features/dav/dav.service.ts",
  fastXml: "/node_modules/fast-xml-parser/",
};
type Watched = keyof typeof WATCHED;

const loaded = (): Watched[] => {
  const keys = Object.keys(require.cache);
  return (Object.keys(WATCHED) as Watched[]).filter((w) => keys.some((k) => k.includes(WATCHED[w])));
};

const dir = mkdtempSync(join(tmpdir(), "app-lazy-"));
const db = openDatabase(join(dir, "app.db"));
let app: ReturnType<typeof createApp> | null = null;
try {
  migrate(db);
  const config = Config.parse({ dataDir: dir, logFormat: "off", argon2MemoryKiB: 1024, argon2TimeCost: 1 });
  const handle = createApp({ db, config, secret: ServerSecret.loadOrCreate(dir), logger: new Logger("off") });
  app = handle;

  const jar = new Map<string, string>();
  const call = async (method: string, path: string, json?: unknown): Promise<{ status: number; type: string; text: string }> => {
    const headers: Record<string, string> = { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join("; ") };
    if (method !== "GET") headers["x-csrf-token"] = jar.get("app_csrf") ?? "";
    if (json !== undefined) headers["content-type"] = "application/json";
    const req = new Request(`http://localhost${path}`, { method, headers, body: json === undefined ? undefined : JSON.stringify(json) });
    const res = await handle.fetch(req, { requestIP: () => ({ address: "127.0.0.1" }) });
    for (const c of res.headers.getSetCookie()) {
      const cookie = Bun.Cookie.parse(c);
      jar.set(cookie.name, cookie.value);
    }
    return { status: res.status, type: res.headers.get("content-type") ?? "", text: await res.text() };
  };

  const report: Record<string, unknown> = { atStart: loaded() };
  await call("POST", "/api/v1/setup/initialize", { username: "owner", password: "correct horse battery" });
  const gregorian = await call("POST", "/api/v1/countdowns", { name: "Gregorian", date: "2020-02-29", repeat: "yearly", type: "birthday" });
  const list = await call("GET", "/api/v1/countdowns");
  report.gregorian = { create: gregorian.status, list: list.status, loaded: loaded() };
  const lunar = await call("POST", "/api/v1/countdowns", { name: "Lunar", date: "2024-02-10", repeat: "yearly", calendar: "lunar" });
  report.lunar = { status: lunar.status, body: JSON.parse(lunar.text), loaded: loaded() };
  const legacy = await call("GET", "/api/v1/export");
  report.legacy = { status: legacy.status, countdowns: (JSON.parse(legacy.text) as { countdowns: unknown[] }).countdowns.length, loaded: loaded() };
  const backup = await call("GET", "/api/v1/backup/export.zip");
  report.backup = { status: backup.status, type: backup.type, loaded: loaded() };
  // Calendar feeds (issue 16): listing and creating them loads nothing; the first fetch loads ical.js.
  const feed = await call("POST", "/api/v1/feeds", { scope: "all", include: ["tasks"] });
  const feedLoadedBefore = loaded();
  const ics = await call("GET", new URL((JSON.parse(feed.text) as { url: string }).url).pathname);
  report.feed = { create: feed.status, before: feedLoadedBefore.includes("icalJs"), fetch: ics.status, after: loaded().includes("icalJs") };
  const davBefore = loaded();
  const davOptions = await call("OPTIONS", "/dav/");
  report.dav = { before: davBefore.includes("dav") || davBefore.includes("fastXml"), options: davOptions.status, after: ["dav", "fastXml"].every((w) => loaded().includes(w as Watched)) };
  console.log(JSON.stringify(report));
} finally {
  app?.close();
  db.close();
  rmSync(dir, { recursive: true, force: true });
}
