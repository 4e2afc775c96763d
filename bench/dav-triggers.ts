// What CalDAV's sync log (migration 0017_dav: triggers on every table a VTODO is built from) costs
// the writes that do not come from CalDAV: the same tree on two copies of one account, one with the
// triggers dropped, interleaved round by round; CPU µs per PATCH /tasks/{id} and per POST
// /tasks/batch of 500 ids, in process (appOfTree).
// Usage: bun bench/tasks-seed.ts /tmp/app-bench-dav-trig && bun bench/dav-triggers.ts /tmp/app-bench-dav-trig [rounds]
import { Database } from "bun:sqlite";
import { cpSync, rmSync } from "node:fs";
import { resolve } from "node:path";
import { appOfTree, signInInProcess } from "./lib";

const src = process.argv[2] ?? "/tmp/app-bench-dav-trig";
const ROUNDS = Number(process.argv[3] ?? 5);
const root = resolve(import.meta.dir, "..");
const noTriggers = `${src}-notrig`;
rmSync(noTriggers, { recursive: true, force: true });
cpSync(src, noTriggers, { recursive: true });
{
  const db = new Database(`${noTriggers}/app.db`);
  const names = db.query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE '%\\_dav\\_%' ESCAPE '\\'").all();
  for (const { name } of names) db.run(`DROP TRIGGER "${name}"`);
  db.close();
  console.log(`dropped ${names.length} sync-log triggers in the copy without them`);
}

async function setUp(label: string, dir: string) {
  const { app, db, dir: copy } = await appOfTree(root, dir, `trig-${label}`);
  const { cookie, csrf } = await signInInProcess(app, "bench", "bench-password-1");
  const headers = { cookie, "x-csrf-token": csrf, "content-type": "application/json" };
  const ids = (db.sqlite.query("SELECT id FROM tasks WHERE parent_id IS NULL AND deleted_at IS NULL ORDER BY created_at DESC LIMIT 2000").all() as { id: string }[]).map((r) => r.id);
  const version = new Map<string, number>();
  for (const r of db.sqlite.query("SELECT id, version FROM tasks WHERE id IN (SELECT value FROM json_each(?))").all(JSON.stringify(ids)) as { id: string; version: number }[]) version.set(r.id, r.version);
  let k = 0;
  let done = false;
  const patch = async () => {
    // Ids past the batch's 500, whose versions only PATCH moves.
    const id = ids[500 + (k++ % (ids.length - 500))]!;
    const r = await app.fetch(new Request(`http://localhost/api/v1/tasks/${id}`, { method: "PATCH", headers, body: JSON.stringify({ version: version.get(id), title: `t${k}` }) }));
    if (r.status !== 200) throw new Error(`${label} PATCH ${r.status}`);
    version.set(id, ((await r.json()) as { version: number }).version);
  };
  const batch = async () => {
    done = !done;
    const r = await app.fetch(new Request("http://localhost/api/v1/tasks/batch", { method: "POST", headers, body: JSON.stringify({ task_ids: ids.slice(0, 500), completed: done }) }));
    if (r.status !== 200) throw new Error(`${label} batch ${r.status} ${await r.text()}`);
    await r.arrayBuffer();
  };
  return { label, patch, batch, close: () => (db.close(), rmSync(copy, { recursive: true, force: true })) };
}

const sides = [await setUp("with triggers", src), await setUp("without", noTriggers)];
const cpu = new Map<string, number[]>();
const measure = async (name: string, n: number, f: () => Promise<void>) => {
  Bun.gc(true);
  const c0 = process.cpuUsage();
  for (let i = 0; i < n; i++) await f();
  const u = process.cpuUsage(c0);
  (cpu.get(name) ?? cpu.set(name, []).get(name)!).push((u.user + u.system) / n);
};
for (const s of sides) {
  for (let i = 0; i < 50; i++) await s.patch();
  for (let i = 0; i < 4; i++) await s.batch();
}
for (let round = 0; round < ROUNDS; round++) {
  for (const s of sides) {
    await measure(`${s.label} PATCH`, 300, s.patch);
    await measure(`${s.label} batch 500`, 10, s.batch);
  }
}
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(`${ROUNDS} rounds; CPU µs per request, median of rounds (min)`);
for (const [name, xs] of cpu) console.log(`${name.padEnd(26)} ${med(xs).toFixed(0).padStart(7)} (${Math.min(...xs).toFixed(0)})`);
for (const s of sides) s.close();
rmSync(noTriggers, { recursive: true, force: true });
