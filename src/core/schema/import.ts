import { sqliteTable, text, integer, index, primaryKey, uniqueIndex } from "drizzle-orm/sqlite-core";
import { ownerColumn } from "./accounts";

// A previewed import from another app waiting for POST /import. The token is random and only its
// SHA-256 is stored; it is bound to the user, the file's SHA-256 and the format, and lives 15
// minutes. The file itself is staged at <data>/import/staging/<id>. consumed_at is set in the
// transaction that imports (or that answers "already imported").
export const importTokens = sqliteTable(
  "import_tokens",
  {
    id: text("id").primaryKey(),
    userId: ownerColumn(),
    tokenHash: text("token_hash").notNull(),
    format: text("format", { enum: ["ticktick", "todoist", "ics"] }).notNull(),
    fileSha256: text("file_sha256").notNull(),
    // The name the file was uploaded with (an .ics calendar without X-WR-CALNAME is named after it).
    fileName: text("file_name").notNull(),
    size: integer("size").notNull(),
    createdAt: text("created_at").notNull(),
    expiresAt: text("expires_at").notNull(),
    consumedAt: text("consumed_at"),
  },
  (t) => [uniqueIndex("import_tokens_token_uq").on(t.tokenHash), index("import_tokens_user_idx").on(t.userId, t.expiresAt)],
);

// The import ledger: per user, format and file digest, what the import created (JSON counts), so
// the same file imported again creates nothing and answers the same counts.
export const importLedger = sqliteTable(
  "import_ledger",
  {
    userId: ownerColumn(),
    format: text("format", { enum: ["ticktick", "todoist", "ics"] }).notNull(),
    fileSha256: text("file_sha256").notNull(),
    counts: text("counts").notNull(),
    importedAt: text("imported_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.format, t.fileSha256] })],
);
