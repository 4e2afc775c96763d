// What the password strength rule (zxcvbn, loaded on first use) costs the compiled executable:
// resident memory at start and after the first check, and the time a check holds the event loop.
// Setup with a refused password answers 422 before any argon2 runs, so the figures are the rule's
// alone. Prints figures; asserts nothing.
//
// Usage: bun bench/password-strength.ts   (APP_EXE=path to run another build)
import { rmSync } from "node:fs";
import { EXE, freshDir, median, rssKiB, startServer, stopServer } from "./lib";

console.log(`executable: ${EXE || "bun src/main.ts (dist/app missing)"}`);

const setup = async (base: string, password: string) => {
  const t = performance.now();
  const r = await fetch(`${base}/api/v1/setup/initialize`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ username: "owner", password }) });
  await r.arrayBuffer();
  return { status: r.status, ms: performance.now() - t };
};

// All refused (so every one is rated; an accepted one would end the setup). The 64-character ones
// (the rated length) keep the matchers busiest of those tried: keyboard runs, repeated groups.
const long = ["1qaz2wsx3edc4rfv".repeat(4), "aB3$".repeat(16), "passwordpassword".repeat(4), "x".repeat(1024)];
const samples = ["12345678", "password", "P@ssw0rd", "qwertyuiop", ...long];

const rssStart: number[] = [];
const rssAfter: number[] = [];
const first: number[] = [];
const later: number[] = [];
const worst: number[] = [];
for (let run = 0; run < 5; run++) {
  const dir = freshDir();
  const s = await startServer(dir);
  try {
    await Bun.sleep(500);
    rssStart.push(rssKiB(s.proc.pid!));
    const f = await setup(s.base, "12345678");
    if (f.status !== 422) throw new Error(`expected 422, got ${f.status}`);
    first.push(f.ms);
    for (let round = 0; round < 3; round++) {
      for (const p of samples) {
        const r = await setup(s.base, p);
        if (r.status !== 422) throw new Error(`setup answered ${r.status}, expected 422`);
        later.push(r.ms);
        if (long.includes(p)) worst.push(r.ms);
      }
    }
    await Bun.sleep(500);
    rssAfter.push(rssKiB(s.proc.pid!));
  } finally {
    await stopServer(s);
    rmSync(dir, { recursive: true, force: true });
  }
}
const mib = (k: number) => `${(k / 1024).toFixed(1)} MiB`;
console.log(`RSS after start: median ${mib(median(rssStart))}; after the first checks: median ${mib(median(rssAfter))} (+${mib(median(rssAfter) - median(rssStart))})`);
console.log(`first check (loads the dictionaries): median ${median(first).toFixed(0)} ms (max ${Math.max(...first).toFixed(0)})`);
console.log(`later checks (a whole setup request): median ${median(later).toFixed(1)} ms, max ${Math.max(...later).toFixed(1)} ms; long or crafted passwords: max ${Math.max(...worst).toFixed(1)} ms`);
