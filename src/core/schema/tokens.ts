import { sqliteTable, text, index, uniqueIndex } from "drizzle-orm/sqlite-core";
import { ownerColumn } from "./accounts";

// Personal API tokens and app passwords (one thing: devices.md "Tokens"). The secret is 256 random
// bits shown once; only its HMAC-SHA256 under the server secret is stored (core/auth/
// token-credentials.ts tokenSecretHash: a high-entropy secret needs no slow hash). A revoked token keeps its row (revoked_at) so a later use of it is
// audited against its owner; it is never listed again.
export const apiTokens = sqliteTable(
  "api_tokens",
  {
    id: text("id").primaryKey(),
    userId: ownerColumn(),
    name: text("name").notNull(),
    // JSON array of "read" | "write" | "caldav", sorted, distinct, at least one.
    scopes: text("scopes").notNull(),
    secretHash: text("secret_hash").notNull(),
    createdAt: text("created_at").notNull(),
    expiresAt: text("expires_at"),
    // Written at most once a minute per token (see core/auth/guard.ts), so a read stays a read.
    lastUsedAt: text("last_used_at"),
    lastUsedIp: text("last_used_ip"),
    revokedAt: text("revoked_at"),
  },
  (t) => [uniqueIndex("api_tokens_secret_hash_uq").on(t.secretHash), index("api_tokens_user_idx").on(t.userId, t.createdAt)],
);
