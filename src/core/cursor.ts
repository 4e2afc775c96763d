import { invalidCursor } from "./errors";
import type { ServerSecret } from "./secret";

/** The position after the last item of a page: the values of the keyset columns. */
export type CursorKey = (string | number | null)[];

/**
 * Keyset cursors, signed with the server secret and bound to an endpoint and a user, so a cursor
 * from another endpoint, another user or with any byte changed is `invalid_cursor`.
 * Format: base64url(JSON [endpoint, userId, key]) "." base64url(HMAC).
 */
export class Cursors {
  constructor(private readonly secret: ServerSecret) {}

  encode(endpoint: string, userId: string, key: CursorKey): string {
    const body = Buffer.from(JSON.stringify([endpoint, userId, key])).toString("base64url");
    return `${body}.${this.secret.sign("cursor", body)}`;
  }

  /** Returns the key, or throws invalid_cursor. */
  decode(endpoint: string, userId: string, cursor: string): CursorKey {
    const dot = cursor.indexOf(".");
    if (dot <= 0 || cursor.length > 2048) throw invalidCursor();
    const body = cursor.slice(0, dot);
    const sig = cursor.slice(dot + 1);
    if (!this.secret.verify("cursor", body, sig)) throw invalidCursor();
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(body, "base64url").toString("utf8"));
    } catch {
      throw invalidCursor();
    }
    if (!Array.isArray(parsed) || parsed.length !== 3 || parsed[0] !== endpoint || parsed[1] !== userId || !Array.isArray(parsed[2])) {
      throw invalidCursor();
    }
    const key = parsed[2] as unknown[];
    if (!key.every((v) => v === null || typeof v === "string" || typeof v === "number")) throw invalidCursor();
    return key as CursorKey;
  }
}

/** A cursor page as every paginated endpoint answers it. */
export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

/**
 * Builds a page from rows fetched with `limit + 1`: the extra row only says there is a next page.
 */
export function toPage<R, T>(
  rows: R[],
  limit: number,
  present: (r: R) => T,
  keyOf: (r: R) => CursorKey,
  encode: (key: CursorKey) => string,
): Page<T> {
  const more = rows.length > limit;
  const pageRows = more ? rows.slice(0, limit) : rows;
  const last = pageRows[pageRows.length - 1];
  return {
    items: pageRows.map(present),
    next_cursor: more && last !== undefined ? encode(keyOf(last)) : null,
  };
}
