// Web app budgets (issue 7), printed as figures (no assertion on time):
//  1. first load: the compressed JavaScript a cold browser downloads (budget ≤ 150 KB);
//  2. a 100,000-task account: from the moment GET /tasks answers to the first page rendered and
//     painted in chromium (budget ≤ 300 ms), for the inbox and for a search across all lists;
//  3. quick add: 20 tasks typed with no delay between keystrokes (each 60 characters, Enter after
//     each, the list re-rendering as answers come back); every title must arrive intact.
// Usage: bun bench/web.ts   (uses dist/app when present; APP_EXE= runs `bun src/main.ts`).
// Seeds /tmp/app-bench-web with bench/tasks-seed.ts on the first run (about a minute).
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { startServer, stopServer } from "./lib";

// The page global the browser-side callback uses (the bench project has no DOM lib: it clashes with Bun's fetch types).
declare const document: { querySelectorAll(selector: string): { length: number } };

const SEEDED = "/tmp/app-bench-web";
const USER = { username: "bench", password: "bench-password-1" };
const RUNS = 5;

if (!existsSync(join(SEEDED, "app.db"))) {
  console.log(`seeding ${SEEDED} (100,000 tasks)…`);
  const p = Bun.spawnSync(["bun", "bench/tasks-seed.ts", SEEDED], { stdout: "inherit", stderr: "inherit" });
  if (p.exitCode !== 0) throw new Error("seeding failed");
}

const server = await startServer(SEEDED);
const profile = mkdtempSync(join(tmpdir(), "app-bench-chromium-"));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: "/usr/bin/chromium",
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  baseURL: server.base,
  viewport: { width: 1280, height: 800 },
});
try {
  const page = context.pages()[0] ?? (await context.newPage());

  // 1. First load, cold cache: sizes on the wire.
  let jsWire = 0;
  let jsRaw = 0;
  let cssWire = 0;
  page.on("response", async (r) => {
    const type = r.headers()["content-type"] ?? "";
    if (!r.url().includes("/assets/")) return;
    const sizes = await r.request().sizes();
    const raw = (await r.body()).length;
    if (type.includes("javascript")) {
      jsWire += sizes.responseBodySize;
      jsRaw += raw;
    } else if (type.includes("css")) cssWire += sizes.responseBodySize;
  });
  await page.goto("/");
  await page.getByLabel("Username").fill(USER.username);
  await page.getByLabel("Password").fill(USER.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.locator("body[data-tasks-rendered]").waitFor({ timeout: 60_000 });
  page.removeAllListeners("response");
  console.log(`first load: JavaScript ${(jsWire / 1024).toFixed(1)} KB compressed (${(jsRaw / 1024).toFixed(1)} KB raw), CSS ${(cssWire / 1024).toFixed(1)} KB compressed; budget 150 KB`);

  // 2. First page of the 100,000-task account.
  const measure = async (path: string) => {
    const api: number[] = [];
    const render: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const t0 = Date.now();
      await page.goto(path);
      await page.locator("body[data-tasks-rendered]").waitFor({ timeout: 60_000 });
      const m = await page.evaluate(() => {
        const get = (n: string) => performance.getEntriesByName(n)[0]?.startTime ?? NaN;
        return { api: get("tasks:api"), rendered: get("tasks:rendered"), painted: get("tasks:painted"), rows: document.querySelectorAll("li.task").length };
      });
      api.push(Date.now() - t0);
      render.push(m.painted - m.api);
      if (i === 0) console.log(`  ${path}: ${m.rows} rows`);
    }
    const sorted = [...render].sort((a, b) => a - b);
    console.log(`  ${path}: API answered → first page painted: median ${sorted[Math.floor(RUNS / 2)]!.toFixed(1)} ms, max ${sorted[RUNS - 1]!.toFixed(1)} ms (${RUNS} loads; whole navigation median ${[...api].sort((a, b) => a - b)[Math.floor(RUNS / 2)]} ms); budget 300 ms`);
  };
  console.log("100,000-task account:");
  await measure("/tasks");
  await measure("/tasks?q=report&show=all");

  // 3. Quick add under load: no dropped keystroke.
  await page.goto("/tasks");
  await page.locator("body[data-tasks-rendered]").waitFor({ timeout: 60_000 });
  const quick = page.getByLabel("New task");
  await quick.focus();
  const stamp = Date.now().toString(36);
  const titles = Array.from({ length: 20 }, (_, i) => `qa-${stamp}-${String(i).padStart(2, "0")} the quick brown fox jumps over the lazy dog`);
  const t0 = performance.now();
  for (const title of titles) {
    await page.keyboard.type(title, { delay: 0 });
    await page.keyboard.press("Enter");
  }
  const typedMs = performance.now() - t0;
  let found: string[] = [];
  for (let i = 0; i < 100 && found.length < titles.length; i++) {
    found = await page.evaluate(async (q) => {
      const r = await fetch(`/api/v1/tasks?q=${encodeURIComponent(q)}&limit=100`);
      return ((await r.json()) as { items: { title: string }[] }).items.map((x) => x.title);
    }, `qa-${stamp}`);
    if (found.length < titles.length) await Bun.sleep(100);
  }
  const intact = titles.filter((x) => found.includes(x)).length;
  const chars = titles.reduce((n, x) => n + x.length + 1, 0);
  console.log(`quick add: ${chars} keystrokes in ${typedMs.toFixed(0)} ms; ${intact}/${titles.length} titles arrived intact, ${found.length - intact} mangled (dropped keystrokes: ${titles.length - intact})`);
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
  await stopServer(server);
}
