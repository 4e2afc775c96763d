import { zipSync, unzipSync, strToU8 } from "fflate";
import type { TestClient, TestApp, TestResponse } from "../helpers/app";

/** Sends a ZIP (or any bytes) to the preflight as multipart field `file`. */
export function preflight(c: TestClient, bytes: Uint8Array, mode: "merge" | "replace" = "replace", field = "file") {
  const fd = new FormData();
  fd.append(field, new Blob([bytes as Uint8Array<ArrayBuffer>], { type: "application/zip" }), "backup.zip");
  return c.request("POST", `/api/v1/backup/preflight?mode=${mode}`, { body: fd });
}

export async function exportZip(c: TestClient): Promise<Uint8Array> {
  const r = await c.request("GET", "/api/v1/backup/export.zip");
  if (r.status !== 200) throw new Error(`export failed ${r.status} ${r.text}`);
  return new Uint8Array(Buffer.from(r.text, "latin1"));
}

/** The export's bytes, read raw (TestClient decodes text). */
export async function exportBytes(app: TestApp, c: TestClient): Promise<Uint8Array> {
  const headers: Record<string, string> = { cookie: [...c.jar].map(([k, v]) => `${k}=${v}`).join("; ") };
  const res = await app.handle.fetch(new Request("http://localhost/api/v1/backup/export.zip", { headers }), { requestIP: () => ({ address: "127.0.0.1" }) });
  if (res.status !== 200) throw new Error(`export failed ${res.status} ${await res.text()}`);
  return new Uint8Array(await res.arrayBuffer());
}

export const sha256 = (b: Uint8Array | string) => new Bun.CryptoHasher("sha256").update(b).digest("hex");

/** The archive's entries as a plain map (for building variants). */
export function entriesOf(zip: Uint8Array): Record<string, Uint8Array> {
  return unzipSync(zip);
}

/** Rebuilds an archive from entries with a manifest whose sizes and digests match them. */
export function rebuild(entries: Record<string, Uint8Array>, manifestPatch: (m: Record<string, unknown>) => void = () => {}, fixManifest = true): Uint8Array {
  const out = { ...entries };
  if (fixManifest && out["manifest.json"]) {
    const m = JSON.parse(new TextDecoder().decode(out["manifest.json"])) as Record<string, unknown>;
    const e: Record<string, { size: number; sha256: string }> = {};
    const counts: Record<string, number> = {};
    for (const [name, bytes] of Object.entries(out)) {
      if (name === "manifest.json") continue;
      e[name] = { size: bytes.byteLength, sha256: sha256(bytes) };
      if (name.startsWith("data/")) {
        try {
          const v = JSON.parse(new TextDecoder().decode(bytes)) as unknown;
          if (Array.isArray(v)) counts[name.slice(5, -5)] = v.length;
        } catch {
          /* a test's broken JSON */
        }
      }
    }
    m.entries = e;
    m.counts = { ...(m.counts as object), ...counts };
    manifestPatch(m);
    out["manifest.json"] = strToU8(JSON.stringify(m));
  }
  return zipSync(out);
}

export function readJson<T = unknown>(entries: Record<string, Uint8Array>, name: string): T {
  return JSON.parse(new TextDecoder().decode(entries[name]!)) as T;
}

export function writeJson(entries: Record<string, Uint8Array>, name: string, v: unknown): void {
  entries[name] = strToU8(JSON.stringify(v));
}

/** Some data of every kind for `c`. */
export interface Seeded {
  folder: string;
  list: string;
  tag: string;
  task: string;
  sub: string;
  inboxTask: string;
  recurrence: string;
  habit: string;
  pause: string;
  countdown: string;
  memo: string;
  attachment: string;
}

