import { z } from "zod";
import { maxChars } from "../../core/text";

export const Session = z.object({
  id: z.string(),
  created_at: z.string(),
  last_seen_at: z.string(),
  expires_at: z.string().describe("when the session ends unless used again (the earlier of idle and absolute expiry)"),
  ip: z.string().nullable(),
  user_agent: z.string().nullable(),
  current: z.boolean(),
});
export const SessionList = z.object({ items: z.array(Session) });
export const SessionParams = z.strictObject({ session_id: maxChars(z.string(), 64) });
