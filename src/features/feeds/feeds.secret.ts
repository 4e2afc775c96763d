import { constantTimeEqual, type ServerSecret } from "../../core/secret";
import { FEED_FILE_MAX } from "./feeds.schemas";

/**
 * A feed's secret: `<feed id>.<HMAC-SHA256 of the id under the server secret>` (256 bits,
 * base64url). Nothing secret is stored: GET /feeds derives the URL again, a copy of the database
 * alone opens no feed, and replacing the server's secret.key changes every feed URL at once (the
 * old ones answer 404). A whole-instance snapshot carries secret.key, so a restore keeps them.
 */
const PURPOSE = "calendar-feed";

export function feedSecret(secret: ServerSecret, feedId: string): string {
  return `${feedId}.${secret.sign(PURPOSE, feedId)}`;
}

/** The file name of a feed URL (`<secret>.ics`) split into the id it names and its signature; null when it has not that shape. */
export function parseFeedFile(file: string): { id: string; signature: string } | null {
  if (file.length > FEED_FILE_MAX || !file.endsWith(".ics")) return null;
  const body = file.slice(0, -4);
  const dot = body.lastIndexOf(".");
  if (dot <= 0) return null;
  return { id: body.slice(0, dot), signature: body.slice(dot + 1) };
}

/**
 * Whether `signature` is the id's. Always computes the HMAC, so an unknown id costs what a
 * revoked one does (the caller looks the row up either way).
 */
export function signatureMatches(secret: ServerSecret, id: string, signature: string): boolean {
  return constantTimeEqual(secret.sign(PURPOSE, id), signature);
}

/**
 * A request path as the request log writes it: a feed URL keeps its feed id and loses its
 * signature (the log would otherwise hold every subscriber's credential for good).
 */
export function pathForLog(path: string): string {
  if (!path.startsWith("/feeds/")) return path;
  const parsed = parseFeedFile(path.slice("/feeds/".length));
  return parsed ? `/feeds/${parsed.id}.…ics` : "/feeds/…";
}
