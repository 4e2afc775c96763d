// Import of a generated 20,000-row TickTick backup CSV (issue 17): preview and import time and the
// server's RSS (sampled every 5 ms: "before → peak"), then the same file imported again (the ledger
// answers without writing). The file: 40 lists in 8 folders, 15% subtasks (parentId), 10% checklists
// with 3 items, tags on half the rows, a weekly repeat on every 20th row, reminders, multi-line
// Content (about 600 characters on every 10th row), all-day and timed dates in 4 zones.
// Usage: bun bench/import-ticktick.ts   (dist/app when built; APP_EXE= bun bench/import-ticktick.ts runs bun src/main.ts)
//        ROWS=50000 bun bench/import-ticktick.ts
import { rmSync } from "node:fs";
import { EXE, freshDir, measured, setupAndLogin, startServer, stopServer } from "./lib";

const ROWS = Number(process.env.ROWS ?? 20_000);
const ZONES = ["Europe/Berlin", "Asia/Shanghai", "America/New_York", "Australia/Sydney"];
const HEADER = [
  "Folder Name", "List Name", "Title", "Kind", "Tags", "Content", "Is Check list", "Start Date", "Due Date", "Reminder", "Repeat",
  "Priority", "Status", "Created Time", "Completed Time", "Order", "Timezone", "Is All Day", "Is Floating", "Column Name",
  "Column Order", "View Mode", "taskId", "parentId", "projectKind",
];
const q = (s: string) => `"${s.replace(/"/g, '""')}"`;

function generate(rows: number): string {
  const out = ['"Date: 2026-11-26+0000"', '"Version: 7.2"', '"Status: \n0 Normal\n-1 Abandoned \n2 Completed"', HEADER.map(q).join(",")];
  const long = "Notes with a \"quote\", a comma, and a second line\n".repeat(12);
  let lastTop = "";
  for (let i = 0; i < rows; i++) {
    const folder = `Folder ${i % 8}`;
    const list = `List ${i % 40}`;
    const sub = i % 7 === 3 && lastTop !== "" && i % 40 === Number(lastTop.slice(1)) % 40;
    const checklist = !sub && i % 10 === 5;
    const day = 1 + (i % 28);
    const timed = i % 3 === 0;
    const due = i % 4 === 1 ? "" : `2026-12-${String(day).padStart(2, "0")}T${timed ? "09:30" : "23:00"}:00+0000`;
    const cells = [
      folder,
      list,
      `Task number ${i}`,
      checklist ? "CHECKLIST" : "TEXT",
      i % 2 === 0 ? `tag${i % 30}, shared` : "",
      checklist ? "▫first\n▪second\n▫third\nA line of description" : i % 10 === 0 ? long : "",
      checklist ? "Y" : "N",
      due,
      due,
      due && i % 5 === 0 ? "-PT30M" : "",
      due && !sub && i % 20 === 0 ? "RRULE:FREQ=WEEKLY;INTERVAL=1" : "",
      ["0", "1", "3", "5"][i % 4]!,
      i % 9 === 0 ? "2" : "0",
      "2026-10-01T08:00:00+0000",
      i % 9 === 0 ? "2026-11-01T08:00:00+0000" : "",
      String(i * 1024),
      ZONES[i % ZONES.length]!,
      due && !timed ? "true" : "false",
      "false",
      "",
      "",
      "list",
      `t${i}`,
      sub ? lastTop : "",
      "TASK",
    ];
    if (!sub) lastTop = `t${i}`;
    out.push(cells.map(q).join(","));
  }
  return out.join("\n") + "\n";
}

const line = (what: string, m: { seconds: number; baseMiB: number; peakMiB: number }, extra = "") =>
  console.log(`${what.padEnd(34)} ${m.seconds.toFixed(2)} s   RSS ${m.baseMiB.toFixed(0)} → peak ${m.peakMiB.toFixed(0)} MiB${extra ? `   ${extra}` : ""}`);

const csv = generate(ROWS);
console.log(`server: ${EXE || "bun src/main.ts"}; file: ${ROWS} rows, ${(Buffer.byteLength(csv) / 1e6).toFixed(1)} MB`);
const dir = freshDir("app-bench-import-");
const server = await startServer(dir);
const auth = await setupAndLogin(server.base);

async function preview(): Promise<{ import_token: string; counts: Record<string, number>; skipped: unknown[]; changed: unknown[] }> {
  const form = new FormData();
  form.append("file", new Blob([csv], { type: "text/csv" }), "TickTick-backup.csv");
  const r = await fetch(`${server.base}/api/v1/import/preview?format=ticktick`, { method: "POST", headers: { cookie: auth.cookie, "x-csrf-token": auth.csrf }, body: form });
  const j = await r.json();
  if (r.status !== 200) throw new Error(`preview: ${r.status} ${JSON.stringify(j).slice(0, 300)}`);
  return j as never;
}
async function run(token: string): Promise<{ counts: Record<string, number>; already_imported?: boolean }> {
  const r = await fetch(`${server.base}/api/v1/import`, { method: "POST", headers: auth.headers, body: JSON.stringify({ import_token: token }) });
  const j = await r.json();
  if (r.status !== 200) throw new Error(`import: ${r.status} ${JSON.stringify(j).slice(0, 300)}`);
  return j as never;
}

const p1 = await measured(server, preview);
line("POST /import/preview (first job)", p1, `${JSON.stringify(p1.result.counts)}; ${p1.result.skipped.length} skipped, ${p1.result.changed.length} changed notes`);
const i1 = await measured(server, () => run(p1.result.import_token));
line("POST /import", i1, `${i1.result.counts.tasks} tasks + ${i1.result.counts.subtasks} subtasks created`);
const p2 = await measured(server, preview);
line("POST /import/preview (again)", p2);
const i2 = await measured(server, () => run(p2.result.import_token));
line("POST /import (same file: ledger)", i2, `already_imported: ${i2.result.already_imported}`);
const hwm = /VmHWM:\s+(\d+)/.exec(await Bun.file(`/proc/${server.proc.pid}/status`).text());
console.log(`server peak RSS over the run (VmHWM): ${(Number(hwm?.[1]) / 1024).toFixed(0)} MiB`);
await stopServer(server);
rmSync(dir, { recursive: true, force: true });
