import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { TestApp, TestClient } from "../helpers/app";
import { multipart, rawRequest, type RawResponse } from "../helpers/multipart";

export const FIXTURES = join(import.meta.dir, "..", "fixtures", "import");
export const fixture = (name: string) => new Uint8Array(readFileSync(join(FIXTURES, name)));

/** POST /import/preview with the file as the multipart field `file`. */
export function previewFile(app: TestApp, c: TestClient, format: string, data: Uint8Array | string, filename = "export.csv"): Promise<RawResponse> {
  const { body, contentType } = multipart([{ name: "file", filename, data }]);
  return rawRequest(app, c, "POST", `/api/v1/import/preview?format=${format}`, { body, headers: { "content-type": contentType } });
}

/** Preview then import; fails the test when either step does not answer 200. */
export async function importFile(app: TestApp, c: TestClient, format: string, data: Uint8Array | string, filename?: string) {
  const p = await previewFile(app, c, format, data, filename);
  if (p.status !== 200) throw new Error(`preview: ${p.status} ${JSON.stringify(p.json)}`);
  const r = await c.post("/api/v1/import", { import_token: p.json.import_token });
  if (r.status !== 200) throw new Error(`import: ${r.status} ${r.text}`);
  return { preview: p.json, result: r.body };
}

export interface TaskView {
  id: string;
  title: string;
  description: string;
  list: string;
  folder: string | null;
  parent: string | null;
  completed: number;
  completed_at: string | null;
  due_at: string | null;
  priority: number;
  created_at: string;
  tags: string;
  rrule: string | null;
  rec_kind: string | null;
  rec_interval: number | null;
  rec_unit: string | null;
  rec_tz: string | null;
  position: number;
}

/** Every task of the database with its list, folder, parent title, tags and recurrence, by title. */
export function tasksByTitle(app: TestApp): Map<string, TaskView> {
  const rows = app.db.sqlite
    .query<TaskView, []>(
      `SELECT t.id, t.title, t.description, l.name AS list, f.name AS folder, p.title AS parent, t.completed, t.completed_at, t.due_at, t.priority, t.created_at, t.position,
              coalesce((SELECT group_concat(g.name, ',') FROM (SELECT g.name FROM task_tags x JOIN tags g ON g.id = x.tag_id WHERE x.task_id = t.id ORDER BY g.name) g), '') AS tags,
              r.rrule, r.kind AS rec_kind, r.interval AS rec_interval, r.unit AS rec_unit, r.timezone AS rec_tz
         FROM tasks t JOIN lists l ON l.id = t.list_id LEFT JOIN folders f ON f.id = l.folder_id LEFT JOIN tasks p ON p.id = t.parent_id
         LEFT JOIN recurrences r ON r.task_id = t.id`,
    )
    .all();
  return new Map(rows.map((r) => [r.title, r]));
}

export const count = (app: TestApp, table: string) => app.db.sqlite.query<{ n: number }, []>(`SELECT count(*) AS n FROM ${table}`).get()!.n;