export async function seed(c: TestClient, label = "a"): Promise<Seeded> {
  const ok = (r: TestResponse, s = 201) => {
    if (r.status !== s) throw new Error(`seed: ${r.status} ${r.text}`);
    return r;
  };
  const folder = ok(await c.post("/api/v1/folders", { name: `Folder ${label}` })).body;
  const list = ok(await c.post("/api/v1/lists", { name: `List ${label}`, folder_id: folder.id })).body;
  const tag = ok(await c.post("/api/v1/tags", { name: `tag-${label}`, color: "#112233" })).body;
  const task = ok(await c.post("/api/v1/tasks", { title: `Task ${label}`, list_id: list.id, tag_ids: [tag.id], due_at: "2026-12-01" })).body;
  const sub = ok(await c.post("/api/v1/tasks", { title: `Sub ${label}`, parent_id: task.id })).body;
  const inboxTask = ok(await c.post("/api/v1/tasks", { title: `Inbox ${label}` })).body;
  const rec = ok(await c.post(`/api/v1/recurrences`, { task_id: task.id, kind: "rrule", rrule: "FREQ=WEEKLY" }));
  ok(await c.post(`/api/v1/recurrences/${rec.body.id}/exceptions`, { date: "2026-12-15" }), 200);
  // Started before its log: a log before start_date is refused (docs/spec/contract.md §12).
  const habit = ok(await c.post("/api/v1/habits", { name: `Habit ${label}`, frequency: { type: "daily" }, start_date: "2025-01-01" })).body;
  ok(await c.put(`/api/v1/habits/${habit.id}/logs/2025-01-01`, { value: 1 }), 200);
  const pause = ok(await c.post(`/api/v1/habits/${habit.id}/pauses`, { start_date: "2025-02-01" }));
  const countdown = ok(await c.post("/api/v1/countdowns", { name: `Cd ${label}`, date: "2027-01-01", type: "countdown", repeat: "none" })).body;
  const memo = ok(await c.post("/api/v1/memos", { content: `Memo ${label}` })).body;
  const fd = new FormData();
  fd.append("file", new Blob([`hello ${label}\n`], { type: "text/plain" }), `note-${label}.txt`);
  const att = ok(await c.request("POST", `/api/v1/tasks/${task.id}/attachments`, { body: fd })).body;
  return { folder: folder.id, list: list.id, tag: tag.id, task: task.id, sub: sub.id, inboxTask: inboxTask.id, recurrence: rec.body?.id, habit: habit.id, pause: pause.body?.id, countdown: countdown.id, memo: memo.id, attachment: att.id };
}

const UUID_RE = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/** The same archive with every identifier in the data replaced by a fresh one (consistently). */
export function withFreshIds(entries: Record<string, Uint8Array>): Record<string, Uint8Array> {
  const map = new Map<string, string>();
  const fresh = (id: string) => {
    let n = map.get(id);
    if (!n) map.set(id, (n = Bun.randomUUIDv7()));
    return n;
  };
  const out: Record<string, Uint8Array> = {};
  for (const [name, bytes] of Object.entries(entries)) {
    if (name.startsWith("data/")) out[name] = new TextEncoder().encode(new TextDecoder().decode(bytes).replace(UUID_RE, fresh));
    else if (name.startsWith("attachments/")) out[`attachments/${fresh(name.slice(12))}`] = bytes;
    else out[name] = bytes;
  }
  return out;
}

export const BACKUP_TABLES = ["audit_logs", "sessions", "__drizzle_migrations", "backup_preflights", "backup_restores", "backup_ledger"];

/** The rows of one user's business data (for before/after comparisons across restores). */
export type UserData = Record<"folders" | "lists" | "tags" | "tasks" | "task_tags" | "recurrences" | "recurrence_exceptions" | "habits" | "habit_logs" | "habit_pauses" | "countdowns" | "memos" | "attachments", unknown[]>;

export function userData(db: { sqlite: import("bun:sqlite").Database }, userId: string): UserData {
  const q = (sql: string) => (db.sqlite.query(sql).all(userId) as unknown[]).map((r) => JSON.stringify(r)).sort();
  return {
    folders: q("SELECT * FROM folders WHERE user_id = ?"),
    lists: q("SELECT * FROM lists WHERE user_id = ?"),
    tags: q("SELECT * FROM tags WHERE user_id = ?"),
    tasks: q("SELECT * FROM tasks WHERE user_id = ?"),
    task_tags: q("SELECT tt.* FROM task_tags tt JOIN tasks t ON t.id = tt.task_id WHERE t.user_id = ?"),
    recurrences: q("SELECT * FROM recurrences WHERE user_id = ?"),
    recurrence_exceptions: q("SELECT e.* FROM recurrence_exceptions e JOIN recurrences r ON r.id = e.recurrence_id WHERE r.user_id = ?"),
    habits: q("SELECT * FROM habits WHERE user_id = ?"),
    habit_logs: q("SELECT * FROM habit_logs WHERE user_id = ?"),
    habit_pauses: q("SELECT * FROM habit_pauses WHERE user_id = ?"),
    countdowns: q("SELECT * FROM countdowns WHERE user_id = ?"),
    memos: q("SELECT * FROM memos WHERE user_id = ?"),
    attachments: q("SELECT * FROM attachments WHERE user_id = ?"),
  };
}
