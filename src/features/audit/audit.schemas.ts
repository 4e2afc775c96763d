import { z } from "zod";

export const AuditLogEntry = z.object({
  id: z.string(),
  at: z.string().describe("RFC 3339 UTC instant"),
  action: z.string().describe("setup, login, login_failed, logout, password_changed, session_revoked, token_created, token_revoked, token_used, token_failed, …"),
  ip: z.string().nullable(),
  user_agent: z.string().nullable(),
  target_type: z.string().nullable(),
  target_id: z.string().nullable(),
  detail: z.record(z.string(), z.unknown()).nullable(),
});
export type AuditLogEntry = z.infer<typeof AuditLogEntry>;

export const AuditPage = z.object({ items: z.array(AuditLogEntry), next_cursor: z.string().nullable() });
