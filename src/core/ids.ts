import { z } from "zod";

/** New identifiers: UUIDv7 (time-ordered, lowercase, hyphenated). Clients treat them as opaque. */
export function newId(): string {
  return Bun.randomUUIDv7();
}

/** 256-bit random token, base64url, for sessions and preflight tokens. */
export function newToken(): string {
  const bytes = new Uint8Array(32);
  crypto.getRandomValues(bytes);
  return Buffer.from(bytes).toString("base64url");
}

/** Ids are at most 64 characters: ours are 36, and backup and legacy records may carry ids up to 64. */
export const ID_MAX = 64;

/**
 * An id in the URL of a task, list, folder or tag. One longer than ID_MAX names nothing and is
 * answered `404 not_found` like any other unknown id (not 422: the URL names a resource that does
 * not exist), so the limit is documented (maxLength) rather than checked by zod.
 */
export const UrlId = z.string().meta({ maxLength: ID_MAX, description: `at most ${ID_MAX} characters; a longer id names nothing (404)` });
