// The reference for GET /me: a bare Bun.serve doing the same session lookup (SHA-256 of the cookie
// token, one indexed SELECT joining sessions and users, with the attachment byte counter GET /me
// reports) and answering the same JSON body.
// Usage: bun bench/bare-me.ts <data-dir> <port>
import { Database } from "bun:sqlite";
import { join } from "node:path";

const [dir, port] = [process.argv[2]!, Number(process.argv[3])];
const db = new Database(join(dir, "app.db"), { strict: true });
db.run("PRAGMA busy_timeout = 5000");
const stmt = db.query<Record<string, unknown>, [string]>(
  `SELECT u.id, u.username, u.display_name, u.timezone, u.is_admin, u.created_at, s.expires_at, s.last_seen_at,
          coalesce((SELECT bytes FROM attachment_usage WHERE user_id = u.id), 0) AS attachment_bytes
     FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.token_hash = ? AND s.revoked_at IS NULL`,
);
Bun.serve({
  port,
  hostname: "127.0.0.1",
  fetch(req) {
    const token = new Bun.CookieMap(req.headers.get("cookie") ?? "").get("app_session");
    if (!token) return new Response("{}", { status: 401 });
    const row = stmt.get(Bun.SHA256.hash(token, "hex"));
    if (!row || Date.parse(row.expires_at as string) < Date.now()) return new Response("{}", { status: 401 });
    return Response.json({
      id: row.id,
      username: row.username,
      display_name: row.display_name,
      timezone: row.timezone,
      is_admin: row.is_admin === 1,
      created_at: row.created_at,
      attachment_bytes: row.attachment_bytes,
    });
  },
});
console.log("bare listening");
