import type { AuthUser } from "../../core/auth/principal";
import type { UserRow } from "./account.repo";
import type { Me, User } from "./account.schemas";

/** The user fields of the API's User, from a row or from the session lookup's user (the same fields). */
type UserFields = Pick<UserRow, "id" | "username" | "displayName" | "timezone" | "isAdmin" | "createdAt">;

export function presentUser(u: UserFields): User {
  return {
    id: u.id,
    username: u.username,
    display_name: u.displayName,
    timezone: u.timezone,
    is_admin: u.isAdmin,
    created_at: u.createdAt,
  };
}

/** GET /me answers from the session lookup's own join: one query per request. `quota`: null when off. */
export function presentAuthUser(u: AuthUser, quota: number | null): Me {
  return { ...presentUser(u), ...reminderSettings(u.reminderTime ?? "09:00", u.quietStart ?? null, u.quietEnd ?? null), attachment_bytes: u.attachmentBytes ?? 0, attachment_quota_bytes: quota };
}

/** PATCH /me: the updated row, with the storage total read with the session (a PATCH never changes it). */
export function presentMe(u: UserRow, auth: AuthUser, quota: number | null): Me {
  return { ...presentUser(u), ...reminderSettings(u.reminderTime, u.quietStart, u.quietEnd), attachment_bytes: auth.attachmentBytes ?? 0, attachment_quota_bytes: quota };
}

function reminderSettings(reminderTime: string, quietStart: string | null, quietEnd: string | null): Pick<Me, "reminder_time" | "quiet_hours"> {
  return { reminder_time: reminderTime, quiet_hours: quietStart !== null && quietEnd !== null ? { start: quietStart, end: quietEnd } : null };
}
