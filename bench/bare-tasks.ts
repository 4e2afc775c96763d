// The reference for GET /tasks: a bare Bun.serve + bun:sqlite answering the same page with the
// same SQL (the app's own repository functions and presenter), without Elysia, sessions, CSRF,
// validation, signed cursors or logging. Cursor: "created_at|id" in plain text.
// Usage: bun bench/bare-tasks.ts <data-dir> <port>
import { join } from "node:path";
import { openDatabase } from "../src/core/db";
import { pageLiveTasks } from "../src/features/tasks/tasks.repo";
import { presentTasks } from "../src/features/tasks/tasks.present";

const [dir, port] = [process.argv[2]!, Number(process.argv[3])];
const db = openDatabase(join(dir, "app.db"));
const user = db.sqlite.query<{ id: string }, []>("SELECT id FROM users").get()!.id;

Bun.serve({
  port,
  hostname: "127.0.0.1",
  fetch(req) {
    const url = new URL(req.url);
    const limit = Number(url.searchParams.get("limit") ?? 50);
    const cursor = url.searchParams.get("cursor");
    const after = cursor ? (cursor.split("|") as [string, string]) : null;
    const rows = pageLiveTasks(db, user, {}, after, limit);
    const more = rows.length > limit;
    const page = more ? rows.slice(0, limit) : rows;
    const last = page[page.length - 1];
    return Response.json({ items: presentTasks(db, user, page), next_cursor: more && last ? `${last.created_at}|${last.id}` : null });
  },
});
console.log(`bare tasks server on ${port}`);
