// One owner per table (ARCHITECTURE.md, "Lessons from our own code"): only the owning repo names
// a table in SQL (INSERT/UPDATE/DELETE/FROM/JOIN) or imports its drizzle table object; everything
// else calls the owner. A new column then touches one repo, one schema, one presenter.
// The scan reads src/**/*.ts as text (comments removed); src/core/schema/ and migrations/ are the
// tables' definitions and are exempt.
import { describe, expect, test } from "bun:test";
import { Glob } from "bun";
import { readFileSync } from "node:fs";
import { getTableName, is } from "drizzle-orm";
import { SQLiteTable } from "drizzle-orm/sqlite-core";
import * as schema from "../../src/core/schema";

const SRC = `${import.meta.dir}/../../src`;

/** Table (its SQL name) → the file(s) under src/ that own it. */
const OWNERS: Record<string, string[]> = {
  users: ["features/account/account.repo.ts"],
  // The session store is core (every request reads it); the sessions feature lists and revokes.
  sessions: ["core/auth/session-store.ts", "features/sessions/sessions.service.ts"],
  audit_logs: ["features/audit/audit.repo.ts"],
  api_tokens: ["features/tokens/tokens.repo.ts"],
  attachments: ["features/attachments/attachments.repo.ts"],
  attachment_usage: ["features/attachments/attachments.repo.ts"],
  backup_preflights: ["transfer/backup/backup.repo.ts"],
  backup_restores: ["transfer/backup/backup.repo.ts"],
  backup_ledger: ["transfer/backup/backup.repo.ts"],
  import_tokens: ["transfer/import/import.repo.ts"],
  import_ledger: ["transfer/import/import.repo.ts"],
  snapshot_settings: ["transfer/snapshot/snapshot.repo.ts"],
  snapshot_status: ["transfer/snapshot/snapshot.repo.ts"],
  habits: ["features/habits/habits.repo.ts"],
  habit_logs: ["features/habits/habits.repo.ts"],
  habit_pauses: ["features/habits/habits.repo.ts"],
  countdowns: ["features/countdowns/countdowns.repo.ts"],
  memos: ["features/memos/memos.repo.ts"],
  folders: ["features/folders/folders.repo.ts"],
  lists: ["features/lists/lists.repo.ts"],
  // Sharing (docs/sharing-design.md): the lists feature owns memberships and invitations.
  list_members: ["features/lists/lists.members.repo.ts"],
  list_invitations: ["features/lists/lists.members.repo.ts"],
  tags: ["features/tags/tags.repo.ts"],
  // tasks.views.repo.ts: the smart views' and the calendar's reads (issue 14), beside the writer.
  tasks: ["features/tasks/tasks.repo.ts", "features/tasks/tasks.views.repo.ts"],
  task_tags: ["features/tasks/tasks.repo.ts"],
  recurrences: ["features/recurrence/recurrence.repo.ts"],
  recurrence_exceptions: ["features/recurrence/recurrence.repo.ts"],
  reminders: ["features/reminders/reminders.repo.ts"],
  notification_channels: ["features/reminders/channels.repo.ts"],
  deliveries: ["features/reminders/channels.repo.ts"],
  reminder_action_uses: ["features/reminders/channels.repo.ts"],
  notification_settings: ["features/reminders/channels.repo.ts"],
  // CalDAV (issue 16): the sync log (written by the 0016_dav triggers), token floors, client state.
  dav_changes: ["features/dav/dav.repo.ts"],
  dav_seq: ["features/dav/dav.repo.ts"],
  dav_floors: ["features/dav/dav.repo.ts"],
  dav_objects: ["features/dav/dav.repo.ts"],
  dav_collections: ["features/dav/dav.repo.ts"],
  feeds: ["features/feeds/feeds.repo.ts"],
};

/**
 * Reads of another feature's table inside one query, where the dependency points the declared way
 * (folders ← lists ← tasks ← {recurrence, attachments}) or the query is measured hot (the session
 * lookup of every request). Reads only: a write to another feature's table is never listed here.
 */
const READERS: Record<string, string[]> = {
  // Names of owners, members, creators (sharing): read beside the rows that name them.
  // The token lookup of every request with a token (as the session lookup): the token with its user.
  users: ["features/tasks/tasks.repo.ts", "features/lists/lists.repo.ts", "features/lists/lists.members.repo.ts", "features/tokens/tokens.repo.ts"],
  list_members: ["features/lists/lists.repo.ts"],
  // The session lookup of every request (one statement, measured hot): the account feature's query
  // (it names users), handed to core's session store at start-up, reads the session and the usage.
  sessions: ["features/account/account.repo.ts"],
  attachment_usage: ["features/account/account.repo.ts", "features/tokens/tokens.repo.ts"],
  folders: ["features/lists/lists.repo.ts"],
  lists: ["features/dav/dav.repo.ts", "features/tasks/tasks.repo.ts", "features/tasks/tasks.views.repo.ts", "features/recurrence/recurrence.repo.ts", "features/attachments/attachments.repo.ts", "features/lists/lists.members.repo.ts"],
  tags: ["features/tasks/tasks.repo.ts"],
  tasks: ["features/dav/dav.repo.ts", "features/recurrence/recurrence.repo.ts", "features/attachments/attachments.repo.ts", "features/tags/tags.repo.ts"],
  task_tags: ["features/tags/tags.repo.ts"],
};


