import { stateConflict, validationFailed } from "./errors";
import type { ServerSecret } from "./secret";

/**
 * Undo tokens: what an operation changed, as it was before, signed with the server secret and
 * bound to a kind of undo, a user and an expiry. The server hands one out with a change it can
 * take back exactly (a batch, a recurring task's completion) and restores from it alone, so no
 * table keeps undo state; the signature means a client can restore only what the server saw.
 * Format: base64url(JSON [kind, userId, expiresAtMs, payload]) "." base64url(HMAC).
 */
export const UNDO_SECONDS = 600;
/** A batch of 500 tasks with their tags is about 150 kB of token; this bounds what is parsed. */
export const UNDO_TOKEN_MAX = 400_000;

export class UndoTokens {
  constructor(private readonly secret: ServerSecret) {}

  encode(kind: string, userId: string, now: Date, payload: unknown): string {
    const body = Buffer.from(JSON.stringify([kind, userId, now.getTime() + UNDO_SECONDS * 1000, payload])).toString("base64url");
    return `${body}.${this.secret.sign("undo", body)}`;
  }

  /** The payload; `validation_failed` for a token that is not one of ours (or another kind's or user's), `state_conflict` once expired. */
  decode(kind: string, userId: string, token: string, now: Date): unknown {
    const bad = () => validationFailed([{ path: "undo_token", message: "not an undo token for this" }], "the undo token is not valid");
    const dot = token.indexOf(".");
    if (dot <= 0 || token.length > UNDO_TOKEN_MAX) throw bad();
    const body = token.slice(0, dot);
    if (!this.secret.verify("undo", body, token.slice(dot + 1))) throw bad();
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(body, "base64url").toString("utf8"));
    } catch {
      throw bad();
    }
    if (!Array.isArray(parsed) || parsed.length !== 4 || parsed[0] !== kind || parsed[1] !== userId || typeof parsed[2] !== "number") throw bad();
    if (now.getTime() > parsed[2]) throw stateConflict(`the undo has expired (it is kept for ${UNDO_SECONDS / 60} minutes)`);
    return parsed[3];
  }
}
