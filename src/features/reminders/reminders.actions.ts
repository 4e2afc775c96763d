import { sha256Hex, type ServerSecret } from "../../core/secret";

/**
 * The done/snooze links a notification carries: `…/api/v1/reminder-actions/<token>`, where the
 * token is base64url(JSON [delivery id, action, expiry (epoch seconds)]) "." HMAC-SHA256 of that
 * part with the server secret (purpose "reminder-action"). Signed (nothing else can be named with
 * it), expiring (24 hours after it was made) and single-use (its hash is recorded when used).
 */
export type ReminderAction = "done" | "snooze";
export const ACTION_LIFETIME_MS = 24 * 3600 * 1000;
const PURPOSE = "reminder-action";

export interface ActionClaim {
  deliveryId: string;
  action: ReminderAction;
  expiresAt: Date;
  /** What the single-use record keys on. */
  tokenHash: string;
}

export function actionToken(secret: ServerSecret, deliveryId: string, action: ReminderAction, now: Date): string {
  const body = Buffer.from(JSON.stringify([deliveryId, action, Math.floor((now.getTime() + ACTION_LIFETIME_MS) / 1000)])).toString("base64url");
  return `${body}.${secret.sign(PURPOSE, body)}`;
}

export function actionUrls(secret: ServerSecret, publicUrl: string, deliveryId: string, now: Date): { done: string; snooze: string } {
  const base = `${publicUrl.replace(/\/+$/, "")}/api/v1/reminder-actions/`;
  return { done: base + actionToken(secret, deliveryId, "done", now), snooze: base + actionToken(secret, deliveryId, "snooze", now) };
}

/** The token's claim, or null when it is malformed, forged or expired. */
export function readActionToken(secret: ServerSecret, token: string, now: Date): ActionClaim | null {
  if (token.length > 512) return null;
  const dot = token.indexOf(".");
  if (dot <= 0) return null;
  const body = token.slice(0, dot);
  if (!secret.verify(PURPOSE, body, token.slice(dot + 1))) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(body, "base64url").toString("utf8"));
  } catch {
    return null;
  }
  if (!Array.isArray(parsed) || parsed.length !== 3) return null;
  const [deliveryId, action, exp] = parsed as unknown[];
  if (typeof deliveryId !== "string" || (action !== "done" && action !== "snooze") || typeof exp !== "number") return null;
  const expiresAt = new Date(exp * 1000);
  if (expiresAt.getTime() <= now.getTime()) return null;
  return { deliveryId, action, expiresAt, tokenHash: sha256Hex(body) };
}