const EXEMPT = (f: string) => f.startsWith("core/schema/");

/** SQL table names used as a statement's target (write) or read source. */
const WRITE_SQL = /\b(?:INSERT(?:\s+OR\s+[A-Z]+)?\s+INTO|REPLACE\s+INTO|UPDATE|DELETE\s+FROM)\s+["`]?([a-z_][a-z0-9_]*)\b/g;
const READ_SQL = /\b(?:FROM|JOIN)\s+["`]?([a-z_][a-z0-9_]*)\b/g;
/** Core helpers that take a table's SQL name as a string (the SQL is built inside them). */
const NAMED_HELPERS = /\b(?:deleteInBatches|deleteUserRowsInBatches)\(\s*[\w.]+\s*,\s*["'`]([a-z_]+)["'`]/g;

function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "").replace(/\s\/\/ [^"'`]*$/gm, "");
}

/** The drizzle table objects: export name → SQL name. */
const TABLE_SYMBOLS = new Map<string, string>();
for (const [name, value] of Object.entries(schema)) if (is(value, SQLiteTable)) TABLE_SYMBOLS.set(name, getTableName(value));

interface Use {
  file: string;
  table: string;
  how: "write" | "read" | "drizzle";
  text: string;
}

function uses(): Use[] {
  const out: Use[] = [];
  for (const file of new Glob("**/*.ts").scanSync(SRC)) {
    if (EXEMPT(file)) continue;
    const text = withoutComments(readFileSync(`${SRC}/${file}`, "utf8"));
    const tables = new Set(Object.keys(OWNERS));
    for (const m of text.matchAll(WRITE_SQL)) if (tables.has(m[1]!)) out.push({ file, table: m[1]!, how: "write", text: m[0] });
    for (const m of text.matchAll(NAMED_HELPERS)) if (tables.has(m[1]!)) out.push({ file, table: m[1]!, how: "write", text: m[0] });
    for (const m of text.matchAll(READ_SQL)) if (tables.has(m[1]!)) out.push({ file, table: m[1]!, how: "read", text: m[0] });
    // Value imports of a table object from the schema (type-only imports name no column at run time).
    for (const m of text.matchAll(/import\s+(type\s+)?\{([^}]*)\}\s+from\s+["'][./]*(?:core\/)?schema(?:\/\w+)?["']/g)) {
      if (m[1]) continue;
      for (const spec of m[2]!.split(",")) {
        const s = spec.trim();
        if (!s || s.startsWith("type ")) continue;
        const name = s.split(/\s+as\s+/)[0]!.trim();
        const table = TABLE_SYMBOLS.get(name);
        if (table) out.push({ file, table, how: "drizzle", text: `import { ${s} }` });
      }
    }
  }
  return out;
}

describe("table ownership", () => {
  test("every table of the schema has an owner", () => {
    expect([...TABLE_SYMBOLS.values()].sort()).toEqual(Object.keys(OWNERS).sort());
  });

  // A write to another feature's table is never allowed: an upward need goes through a hook
  // (tags.delete-hooks.ts: a deleted tag's tasks grow their versions in tasks.repo.ts).
  test("only a table's owner writes it or imports its drizzle object; others read it only where declared", () => {
    const all = uses();
    const wrong = all.filter((u) => {
      if (OWNERS[u.table]!.includes(u.file)) return false;
      // A declared reader may also import the table object for its reads (lists.repo.ts: the folder's visibility).
      if (u.how === "read" || u.how === "drizzle") return !(READERS[u.table] ?? []).includes(u.file);
      return true;
    });
    expect(wrong.map((u) => `${u.file}: ${u.how} ${u.table} (${u.text})`)).toEqual([]);
  });

  test("each table is inserted into by one file", () => {
    for (const table of Object.keys(OWNERS)) {
      const inserting = new Set(uses().filter((u) => u.table === table && u.how === "write" && /^(INSERT|REPLACE)/.test(u.text)).map((u) => u.file));
      expect({ table, files: [...inserting].filter((f) => !OWNERS[table]!.includes(f)) }).toEqual({ table, files: [] });
    }
  });
});
