import { z } from "zod";
import { maxChars } from "../../core/text";
import { parseInstant } from "../../core/time";
import { TOKEN_SCOPES } from "../../core/auth/principal";

/** A user may hold this many tokens that are not revoked (expired ones count until revoked). */
export const TOKENS_PER_USER_MAX = 100;
export const TOKEN_NAME_MAX = 100;

export const TokenScope = z.enum(TOKEN_SCOPES, { error: "each scope is read, write or caldav" });

export const TokenCreate = z.strictObject({
  name: maxChars(z.string({ error: "name is required (a string)" }).trim().min(1, "name must not be empty"), TOKEN_NAME_MAX, `at most ${TOKEN_NAME_MAX} characters`).describe(
    "what the token is for (a phone, a script), 1 to 100 characters after trimming",
  ),
  scopes: z
    .array(TokenScope, { error: "scopes is required (an array of read, write, caldav)" })
    .min(1, "at least one scope")
    .max(TOKEN_SCOPES.length)
    .refine((a) => new Set(a).size === a.length, "a scope is listed twice")
    .describe("`read`: GET requests of the JSON API; `write`: every JSON API request a session may make except account, session, token and admin ones; `caldav`: CalDAV (HTTP Basic) under /dav/"),
  expires_at: maxChars(z.string(), 40)
    .transform((s, ctx) => {
      const iso = parseInstant(s)?.toISOString();
      if (!iso || iso.length !== 24) {
        ctx.addIssue({ code: "custom", message: "an RFC 3339 date-time with Z or an offset" });
        return z.NEVER;
      }
      return iso;
    })
    .nullable()
    .optional()
    .describe("RFC 3339 instant in the future after which the token no longer works; null or absent: it does not expire"),
});
export type TokenCreate = z.infer<typeof TokenCreate>;

export const Token = z
  .object({
    id: z.string(),
    name: z.string(),
    scopes: z.array(TokenScope),
    created_at: z.string(),
    expires_at: z.string().nullable(),
    last_used_at: z.string().nullable().describe("when it last authenticated a request (recorded at most once a minute)"),
    last_used_ip: z.string().nullable().describe("the client address of that use"),
  })
  .meta({ id: "Token" });
export type Token = z.infer<typeof Token>;

export const TokenCreated = Token.extend({
  secret: z.string().describe("the token's secret: shown in this answer only, never again (only a keyed hash of it is stored)"),
}).meta({ id: "TokenCreated" });

export const TokenList = z.object({ items: z.array(Token) });
export const TokenParams = z.strictObject({ token_id: maxChars(z.string(), 64) });
