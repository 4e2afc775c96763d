// The fair baseline for a member's figures in bench/sharing-ab.ts: a copy of the sharing seed where
// member1 OWNS the lists that sharing shows them (the 3 shared lists and their tasks move to member1;
// no list is shared). Run the tree before issue 19 on it (BENCH_BASE_SEED) and the tree after on the
// sharing seed: the member then sees the same 9,677 tasks in both, once as their own rows, once
// through sharing — the difference is what sharing's code costs, not what the larger view costs.
// Usage: bun bench/sharing-fair-seed.ts /tmp/s22perf-share /tmp/app-bench-share-fair
import { Database } from "bun:sqlite";
import { cpSync, rmSync } from "node:fs";
import { join } from "node:path";

const [src, dst] = [process.argv[2] ?? "/tmp/app-bench-share", process.argv[3] ?? "/tmp/app-bench-share-fair"];
rmSync(dst, { recursive: true, force: true });
cpSync(src, dst, { recursive: true });
const db = new Database(join(dst, "app.db"));
db.run("PRAGMA foreign_keys = OFF");
const member = db.query<{ id: string }, []>("SELECT id FROM users WHERE username = 'member1'").get()!.id;
db.transaction(() => {
  db.run("CREATE TEMP TABLE shared AS SELECT DISTINCT list_id FROM list_members");
  db.run("UPDATE lists SET user_id = ?, folder_id = NULL WHERE id IN (SELECT list_id FROM shared)", [member]);
  db.run("UPDATE tasks SET user_id = ? WHERE list_id IN (SELECT list_id FROM shared)", [member]);
  db.run("DELETE FROM list_members");
})();
db.run("ANALYZE");
db.run("PRAGMA wal_checkpoint(TRUNCATE)");
for (const r of db.query<{ username: string; n: number }, []>("SELECT u.username, count(*) n FROM tasks t JOIN users u ON u.id = t.user_id WHERE t.parent_id IS NULL AND t.deleted_at IS NULL GROUP BY u.username").all()) {
  console.log(`${r.username}: ${r.n} live top-level tasks`);
}
db.close();
