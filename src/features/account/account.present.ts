import type { AuthUser } from "../../core/auth/principal";
import type { UserRow } from "./account.repo";
import type { User } from "./account.schemas";

export function presentUser(u: UserRow): User {
  return {
    id: u.id,
    username: u.username,
    display_name: u.displayName,
    timezone: u.timezone,
    is_admin: u.isAdmin,
    created_at: u.createdAt,
  };
}

/** GET /me answers from the session lookup's own join: one query per request. */
export function presentAuthUser(u: AuthUser): User {
  return {
    id: u.id,
    username: u.username,
    display_name: u.displayName,
    timezone: u.timezone,
    is_admin: u.isAdmin,
    created_at: u.createdAt,
  };
}
