import type { TokenScope } from "../../core/auth/principal";
import type { TokenRow } from "./tokens.repo";
import type { Token } from "./tokens.schemas";

export function parseScopes(json: string): TokenScope[] {
  return JSON.parse(json) as TokenScope[];
}

/** Row → API shape; never the secret's hash. */
export function presentToken(r: TokenRow): Token {
  return {
    id: r.id,
    name: r.name,
    scopes: parseScopes(r.scopes),
    created_at: r.createdAt,
    expires_at: r.expiresAt,
    last_used_at: r.lastUsedAt,
    last_used_ip: r.lastUsedIp,
  };
}
